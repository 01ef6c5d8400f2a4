import CommandSupport
import Foundation
import GlassesBridge
import Synchronization

/// Where formatted events are written: standard output or a file, one event at a time.
public final class OutputSink: Sendable {
    private struct State {
        var formatter: any BridgeEventFormatter
        var writeFailure: String?
    }

    private let state: Mutex<State>
    private let handle: FileHandle
    private let closesHandle: Bool

    /// Whether output goes to a terminal (and so gets the live status line).
    public let isTerminal: Bool

    /// Opens the output: standard output when `path` is nil, else the file (created or truncated).
    /// - Throws: ``BridgeUsageError`` when the file cannot be created.
    public init(format: OutputFormat, path: String?) throws(BridgeUsageError) {
        if let path {
            guard FileManager.default.createFile(atPath: path, contents: nil),
                  let file = FileHandle(forWritingAtPath: path)
            else {
                let reason = OutputPathCheck.problem(writing: path) ?? "the file could not be created"
                throw BridgeUsageError("cannot write --output \(path): \(reason).")
            }
            handle = file
            closesHandle = true
            isTerminal = false
        } else {
            handle = FileHandle.standardOutput
            closesHandle = false
            isTerminal = isatty(STDOUT_FILENO) != 0
        }
        let formatter = makeEventFormatter(format, liveTerminal: isTerminal)
        let preamble = formatter.preamble
        state = Mutex(State(formatter: formatter))
        if !preamble.isEmpty { state.withLock { Self.append(preamble, to: handle, state: &$0) } }
    }

    /// Why writing stopped (a full disk, a closed pipe), if it did; later events are not written.
    public var writeFailure: String? { state.withLock { $0.writeFailure } }

    private static func append(_ text: String, to handle: FileHandle, state: inout State) {
        guard state.writeFailure == nil else { return }
        do {
            try handle.write(contentsOf: Data(text.utf8))
        } catch {
            state.writeFailure = "\(error.localizedDescription)"
        }
    }

    /// Formats and writes one event.
    public func write(_ event: BridgeEvent, at seconds: Double) {
        // Formatting and writing happen under the lock so lines never interleave; the write is short.
        state.withLock { state in
            let text = state.formatter.format(event, at: seconds)
            if !text.isEmpty { Self.append(text, to: handle, state: &state) }
        }
    }

    /// Flushes and closes a file output.
    public func close() {
        if closesHandle { try? handle.close() }
    }
}
