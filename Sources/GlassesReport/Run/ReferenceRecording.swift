import Foundation
import GlassesJSON

/// One instant of a comparison series: what the truth or the reference says.
public struct ReferenceSample: Sendable, Hashable {
    /// Seconds on the run's clock.
    public var t: Double
    /// Beats per minute.
    public var pulseRate: Double?
    /// Breaths per minute.
    public var breathingRate: Double?
    /// RMSSD in milliseconds.
    public var hrvRmssd: Double?
    /// RR intervals recorded at this instant, in milliseconds.
    public var rrIntervals: [Double] = []
    /// Creates a sample.
    public init(t: Double, pulseRate: Double? = nil, breathingRate: Double? = nil, hrvRmssd: Double? = nil,
                rrIntervals: [Double] = []) {
        self.t = t
        self.pulseRate = pulseRate
        self.breathingRate = breathingRate
        self.hrvRmssd = hrvRmssd
        self.rrIntervals = rrIntervals
    }
}

/// Truth or a reference on the run's clock: the simulator's truth (from the run's `stats` lines, the bridge's
/// `--truth-out`, or `glasses-sim --truth`) or a reference recording (a chest strap's logger).
public struct ReferenceSeries: Sendable, Hashable {
    /// What the series is.
    public enum Kind: String, Sendable, Hashable {
        /// The simulator's ground truth.
        case truth
        /// A reference device's recording.
        case reference
    }

    /// What the series is.
    public var kind: Kind
    /// Where it came from (a file name, or "the run's stats lines").
    public var source: String
    /// The samples, in time order.
    public var samples: [ReferenceSample]
    /// Whether the file's times were wall-clock times (ISO 8601, Unix seconds or milliseconds), not seconds from
    /// the run's start.
    public var wallClock = false
    /// Which columns (or keys) were read, as matched (lower case, letters and digits): `time=timestamp, hr=heartrate,
    /// rr=rrms`; empty for a series not read from a file.
    public var columnsUsed = ""

    /// Creates a series (samples are sorted by time).
    public init(kind: Kind, source: String, samples: [ReferenceSample]) {
        self.kind = kind
        self.source = source
        self.samples = samples.sorted { $0.t < $1.t }
    }

    /// The truth the run's `stats` lines carried (simulated runs), or nil when they carry none.
    public static func truth(of run: RunRecord) -> ReferenceSeries? {
        let samples = run.stats.compactMap { line -> ReferenceSample? in
            guard let truth = line.truth else { return nil }
            return ReferenceSample(t: line.t, pulseRate: truth.pulseRate, breathingRate: truth.breathingRate,
                                   hrvRmssd: truth.hrvRmssd)
        }
        guard !samples.isEmpty else { return nil }
        return ReferenceSeries(kind: .truth, source: "the simulator's truth in the run's stats lines", samples: samples)
    }

    /// The live reference the run's `stats` lines carried (`--reference lsl:…`), or nil when they carry none.
    public static func liveReference(of run: RunRecord) -> ReferenceSeries? {
        let samples = run.stats.compactMap { line -> ReferenceSample? in
            guard let pulse = line.reference?.pulseRate else { return nil }
            return ReferenceSample(t: line.t, pulseRate: pulse)
        }
        guard !samples.isEmpty else { return nil }
        let name = run.summary?.referenceSource ?? "the live reference"
        return ReferenceSeries(kind: .reference, source: "\(name), in the run's stats lines", samples: samples)
    }

    /// The value of `metric` at `t`, interpolated between neighbours no more than `maxGap` seconds apart.
    public func value(_ metric: VitalMetric, at t: Double, maxGap: Double = 5) -> Double? {
        Self.interpolate(points(metric), at: t, maxGap: maxGap)
    }

    /// The (time, value) points of `metric`, in time order.
    public func points(_ metric: VitalMetric) -> [(Double, Double)] {
        samples.compactMap { sample in metric.value(of: sample).map { (sample.t, $0) } }
    }

    /// Linear interpolation in time-ordered points between neighbours no more than `maxGap` apart; within half a
    /// second of either end the end's value; nil elsewhere.
    public static func interpolate(_ points: [(Double, Double)], at t: Double, maxGap: Double = 5) -> Double? {
        guard let first = points.first, let last = points.last, t >= first.0 - 0.5, t <= last.0 + 0.5 else { return nil }
        var lo = 0, hi = points.count - 1
        while hi - lo > 1 {
            let mid = (lo + hi) / 2
            if points[mid].0 <= t { lo = mid } else { hi = mid }
        }
        let a = points[lo], b = points[hi]
        if abs(a.0 - t) < 1e-9 { return a.1 }
        if abs(b.0 - t) < 1e-9 { return b.1 }
        if t <= a.0 { return abs(a.0 - t) <= 0.5 ? a.1 : nil }
        if t >= b.0 { return abs(t - b.0) <= 0.5 ? b.1 : nil }
        guard b.0 - a.0 <= maxGap else { return nil }
        return a.1 + (b.1 - a.1) * (t - a.0) / (b.0 - a.0)
    }

    /// The time range the series covers, or nil when empty.
    public var timeRange: ClosedRange<Double>? {
        guard let first = samples.first, let last = samples.last else { return nil }
        return first.t...last.t
    }
}

/// One of the three headline vitals.
public enum VitalMetric: String, Sendable, Hashable, CaseIterable {
    /// Pulse rate, bpm.
    case pulseRate
    /// Breathing rate, breaths/min.
    case breathingRate
    /// HRV (RMSSD), ms.
    case hrvRmssd

    /// The value in a comparison sample.
    public func value(of sample: ReferenceSample) -> Double? {
        switch self {
        case .pulseRate: sample.pulseRate
        case .breathingRate: sample.breathingRate
        case .hrvRmssd: sample.hrvRmssd
        }
    }

    /// The value among a summary's or a stats line's vitals.
    public func value(in vitals: VitalValues) -> Double? {
        switch self {
        case .pulseRate: vitals.pulseRate
        case .breathingRate: vitals.breathingRate
        case .hrvRmssd: vitals.hrvRmssd
        }
    }

    /// The run's series of this metric.
    public func series(in run: RunRecord) -> [VitalSample] {
        switch self {
        case .pulseRate: run.pulseRate
        case .breathingRate: run.breathingRate
        case .hrvRmssd: run.hrvRmssd
        }
    }

    /// Its name for people.
    public var title: String {
        switch self {
        case .pulseRate: "Pulse"
        case .breathingRate: "Breathing"
        case .hrvRmssd: "HRV (RMSSD)"
        }
    }

    /// Its unit.
    public var unit: String {
        switch self {
        case .pulseRate: "bpm"
        case .breathingRate: "breaths/min"
        case .hrvRmssd: "ms"
        }
    }
}

/// Reads truth and reference recordings: CSV or NDJSON, run-relative or wall-clock time, heart rate and RR intervals.
/// The one reader of such files: `report --truth/--reference` and `check --reference` both read with it.
///
/// Accepted columns (names are matched without case, `_`, `-`, spaces or brackets; documented in `docs/REPORT.md`):
/// time `t`, `time_s`, `time`, `seconds`, `elapsed`, `elapsed_s`, `timestamp`, `datetime`, `date_time`, `date`,
/// `unix`, `unix_ms`, `timestamp_ms` (seconds since the run began; or wall-clock time as ISO 8601, Unix seconds or
/// Unix milliseconds); heart rate `pulseRate`, `hr`, `heartRate`, `heart rate (bpm)`, `bpm`, `hr_bpm`, `pulse`;
/// breathing `breathingRate`, `respirationRate`, `breathing_brpm`; HRV `hrvRmssd`, `rmssd`, `rmssd_ms`; RR intervals
/// `rrIntervals`, `rr`, `rr_ms`, `rr (ms)`, `rri`, `rrs` (milliseconds; several in one cell separated by spaces, `;`
/// or `|`, or a JSON array).
public enum ReferenceReader {
    /// The largest truth or reference file the commands read: a chest strap's day at one reading a second is about
    /// 3 MiB. Each row becomes a sample, so the file's size bounds the memory (about 30 times the file's size).
    public static let maximumBytes = 16 << 20

    static let timeKeys = ["t", "times", "time", "seconds", "elapsed", "elapseds", "timestamp", "datetime", "timeseconds",
                           "date", "unix", "unixms", "timestampms"]
    static let pulseKeys = ["pulserate", "hr", "heartrate", "bpm", "hrbpm", "pulse", "pulsebpm", "heartratebpm"]
    static let breathingKeys = ["breathingrate", "respirationrate", "respiratoryrate", "breathingbrpm", "br"]
    static let hrvKeys = ["hrvrmssd", "rmssd", "rmssdms"]
    static let rrKeys = ["rrintervals", "rr", "rrms", "rri", "rrinterval", "rrintervalms", "rrs"]

    /// Column names reduced for matching.
    static func normalize(_ name: String) -> String {
        name.lowercased().filter { $0.isLetter || $0.isNumber }
    }

    /// Parses a recording and puts it on the run's clock.
    /// - Parameters:
    ///   - runStart: the wall-clock time the run began, needed for wall-clock times.
    ///   - run: the run's time range, which the recording must overlap.
    /// - Throws: ``ReportError`` (`malformedInput` with the line, `missingColumn`, `noOverlap`).
    public static func parse(
        _ text: String, name: String, kind: ReferenceSeries.Kind, runStart: Date?, run: ClosedRange<Double>?
    ) throws(ReportError) -> ReferenceSeries {
        let rows = try rows(text, name: name)
        guard let firstLine = rows.first?.0 else {
            throw ReportError(.missingColumn, "\(name): no data rows.")
        }
        // NDJSON leaves out what is unknown at an instant (a rate during warm-up): the columns are all rows' keys.
        var keys = Set<String>()
        for (_, row) in rows { keys.formUnion(row.keys) }
        guard let timeKey = timeKeys.first(where: keys.contains) else {
            throw ReportError(.missingColumn, "\(name):\(firstLine): no time column (one of t, time_s, time, seconds, elapsed, timestamp, datetime, date, unix, unix_ms).",
                              line: firstLine)
        }
        let pulseKey = pulseKeys.first(where: keys.contains)
        let breathingKey = breathingKeys.first(where: keys.contains)
        let hrvKey = hrvKeys.first(where: keys.contains)
        let rrKey = rrKeys.first(where: keys.contains)
        guard pulseKey != nil || rrKey != nil || breathingKey != nil || hrvKey != nil else {
            throw ReportError(.missingColumn, "\(name):\(firstLine): no heart-rate, RR, breathing or HRV column "
                + "(heart rate: pulseRate, hr, heartRate, bpm; RR: rr, rr_ms, rrIntervals).", line: firstLine)
        }
        var samples: [ReferenceSample] = []
        var wallClockOrigin: Double?
        for (line, row) in rows {
            func fail(_ text: String) -> ReportError { ReportError(.malformedInput, "\(name):\(line): \(text).", line: line) }
            guard let timeCell = row[timeKey], !timeCell.isEmpty else { throw fail("no time (\(timeKey))") }
            var t: Double
            if let seconds = Double(timeCell), seconds.isFinite {
                if seconds > 1e11 {  // Unix milliseconds
                    t = seconds / 1000
                    wallClockOrigin = wallClockOrigin ?? 0
                } else if seconds > 1e8 {  // Unix seconds
                    t = seconds
                    wallClockOrigin = wallClockOrigin ?? 0
                } else {
                    guard seconds >= -1e6 else { throw fail("time \(timeCell) is out of range") }
                    t = seconds
                }
            } else if let date = ISO8601Parsing.date(timeCell) {
                t = date.timeIntervalSince1970
                wallClockOrigin = wallClockOrigin ?? 0
            } else {
                throw fail("time '\(timeCell)' is neither seconds nor an ISO 8601 time")
            }
            if wallClockOrigin != nil {
                guard let runStart else {
                    throw ReportError(.malformedInput, "\(name):\(line): wall-clock times need the run's start time: the "
                        + "run's start line has no startedAt; give --run-start TIME (ISO 8601).", line: line)
                }
                t -= runStart.timeIntervalSince1970
            }
            func number(_ key: String?, _ label: String, _ range: ClosedRange<Double>) throws(ReportError) -> Double? {
                guard let key, let cell = row[key], !cell.isEmpty, cell != "null" else { return nil }
                guard let value = Double(cell), value.isFinite else { throw fail("\(label) '\(cell)' is not a number") }
                guard range.contains(value) else { throw fail("\(label) \(cell) is outside \(f(range.lowerBound))–\(f(range.upperBound))") }
                return value
            }
            var rr: [Double] = []
            if let rrKey, let cell = row[rrKey], !cell.isEmpty, cell != "null" {
                let parts = cell.split(whereSeparator: { " ;|,[]".contains($0) })
                for part in parts {
                    guard let value = Double(part), value.isFinite, value > 0 else { throw fail("RR interval '\(part)' is not a number") }
                    let ms = value < 10 ? value * 1000 : value  // seconds, as some loggers write them
                    guard (200...3000).contains(ms) else { throw fail("RR interval \(part) is outside 200–3000 ms") }
                    rr.append(ms)
                }
            }
            var pulse = try number(pulseKey, "heart rate", 20...300)
            if pulse == nil, !rr.isEmpty { pulse = 60000 / (rr.reduce(0, +) / Double(rr.count)) }
            samples.append(ReferenceSample(t: t, pulseRate: pulse, breathingRate: try number(breathingKey, "breathing rate", 1...80),
                                           hrvRmssd: try number(hrvKey, "HRV", 0...1000), rrIntervals: rr))
        }
        var series = ReferenceSeries(kind: kind, source: name, samples: samples)
        series.wallClock = wallClockOrigin != nil
        series.columnsUsed = [("time", timeKey), ("hr", pulseKey), ("breathing", breathingKey), ("hrv", hrvKey), ("rr", rrKey)]
            .compactMap { label, key in key.map { "\(label)=\($0)" } }.joined(separator: ", ")
        if hrvKey == nil, rrKey != nil { series.samples = withRMSSD(series.samples, window: 30) }
        if let run, let range = series.timeRange, range.upperBound < run.lowerBound || range.lowerBound > run.upperBound {
            throw ReportError(.noOverlap, "\(name): its times (\(f(range.lowerBound)) to \(f(range.upperBound)) s on the run's "
                + "clock) do not overlap the run (\(f(run.lowerBound)) to \(f(run.upperBound)) s)"
                + (wallClockOrigin != nil ? "; check that the recording is of this run and that both clocks were set" : "")
                + ".")
        }
        return series
    }

    /// RMSSD over the RR intervals of the trailing `window` seconds, at every sample (ms; nil with fewer than 3).
    static func withRMSSD(_ samples: [ReferenceSample], window: Double) -> [ReferenceSample] {
        var result = samples
        var recent: [(Double, Double)] = []
        for index in result.indices {
            let t = result[index].t
            recent += result[index].rrIntervals.map { (t, $0) }
            recent.removeAll { $0.0 < t - window }
            guard recent.count >= 3 else { continue }
            var sum = 0.0
            for i in 1..<recent.count { sum += (recent[i].1 - recent[i - 1].1) * (recent[i].1 - recent[i - 1].1) }
            result[index].hrvRmssd = (sum / Double(recent.count - 1)).squareRoot()
        }
        return result
    }

    /// The rows of a CSV (first line a header) or an NDJSON file, as normalized column → cell text, with line numbers.
    static func rows(_ text: String, name: String) throws(ReportError) -> [(Int, [String: String])] {
        // "\r\n" is one Character in Swift: split on it too (loggers on Windows write it).
        let lines = text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" })
            .map { $0.hasSuffix("\r") ? $0.dropLast() : $0 }
        guard let firstIndex = lines.firstIndex(where: { !$0.trimmingCharacters(in: .whitespaces).isEmpty && !$0.hasPrefix("#") }) else {
            return []
        }
        var result: [(Int, [String: String])] = []
        if lines[firstIndex].hasPrefix("{") {
            for (index, line) in lines.enumerated() where !line.trimmingCharacters(in: .whitespaces).isEmpty {
                let node: JSONNode
                do {
                    node = try JSONNode.parse(Array(line.utf8))
                } catch {
                    throw ReportError(.malformedInput, "\(name):\(index + 1): not JSON (\(error.message)).", line: index + 1)
                }
                guard case .object(let members) = node.value else {
                    throw ReportError(.malformedInput, "\(name):\(index + 1): a line must be a JSON object.", line: index + 1)
                }
                var row: [String: String] = [:]
                for member in members {
                    let key = normalize(member.key)
                    switch member.value.value {
                    case .number(let text), .string(let text): row[key] = text
                    case .array(let elements):
                        row[key] = elements.compactMap { element -> String? in
                            if case .number(let text) = element.value { return text }
                            return nil
                        }.joined(separator: " ")
                    case .null: row[key] = ""
                    default: continue
                    }
                }
                result.append((index + 1, row))
            }
            return result
        }
        let separator: Character = lines[firstIndex].contains(";") && !lines[firstIndex].contains(",") ? ";" : ","
        let header = lines[firstIndex].split(separator: separator, omittingEmptySubsequences: false).map {
            normalize($0.trimmingCharacters(in: CharacterSet(charactersIn: " \"")))
        }
        for index in (firstIndex + 1)..<lines.count {
            let line = lines[index]
            if line.trimmingCharacters(in: .whitespaces).isEmpty || line.hasPrefix("#") { continue }
            let cells = line.split(separator: separator, omittingEmptySubsequences: false).map {
                $0.trimmingCharacters(in: CharacterSet(charactersIn: " \""))
            }
            guard cells.count <= header.count else {
                throw ReportError(.malformedInput, "\(name):\(index + 1): \(cells.count) cells, but the header names \(header.count).",
                                  line: index + 1)
            }
            var row: [String: String] = [:]
            for (column, cell) in zip(header, cells) where !column.isEmpty { row[column] = cell }
            result.append((index + 1, row))
        }
        return result
    }
}
