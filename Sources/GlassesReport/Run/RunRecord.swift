import Foundation
import GlassesJSON

/// One value of a vitals series, as the bridge reported it.
public struct VitalSample: Sendable, Hashable {
    /// Seconds on the run's clock (the measurement's timestamp on the input timeline).
    public var t: Double
    /// The value.
    public var value: Double
    /// Confidence in percent, when given.
    public var confidence: Double?
    /// Whether the bridge marked it stable (already following the frame-rate table).
    public var stable: Bool
}

/// One value of a trace (pulse wave, breathing).
public struct TraceSample: Sendable, Hashable {
    /// Seconds on the run's clock.
    public var t: Double
    /// The value (arbitrary units).
    public var value: Double
}

/// Latency percentiles of a `stats` line (`latencyMs`), in milliseconds; each nil where the line does not say.
public struct LatencyStats: Sendable, Hashable {
    /// Median frame latency.
    public var p50: Double?
    /// 99th percentile.
    public var p99: Double?
    /// Largest.
    public var max: Double?
    /// Median link latency.
    public var linkP50: Double?
    /// 99th percentile of the link latency.
    public var linkP99: Double?
    /// Largest link latency.
    public var linkMax: Double?
}

/// One `stats` line: the counters, rates, latest vitals and the simulator's truth.
public struct StatsLine: Sendable, Hashable {
    /// Seconds since the run began.
    public var t: Double
    /// Frames received so far.
    public var framesReceived: Int
    /// Frames submitted to custom input so far.
    public var framesSubmitted: Int
    /// Frames custom input rejected so far.
    public var framesRejected: Int
    /// Frames the bridge dropped so far.
    public var framesDropped: Int
    /// Drops so far by reason.
    public var droppedByReason: [String: Int]
    /// Rejections so far by custom input's code.
    public var rejectedByCode: [String: Int]
    /// Restart and reconnect counters so far (`inputRestarts`, `stallRestarts`, `reconnects`, `sessionRestarts`,
    /// `deviceDroppedFrames`, `engineDroppedFrames`).
    public var counters: [String: Int]
    /// Frames per second in.
    public var fpsIn: Double
    /// Frames per second out.
    public var fpsOut: Double
    /// The latest vitals.
    public var vitals: VitalValues
    /// The simulator's truth, when simulated.
    public var truth: VitalValues?
    /// Latency percentiles, when the line carries them.
    public var latency: LatencyStats?
    /// A live reference's heart rate at this instant (`--reference lsl:…`), when the run had one: its pulse nil
    /// while the reference had no reading near.
    public var reference: VitalValues? = nil
}

/// A timed message (`notice`, `warning`, `error`).
public struct RunMessage: Sendable, Hashable {
    /// Seconds since the run began.
    public var t: Double
    /// `notice`, `warning` or `error`.
    public var kind: String
    /// The error's code name, for errors.
    public var code: String?
    /// The text.
    public var message: String
}

/// A validation verdict with its hint.
public struct ValidationChange: Sendable, Hashable {
    /// Seconds since the run began.
    public var t: Double
    /// SmartSpectra's code name, e.g. `ok`, `noFace`.
    public var code: String
    /// What to do.
    public var hint: String
}

/// A change of the stream's state.
public struct StateChange: Sendable, Hashable {
    /// Seconds since the run began.
    public var t: Double
    /// The state, e.g. `streaming`, `paused`.
    public var state: String
    /// Its detail, when given.
    public var detail: String?
}

/// The `summary` line.
public struct RunSummary: Sendable, Hashable {
    /// Seconds since the run began.
    public var t: Double
    /// The run's vitals: the median of each one's stable values (nil where none was stable).
    public var vitals: VitalValues
    /// Why a vital has no value, as the summary says (`pulseUnavailable`, `breathingUnavailable`,
    /// `hrvUnavailable`); empty for runs written before the bridge said so.
    public var unavailable: [VitalMetric: String] = [:]
    /// The simulator's truth over the last 30 s, when simulated.
    public var truth: VitalValues?
    /// The live reference the run was compared with (`lsl:HeartRate (live)`), when it had one.
    public var referenceSource: String? = nil
    /// The final counters (as in ``StatsLine``).
    public var stats: StatsLine
    /// How long the run lasted, in seconds.
    public var durationSeconds: Double
    /// Why it ended (`duration`, `signal`, `endOfFile`, a failure kind).
    public var reason: String
    /// The failure, when the run failed: code, message, exit code.
    public var error: (code: String, message: String, exitCode: Int)?

    /// Whether two summaries are the same.
    public static func == (a: RunSummary, b: RunSummary) -> Bool {
        a.t == b.t && a.vitals == b.vitals && a.unavailable == b.unavailable && a.truth == b.truth && a.stats == b.stats
            && a.referenceSource == b.referenceSource
            && a.durationSeconds == b.durationSeconds && a.reason == b.reason && a.error?.code == b.error?.code
            && a.error?.message == b.error?.message && a.error?.exitCode == b.error?.exitCode
    }

    /// Hashes the summary.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(t)
        hasher.combine(reason)
        hasher.combine(durationSeconds)
    }
}

/// A whole run, read from the bridge's NDJSON (`--format ndjson`): every kind of line, in order, on the run's clock.
public struct RunRecord: Sendable, Hashable {
    /// The schema version of the start line.
    public var schemaVersion: Int?
    /// Whether the source was the simulator.
    public var simulated = false
    /// Wall-clock time the run began, when the start line says (`startedAt`).
    public var startedAt: Date?
    /// Pulse rate samples (bpm).
    public var pulseRate: [VitalSample] = []
    /// Breathing rate samples (breaths/min).
    public var breathingRate: [VitalSample] = []
    /// HRV samples (RMSSD, ms).
    public var hrvRmssd: [VitalSample] = []
    /// The pulse wave (`cardio.arterialPressureTrace`).
    public var pulseTrace: [TraceSample] = []
    /// The breathing trace (`breathing.upperTrace`).
    public var breathingTrace: [TraceSample] = []
    /// The stats lines.
    public var stats: [StatsLine] = []
    /// State changes.
    public var states: [StateChange] = []
    /// Validation verdicts.
    public var validations: [ValidationChange] = []
    /// Notices, warnings and errors.
    public var messages: [RunMessage] = []
    /// The summary, when the run finished writing one.
    public var summary: RunSummary?
    /// How many lines were read.
    public var lineCount = 0
    /// The first `type` that was read, to name what a file that is not a run holds.
    private var firstType: String?
    /// Whether the run's `start` line was read.
    private var sawStart = false
    /// The line of the run's `start`.
    private var startLine = 0

    /// An empty run.
    public init() {}

    /// The last time anything happened, in seconds.
    public var endTime: Double {
        let candidates = [summary?.t, stats.last?.t, states.last?.t, pulseRate.last?.t, breathingRate.last?.t,
                          pulseTrace.last?.t, messages.last?.t].compactMap { $0 }
        return candidates.max() ?? 0
    }

    /// Frames received in the run (the summary's count, else the last stats line's).
    public var framesReceived: Int { summary?.stats.framesReceived ?? stats.last?.framesReceived ?? 0 }

    /// The first `source: …` notice's text without its prefix (what the run read and how it was set up).
    public var sourceDescription: String? {
        messages.first { $0.kind == RunLineKeys.notice && $0.message.hasPrefix("source: ") }.map { String($0.message.dropFirst(8)) }
    }

    // MARK: Reading

    /// The longest line ``parse(ndjson:name:)`` reads.
    public static let maximumLineBytes = 16 << 20

    /// Reads the bridge's NDJSON text.
    /// - Throws: ``ReportError`` `malformedInput` naming the line (1-based) that is not a bridge event, or saying the
    ///   text holds no line at all.
    public static func parse(ndjson text: String, name: String = "input") throws(ReportError) -> RunRecord {
        var record = RunRecord()
        var lineNumber = 0
        // "\r\n" is one Character in Swift: split on it too, or a Windows-edited file is one long line.
        for rawLine in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
            lineNumber += 1
            // The bridge's longest lines (a second of traces) are tens of KiB; a line of many MiB is not its event,
            // and parsing it would take memory many times its size.
            guard rawLine.utf8.count <= maximumLineBytes else {
                throw ReportError(.malformedInput, "\(name):\(lineNumber): a line of \(rawLine.utf8.count >> 20) MiB is not a bridge "
                    + "event (the most this reads is \(maximumLineBytes >> 20) MiB a line).", line: lineNumber)
            }
            let line = rawLine.hasSuffix("\r") ? rawLine.dropLast() : rawLine
            if line.allSatisfy({ $0 == " " || $0 == "\t" }) { continue }
            let node: JSONNode
            do {
                node = try JSONNode.parse(Array(line.utf8))
            } catch {
                throw ReportError(.malformedInput, "\(name):\(lineNumber): not JSON (\(error.message) at column \(error.offset + 1)).",
                                  line: lineNumber)
            }
            var fields = Fields(node: node, name: name, line: lineNumber)
            try record.take(&fields)
            record.lineCount += 1
        }
        // A run's file holds at least its start line, even when the run stopped at once: an empty one is not a run.
        guard record.lineCount > 0 else {
            throw ReportError(.malformedInput, "\(name) holds no run: it is empty (glasses-bridge --format ndjson writes one).")
        }
        // Every run's output begins with its start line; NDJSON without one is something else (check's results, a
        // truth file), and a page drawn from it would show an empty run.
        guard record.sawStart else {
            let what = record.firstType.map { $0.hasPrefix("check") ? " (its lines are glasses-bridge check results)" : " (its first line is a '\($0)')" } ?? ""
            throw ReportError(.malformedInput, "\(name) is not a glasses-bridge run: it has no start line\(what); "
                + "report reads the output of glasses-bridge --format ndjson.")
        }
        return record
    }

    private mutating func take(_ f: inout Fields) throws(ReportError) {
        guard case .object = f.node.value else { throw f.fail("a line must be a JSON object, not \(f.node.typeName)") }
        let type = try f.string(RunLineKeys.type)
        if firstType == nil { firstType = type }
        if type == RunLineKeys.start {
            // Two runs appended into one file would be drawn as one, their counters and notices mixed.
            guard !sawStart else {
                throw f.fail("a second start line: the file holds more than one run (the first starts at line \(startLine)); give report one run")
            }
            sawStart = true
            startLine = f.line
        }
        let t = try f.time()
        switch type {
        case RunLineKeys.start:
            schemaVersion = try f.optionalInt(RunLineKeys.schemaVersion)
            simulated = try f.optionalBool(RunLineKeys.simulated) ?? false
            if let text = try f.optionalString(RunLineKeys.startedAt) {
                guard let date = ISO8601Parsing.date(text) else { throw f.fail("startedAt '\(text)' is not an ISO 8601 time") }
                startedAt = date
            }
        case RunLineKeys.state:
            states.append(StateChange(t: t, state: try f.string(RunLineKeys.state), detail: try f.optionalString(RunLineKeys.detail)))
        case RunLineKeys.notice, RunLineKeys.warning:
            messages.append(RunMessage(t: t, kind: type, code: nil, message: try f.string(RunLineKeys.message)))
        case RunLineKeys.error:
            messages.append(RunMessage(t: t, kind: type, code: try f.optionalString(RunLineKeys.code), message: try f.string(RunLineKeys.message)))
        case RunLineKeys.validation:
            validations.append(ValidationChange(t: t, code: try f.string(RunLineKeys.code), hint: try f.optionalString(RunLineKeys.hint) ?? ""))
        case RunLineKeys.metrics:
            guard let metrics = f.node[RunLineKeys.metrics] else { throw f.fail("a metrics line needs 'metrics'") }
            try takeMetrics(metrics, &f)
        case RunLineKeys.stats:
            stats.append(try f.statsLine(t: t, node: f.node))
        case RunLineKeys.summary:
            var line = try f.statsLine(t: t, node: f.node, rates: false)
            line.vitals = try f.vitals(f.node)
            var error: (String, String, Int)?
            if let failure = f.node[RunLineKeys.error] {
                error = (try f.string(RunLineKeys.code, in: failure), try f.string(RunLineKeys.message, in: failure),
                         try f.optionalInt(RunLineKeys.exitCode, in: failure) ?? 0)
            }
            let duration = try f.optionalNumber(RunLineKeys.durationSeconds) ?? t
            summary = RunSummary(t: t, vitals: line.vitals, truth: line.truth, stats: line, durationSeconds: duration,
                                 reason: try f.optionalString(RunLineKeys.reason) ?? "", error: error)
            if let reference = f.node[RunLineKeys.reference] { summary?.referenceSource = try f.optionalString(RunLineKeys.source, in: reference) }
            for (metric, key) in [(VitalMetric.pulseRate, RunLineKeys.pulseUnavailable), (.breathingRate, RunLineKeys.breathingUnavailable),
                                  (.hrvRmssd, RunLineKeys.hrvUnavailable)] {
                guard let absence = f.node[key] else { continue }
                if case .null = absence.value { continue }
                summary?.unavailable[metric] = try f.string(RunLineKeys.message, in: absence)
            }
        default:
            break  // Kinds added later are skipped, so an older report reads a newer run.
        }
    }

    private mutating func takeMetrics(_ metrics: JSONNode, _ f: inout Fields) throws(ReportError) {
        if let cardio = metrics["cardio"] {
            pulseRate += try f.measurements(cardio["pulseRate"], key: "cardio.pulseRate")
            hrvRmssd += try f.measurements(cardio["hrv"], key: "cardio.hrv", valueKey: "rmssd")
            pulseTrace += try f.measurements(cardio["arterialPressureTrace"], key: "cardio.arterialPressureTrace")
                .map { TraceSample(t: $0.t, value: $0.value) }
        }
        if let breathing = metrics["breathing"] {
            breathingRate += try f.measurements(breathing["rate"], key: "breathing.rate")
            breathingTrace += try f.measurements(breathing["upperTrace"], key: "breathing.upperTrace")
                .map { TraceSample(t: $0.t, value: $0.value) }
        }
    }
}

/// Reads the fields of one NDJSON line, each checked before use; failures name the line.
struct Fields {
    let node: JSONNode
    let name: String
    let line: Int

    func fail(_ text: String) -> ReportError {
        ReportError(.malformedInput, "\(name):\(line): \(text).", line: line)
    }

    func string(_ key: String, in object: JSONNode? = nil) throws(ReportError) -> String {
        guard let value = (object ?? node)[key] else { throw fail("missing '\(key)'") }
        guard case .string(let text) = value.value else { throw fail("'\(key)' must be a string, not \(value.typeName)") }
        return text
    }

    func optionalString(_ key: String, in object: JSONNode? = nil) throws(ReportError) -> String? {
        guard let value = (object ?? node)[key] else { return nil }
        if case .null = value.value { return nil }
        guard case .string(let text) = value.value else { throw fail("'\(key)' must be a string, not \(value.typeName)") }
        return text
    }

    func optionalBool(_ key: String) throws(ReportError) -> Bool? {
        guard let value = node[key] else { return nil }
        guard case .bool(let flag) = value.value else { throw fail("'\(key)' must be true or false, not \(value.typeName)") }
        return flag
    }

    /// A finite number, or nil when absent or null.
    func optionalNumber(_ key: String, in object: JSONNode? = nil) throws(ReportError) -> Double? {
        guard let value = (object ?? node)[key] else { return nil }
        if case .null = value.value { return nil }
        guard let number = value.numberValue else { throw fail("'\(key)' must be a number, not \(value.typeName)") }
        guard number.isFinite else { throw fail("'\(key)' is out of range") }
        return number
    }

    func optionalInt(_ key: String, in object: JSONNode? = nil) throws(ReportError) -> Int? {
        guard let number = try optionalNumber(key, in: object) else { return nil }
        guard number >= 0, number <= 1e15, number == number.rounded() else {
            throw fail("'\(key)' must be a whole number from 0 (got \(number))")
        }
        return Int(number)
    }

    func int(_ key: String, in object: JSONNode? = nil) throws(ReportError) -> Int {
        guard let value = try optionalInt(key, in: object) else { throw fail("missing '\(key)'") }
        return value
    }

    /// `t`: seconds since the run began, finite and not negative.
    func time() throws(ReportError) -> Double {
        guard let t = try optionalNumber(RunLineKeys.t) else { throw fail("missing 't'") }
        guard t >= 0, t < 1e9 else { throw fail("'t' must be seconds from 0 to 1e9 (got \(t))") }
        return t
    }

    func counts(_ key: String, in object: JSONNode) throws(ReportError) -> [String: Int] {
        guard let value = object[key] else { return [:] }
        guard case .object(let members) = value.value else { throw fail("'\(key)' must be an object") }
        var result: [String: Int] = [:]
        for member in members {
            guard let number = member.value.numberValue, number.isFinite, number >= 0, number <= 1e15,
                  number == number.rounded()
            else { throw fail("'\(key).\(member.key)' must be a whole number from 0") }
            result[member.key] = Int(number)
        }
        return result
    }

    func vitals(_ object: JSONNode) throws(ReportError) -> VitalValues {
        VitalValues(pulseRate: try optionalNumber(RunLineKeys.pulseRate, in: object),
                    breathingRate: try optionalNumber(RunLineKeys.breathingRate, in: object),
                    hrvRmssd: try optionalNumber(RunLineKeys.hrvRmssd, in: object))
    }

    func statsLine(t: Double, node object: JSONNode, rates: Bool = true) throws(ReportError) -> StatsLine {
        var counters: [String: Int] = [:]
        for key in [RunLineKeys.inputRestarts, RunLineKeys.stallRestarts, RunLineKeys.reconnects, RunLineKeys.sessionRestarts, RunLineKeys.deviceDroppedFrames, RunLineKeys.engineDroppedFrames] {
            counters[key] = try optionalInt(key, in: object) ?? 0
        }
        var truth: VitalValues?
        if let node = object[RunLineKeys.truth] {
            guard case .object = node.value else { throw fail("'truth' must be an object") }
            truth = try vitals(node)
        }
        var reference: VitalValues?
        if let node = object[RunLineKeys.reference] {
            guard case .object = node.value else { throw fail("'reference' must be an object") }
            reference = VitalValues(pulseRate: try optionalNumber(RunLineKeys.pulseRate, in: node))
        }
        var latency: LatencyStats?
        if let node = object[RunLineKeys.latencyMs], case .object = node.value {
            latency = LatencyStats(
                p50: try optionalNumber(RunLineKeys.p50, in: node), p99: try optionalNumber(RunLineKeys.p99, in: node),
                max: try optionalNumber(RunLineKeys.max, in: node), linkP50: try optionalNumber(RunLineKeys.linkP50, in: node),
                linkP99: try optionalNumber(RunLineKeys.linkP99, in: node), linkMax: try optionalNumber(RunLineKeys.linkMax, in: node)
            )
        }
        return StatsLine(
            t: t, framesReceived: try int(RunLineKeys.framesReceived, in: object), framesSubmitted: try int(RunLineKeys.framesSubmitted, in: object),
            framesRejected: try optionalInt(RunLineKeys.framesRejected, in: object) ?? 0,
            framesDropped: try optionalInt(RunLineKeys.framesDropped, in: object) ?? 0,
            droppedByReason: try counts(RunLineKeys.droppedByReason, in: object), rejectedByCode: try counts(RunLineKeys.rejectedByCode, in: object),
            counters: counters, fpsIn: rates ? try optionalNumber(RunLineKeys.fpsIn, in: object) ?? 0 : 0,
            fpsOut: rates ? try optionalNumber(RunLineKeys.fpsOut, in: object) ?? 0 : 0, vitals: try vitals(object), truth: truth,
            latency: latency, reference: reference
        )
    }

    /// Protobuf-JSON measurements: `[{"value":…,"stable":…,"confidence":…,"timestamp":"µs"}]`; samples without a value
    /// (the engine's placeholders) are skipped.
    func measurements(_ array: JSONNode?, key: String, valueKey: String = "value") throws(ReportError) -> [VitalSample] {
        guard let array else { return [] }
        guard case .array(let elements) = array.value else { throw fail("'\(key)' must be an array") }
        var result: [VitalSample] = []
        for element in elements {
            guard case .object = element.value else { throw fail("'\(key)' must hold objects") }
            let value: Double
            do {
                guard let number = try optionalNumber(valueKey, in: element) else { continue }
                // Rates, RMSSD and traces are small numbers; a value like 1e308 is a damaged line, not a measurement.
                guard abs(number) <= 1e6 else { throw fail("'\(key)' value \(number) is not a measurement") }
                value = number
            }
            let timestamp: Double
            switch element["timestamp"]?.value {
            case .string(let text)?:
                guard let micros = Int64(text), micros >= 0 else { throw fail("'\(key)' timestamp '\(text)' is not microseconds") }
                timestamp = Double(micros) / 1e6
            case .number?:
                guard let micros = try optionalNumber("timestamp", in: element), micros >= 0 else {
                    throw fail("'\(key)' timestamp must be microseconds from 0")
                }
                timestamp = micros / 1e6
            case nil:
                timestamp = 0
            default:
                throw fail("'\(key)' timestamp must be a string of microseconds")
            }
            var stable = false
            if let node = element["stable"] {
                guard case .bool(let flag) = node.value else { throw fail("'\(key)' stable must be true or false") }
                stable = flag
            }
            result.append(VitalSample(t: timestamp, value: value, confidence: try optionalNumber("confidence", in: element),
                                      stable: stable))
        }
        return result
    }
}

/// ISO 8601 times as reference loggers write them (with or without fractional seconds and zone).
enum ISO8601Parsing {
    static func date(_ text: String) -> Date? {
        let withFraction = ISO8601DateFormatter()
        withFraction.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = withFraction.date(from: text) { return date }
        let plain = ISO8601DateFormatter()
        plain.formatOptions = [.withInternetDateTime]
        if let date = plain.date(from: text) { return date }
        // Without a zone: read as UTC.
        let local = ISO8601DateFormatter()
        local.formatOptions = [.withFullDate, .withTime, .withColonSeparatorInTime, .withDashSeparatorInDate]
        local.timeZone = TimeZone(identifier: "UTC")
        let trimmed = text.replacingOccurrences(of: " ", with: "T")
        if let dot = trimmed.firstIndex(of: ".") {
            let fraction = Double("0" + trimmed[dot...]) ?? 0
            return local.date(from: String(trimmed[..<dot])).map { $0.addingTimeInterval(fraction) }
        }
        return local.date(from: trimmed)
    }
}
