import CommandSupport
import Foundation
import Synchronization
import Testing

@Suite("What both commands share: exit codes, argument walking, suggestions")
struct CommandSupportTests {
    @Test("one exit-code table with distinct, documented numbers")
    func exitCodeTable() {
        #expect(ExitCode.all.map(\.rawValue) == [0, 64, 65, 69, 70, 73])
        #expect(Set(ExitCode.all.map(\.description)).count == ExitCode.all.count)
        #expect(ExitCode.usage.description == "usage (64)")
    }

    @Test("options with inline and separate values, flags, a stray positional")
    func argumentCursor() throws {
        var cursor = ArgumentCursor(["--fps=24", "--duration", "3", "extra", "--quiet"])
        let first = try #require(try cursor.nextOption())
        #expect(first.0 == "--fps" && first.1 == "24")
        let second = try #require(try cursor.nextOption())
        #expect(try cursor.value(for: second.0, inline: second.1) == "3")
        let third = try #require(try cursor.nextOption())
        #expect(third.0 == "--quiet")
        #expect(try cursor.nextOption() == nil)
        #expect(cursor.strayPositional == "extra")

        var missing = ArgumentCursor(["--duration", "--quiet"])
        let option = try #require(try missing.nextOption())
        #expect(throws: UsageError.self) { try missing.value(for: option.0, inline: option.1) }
    }

    @Test("a close typo gets a suggestion naming the tool's help otherwise")
    func suggestions() {
        #expect(OptionSuggestion.unknownOptionMessage("--listne", known: ["--listen"], tool: "glasses-sim", command: nil)
            .contains("Did you mean '--listen'?"))
        #expect(OptionSuggestion.unknownOptionMessage("--zzzzzz", known: ["--listen"], tool: "glasses-sim", command: nil)
            .contains("See glasses-sim --help."))
    }

    @Test("one file however it is spelled: ./a, an absolute path, a link; a missing folder and a file as folder said plainly")
    func sameFileAndFolderProblems() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("same-file-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let target = folder.appendingPathComponent("run.ndjson").path
        try Data("{}".utf8).write(to: URL(fileURLWithPath: target))
        let link = folder.appendingPathComponent("link.ndjson").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        #expect(OutputPathCheck.sameFile(target, link))
        #expect(OutputPathCheck.sameFile(target, folder.path + "/./run.ndjson"))
        #expect(OutputPathCheck.sameFile(folder.path + "/new.csv", folder.path + "/sub/../new.csv"), "files not made yet")
        #expect(!OutputPathCheck.sameFile(target, folder.path + "/other.ndjson"))
        #expect(OutputPathCheck.firstClash([("-o", target), ("--report", "x.html"), ("--truth-out", link)])! == ("-o", "--truth-out"))
        #expect(OutputPathCheck.problem(writing: target + "/x.csv") == "'\(target)' is a file, not a folder")
        #expect(OutputPathCheck.problem(writing: folder.path + "/none/x.csv")?.contains("does not exist") == true)
    }

    @Test("an output through a link replaces the link's target and keeps the link; a FIFO is written into, not replaced")
    func outputFileWriter() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("output-writer-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let target = folder.appendingPathComponent("target.xml").path
        try Data("old".utf8).write(to: URL(fileURLWithPath: target))
        let link = folder.appendingPathComponent("link.xml").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        try OutputFileWriter.write(Data("<new/>".utf8), to: link)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == target, "the link is still a link")
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "<new/>")
        // A FIFO: a reader on another thread gets the bytes, and the path is still a FIFO afterwards.
        let fifo = folder.appendingPathComponent("pipe.xml").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let received = Mutex<String?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread {
            let data = FileHandle(forReadingAtPath: fifo)?.readDataToEndOfFile() ?? Data()
            received.withLock { $0 = String(decoding: data, as: UTF8.self) }
            done.signal()
        }.start()
        try OutputFileWriter.write(Data("<through/>".utf8), to: fifo)
        #expect(done.wait(timeout: .now() + 20) == .success)
        #expect(received.withLock { $0 } == "<through/>")
        var status = stat()
        #expect(stat(fifo, &status) == 0 && (status.st_mode & S_IFMT) == S_IFIFO, "still a FIFO")
        // A new file, and a folder.
        try OutputFileWriter.write(Data("x".utf8), to: folder.appendingPathComponent("new.xml").path)
        #expect(throws: (any Error).self) { try OutputFileWriter.write(Data("x".utf8), to: folder.path) }
    }
}
