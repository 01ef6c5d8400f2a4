import Foundation
import GlassesMedia
import Testing

/// File errors said as the system says them, never as Foundation's domain and number.
@Suite("file error text")
struct FileErrorTextTests {
    @Test("a folder read as a file, a missing file, a full disk and an unknown error each get words")
    func reasons() throws {
        let folder = FileManager.default.temporaryDirectory.path
        let folderError = try require(throwing: { _ = try Data(contentsOf: URL(fileURLWithPath: folder)) })
        #expect(FileErrorText.reason(folderError) == "is a directory", "\((folderError as NSError).userInfo)")
        let missingError = try require(throwing: { _ = try Data(contentsOf: URL(fileURLWithPath: "/nonexistent-\(getpid())/a")) })
        #expect(FileErrorText.reason(missingError) == "no such file or directory", "\(missingError)")
        #expect(FileErrorText.reason(NSError(domain: NSCocoaErrorDomain, code: NSFileWriteOutOfSpaceError)) == "no space left on device")
        #expect(!FileErrorText.reason(NSError(domain: NSCocoaErrorDomain, code: 4242)).contains("ErrorDomain"))
    }
}

/// The error `body` throws, or a recorded issue when it throws none.
private func require(throwing body: () throws -> Void) throws -> any Error {
    do { try body() } catch { return error }
    Issue.record("expected an error")
    throw CancellationError()
}
