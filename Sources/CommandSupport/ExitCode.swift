/// The process exit codes of `glasses-bridge` and `glasses-sim`: one table, the same meaning in both commands,
/// following the BSD `sysexits.h` convention. `docs/CLI.md` lists it.
public struct ExitCode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The numeric exit status.
    public let rawValue: Int32

    /// Wraps a numeric exit status.
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// 0: the run did what was asked (duration reached, end of a complete file, SIGINT or SIGTERM after frames
    /// flowed), and every file asked for was written.
    public static let success = ExitCode(rawValue: 0)
    /// 64 (`EX_USAGE`): the command line is wrong; nothing was started.
    public static let usage = ExitCode(rawValue: 64)
    /// 65 (`EX_DATAERR`): an input file is malformed or truncated (a recording, a scenario).
    public static let dataError = ExitCode(rawValue: 65)
    /// 69 (`EX_UNAVAILABLE`): the device cannot be reached or cannot stream (no socket, no Bluetooth, thermal,
    /// battery, permission denied, a stream that stalls over and over, no frame ever arrived).
    public static let deviceUnavailable = ExitCode(rawValue: 69)
    /// 70 (`EX_SOFTWARE`): an internal error (a bug, or a module that failed in a way the bridge cannot handle).
    public static let internalError = ExitCode(rawValue: 70)
    /// 73 (`EX_CANTCREAT`): an output file (`--output`, `--record`, `--video-out`, `--write`, `--truth`) cannot be
    /// created or written.
    public static let cannotWriteOutput = ExitCode(rawValue: 73)

    /// Every code either command returns, in order.
    public static let all: [ExitCode] = [.success, .usage, .dataError, .deviceUnavailable, .internalError, .cannotWriteOutput]

    /// `name (number)`.
    public var description: String {
        switch rawValue {
        case 0: "success (0)"
        case 64: "usage (64)"
        case 65: "bad input data (65)"
        case 69: "device unavailable (69)"
        case 70: "internal error (70)"
        case 73: "cannot write output (73)"
        default: "exit \(rawValue)"
        }
    }
}
