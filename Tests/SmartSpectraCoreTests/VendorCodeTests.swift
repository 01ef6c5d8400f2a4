// Written the way a SmartSpectra app writes it: a switch over the documented validation codes, ended with
// `@unknown default` for codes a newer SDK appends, and errors read through `localizedDescription`.
import Foundation
import SmartSpectraCore
import Testing

/// What an app tells the user for a validation code.
private func advice(_ code: ValidationCode) -> String {
    switch code {
    case .ok: "ok"
    case .noFaceFound: "show your face"
    case .multipleFacesFound: "one person only"
    case .faceNotCentered: "centre your face"
    case .faceSizeOutOfRange: "move closer or back"
    case .tooDark: "more light"
    case .tooBright: "less light"
    case .chestNotVisible: "show your chest"
    case .cameraTuning: "wait"
    case .frameRateTooLow: "more light"
    case .excessiveMotion: "hold still"
    case .faceTooClose: "move back"
    case .faceTooFar: "move closer"
    case .faceTooHigh: "move down"
    case .faceTooLow: "move up"
    case .faceNotForward: "look at the camera"
    @unknown default: "update the app"
    }
}

/// The same switch without any default: the documented set compiles as a closed one too.
private func isPositioning(_ code: ValidationCode) -> Bool {
    switch code {
    case .faceNotCentered, .faceSizeOutOfRange, .faceTooClose, .faceTooFar, .faceTooHigh, .faceTooLow, .faceNotForward:
        true
    case .ok, .noFaceFound, .multipleFacesFound, .tooDark, .tooBright, .chestNotVisible, .cameraTuning,
         .frameRateTooLow, .excessiveMotion:
        false
    }
}

@Suite("SmartSpectra app code compiles and behaves unchanged")
struct SmartSpectraVendorCodeTests {
    @Test("ValidationCode has exactly the documented cases")
    func validationCases() {
        #expect(ValidationCode.allCases.count == 16)
        #expect(ValidationCode.allCases.map(advice).allSatisfy { $0 != "update the app" })
        #expect(ValidationCode.allCases.filter(isPositioning).count == 7)
    }

    @Test("SmartSpectraError.localizedDescription is the error's message")
    func errorText() {
        let error: any Error = SmartSpectraError(code: .nonMonotonicTimestamp, message: "Timestamps must increase.")
        #expect(error.localizedDescription == "Timestamps must increase.")
        let result = FrameSubmissionResult.rejected(SmartSpectraError(code: .timestampGap, message: "Gap over 2 s."))
        #expect(result.error?.localizedDescription == "Gap over 2 s.")
    }

    @Test("a metrics JSON error reads as where and what")
    func jsonErrorText() {
        let error: any Error = MetricsJSONError(code: .unknownField, message: "no such field", path: "cardio.x")
        #expect(error.localizedDescription == "unknownField at cardio.x: no such field")
    }
}
