/// What ``CustomInput/sendFrame(_:timestampUs:)`` did with a frame.
///
/// Acceptance means the pixels were consumed (copied), not that processing has finished: observe
/// ``SmartSpectraSDK/metrics`` or ``SmartSpectraSDK/metricsUpdates(bufferingPolicy:)`` for results.
public enum FrameSubmissionResult: Sendable, Hashable {
    /// The frame was copied into the SDK; the caller may reuse or release its buffer.
    case accepted
    /// The frame was not used; the error says why (`invalidState`, `frameConversionFailed`,
    /// `nonMonotonicTimestamp` or `timestampGap`).
    case rejected(SmartSpectraError)

    /// Whether the frame was accepted.
    public var isAccepted: Bool {
        if case .accepted = self { return true }
        return false
    }

    /// The rejection error, or nil when accepted.
    public var error: SmartSpectraError? {
        if case .rejected(let error) = self { return error }
        return nil
    }
}
