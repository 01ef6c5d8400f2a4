import Foundation
import SmartSpectraInput

/// Turns bridge events into output text.
package protocol BridgeEventFormatter: Sendable {
    /// The text for `event` at `seconds` of run time (empty when the event is not shown in this format).
    mutating func format(_ event: BridgeEvent, at seconds: Double) -> String
    /// Text written once before any event (a CSV header).
    var preamble: String { get }
}

extension BridgeEventFormatter {
    /// No preamble.
    package var preamble: String { "" }
}

/// How much the text format prints: the value of `--quiet` / `--verbose`.
package enum Verbosity: String, Sendable, Hashable, CaseIterable {
    /// Only errors and the summary.
    case quiet
    /// States, validation, warnings, errors, the live line (or a stats line every 5 s) and the summary.
    case normal
    /// Everything: notices (restarts, reconnects, retries, the source) and more stats lines.
    case verbose
}

/// What a formatter knows of the run before it starts.
package struct OutputContext: Sendable {
    /// Whether the output is a terminal that gets a live line.
    package var liveTerminal = false
    /// The terminal's width in columns (the live line never exceeds it).
    package var width = 80
    /// How much text output prints.
    package var verbosity = Verbosity.normal
    /// Whether the source is the simulator (NDJSON `stats` then always carry `truth`).
    package var simulated = false
    /// For a file source, its duration in seconds when known (the live line shows position / duration).
    package var fileDuration: Double?
    /// Whether the source is a file (the live line shows position and speed).
    package var isFile = false
    /// When the run began on the wall clock (NDJSON's start line carries it, so references with wall-clock times
    /// line up); nil in virtual time.
    package var startedAt: Date?
    /// The device's label when the run has several devices (`sim#1`): text lines and the summary name it.
    package var deviceLabel: String?
    /// A monotonic wall clock in seconds, for the speed shown beside a file's position.
    package var wallClock: @Sendable () -> Double = { monotonicSeconds() }

    /// Creates a context with the defaults: not a terminal, 80 columns, normal verbosity.
    package init() {}
}

/// Seconds of a monotonic clock.
package func monotonicSeconds() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
}

/// Makes the formatter for an output format.
package func makeEventFormatter(_ format: OutputFormat, liveTerminal: Bool) -> any BridgeEventFormatter {
    var context = OutputContext()
    context.liveTerminal = liveTerminal
    return makeEventFormatter(format, context: context)
}

/// Makes the formatter for an output format, knowing the run.
package func makeEventFormatter(_ format: OutputFormat, context: OutputContext) -> any BridgeEventFormatter {
    switch format {
    case .text: TextEventFormatter(context: context)
    case .ndjson: NDJSONEventFormatter(simulated: context.simulated, startedAt: context.startedAt)
    case .csv: CSVEventFormatter()
    }
}
