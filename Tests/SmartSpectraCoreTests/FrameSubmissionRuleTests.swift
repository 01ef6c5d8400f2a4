import Testing
@testable import SmartSpectraCore

/// One row of the custom-input rules: frames sent before (all must be accepted), then the frame under test.
struct SubmissionCase: Sendable, CustomTestStringConvertible {
    let name: String
    let previousTimestamps: [Int64]
    let timestampUs: Int64
    let makeBuffer: @Sendable () -> PixelBuffer
    /// nil means `.accepted`.
    let expected: SmartSpectraError.Code?

    var testDescription: String { name }

    static func bgra() -> PixelBuffer { Pictures.bgra(width: 4, height: 2) }
}

private let maxTimestamp = Int64.max - 2

let submissionCases: [SubmissionCase] = [
    // Pixels.
    .init(name: "BGRA, tight rows", previousTimestamps: [], timestampUs: 0,
          makeBuffer: { Pictures.bgra(width: 4, height: 2) }, expected: nil),
    .init(name: "BGRA, padded rows", previousTimestamps: [], timestampUs: 1_000,
          makeBuffer: { Pictures.bgra(width: 3, height: 3, padding: 20) }, expected: nil),
    .init(name: "BGRA, odd dimensions", previousTimestamps: [], timestampUs: 1_000,
          makeBuffer: { Pictures.bgra(width: 3, height: 5) }, expected: nil),
    .init(name: "NV12 video range, even dimensions", previousTimestamps: [], timestampUs: 1_000,
          makeBuffer: { Pictures.nv12(width: 4, height: 4) }, expected: nil),
    .init(name: "NV12 full range, even dimensions", previousTimestamps: [], timestampUs: 1_000,
          makeBuffer: { Pictures.nv12(width: 4, height: 4, fullRange: true) }, expected: nil),
    .init(name: "NV12, padded rows and separate planes", previousTimestamps: [], timestampUs: 1_000,
          makeBuffer: {
              PixelBuffer(format: .nv12VideoRange, width: 4, height: 2, planes: [
                  PixelPlane(width: 4, height: 2, bytesPerRow: 16, offset: 0),
                  PixelPlane(width: 2, height: 1, bytesPerRow: 8, offset: 64),
              ], byteCount: 72)
          }, expected: nil),
    .init(name: "NV12, odd width", previousTimestamps: [], timestampUs: 1_000,
          makeBuffer: { Pictures.nv12(width: 5, height: 4) }, expected: .frameConversionFailed),
    .init(name: "NV12, odd height", previousTimestamps: [], timestampUs: 1_000,
          makeBuffer: { Pictures.nv12(width: 4, height: 3, fullRange: true) }, expected: .frameConversionFailed),
    .init(name: "unsupported format RGBA", previousTimestamps: [], timestampUs: 1_000,
          makeBuffer: {
              PixelBuffer(format: .rgba32, width: 2, height: 2,
                          planes: [PixelPlane(width: 2, height: 2, bytesPerRow: 8, offset: 0)], byteCount: 16)
          }, expected: .frameConversionFailed),
    .init(name: "unsupported format, tri-planar 4:2:0", previousTimestamps: [], timestampUs: 1_000,
          makeBuffer: {
              PixelBuffer(format: .yuv420Planar, width: 2, height: 2, planes: [
                  PixelPlane(width: 2, height: 2, bytesPerRow: 2, offset: 0),
                  PixelPlane(width: 1, height: 1, bytesPerRow: 1, offset: 4),
                  PixelPlane(width: 1, height: 1, bytesPerRow: 1, offset: 5),
              ], byteCount: 6)
          }, expected: .frameConversionFailed),
    .init(name: "unsupported format, 10-bit NV12", previousTimestamps: [], timestampUs: 1_000,
          makeBuffer: {
              PixelBuffer(format: .nv12TenBitVideoRange, width: 2, height: 2, planes: [
                  PixelPlane(width: 2, height: 2, bytesPerRow: 4, offset: 0),
                  PixelPlane(width: 1, height: 1, bytesPerRow: 4, offset: 8),
              ], byteCount: 12)
          }, expected: .frameConversionFailed),
    .init(name: "NV12, CbCr plane not half size", previousTimestamps: [], timestampUs: 1_000,
          makeBuffer: {
              PixelBuffer(format: .nv12VideoRange, width: 4, height: 4, planes: [
                  PixelPlane(width: 4, height: 4, bytesPerRow: 4, offset: 0),
                  PixelPlane(width: 2, height: 1, bytesPerRow: 4, offset: 16),
              ], byteCount: 24)
          }, expected: .frameConversionFailed),
    .init(name: "NV12, overlapping planes", previousTimestamps: [], timestampUs: 1_000,
          makeBuffer: {
              PixelBuffer(format: .nv12FullRange, width: 4, height: 4, planes: [
                  PixelPlane(width: 4, height: 4, bytesPerRow: 4, offset: 0),
                  PixelPlane(width: 2, height: 2, bytesPerRow: 4, offset: 8),
              ], byteCount: 24)
          }, expected: .frameConversionFailed),
    .init(name: "NV12, one plane only", previousTimestamps: [], timestampUs: 1_000,
          makeBuffer: {
              PixelBuffer(format: .nv12VideoRange, width: 4, height: 4,
                          planes: [PixelPlane(width: 4, height: 4, bytesPerRow: 4, offset: 0)], byteCount: 24)
          }, expected: .frameConversionFailed),
    .init(name: "BGRA, row shorter than 4 × width", previousTimestamps: [], timestampUs: 1_000,
          makeBuffer: {
              PixelBuffer(format: .bgra32, width: 4, height: 2,
                          planes: [PixelPlane(width: 4, height: 2, bytesPerRow: 12, offset: 0)], byteCount: 24)
          }, expected: .frameConversionFailed),
    .init(name: "BGRA, empty frame", previousTimestamps: [], timestampUs: 1_000,
          makeBuffer: { PixelBuffer.makeBGRA(width: 0, height: 0) }, expected: .frameConversionFailed),
    // Timestamps.
    .init(name: "first frame at 0", previousTimestamps: [], timestampUs: 0, makeBuffer: SubmissionCase.bgra, expected: nil),
    .init(name: "strictly increasing by 1 µs", previousTimestamps: [10], timestampUs: 11,
          makeBuffer: SubmissionCase.bgra, expected: nil),
    .init(name: "timestamp equal to the previous", previousTimestamps: [5_000], timestampUs: 5_000,
          makeBuffer: SubmissionCase.bgra, expected: .nonMonotonicTimestamp),
    .init(name: "timestamp backward", previousTimestamps: [5_000], timestampUs: 4_999,
          makeBuffer: SubmissionCase.bgra, expected: .nonMonotonicTimestamp),
    .init(name: "gap of exactly 2 000 000 µs", previousTimestamps: [1_000], timestampUs: 2_001_000,
          makeBuffer: SubmissionCase.bgra, expected: nil),
    .init(name: "gap of 2 000 001 µs", previousTimestamps: [1_000], timestampUs: 2_001_001,
          makeBuffer: SubmissionCase.bgra, expected: .timestampGap),
    .init(name: "Int64.max - 2", previousTimestamps: [], timestampUs: maxTimestamp,
          makeBuffer: SubmissionCase.bgra, expected: .nonMonotonicTimestamp),
    .init(name: "Int64.max", previousTimestamps: [], timestampUs: Int64.max,
          makeBuffer: SubmissionCase.bgra, expected: .nonMonotonicTimestamp),
    .init(name: "just below Int64.max - 2", previousTimestamps: [], timestampUs: maxTimestamp - 1,
          makeBuffer: SubmissionCase.bgra, expected: nil),
    .init(name: "just below Int64.max - 2 after a close predecessor", previousTimestamps: [maxTimestamp - 2_000_001],
          timestampUs: maxTimestamp - 1, makeBuffer: SubmissionCase.bgra, expected: nil),
    .init(name: "negative timestamp", previousTimestamps: [], timestampUs: -1,
          makeBuffer: SubmissionCase.bgra, expected: .nonMonotonicTimestamp),
    .init(name: "Int64.min", previousTimestamps: [], timestampUs: Int64.min,
          makeBuffer: SubmissionCase.bgra, expected: .nonMonotonicTimestamp),
    // Order of checks: the timestamp is judged before the pixels.
    .init(name: "backward timestamp and odd NV12: timestamp wins", previousTimestamps: [5_000], timestampUs: 4_000,
          makeBuffer: { Pictures.nv12(width: 3, height: 3) }, expected: .nonMonotonicTimestamp),
    .init(name: "gap and unsupported format: gap wins", previousTimestamps: [0], timestampUs: 3_000_000,
          makeBuffer: { PixelBuffer(format: .rgba32, width: 1, height: 1,
                                    planes: [PixelPlane(width: 1, height: 1, bytesPerRow: 4, offset: 0)], byteCount: 4) },
          expected: .timestampGap),
]

@Suite("Custom input: pixel and timestamp rules")
struct FrameSubmissionRuleTests {
    @Test("sendFrame result", arguments: submissionCases)
    func submission(_ row: SubmissionCase) async throws {
        let harness = try await Harness.started()
        for timestamp in row.previousTimestamps {
            #expect(harness.input.sendFrame(SubmissionCase.bgra(), timestampUs: timestamp) == .accepted)
        }
        let result = harness.input.sendFrame(row.makeBuffer(), timestampUs: row.timestampUs)
        if let expected = row.expected {
            #expect(result.code == expected, "\(result)")
            #expect(result.error?.retryable == false)
            #expect(result.error?.message.isEmpty == false)
        } else {
            #expect(result == .accepted)
        }
        try await harness.sdk.stop()
        let processed = harness.backend.frames.map(\.timestampUs)
        let expectedProcessed = row.previousTimestamps + (row.expected == nil ? [row.timestampUs] : [])
        #expect(processed == expectedProcessed)
        #expect(harness.sdk.frameStatistics.rejected == (row.expected == nil ? 0 : 1))
    }

    @Test("a rejected frame does not advance the timeline")
    func rejectedFrameLeavesTimeline() async throws {
        let harness = try await Harness.started()
        #expect(harness.input.sendFrame(SubmissionCase.bgra(), timestampUs: 1_000) == .accepted)
        #expect(harness.input.sendFrame(Pictures.nv12(width: 3, height: 2), timestampUs: 9_000).code == .frameConversionFailed)
        #expect(harness.input.sendFrame(SubmissionCase.bgra(), timestampUs: 3_000_000).code == .timestampGap)
        // Neither rejected timestamp counts: 2 000 µs is after 1 000 µs and within 2 s of it.
        #expect(harness.input.sendFrame(SubmissionCase.bgra(), timestampUs: 2_000) == .accepted)
        try await harness.sdk.stop()
        #expect(harness.backend.frames.map(\.timestampUs) == [1_000, 2_000])
    }

    @Test("error codes keep their documented numbers")
    func errorNumbers() {
        let numbers = SmartSpectraError.Code.allCases.map { "\($0)=\($0.rawValue)" }
        #expect(numbers == [
            "invalidState=1", "authenticationFailed=2", "configurationFailed=3", "creditExhausted=4", "networkError=5",
            "serverError=6", "inputUnavailable=7", "processingFailed=8", "frameConversionFailed=9",
            "nonMonotonicTimestamp=10", "timestampGap=11",
        ])
        #expect(FrameTransform.allCases.map(\.rawValue) == [0, 1, 2, 3, 4, 5])
    }
}

/// A state in which a handle is asked to submit.
enum WrongStateCase: String, Sendable, CaseIterable, CustomTestStringConvertible {
    case beforeStart = "selected but not started"
    case afterStop = "after stop()"
    case afterReset = "after reset()"
    case staleHandleWhileStopped = "stale handle after re-selecting, stopped"
    case staleHandleWhileRunning = "stale handle after re-selecting, new handle running"
    case afterFailedStart = "after a failed start"

    var testDescription: String { rawValue }
}

@Suite("Custom input: state rules")
struct FrameSubmissionStateTests {
    @Test("sendFrame is invalidState", arguments: WrongStateCase.allCases)
    func wrongState(_ row: WrongStateCase) async throws {
        let backend = RecordingBackend()
        let sdk = SmartSpectraSDK(config: SmartSpectraConfig(logLevel: .none), backend: backend)
        let input = try sdk.useCustomInput()
        switch row {
        case .beforeStart:
            break
        case .afterStop:
            try await sdk.start()
            #expect(input.sendFrame(SubmissionCase.bgra(), timestampUs: 1) == .accepted)
            try await sdk.stop()
        case .afterReset:
            try await sdk.start()
            #expect(input.sendFrame(SubmissionCase.bgra(), timestampUs: 1) == .accepted)
            try await sdk.reset()
        case .staleHandleWhileStopped:
            _ = try sdk.useCustomInput(frameTransform: .rotate180)
        case .staleHandleWhileRunning:
            let fresh = try sdk.useCustomInput()
            try await sdk.start()
            #expect(fresh.sendFrame(SubmissionCase.bgra(), timestampUs: 1) == .accepted)
        case .afterFailedStart:
            backend.setStartFailure(SmartSpectraError(code: .processingFailed, message: "no engine"))
            await #expect(throws: SmartSpectraError.self) { try await sdk.start() }
        }
        let result = input.sendFrame(SubmissionCase.bgra(), timestampUs: 2)
        #expect(result.code == .invalidState, "\(result)")
        try await sdk.stop()
        #expect(!backend.frames.map(\.timestampUs).contains(2))
    }
}
