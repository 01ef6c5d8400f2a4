import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Writes a whole output file (a report, a JUnit file, ground truth) the way a person expects of a path.
///
/// A regular file (or a new one) is replaced atomically: a reader never sees half of it. A symbolic link is
/// followed, so the file it points at is replaced and the link stays. Anything else (`/dev/stdout`, a terminal, a
/// FIFO) is written into, never replaced: an atomic write renames a new file over the path, which turned a device
/// node into a regular file and cut a FIFO's reader off.
public enum OutputFileWriter {
    /// Writes `data` to `path` (see the type's notes).
    /// - Throws: the file system's error (`FileErrorText.reason` puts it in words).
    public static func write(_ data: Data, to path: String) throws {
        let target = resolved(path)
        var status = stat()
        if stat(target, &status) == 0, (status.st_mode & S_IFMT) != S_IFREG {
            try writeInPlace(data, to: target, isDirectory: (status.st_mode & S_IFMT) == S_IFDIR)
            return
        }
        try data.write(to: URL(fileURLWithPath: target), options: .atomic)
    }

    /// `path` with its symbolic links followed when it exists; else as given.
    private static func resolved(_ path: String) -> String {
        guard let real = realpath(path, nil) else { return path }
        defer { free(real) }
        return String(cString: real)
    }

    private static func writeInPlace(_ data: Data, to path: String, isDirectory: Bool) throws {
        guard !isDirectory else { throw POSIXError(.EISDIR) }
        let descriptor = open(path, O_WRONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        defer { close(descriptor) }
        let failure = ConsoleText.writeAll([UInt8](data), to: descriptor)
        if failure != 0 { throw POSIXError(POSIXErrorCode(rawValue: failure) ?? .EIO) }
    }
}
