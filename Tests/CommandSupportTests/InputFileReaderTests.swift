import CommandSupport
import Foundation
import Testing

/// Whole input files, bounded: regular files, pipes and devices alike.
@Suite("Reading an input file, at most a limit")
struct InputFileReaderTests {
    static func failure(_ path: String, limit: Int) -> InputFileReader.Failure? {
        do {
            _ = try InputFileReader.read(path, limit: limit)
            return nil
        } catch {
            return error
        }
    }

    @Test("a file within the limit is read whole; past it, refused before it is read")
    func regularFile() throws {
        let path = NSTemporaryDirectory() + "input-reader-\(getpid()).txt"
        defer { unlink(path) }
        try Data(repeating: 0x61, count: 3 << 20).write(to: URL(fileURLWithPath: path))
        #expect(try InputFileReader.read(path, limit: 3 << 20).count == 3 << 20)
        let tooLarge = Self.failure(path, limit: 2 << 20)
        #expect(tooLarge?.code == .tooLarge && tooLarge?.reason == "larger than 2 MiB, the most this reads", "\(String(describing: tooLarge))")
    }

    @Test("a device without end is cut at the limit; a folder and a missing file say so in words")
    func devicesFoldersMissing() {
        #expect(Self.failure("/dev/zero", limit: 4 << 20)?.code == .tooLarge)
        #expect(Self.failure(NSTemporaryDirectory(), limit: 1 << 20)?.reason == "is a directory")
        #expect(Self.failure("/nonexistent-\(getpid())/x", limit: 1 << 20)?.reason == "no such file or directory")
    }

    @Test("a pipe is read to its end")
    func pipe() throws {
        let path = NSTemporaryDirectory() + "input-reader-\(getpid()).fifo"
        unlink(path)
        defer { unlink(path) }
        #expect(mkfifo(path, 0o600) == 0)
        let writer = Thread {
            let handle = FileHandle(forWritingAtPath: path)
            for _ in 0..<5 { handle?.write(Data(repeating: 0x62, count: 300_000)) }
            try? handle?.close()
        }
        writer.start()
        #expect(try InputFileReader.read(path, limit: 2 << 20).count == 1_500_000)
    }
}
