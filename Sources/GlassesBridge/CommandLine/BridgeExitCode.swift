/// The process exit codes of `glasses-bridge`, following the BSD `sysexits.h` convention.
public struct BridgeExitCode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The numeric exit status.
    public let rawValue: Int32

    /// Wraps a numeric exit status.
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// 0: the run ended normally (duration reached, end of file, SIGINT or SIGTERM).
    public static let success = BridgeExitCode(rawValue: 0)
    /// 64 (`EX_USAGE`): the command line is wrong; nothing was started.
    public static let usage = BridgeExitCode(rawValue: 64)
    /// 69 (`EX_UNAVAILABLE`): the device cannot be reached or cannot stream (no socket, no Bluetooth, thermal,
    /// battery, permission denied, a stream that stalls over and over).
    public static let deviceUnavailable = BridgeExitCode(rawValue: 69)
    /// 70 (`EX_SOFTWARE`): an internal error (a bug, or a module that failed in a way the bridge cannot handle).
    public static let internalError = BridgeExitCode(rawValue: 70)

    /// `NAME (number)`.
    public var description: String {
        switch rawValue {
        case 0: "success (0)"
        case 64: "usage (64)"
        case 69: "device unavailable (69)"
        case 70: "internal error (70)"
        default: "exit \(rawValue)"
        }
    }
}
