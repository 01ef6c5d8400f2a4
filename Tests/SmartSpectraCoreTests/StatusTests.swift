import Testing
@testable import SmartSpectraCore

@Suite("Status values")
struct StatusTests {
    @Test("validation codes keep their numbers, including the gap at 8 and 9", arguments: [
        (ValidationCode.ok, 0), (.noFaceFound, 1), (.multipleFacesFound, 2), (.faceNotCentered, 3),
        (.faceSizeOutOfRange, 4), (.tooDark, 5), (.tooBright, 6), (.chestNotVisible, 7), (.cameraTuning, 10),
        (.frameRateTooLow, 11), (.excessiveMotion, 12), (.faceTooClose, 13), (.faceTooFar, 14), (.faceTooHigh, 15),
        (.faceTooLow, 16), (.faceNotForward, 17),
    ])
    func validationNumbers(_ code: ValidationCode, _ number: Int) {
        #expect(code.rawValue == number)
        #expect(ValidationCode(rawValue: number) == code)
        #expect(!ValidationStatus(code: code).hint.isEmpty)
    }

    @Test("numbers this build does not know are no code (a switch ends with @unknown default)", arguments: [8, 9, 18, 99, -1])
    func unknownValidation(_ number: Int) {
        #expect(ValidationCode(rawValue: number) == nil)
    }

    @Test("processing status names")
    func processingStatusNames() {
        #expect(ProcessingStatus.allCases.map(\.description) == ["idle", "starting", "running", "stopping", "error"])
    }

    @Test("an error carries code, message and retryable")
    func errorShape() {
        let error = SmartSpectraError(code: .timestampGap, message: "gap", retryable: false)
        #expect(error.description == "timestampGap (11): gap")
        #expect(error.errorDescription == "gap")
        #expect(error.localizedDescription == "gap", "Foundation callers read the message, not a generic text")
        let asError: any Error = error
        #expect(asError.localizedDescription == "gap")
        #expect(FrameSubmissionResult.rejected(error).error == error)
        #expect(FrameSubmissionResult.accepted.isAccepted)
    }
}
