/// Where the SDK's processing lifecycle is. Orthogonal to ``ValidationStatus``.
///
/// `idle → starting → running → stopping → idle`; a failed start ends in `error`, from which `start()` may be tried
/// again. With custom input the SDK moves from `starting` to `running` when the first frame has been processed, so
/// send frames as soon as `start()` returns; do not wait for `running`.
public enum ProcessingStatus: Int, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Not running.
    case idle = 1
    /// Started and accepting frames; no frame processed yet.
    case starting = 2
    /// Frames are being processed.
    case running = 3
    /// Teardown in progress; returns to idle.
    case stopping = 4
    /// Something went wrong; see ``SmartSpectraSDK/error``.
    case error = 5

    /// The case name, e.g. `running`.
    public var description: String {
        switch self {
        case .idle: "idle"
        case .starting: "starting"
        case .running: "running"
        case .stopping: "stopping"
        case .error: "error"
        }
    }
}
