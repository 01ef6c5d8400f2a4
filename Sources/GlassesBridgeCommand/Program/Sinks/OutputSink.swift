import CommandSupport
import Foundation
import GlassesBridge
import GlassesMedia
import Synchronization

/// The run's formatted output (`--format text|ndjson|csv`, with the live line on a terminal): standard output or
/// the `--output` file, one event at a time.
package final class OutputSink: EventSink {
    private struct State {
        var formatter: any DeviceEventFormatter
        var writeFailure: String?
    }

    private let state: Mutex<State>
    private let handle: FileHandle
    private let closesHandle: Bool

    /// Whether output goes to a terminal (and so gets the live status line).
    package let isTerminal: Bool

    /// Opens the output: standard output when `path` is nil, else the file (created or truncated).
    /// - Parameters:
    ///   - context: what the formatter knows of the run (its terminal fields are filled in here).
    ///   - devices: the run's devices when there are several (each event is then tagged with its device); empty or
    ///     one device gives the one-device output.
    /// - Throws: ``BridgeUsageError`` when the file cannot be created.
    package init(
        format: OutputFormat, path: String?, context: OutputContext = OutputContext(), devices: [OutputDevice] = []
    ) throws(BridgeUsageError) {
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
        var context = context
        context.liveTerminal = isTerminal
        if isTerminal { context.width = Self.terminalWidth() }
        let formatter = makeDeviceEventFormatter(format, context: context, devices: devices)
        let preamble = formatter.preamble
        state = Mutex(State(formatter: formatter))
        if !preamble.isEmpty { state.withLock { Self.append(preamble, to: handle, state: &$0) } }
    }

    /// Why writing stopped (a full disk, a closed pipe), if it did; later events are not written.
    package var writeFailure: String? { state.withLock { $0.writeFailure } }

    private static func append(_ text: String, to handle: FileHandle, state: inout State) {
        guard state.writeFailure == nil else { return }
        do {
            try handle.write(contentsOf: Data(text.utf8))
        } catch {
            state.writeFailure = FileErrorText.reason(error)
        }
    }

    /// The terminal's width in columns: `COLUMNS` when set to a number, else the ioctl `TIOCGWINSZ` answer for
    /// standard output, else 80.
    package static func terminalWidth(environment: [String: String] = ProcessInfo.processInfo.environment) -> Int {
        if let text = environment["COLUMNS"], let columns = Int(text), columns > 0 { return columns }
        var size = winsize()
        if ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return Int(size.ws_col) }
        return 80
    }


    package func receive(_ event: BridgeEvent, device: Int, at seconds: Double) {
        write(event, device: device, at: seconds)
    }

    package func receiveTotals(_ totals: MultiDeviceTotals, at seconds: Double) {
        writeTotals(totals, at: seconds)
    }

    /// Closes a file output; the failure when writing stopped (exit 73).
    package func finish() -> BridgeFailure? {
        close()
        return writeFailure.map { BridgeFailure(.outputFailed, "the output stopped: \($0).") }
    }

    /// Formats and writes one event (of the device at index `device` in a run of several).
    package func write(_ event: BridgeEvent, device: Int = 0, at seconds: Double) {
        // Formatting and writing happen under the lock so lines never interleave; the write is short.
        state.withLock { state in
            let text = state.formatter.format(event, device: device, at: seconds)
            if !text.isEmpty { Self.append(text, to: handle, state: &state) }
        }
    }

    /// Formats and writes the totals that close a run of several devices.
    package func writeTotals(_ totals: MultiDeviceTotals, at seconds: Double) {
        state.withLock { state in
            let text = state.formatter.totals(totals, at: seconds)
            if !text.isEmpty { Self.append(text, to: handle, state: &state) }
        }
    }

    /// Flushes and closes a file output.
    package func close() {
        if closesHandle { try? handle.close() }
    }
}
