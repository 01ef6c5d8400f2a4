import Foundation
import Synchronization
import Testing

/// Runs a built binary (`glasses-bridge` by default, or `glasses-sim`), out of process, reading its output while it runs.
///
/// Building it is the test command's job (`swift build --build-tests` builds every product next to the test
/// bundle); the runner finds it in the test bundle's directory.
final class BinaryRunner: Sendable {
    struct Output {
        let status: Int32
        let stdout: String
        let stderr: String
        var lines: [String] { stdout.split(separator: "\n").map(String.init) }
    }

    /// The process's peak resident memory so far (`VmHWM` in /proc), in bytes; nil once it has exited.
    var peakResidentBytes: Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
              let kilobytes = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
        else { return nil }
        return kilobytes * 1024
    }

    /// The built binary, if it is there.
    static func binaryURL(named name: String = "glasses-bridge") -> URL? {
        var candidates: [URL] = []
        candidates.append(Bundle.main.bundleURL.deletingLastPathComponent())
        if let executable = Bundle.main.executableURL { candidates.append(executable.deletingLastPathComponent()) }
        candidates.append(URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent())
        for directory in candidates {
            var url = directory
            // On Linux the test bundle is a directory or an executable; walk up until the products directory.
            for _ in 0..<4 {
                let candidate = url.appendingPathComponent(name)
                if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
                url.deleteLastPathComponent()
            }
        }
        return nil
    }

    private let process = Process()
    private let stdoutText = Mutex("")
    private let stderrText = Mutex("")
    private let readersDone = DispatchGroup()
    private let lineSeen = DispatchSemaphore(value: 0)
    private let watchedFragment: String?
    private let watchedPredicate: (@Sendable (String) -> Bool)?
    private let watchedFound = Mutex(false)
    private let input: Pipe?

    /// Starts the binary with `arguments`; `signalWhen` makes ``waitForWatchedLine(timeout:)`` return once a
    /// stdout line contains that text.
    /// `signalWhenOutput`, when given, decides instead of the fragment, from all stdout read so far.
    /// `onTerminal` runs the binary on a pseudo-terminal (util-linux `script`): its standard input and error are a
    /// terminal, both are read here as standard output, and ``type(_:)`` types at it.
    init(
        _ arguments: [String], binary name: String = "glasses-bridge", signalWhen fragment: String? = nil,
        signalWhenOutput predicate: (@Sendable (String) -> Bool)? = nil, environment: [String: String] = [:],
        onTerminal: Bool = false
    ) throws {
        let binary = try #require(Self.binaryURL(named: name), "\(name) is not built next to the tests: run swift build --build-tests first")
        watchedFragment = fragment
        watchedPredicate = predicate
        if onTerminal {
            let quoted = ([binary.path] + arguments).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }
            process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
            process.arguments = ["--quiet", "--return", "--command", quoted.joined(separator: " "), "/dev/null"]
            input = Pipe()
        } else {
            process.executableURL = binary
            process.arguments = arguments
            input = nil
        }
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = input ?? FileHandle.nullDevice
        try process.run()
        read(out.fileHandleForReading, isStdout: true)
        read(err.fileHandleForReading, isStdout: false)
    }

    private func append(_ chunk: String, isStdout: Bool) -> Bool {
        guard isStdout else {
            stderrText.withLock { $0 += chunk }
            return false
        }
        return stdoutText.withLock { text -> Bool in
            text += chunk
            if let watchedPredicate { return watchedPredicate(text) }
            guard let fragment = watchedFragment else { return false }
            return text.contains(fragment)
        }
    }

    private func read(_ handle: FileHandle, isStdout: Bool) {
        readersDone.enter()
        let thread = Thread { [self] in
            while true {
                let data = handle.availableData
                if data.isEmpty { break }
                let chunk = String(decoding: data, as: UTF8.self)
                let found = append(chunk, isStdout: isStdout)
                if found, watchedFound.withLock({ seen in defer { seen = true }; return !seen }) { lineSeen.signal() }
            }
            readersDone.leave()
        }
        thread.start()
    }

    /// Waits (real time, bounded) until stdout contains the watched text; false on timeout.
    func waitForWatchedLine(timeout: Double) -> Bool {
        lineSeen.wait(timeout: .now() + timeout) == .success
    }

    /// Standard output read so far.
    var stdoutSoFar: String { stdoutText.withLock { $0 } }

    /// Standard error read so far.
    var stderrSoFar: String { stderrText.withLock { $0 } }

    /// Waits (real time, bounded, polling) until `predicate` holds for the standard output read so far.
    func waitForOutput(timeout: Double, until predicate: (String) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if predicate(stdoutSoFar) { return true }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return predicate(stdoutSoFar)
    }

    /// Types `text` at the terminal (only with `onTerminal`).
    func type(_ text: String) {
        input?.fileHandleForWriting.write(Data(text.utf8))
    }

    /// Sends a signal to the process.
    func send(_ signal: Int32) {
        kill(process.processIdentifier, signal)
    }

    /// Waits for the process to end (pipes are drained first, so large outputs cannot deadlock), killing it after
    /// `timeout` seconds.
    func finish(timeout: Double = 300) -> Output {
        if readersDone.wait(timeout: .now() + timeout) == .timedOut {
            process.terminate()
            readersDone.wait()
        }
        process.waitUntilExit()
        try? input?.fileHandleForWriting.close()
        return Output(status: process.terminationStatus, stdout: stdoutText.withLock { $0 }, stderr: stderrText.withLock { $0 })
    }

    /// Runs to completion.
    static func run(_ arguments: [String], binary: String = "glasses-bridge", timeout: Double = 300) throws -> Output {
        try BinaryRunner(arguments, binary: binary).finish(timeout: timeout)
    }
}

/// Parses one NDJSON line into an object.
func jsonObject(_ line: String) throws -> [String: Any] {
    let value = try JSONSerialization.jsonObject(with: Data(line.utf8))
    return try #require(value as? [String: Any], "not a JSON object: \(line)")
}
