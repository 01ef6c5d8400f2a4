#if canImport(Glibc)
import Glibc
#endif

/// Text to standard output or standard error that never stops the program.
///
/// `FileHandle.write(_:)` traps when the write fails (a log redirected to a full disk, a file past its size limit);
/// a command's messages must not take the command down with them. A stream that cannot be written loses the text:
/// there is nowhere left to say so.
public enum ConsoleText {
    /// Writes `text` to standard output.
    public static func standardOutput(_ text: String) { write(text, to: STDOUT_FILENO) }

    /// Writes `text` to standard error.
    public static func standardError(_ text: String) { write(text, to: STDERR_FILENO) }

    /// Writes all of `text` to `descriptor`, retrying after signals and short writes; gives up on an error.
    public static func write(_ text: String, to descriptor: Int32) {
        _ = writeAll(Array(text.utf8), to: descriptor)
    }

    /// Writes all of `bytes` to `descriptor`, retrying after signals and short writes: 0, or the `errno` of the
    /// write that failed. The one write loop of the commands (messages here, `OutputFileWriter` for devices).
    static func writeAll(_ bytes: [UInt8], to descriptor: Int32) -> Int32 {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
            if written > 0 {
                offset += written
            } else if written < 0 && errno == EINTR {
                continue
            } else {
                return written < 0 ? errno : EIO
            }
        }
        return 0
    }
}
