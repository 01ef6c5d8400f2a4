import Foundation
import GlassesBridge
import Synchronization

/// Where formatted events are written: standard output or a file, one event at a time.
public final class OutputSink: Sendable {
    private struct State {
        var formatter: any BridgeEventFormatter
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
            else { throw BridgeUsageError("cannot create --output file '\(path)'.") }
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
        if !preamble.isEmpty { handle.write(Data(preamble.utf8)) }
    }

    /// Formats and writes one event.
    public func write(_ event: BridgeEvent, at seconds: Double) {
        // Formatting and writing happen under the lock so lines never interleave; the write is short.
        state.withLock { state in
            let text = state.formatter.format(event, at: seconds)
            if !text.isEmpty { handle.write(Data(text.utf8)) }
        }
    }

    /// Flushes and closes a file output.
    public func close() {
        if closesHandle { try? handle.close() }
    }
}
