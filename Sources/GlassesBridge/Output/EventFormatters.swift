import Foundation
import SmartSpectraInput

/// Turns bridge events into output text.
public protocol BridgeEventFormatter: Sendable {
    /// The text for `event` at `seconds` of run time (empty when the event is not shown in this format).
    mutating func format(_ event: BridgeEvent, at seconds: Double) -> String
    /// Text written once before any event (a CSV header).
    var preamble: String { get }
}

extension BridgeEventFormatter {
    /// No preamble.
    public var preamble: String { "" }
}

/// Makes the formatter for an output format.
public func makeEventFormatter(_ format: OutputFormat, liveTerminal: Bool) -> any BridgeEventFormatter {
    switch format {
    case .text: TextEventFormatter(live: liveTerminal)
    case .ndjson: NDJSONEventFormatter()
    case .csv: CSVEventFormatter()
    }
}

// MARK: - NDJSON

/// One JSON object per line per event; the last line is `{"type":"summary",…}`.
public struct NDJSONEventFormatter: BridgeEventFormatter {
    /// Creates the formatter.
    public init() {}

    /// One line of JSON for the event.
    public mutating func format(_ event: BridgeEvent, at seconds: Double) -> String {
        Self.json(for: event, at: seconds).serialized + "\n"
    }

    /// The JSON object for an event.
    public static func json(for event: BridgeEvent, at seconds: Double) -> JSONValue {
        let time: (String, JSONValue) = ("t", .double((seconds * 1000).rounded() / 1000))
        switch event {
        case .state(let phase, let detail):
            var members: [(String, JSONValue)] = [("type", .string("state")), time, ("state", .string(phase.rawValue))]
            if let detail { members.append(("detail", .string(detail))) }
            return .object(members)
        case .notice(let message):
            return .object([("type", .string("notice")), time, ("message", .string(message))])
        case .error(let code, let message):
            return .object([("type", .string("error")), time, ("code", .string(code)), ("message", .string(message))])
        case .validation(let status):
            return .object([
                ("type", .string("validation")), time, ("code", .int(Int64(status.code.rawValue))),
                ("name", .string(status.code.description)), ("hint", .string(status.hint)),
            ])
        case .metrics(_, let json):
            return .object([("type", .string("metrics")), time, ("metrics", .raw(json))])
        case .stats(let stats, let vitals, let truth):
            var members: [(String, JSONValue)] = [("type", .string("stats")), time]
            members += counters(stats)
            members += [
                ("fpsIn", .double((stats.framesPerSecondIn * 10).rounded() / 10)),
                ("fpsOut", .double((stats.framesPerSecondOut * 10).rounded() / 10)),
            ]
            members += vitalsMembers(vitals)
            if let truth { members.append(("truth", .object(vitalsMembers(truth)))) }
            return .object(members)
        case .summary(let summary):
            var members: [(String, JSONValue)] = [("type", .string("summary")), time]
            members += vitalsMembers(summary.vitals)
            members += counters(summary.stats)
            members += [
                ("durationSeconds", .double((summary.durationSeconds * 1000).rounded() / 1000)),
                ("reason", .string(summary.reason)),
            ]
            if let truth = summary.truth { members.append(("truth", .object(vitalsMembers(truth)))) }
            if let failure = summary.failure {
                members.append(("error", .object([
                    ("code", .string(failure.kind.rawValue)), ("message", .string(failure.message)),
                    ("exitCode", .int(Int64(failure.exitCode.rawValue))),
                ])))
            }
            return .object(members)
        }
    }

    static func vitalsMembers(_ vitals: VitalsSnapshot) -> [(String, JSONValue)] {
        [
            ("pulseRate", .number(vitals.pulseRate.map(round1))),
            ("breathingRate", .number(vitals.breathingRate.map(round1))),
            ("hrvRmssd", .number(vitals.hrvRmssd.map(round1))),
        ]
    }

    static func counters(_ stats: BridgeStats) -> [(String, JSONValue)] {
        let accounting = stats.accounting
        let dropped = FrameDropReason.allCases.compactMap { reason in
            accounting.droppedByReason[reason].map { (reason.rawValue, JSONValue.int(Int64($0))) }
        }
        let rejected = accounting.rejectedByCode.sorted { $0.key < $1.key }.map { ($0.key, JSONValue.int(Int64($0.value))) }
        return [
            ("framesReceived", .int(Int64(accounting.received))),
            ("framesSubmitted", .int(Int64(accounting.submitted))),
            ("framesRejected", .int(Int64(accounting.rejected))),
            ("framesDropped", .int(Int64(accounting.dropped))),
            ("droppedByReason", .object(dropped)),
            ("rejectedByCode", .object(rejected)),
            ("inputRestarts", .int(Int64(stats.inputRestarts))),
            ("stallRestarts", .int(Int64(stats.stallRestarts))),
            ("reconnects", .int(Int64(stats.reconnects))),
            ("sessionRestarts", .int(Int64(stats.sessionRestarts))),
            ("deviceDroppedFrames", .int(Int64(stats.deviceDroppedFrames))),
            ("engineDroppedFrames", .int(Int64(stats.engineDroppedFrames))),
        ]
    }
}

private func round1(_ value: Double) -> Double { (value * 10).rounded() / 10 }

// MARK: - Text

/// For people: on a terminal one live status line redrawn in place; otherwise plain timestamped lines.
public struct TextEventFormatter: BridgeEventFormatter {
    /// Whether the output is a terminal that gets a live line.
    public let live: Bool
    /// Seconds between stats lines in plain mode.
    public var plainStatsInterval: Double = 5

    private var phase: LifecyclePolicy.Phase = .idle
    private var hint: String?
    private var lastLine = ""
    private var lastPlainStats = -Double.infinity

    /// Creates the formatter.
    public init(live: Bool) { self.live = live }

    /// The text for an event.
    public mutating func format(_ event: BridgeEvent, at seconds: Double) -> String {
        switch event {
        case .state(let newPhase, let detail):
            phase = newPhase
            return message("\(newPhase.rawValue)\(detail.map { ": \($0)" } ?? "")", at: seconds)
        case .notice(let text):
            return message(text, at: seconds)
        case .error(let code, let text):
            return message("error \(code): \(text)", at: seconds)
        case .validation(let status):
            hint = status.code == .ok ? nil : status.hint
            return message("validation: \(status.hint)", at: seconds)
        case .metrics:
            return ""
        case .stats(let stats, let vitals, let truth):
            let line = Self.statusLine(phase: phase, stats: stats, vitals: vitals, truth: truth, hint: hint)
            if live {
                lastLine = line
                return "\r\u{1B}[2K" + line
            }
            guard seconds - lastPlainStats >= plainStatsInterval else { return "" }
            lastPlainStats = seconds
            return Self.stamp(seconds) + line + "\n"
        case .summary(let summary):
            let text = Self.summaryText(summary)
            return live ? "\r\u{1B}[2K" + text : Self.stamp(seconds) + text
        }
    }

    private mutating func message(_ text: String, at seconds: Double) -> String {
        if live {
            // Print the message above the live line, then redraw the line.
            return "\r\u{1B}[2K" + Self.stamp(seconds) + text + "\n" + lastLine
        }
        return Self.stamp(seconds) + text + "\n"
    }

    static func stamp(_ seconds: Double) -> String { String(format: "[%8.1fs] ", seconds) }

    static func vital(_ value: Double?, decimals: Int = 0) -> String {
        guard let value else { return "--" }
        return String(format: "%.\(decimals)f", value)
    }

    /// The live status line: state, rates in and out, drops, vitals (with truth when simulated), hint.
    static func statusLine(
        phase: LifecyclePolicy.Phase, stats: BridgeStats, vitals: VitalsSnapshot, truth: VitalsSnapshot?,
        hint: String?
    ) -> String {
        func withTruth(_ value: Double?, _ truthValue: Double?, decimals: Int = 0) -> String {
            var text = vital(value, decimals: decimals)
            if truth != nil { text += " (truth \(vital(truthValue, decimals: decimals)))" }
            return text
        }
        var parts = [
            phase.rawValue,
            String(format: "in %.1f fps", stats.framesPerSecondIn),
            String(format: "out %.1f fps", stats.framesPerSecondOut),
            "dropped \(stats.accounting.dropped)",
            "pulse \(withTruth(vitals.pulseRate, truth?.pulseRate)) bpm",
            "breathing \(withTruth(vitals.breathingRate, truth?.breathingRate)) /min",
            "HRV \(withTruth(vitals.hrvRmssd, truth?.hrvRmssd)) ms",
        ]
        if let hint { parts.append(hint) }
        return parts.joined(separator: " | ")
    }

    /// The summary as a few lines of text.
    static func summaryText(_ summary: BridgeSummary) -> String {
        let accounting = summary.stats.accounting
        var lines = [
            String(format: "summary after %.1f s (%@)", summary.durationSeconds, summary.reason),
            "  pulse \(vital(summary.vitals.pulseRate, decimals: 1)) bpm, breathing "
                + "\(vital(summary.vitals.breathingRate, decimals: 1)) /min, HRV \(vital(summary.vitals.hrvRmssd, decimals: 1)) ms",
        ]
        if let truth = summary.truth {
            lines.append("  truth: pulse \(vital(truth.pulseRate, decimals: 1)) bpm, breathing "
                + "\(vital(truth.breathingRate, decimals: 1)) /min, HRV \(vital(truth.hrvRmssd, decimals: 1)) ms")
        }
        lines.append("  frames: received \(accounting.received) = submitted \(accounting.submitted) + rejected "
            + "\(accounting.rejected) + dropped \(accounting.dropped)")
        let reasons = FrameDropReason.allCases.compactMap { reason in
            accounting.droppedByReason[reason].map { "\(reason.rawValue) \($0)" }
        } + accounting.rejectedByCode.sorted { $0.key < $1.key }.map { "rejected \($0.key) \($0.value)" }
        if !reasons.isEmpty { lines.append("  reasons: " + reasons.joined(separator: ", ")) }
        let stats = summary.stats
        lines.append("  restarts: input \(stats.inputRestarts), stalled stream \(stats.stallRestarts), "
            + "reconnects \(stats.reconnects), sessions \(stats.sessionRestarts)")
        if let failure = summary.failure { lines.append("  stopped: \(failure.message)") }
        return lines.joined(separator: "\n") + "\n"
    }
}

// MARK: - CSV

/// The vitals time series: `time_s,metric,value,confidence,stable`, one row per rate sample.
public struct CSVEventFormatter: BridgeEventFormatter {
    private var tracker = VitalsTracker()

    /// Creates the formatter.
    public init() {}

    /// The header line.
    public var preamble: String { "time_s,metric,value,confidence,stable\n" }

    /// Rows for a metrics event; nothing for the others.
    public mutating func format(_ event: BridgeEvent, at seconds: Double) -> String {
        guard case .metrics(let metrics, _) = event else { return "" }
        return tracker.ingest(metrics).map { row in
            let confidence = row.confidence.map { String(format: "%.1f", $0) } ?? ""
            return String(format: "%.3f,", row.timeSeconds) + row.metric + "," + String(format: "%.3f", row.value)
                + "," + confidence + "," + (row.stable ? "true" : "false") + "\n"
        }.joined()
    }
}
