import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Reads a whole input file the commands were given (a run, a reference, a plan), at most `limit` bytes.
///
/// A regular file, a pipe (`report <(zcat run.ndjson.gz)`, `/dev/stdin`) or a device all read the same way, until
/// their end; a file that holds more than the limit (or a device without end, `/dev/zero`) is refused once the limit
/// is passed, so that no input makes the command hold more than it asked for. Errors say why in words.
public enum InputFileReader {
    /// Why a file could not be read.
    public struct Failure: Error, Sendable, Hashable, CustomStringConvertible {
        /// What went wrong.
        public enum Code: String, Sendable, Hashable {
            /// It could not be opened or read (no such file, a folder, no permission).
            case unreadable
            /// It holds more than the limit.
            case tooLarge
        }

        /// What went wrong.
        public var code: Code
        /// The reason in words, without the path: "no such file or directory", "larger than 64 MiB".
        public var reason: String
        /// The reason.
        public var description: String { reason }
    }

    /// The file's bytes.
    /// - Throws: ``Failure``.
    public static func read(_ path: String, limit: Int) throws(Failure) -> Data {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw Failure(code: .unreadable, reason: Self.reason(errno)) }
        defer { close(descriptor) }
        var status = stat()
        if fstat(descriptor, &status) == 0 {
            if (status.st_mode & S_IFMT) == S_IFDIR { throw Failure(code: .unreadable, reason: Self.reason(EISDIR)) }
            if (status.st_mode & S_IFMT) == S_IFREG, status.st_size > limit { throw tooLarge(limit) }
        }
        var data = Data()
        let chunk = 1 << 20
        var buffer = [UInt8](repeating: 0, count: chunk)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, chunk) }
            if count < 0 {
                if errno == EINTR { continue }
                throw Failure(code: .unreadable, reason: Self.reason(errno))
            }
            if count == 0 { return data }
            guard data.count + count <= limit else { throw tooLarge(limit) }
            data.append(contentsOf: buffer[0..<count])
        }
    }

    private static func tooLarge(_ limit: Int) -> Failure {
        let size = limit >= 1 << 30 && limit % (1 << 30) == 0 ? "\(limit >> 30) GiB" : "\(limit >> 20) MiB"
        return Failure(code: .tooLarge, reason: "larger than \(size), the most this reads")
    }

    private static func reason(_ code: Int32) -> String {
        String(cString: strerror(code)).lowercased()
    }
}
