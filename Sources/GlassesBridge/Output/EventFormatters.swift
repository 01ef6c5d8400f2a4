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

/// How much the text format prints: the value of `--quiet` / `--verbose`.
public enum Verbosity: String, Sendable, Hashable, CaseIterable {
    /// Only errors and the summary.
    case quiet
    /// States, validation, warnings, errors, the live line (or a stats line every 5 s) and the summary.
    case normal
    /// Everything: notices (restarts, reconnects, retries, the source) and more stats lines.
    case verbose
}

/// What a formatter knows of the run before it starts.
public struct OutputContext: Sendable {
    /// Whether the output is a terminal that gets a live line.
    public var liveTerminal = false
    /// The terminal's width in columns (the live line never exceeds it).
    public var width = 80
    /// How much text output prints.
    public var verbosity = Verbosity.normal
    /// Whether the source is the simulator (NDJSON `stats` then always carry `truth`).
    public var simulated = false
    /// For a file source, its duration in seconds when known (the live line shows position / duration).
    public var fileDuration: Double?
    /// Whether the source is a file (the live line shows position and speed).
    public var isFile = false
    /// When the run began on the wall clock (NDJSON's start line carries it, so references with wall-clock times
    /// line up); nil in virtual time.
    public var startedAt: Date?
    /// The device's label when the run has several devices (`sim#1`): text lines and the summary name it.
    public var deviceLabel: String?
    /// A monotonic wall clock in seconds, for the speed shown beside a file's position.
    public var wallClock: @Sendable () -> Double = { monotonicSeconds() }

    /// Creates a context with the defaults: not a terminal, 80 columns, normal verbosity.
    public init() {}
}

/// Seconds of a monotonic clock.
public func monotonicSeconds() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
}

/// Makes the formatter for an output format.
public func makeEventFormatter(_ format: OutputFormat, liveTerminal: Bool) -> any BridgeEventFormatter {
    var context = OutputContext()
    context.liveTerminal = liveTerminal
    return makeEventFormatter(format, context: context)
}

/// Makes the formatter for an output format, knowing the run.
public func makeEventFormatter(_ format: OutputFormat, context: OutputContext) -> any BridgeEventFormatter {
    switch format {
    case .text: TextEventFormatter(context: context)
    case .ndjson: NDJSONEventFormatter(simulated: context.simulated, startedAt: context.startedAt)
    case .csv: CSVEventFormatter()
    }
}

// MARK: - NDJSON

/// One JSON object per line per event: first `{"type":"start","schemaVersion":…}`, last `{"type":"summary",…}`.
///
/// Every field has one JSON type across event kinds (`code` is always a string, the code's name); the schemas are
/// in `docs/schema/`.
public struct NDJSONEventFormatter: BridgeEventFormatter {
    /// The version of the event schema (`docs/schema/`), in the first object; raised when a field changes meaning
    /// or type.
    public static let schemaVersion = 1

    /// Whether the source is simulated: every `stats` line then has `truth` (its values null until known).
    public let simulated: Bool

    /// When the run began on the wall clock, written as the start line's `startedAt` (nil leaves it out).
    public let startedAt: Date?

    /// The device's label in a run of several devices: every event then carries `"device":…` after `t`.
    public let device: String?

    /// Creates the formatter.
    /// - Parameter device: the device's label in a run of several devices (nil: a one-device run, no `device`).
    public init(simulated: Bool = false, startedAt: Date? = nil, device: String? = nil) {
        self.simulated = simulated
        self.startedAt = startedAt
        self.device = device
    }

    /// The first line: `{"type":"start","t":0.0,"schemaVersion":1,"simulated":…}` (and `startedAt` when known).
    public var preamble: String {
        var members: [(String, JSONValue)] = [
            ("type", .string("start")), ("t", .double(0)), ("schemaVersion", .int(Int64(Self.schemaVersion))),
            ("simulated", .bool(simulated)),
        ]
        if let startedAt {
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            members.append(("startedAt", .string(formatter.string(from: startedAt))))
        }
        return JSONValue.object(members).serialized + "\n"
    }

    /// One line of JSON for the event.
    public mutating func format(_ event: BridgeEvent, at seconds: Double) -> String {
        var event = event
        if simulated, case .stats(let stats, let vitals, nil) = event {
            event = .stats(stats, vitals: vitals, truth: VitalsSnapshot())
        }
        if simulated, case .summary(var summary) = event, summary.truth == nil {
            summary.truth = VitalsSnapshot()
            event = .summary(summary)
        }
        return Self.tagged(Self.json(for: event, at: seconds), device: device).serialized + "\n"
    }

    /// The object with `"device":label` after its `type` and `t` (unchanged when `device` is nil).
    public static func tagged(_ object: JSONValue, device: String?) -> JSONValue {
        guard let device, case .object(var members) = object else { return object }
        members.insert(("device", .string(device)), at: min(2, members.count))
        return .object(members)
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
            return .object([("type", .string("notice")), time, ("message", .string(NoticeWording.sentence(message)))])
        case .warning(let message):
            return .object([("type", .string("warning")), time, ("message", .string(message))])
        case .error(let code, let message):
            return .object([("type", .string("error")), time, ("code", .string(code)), ("message", .string(message))])
        case .validation(let status):
            return .object([
                ("type", .string("validation")), time, ("code", .string(status.code.description)),
                ("number", .int(Int64(status.code.rawValue))), ("hint", .string(status.hint)),
            ])
        case .metrics(_, let json):
            return .object([("type", .string("metrics")), time, ("metrics", .raw(json))])
        case .stats(let stats, let vitals, let truth):
            var members: [(String, JSONValue)] = [("type", .string("stats")), time]
            members += counters(stats)
            members += [
                ("fpsIn", .double((stats.framesPerSecondIn * 10).rounded() / 10)),
                ("fpsOut", .double((stats.framesPerSecondOut * 10).rounded() / 10)),
                latencyMember(stats.latency),
            ]
            members += vitalsMembers(vitals)
            if let truth { members.append(("truth", .object(vitalsMembers(truth)))) }
            return .object(members)
        case .summary(let summary):
            var members: [(String, JSONValue)] = [("type", .string("summary")), time]
            members += vitalsMembers(summary.vitals)
            members.append(("stableBasis", basisMember(summary.basis)))
            func absence(_ absence: VitalAbsence?) -> JSONValue {
                absence.map { .object([("code", .string($0.code.rawValue)), ("message", .string($0.message))]) } ?? .null
            }
            members.append(("pulseUnavailable", absence(summary.pulseAbsence)))
            members.append(("breathingUnavailable", absence(summary.breathingAbsence)))
            members.append(("hrvUnavailable", absence(summary.hrvAbsence)))
            members += counters(summary.stats)
            members += [
                ("durationSeconds", .double((summary.durationSeconds * 1000).rounded() / 1000)),
                ("reason", .string(summary.reason)),
                latencyMember(summary.stats.latency),
            ]
            if let truth = summary.truth { members.append(("truth", .object(vitalsMembers(truth)))) }
            if let received = summary.receivedStream {
                members.append(("receivedStream", .object([
                    ("protocol", .string(received.transport)), ("container", .string(received.container)), ("codec", .string(received.codec)),
                    ("width", .int(Int64(received.width))), ("height", .int(Int64(received.height))), ("audio", .bool(received.hasAudio)),
                ])))
            }
            if let failure = summary.failure {
                members.append(("error", .object([
                    ("code", .string(failure.kind.rawValue)), ("message", .string(failure.message)),
                    ("exitCode", .int(Int64(failure.exitCode.rawValue))),
                ])))
            }
            return .object(members)
        }
    }

    /// `{"pulseRate": {"values": N, "q1": …, "q3": …[, "split": {…}]} | null, "breathingRate": …, "hrvRmssd": …,
    /// "hrvFloorMs": … | null}`: `split` when the stable values fell into a rate and its harmonic (``HarmonicSplit``).
    static func basisMember(_ basis: VitalsBasis) -> JSONValue {
        func one(_ b: VitalBasis?) -> JSONValue {
            guard let b else { return .null }
            var members: [(String, JSONValue)] = [("values", .int(Int64(b.stableValues))), ("q1", .double(round1(b.lowerQuartile))),
                                                  ("q3", .double(round1(b.upperQuartile)))]
            if let split = b.harmonicSplit {
                members.append(("split", .object([
                    ("lower", .double(round1(split.lower))), ("lowerValues", .int(Int64(split.lowerValues))),
                    ("upper", .double(round1(split.upper))), ("upperValues", .int(Int64(split.upperValues))),
                ])))
            }
            return .object(members)
        }
        return .object([("pulseRate", one(basis.pulseRate)), ("breathingRate", one(basis.breathingRate)),
                        ("hrvRmssd", one(basis.hrvRmssd)), ("hrvFloorMs", .number(basis.hrvFloor.map(round1)))])
    }

    static func vitalsMembers(_ vitals: VitalsSnapshot) -> [(String, JSONValue)] {
        [
            ("pulseRate", .number(vitals.pulseRate.map(round1))),
            ("breathingRate", .number(vitals.breathingRate.map(round1))),
            ("hrvRmssd", .number(vitals.hrvRmssd.map(round1))),
        ]
    }

    /// `"latencyMs": {"p50":…,"p99":…,"max":…,"linkP50":…,"linkP99":…,"linkMax":…,"samples":N}`, or null when
    /// no frame was measured.
    static func latencyMember(_ latency: LatencySummary?) -> (String, JSONValue) {
        guard let latency else { return ("latencyMs", .null) }
        func ms(_ value: Double) -> JSONValue { .double((value * 1000).rounded() / 1000) }
        return ("latencyMs", .object([
            ("p50", ms(latency.p50Ms)), ("p99", ms(latency.p99Ms)), ("max", ms(latency.maxMs)),
            ("linkP50", ms(latency.linkP50Ms)), ("linkP99", ms(latency.linkP99Ms)), ("linkMax", ms(latency.linkMaxMs)),
            ("samples", .int(Int64(clamping: latency.samples))),
        ]))
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
            ("framesInFlight", .int(Int64(accounting.inFlight))),
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
///
/// The live line fits the terminal's width (it drops the least useful fields first, then cuts), never holds a
/// newline, and so never scrolls; messages print above it. A value followed by `?` is not stable yet (the CSV's
/// `stable` column is false for it); `--` means no value yet.
public struct TextEventFormatter: BridgeEventFormatter {
    /// Whether the output is a terminal that gets a live line.
    public let live: Bool
    /// What the formatter knows of the run.
    public let context: OutputContext
    /// Seconds between stats lines in plain mode (and above the live line with `--verbose`).
    public var plainStatsInterval: Double

    /// The lifecycle phase last reported.
    public private(set) var phase: LifecyclePolicy.Phase = .idle
    /// What the live line showed at the last stats event (nil before the first).
    public private(set) var lastStatus: LiveStatus?
    private var hint: String?
    private var lastLine = ""
    private var lastPlainStats = -Double.infinity
    private var tracker: VitalsTracker
    private var startedWall: Double?

    /// Creates the formatter.
    public init(live: Bool) {
        var context = OutputContext()
        context.liveTerminal = live
        self.init(context: context)
    }

    /// Creates the formatter for a run.
    public init(context: OutputContext) {
        self.context = context
        live = context.liveTerminal
        plainStatsInterval = context.verbosity == .verbose ? 1 : 5
        tracker = VitalsTracker()
    }

    /// The text for an event.
    public mutating func format(_ event: BridgeEvent, at seconds: Double) -> String {
        if startedWall == nil { startedWall = context.wallClock() }
        let verbosity = context.verbosity
        switch event {
        case .state(let newPhase, let detail):
            phase = newPhase
            guard verbosity != .quiet else { return "" }
            return message("\(newPhase.rawValue)\(detail.map { ": \($0)" } ?? "")", at: seconds)
        case .notice(let text):
            guard verbosity == .verbose else { return "" }
            return message(NoticeWording.sentence(text), at: seconds)
        case .warning(let text):
            guard verbosity != .quiet else { return "" }
            return message("warning: \(text)", at: seconds)
        case .error(_, let text):
            return message("error: \(text)", at: seconds)
        case .validation(let status):
            hint = status.code == .ok ? nil : status.hint
            guard verbosity != .quiet else { return "" }
            return message("validation: \(status.hint)", at: seconds)
        case .metrics(let metrics, _):
            tracker.ingest(metrics)
            return ""
        case .stats(let stats, let vitals, let truth):
            guard verbosity != .quiet else { return "" }
            let status = LiveStatus(
                phase: phase, seconds: seconds, stats: stats, vitals: vitals, stability: tracker.latestIsStable,
                truth: truth, hint: hint, fileDuration: context.isFile ? context.fileDuration : nil,
                speed: context.isFile ? speed(at: seconds) : nil, isFile: context.isFile
            )
            lastStatus = status
            let dueForLine = seconds - lastPlainStats >= plainStatsInterval
            if live {
                lastLine = status.line(width: context.width)
                var text = "\r\u{1B}[2K"
                if verbosity == .verbose, dueForLine {
                    lastPlainStats = seconds
                    text += Self.stamp(seconds) + status.line(width: Int.max) + "\n"
                }
                return text + lastLine
            }
            guard dueForLine else { return "" }
            lastPlainStats = seconds
            return Self.stamp(seconds) + labelled(status.line(width: Int.max)) + "\n"
        case .summary(let summary):
            let text = Self.summaryText(summary, device: context.deviceLabel)
            return live ? "\r\u{1B}[2K" + text : Self.stamp(seconds) + text
        }
    }

    private func speed(at seconds: Double) -> Double? {
        guard let startedWall else { return nil }
        let wall = context.wallClock() - startedWall
        return wall > 0.05 ? seconds / wall : nil
    }

    private mutating func message(_ text: String, at seconds: Double) -> String {
        let text = Self.printable(text)
        if live {
            // Print the message above the live line, then redraw the line.
            return "\r\u{1B}[2K" + Self.stamp(seconds) + labelled(text) + "\n" + lastLine
        }
        return Self.stamp(seconds) + labelled(text) + "\n"
    }

    /// `text` without control characters: messages carry what devices and files say (a device's name, a goodbye's
    /// reason), and an escape sequence from a hostile device must not reach the terminal. Line breaks and tabs
    /// become spaces, every other control character U+FFFD.
    public static func printable(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else { return text }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if scalar.properties.generalCategory != .control {
                out.append(scalar)
            } else {
                out.append(scalar == "\n" || scalar == "\t" || scalar == "\r" ? " " : "\u{FFFD}")
            }
        }
        return String(out)
    }

    /// `text`, after the device's label in a run of several devices (`sim#2: streaming`).
    private func labelled(_ text: String) -> String {
        context.deviceLabel.map { "\($0): \(text)" } ?? text
    }

    static func stamp(_ seconds: Double) -> String { String(format: "[%8.1fs] ", seconds) }

    static func vital(_ value: Double?, decimals: Int = 0) -> String {
        guard let value else { return "--" }
        return String(format: "%.\(decimals)f", value)
    }

    /// The status line at full length (no width limit), as plain mode prints it.
    static func statusLine(
        phase: LifecyclePolicy.Phase, stats: BridgeStats, vitals: VitalsSnapshot, truth: VitalsSnapshot?,
        hint: String?, stability: VitalsStability = VitalsStability(), seconds: Double = 0
    ) -> String {
        LiveStatus(phase: phase, seconds: seconds, stats: stats, vitals: vitals, stability: stability, truth: truth,
                   hint: hint, fileDuration: nil, speed: nil, isFile: false).line(width: Int.max)
    }

    /// The summary as a few lines of text.
    static func summaryText(_ summary: BridgeSummary, device: String? = nil) -> String {
        let accounting = summary.stats.accounting
        let title = device.map { "summary of \($0)" } ?? "summary"
        var lines = [
            String(format: "%@ after %.1f s (%@)", title, summary.durationSeconds, summary.reason),
            "  pulse \(vital(summary.vitals.pulseRate, decimals: 1)) bpm, breathing "
                + "\(vital(summary.vitals.breathingRate, decimals: 1)) /min, HRV \(vital(summary.vitals.hrvRmssd, decimals: 1)) ms",
        ]
        if let basis = basisText(summary.basis) { lines.append("  " + basis) }
        // One line per reason: vitals that lack a value for the same reason share it ("no pulse or HRV: …").
        var absences: [(names: [String], message: String)] = []
        for (name, absence) in [("pulse", summary.pulseAbsence), ("breathing", summary.breathingAbsence), ("HRV", summary.hrvAbsence)] {
            guard let absence, absence.code != .notRequested else { continue }
            if let i = absences.firstIndex(where: { $0.message == absence.message }) {
                absences[i].names.append(name)
            } else {
                absences.append(([name], absence.message))
            }
        }
        for (names, message) in absences {
            let list = names.count == 1 ? names[0] : names.dropLast().joined(separator: ", ") + " or " + names[names.count - 1]
            lines.append("  no \(list): \(message)")
        }
        if let truth = summary.truth {
            lines.append("  truth: pulse \(vital(truth.pulseRate, decimals: 1)) bpm, breathing "
                + "\(vital(truth.breathingRate, decimals: 1)) /min, HRV \(vital(truth.hrvRmssd, decimals: 1)) ms")
        }
        if let received = summary.receivedStream {
            lines.append("  stream: \(received.codec) \(received.width)x\(received.height) over \(received.transport.uppercased()) "
                + "(\(received.container))\(received.hasAudio ? ", its audio ignored" : "")")
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
        lines.append("  " + latencyText(stats.latency))
        if let failure = summary.failure { lines.append("  stopped: \(failure.message)") }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `medians of the run's stable values: 25 pulse (71.0–72.4 bpm), 11 breathing (14.8–15.2 /min), 1 HRV
    /// (41.3–41.3 ms); quartiles in parentheses`: what the summary's values rest on; nil when no vital had a stable
    /// value.
    static func basisText(_ basis: VitalsBasis) -> String? {
        func one(_ b: VitalBasis?, _ name: String, _ unit: String) -> String? {
            b.map { "\($0.stableValues) \(name) (" + String(format: "%.1f–%.1f", $0.lowerQuartile, $0.upperQuartile) + " \(unit))" }
        }
        let parts = [one(basis.pulseRate, "pulse", "bpm"), one(basis.breathingRate, "breathing", "/min"),
                     one(basis.hrvRmssd, "HRV", "ms")].compactMap { $0 }
        guard !parts.isEmpty else { return nil }
        var text = "medians of the run's stable values: " + parts.joined(separator: ", ") + "; quartiles in parentheses"
        if let split = basis.pulseRate?.harmonicSplit {
            text += "; the pulse values split a factor two apart, " + split.described(unit: "bpm")
                + (split.resolved.map { String(format: ": %.1f bpm taken, the other a passing spell", $0) } ?? ": no value")
        }
        if let floor = basis.hrvFloor, basis.hrvRmssd != nil {
            text += String(format: "; HRV floor %.1f ms (the least RMSSD error the beats' timing noise allows)", floor)
        }
        return text
    }

    /// `latency capture→sendFrame p50 12.3 p99 40.1 max 52.0 ms (link p50 3.2 p99 9.9 max 11.0 ms, 1440 frames)`, or
    /// `latency capture→sendFrame not measured` when no frame carried timing.
    static func latencyText(_ latency: LatencySummary?) -> String {
        guard let latency else { return "latency capture→sendFrame not measured" }
        func ms(_ value: Double) -> String { String(format: "%.1f", value) }
        return "latency capture→sendFrame p50 \(ms(latency.p50Ms)) p99 \(ms(latency.p99Ms)) max \(ms(latency.maxMs)) ms "
            + "(link p50 \(ms(latency.linkP50Ms)) p99 \(ms(latency.linkP99Ms)) max \(ms(latency.linkMaxMs)) ms, "
            + "\(latency.samples) frames)"
    }
}

/// What the live line shows at one instant, and how it fits a width.
public struct LiveStatus: Sendable {
    /// The lifecycle phase.
    public var phase: LifecyclePolicy.Phase
    /// Seconds since the run began (for a file: the position in it).
    public var seconds: Double
    /// The counters.
    public var stats: BridgeStats
    /// The latest vitals.
    public var vitals: VitalsSnapshot
    /// Which of them are stable.
    public var stability: VitalsStability
    /// The simulator's truth, when simulated.
    public var truth: VitalsSnapshot?
    /// The validation hint while the verdict is not `ok`.
    public var hint: String?
    /// A file's duration in seconds, when known.
    public var fileDuration: Double?
    /// Playback speed relative to real time, for a file.
    public var speed: Double?
    /// Whether the source is a file.
    public var isFile: Bool

    /// Creates the status.
    public init(
        phase: LifecyclePolicy.Phase, seconds: Double, stats: BridgeStats, vitals: VitalsSnapshot,
        stability: VitalsStability, truth: VitalsSnapshot?, hint: String?, fileDuration: Double?, speed: Double?,
        isFile: Bool
    ) {
        self.phase = phase
        self.seconds = seconds
        self.stats = stats
        self.vitals = vitals
        self.stability = stability
        self.truth = truth
        self.hint = hint
        self.fileDuration = fileDuration
        self.speed = speed
        self.isFile = isFile
    }

    /// `12:05` under an hour, `1:02:05` above.
    static func clock(_ seconds: Double) -> String {
        let total = Int(max(0, seconds).rounded(.down))
        let (h, m, s) = (total / 3600, total / 60 % 60, total % 60)
        return h > 0 ? String(format: "%d:%02d:%02d", h, m, s) : String(format: "%d:%02d", m, s)
    }

    private func value(_ value: Double?, stable: Bool, decimals: Int = 0) -> String {
        guard let value else { return "--" }
        return String(format: "%.\(decimals)f", value) + (stable ? "" : "?")
    }

    /// The line, at most `width - 1` columns (the last column is left free so the terminal never wraps).
    public func line(width: Int) -> String {
        let limit = width == Int.max ? Int.max : max(1, width - 1)
        var time = isFile ? "time=\(Self.clock(seconds))" : "\(Self.clock(seconds))"
        if isFile, let fileDuration { time += "/\(Self.clock(fileDuration))" }
        if let speed { time += String(format: " speed=%.1fx", speed) }
        func vitals(truth withTruth: Bool) -> [String] {
            func part(_ name: String, _ v: Double?, _ stable: Bool, _ t: Double?, _ unit: String) -> String {
                var text = "\(name) \(value(v, stable: stable))"
                if withTruth, truth != nil { text += " (truth \(value(t, stable: true)))" }
                return text + unit
            }
            return [
                part("pulse", self.vitals.pulseRate, stability.pulseRate, truth?.pulseRate, " bpm"),
                part("breathing", self.vitals.breathingRate, stability.breathingRate, truth?.breathingRate, " /min"),
                part("HRV", self.vitals.hrvRmssd, stability.hrvRmssd, truth?.hrvRmssd, " ms"),
            ]
        }
        let rates = [
            String(format: "in %.1f fps", stats.framesPerSecondIn), String(format: "out %.1f fps", stats.framesPerSecondOut),
            "dropped \(stats.accounting.dropped)",
        ]
        let head = [phase.rawValue, time]
        // From the fullest to the barest; the first that fits is shown.
        var candidates: [[String]] = []
        if let hint { candidates.append(head + rates + vitals(truth: true) + [hint]) }
        candidates.append(head + rates + vitals(truth: true))
        candidates.append(head + rates + vitals(truth: false))
        candidates.append(head + [rates[0]] + vitals(truth: false))
        candidates.append(head + vitals(truth: false))
        for parts in candidates {
            let text = parts.joined(separator: " | ")
            if text.count <= limit { return text }
        }
        let bare = candidates[candidates.count - 1].joined(separator: " | ")
        return String(bare.prefix(limit))
    }
}

// MARK: - CSV

/// The vitals time series: `time_s,metric,value,confidence,stable`, one row per rate sample.
public struct CSVEventFormatter: BridgeEventFormatter {
    private var tracker: VitalsTracker

    /// Creates the formatter (the events it formats come judged from the pipeline: a vital the frame rate cannot
    /// support is never `stable` in them).
    public init() {
        tracker = VitalsTracker()
    }

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
