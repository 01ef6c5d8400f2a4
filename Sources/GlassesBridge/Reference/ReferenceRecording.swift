import Foundation
import GlassesJSON

/// A reference heart-rate recording (a chest strap's logger export): wall-clock times, heart rate, optional RR
/// intervals. CSV or NDJSON; the accepted column names are in ``ReferenceRecording/timeColumns`` and its neighbours.
public struct ReferenceRecording: Sendable, Hashable {
    /// One reading.
    public struct Sample: Sendable, Hashable {
        /// When, wall clock.
        public var time: Date
        /// Heart rate, bpm.
        public var heartRate: Double
        /// RR intervals that ended with this reading, ms.
        public var rrIntervalsMs: [Double]

        /// Creates a sample.
        public init(time: Date, heartRate: Double, rrIntervalsMs: [Double] = []) {
            self.time = time
            self.heartRate = heartRate
            self.rrIntervalsMs = rrIntervalsMs
        }
    }

    /// Readings in time order.
    public var samples: [Sample]
    /// Which columns (or keys) were read, for messages: `time=timestamp, hr=heart_rate, rr=rr_ms`.
    public var columnsUsed: String
    /// Where it came from.
    public var source: String

    /// Column names accepted for the time (case-insensitive): ISO 8601, or Unix seconds or milliseconds.
    public static let timeColumns = ["timestamp", "time", "date", "datetime", "unix_ms", "timestamp_ms", "unix", "t"]
    /// Column names accepted for the heart rate, bpm.
    public static let heartRateColumns = ["heart_rate", "heartrate", "hr", "bpm", "heart rate", "hr (bpm)", "heart rate (bpm)", "heartRate"]
    /// Column names accepted for RR intervals, ms (several in one cell separated by spaces or `;`; in NDJSON an array).
    public static let rrColumns = ["rr", "rr_ms", "rr_intervals", "rr intervals", "rr (ms)", "rr interval (ms)", "rrintervals", "rrIntervals", "rrs"]
    /// Plausible heart rates, bpm; anything else is an error naming its line.
    public static let heartRateRange = 20.0...300.0
    /// Plausible RR intervals, ms.
    public static let rrRange = 200.0...3000.0
    /// The largest file read.
    public static let maximumBytes = 64 << 20

    /// `FILE (N readings from A to B; columns …)`.
    public var description: String {
        guard let first = samples.first, let last = samples.last else { return "\(source) (empty)" }
        return "\(source) (\(samples.count) readings, \(Self.iso(first.time)) to \(Self.iso(last.time)); \(columnsUsed))"
    }

    static func iso(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: date)
    }

    /// Reads a file: NDJSON when its first non-blank character is `{`, CSV otherwise.
    /// - Throws: ``ReferenceError``.
    public static func load(contentsOf path: String) throws(ReferenceError) -> ReferenceRecording {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw ReferenceError(code: .unreadable, message: "\(path): cannot be read: \(error.localizedDescription)")
        }
        guard data.count <= maximumBytes else {
            throw ReferenceError(code: .invalid, message: "\(path): \(data.count) bytes; a reference is at most \(maximumBytes >> 20) MiB")
        }
        return try parse(String(decoding: data, as: UTF8.self), source: path)
    }

    /// Reads CSV or NDJSON text.
    /// - Throws: ``ReferenceError``.
    public static func parse(_ text: String, source: String = "reference") throws(ReferenceError) -> ReferenceRecording {
        let trimmed = text.drop { $0.isWhitespace || $0 == "\u{FEFF}" }
        let recording = trimmed.first == "{" ? try parseNDJSON(text, source: source) : try parseCSV(text, source: source)
        guard !recording.samples.isEmpty else { throw ReferenceError(code: .invalid, message: "\(source): no readings") }
        return recording
    }

    static func fail(_ source: String, _ line: Int, _ what: String) -> ReferenceError {
        ReferenceError(code: .invalid, message: "\(source): line \(line): \(what)")
    }

    static func time(_ text: String, source: String, line: Int) throws(ReferenceError) -> Date {
        let value = text.trimmingCharacters(in: .whitespaces)
        if let number = Double(value) {
            guard number.isFinite, number >= 0, number < 1e14 else { throw fail(source, line, "time '\(value)' is not a Unix time") }
            return Date(timeIntervalSince1970: number >= 1e11 ? number / 1000 : number)
        }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = formatter.date(from: value) { return date }
        formatter.formatOptions = [.withInternetDateTime]
        if let date = formatter.date(from: value) { return date }
        throw fail(source, line, "time '\(value)' is neither ISO 8601 (2026-12-01T12:00:00Z) nor Unix seconds or milliseconds")
    }

    static func rate(_ value: Double?, _ raw: String, source: String, line: Int) throws(ReferenceError) -> Double {
        guard let value, value.isFinite, heartRateRange.contains(value) else {
            throw fail(source, line, "heart rate '\(raw)' is not a number in \(Int(heartRateRange.lowerBound))...\(Int(heartRateRange.upperBound)) bpm")
        }
        return value
    }

    static func rr(_ values: [Double], source: String, line: Int) throws(ReferenceError) -> [Double] {
        for value in values where !(value.isFinite && rrRange.contains(value)) {
            throw fail(source, line, "RR interval \(value) ms is outside \(Int(rrRange.lowerBound))...\(Int(rrRange.upperBound)) ms")
        }
        return values
    }

    static func parseCSV(_ text: String, source: String) throws(ReferenceError) -> ReferenceRecording {
        let lines = text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).map(String.init)
        guard let headerIndex = lines.firstIndex(where: { !$0.trimmingCharacters(in: .whitespaces).isEmpty }) else {
            throw ReferenceError(code: .invalid, message: "\(source): empty")
        }
        let separator: Character = lines[headerIndex].contains(";") && !lines[headerIndex].contains(",") ? ";" : ","
        let header = lines[headerIndex].split(separator: separator, omittingEmptySubsequences: false)
            .map { $0.trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\"\u{FEFF}")).lowercased() }
        func column(_ names: [String]) -> Int? {
            for name in names { if let index = header.firstIndex(of: name.lowercased()) { return index } }
            return nil
        }
        guard let timeIndex = column(timeColumns) else {
            throw fail(source, headerIndex + 1, "no time column; accepted: \(timeColumns.joined(separator: ", "))")
        }
        guard let rateIndex = column(heartRateColumns) else {
            throw fail(source, headerIndex + 1, "no heart-rate column; accepted: \(heartRateColumns.joined(separator: ", "))")
        }
        let rrIndex = column(rrColumns)
        var samples: [Sample] = []
        for (offset, line) in lines.enumerated().dropFirst(headerIndex + 1) where !line.trimmingCharacters(in: .whitespaces).isEmpty {
            let number = offset + 1
            let cells = line.split(separator: separator, omittingEmptySubsequences: false)
                .map { $0.trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\"")) }
            guard cells.count > max(timeIndex, rateIndex) else { throw fail(source, number, "\(cells.count) cells; the header has \(header.count)") }
            let when = try time(cells[timeIndex], source: source, line: number)
            let hr = try rate(Double(cells[rateIndex]), cells[rateIndex], source: source, line: number)
            var intervals: [Double] = []
            if let rrIndex, rrIndex < cells.count, !cells[rrIndex].isEmpty {
                let parts = cells[rrIndex].split { $0 == " " || $0 == ";" || $0 == "|" }
                var values: [Double] = []
                for part in parts {
                    guard let value = Double(part) else { throw fail(source, number, "RR interval '\(part)' is not a number") }
                    values.append(value)
                }
                intervals = try rr(values, source: source, line: number)
            }
            samples.append(Sample(time: when, heartRate: hr, rrIntervalsMs: intervals))
        }
        samples.sort { $0.time < $1.time }
        let used = "time=\(header[timeIndex]), hr=\(header[rateIndex])" + (rrIndex.map { ", rr=\(header[$0])" } ?? "")
        return ReferenceRecording(samples: samples, columnsUsed: used, source: source)
    }

    static func parseNDJSON(_ text: String, source: String) throws(ReferenceError) -> ReferenceRecording {
        var samples: [Sample] = []
        var used: (String, String, String?)?
        for (offset, line) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            let number = offset + 1
            guard !line.trimmingCharacters(in: .whitespaces).isEmpty else { continue }
            let node: JSONNode
            do {
                node = try JSONNode.parse(Array(line.utf8), skipsByteOrderMark: true)
            } catch {
                throw fail(source, number, "column \(error.offset + 1): not valid JSON: \(error.message)")
            }
            func key(_ names: [String]) -> (String, JSONNode)? {
                for name in names { if let value = node[name] { return (name, value) } }
                return nil
            }
            guard let (timeKey, timeNode) = key(timeColumns) else { throw fail(source, number, "no time key; accepted: \(timeColumns.joined(separator: ", "))") }
            guard let (rateKey, rateNode) = key(heartRateColumns) else { throw fail(source, number, "no heart-rate key; accepted: \(heartRateColumns.joined(separator: ", "))") }
            let timeText: String
            switch timeNode.value {
            case .string(let text): timeText = text
            case .number(let text): timeText = text
            default: throw fail(source, number, "'\(timeKey)' must be a string or a number")
            }
            let when = try time(timeText, source: source, line: number)
            let hr = try rate(rateNode.numberValue, "\(rateNode.typeName)", source: source, line: number)
            var intervals: [Double] = []
            let rrKey = key(rrColumns)
            if let (_, rrNode) = rrKey {
                switch rrNode.value {
                case .array(let items):
                    var values: [Double] = []
                    for item in items {
                        guard let value = item.numberValue else { throw fail(source, number, "an RR interval is \(item.typeName), not a number") }
                        values.append(value)
                    }
                    intervals = try rr(values, source: source, line: number)
                case .null: break
                default:
                    guard let value = rrNode.numberValue else { throw fail(source, number, "RR intervals must be an array of numbers") }
                    intervals = try rr([value], source: source, line: number)
                }
            }
            if used == nil { used = (timeKey, rateKey, rrKey?.0) }
            samples.append(Sample(time: when, heartRate: hr, rrIntervalsMs: intervals))
        }
        samples.sort { $0.time < $1.time }
        let names = used.map { "time=\($0.0), hr=\($0.1)" + ($0.2.map { ", rr=\($0)" } ?? "") } ?? ""
        return ReferenceRecording(samples: samples, columnsUsed: names, source: source)
    }

    /// The heart rate at `time`: interpolated between readings at most 5 s apart, or the nearest within 3 s.
    public func heartRate(at time: Date) -> Double? {
        guard let after = samples.firstIndex(where: { $0.time >= time }) else {
            return samples.last.flatMap { time.timeIntervalSince($0.time) <= 3 ? $0.heartRate : nil }
        }
        let next = samples[after]
        guard after > 0 else { return next.time.timeIntervalSince(time) <= 3 ? next.heartRate : nil }
        let previous = samples[after - 1]
        let span = next.time.timeIntervalSince(previous.time)
        if span > 0, span <= 5 {
            let fraction = time.timeIntervalSince(previous.time) / span
            return previous.heartRate + (next.heartRate - previous.heartRate) * fraction
        }
        let nearest = time.timeIntervalSince(previous.time) < next.time.timeIntervalSince(time) ? previous : next
        return abs(nearest.time.timeIntervalSince(time)) <= 3 ? nearest.heartRate : nil
    }

    /// RMSSD of the RR intervals recorded in `range`, ms; nil with fewer than three intervals.
    public func rmssd(in range: ClosedRange<Date>) -> Double? {
        let intervals = samples.filter { range.contains($0.time) }.flatMap(\.rrIntervalsMs)
        guard intervals.count >= 3 else { return nil }
        let differences = zip(intervals, intervals.dropFirst()).map { ($1 - $0) * ($1 - $0) }
        return (differences.reduce(0, +) / Double(differences.count)).squareRoot()
    }

    /// Whether any reading carries RR intervals.
    public var hasRRIntervals: Bool { samples.contains { !$0.rrIntervalsMs.isEmpty } }
}

/// A reference recording that cannot be used.
public struct ReferenceError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of problem.
    public enum Code: String, Sendable, Hashable {
        /// The file could not be read.
        case unreadable
        /// Its content is not a reference this reads.
        case invalid
    }

    /// The kind of problem.
    public var code: Code
    /// `FILE: line N: what is wrong`.
    public var message: String

    /// The message.
    public var description: String { message }
}

/// Compares a vitals run with a reference recording, aligned by wall-clock time.
enum ReferenceComparison {
    /// The shortest vitals run that can end with a stable RMSSD: the engine's HRV may be stable once it holds 60 s
    /// of face data (docs/VITALS-ENGINE.md, *Warm-up*) and is updated every 10 s after that.
    static let rmssdEarliestSeconds = 70.0

    static func compare(
        _ reference: ReferenceRecording, observation: StreamObservation, wallStart: Date, firstFrame: Double,
        vitalsSeconds: Double, tolerances t: CheckTolerances, group: String
    ) -> [CheckResult] {
        var results: [CheckResult] = []
        let runEnd = wallStart.addingTimeInterval(observation.summary.durationSeconds)
        let pulses = observation.vitals.filter { $0.sample.metric == "pulseRate" && $0.sample.stable }
        var errors: [Double] = []
        for pulse in pulses {
            // The input timeline starts at the first frame's arrival.
            if let truth = reference.heartRate(at: wallStart.addingTimeInterval(firstFrame + pulse.sample.timeSeconds)) {
                errors.append(abs(pulse.sample.value - truth))
            }
        }
        let seconds = observation.summary.durationSeconds
        let bound = "mean |error| ≤ \(format(t.referencePulseBpm)) bpm"
        if let first = reference.samples.first?.time, let last = reference.samples.last?.time, last < wallStart || first > runEnd {
            results.append(.error(group, "pulse against the reference",
                                  "the times do not overlap: the reference covers \(ReferenceRecording.iso(first)) to \(ReferenceRecording.iso(last)), the run covered \(ReferenceRecording.iso(wallStart)) to \(ReferenceRecording.iso(runEnd))",
                                  type: "noOverlap", seconds: seconds))
            return results
        }
        if pulses.isEmpty {
            results.append(CheckResult(group: group, name: "pulse against the reference", verdict: .fail, measured: "no stable pulse",
                                       bound: bound, message: "the run produced no stable pulse to compare with the reference", failureType: "missing", seconds: seconds))
        } else if errors.isEmpty {
            results.append(.error(group, "pulse against the reference",
                                  "no stable pulse fell within 3 s of a reference reading (\(pulses.count) stable values); the reference is too sparse where the run was",
                                  type: "noOverlap", seconds: seconds))
        } else {
            let mean = errors.reduce(0, +) / Double(errors.count)
            let bridge = pulses.map(\.sample.value).reduce(0, +) / Double(pulses.count)
            results.append(.measured(group, "pulse against the reference", within: mean <= t.referencePulseBpm,
                                     measured: "mean |error| \(format(mean)) bpm over \(errors.count) values (bridge mean \(format(bridge)) bpm)",
                                     bound: bound, value: mean, seconds: seconds))
        }
        guard reference.hasRRIntervals else {
            results.append(.skipped(group, "RMSSD against the reference", "the reference has no RR intervals"))
            return results
        }
        let rmssdBound = "|error| ≤ \(format(t.referenceRmssdMs)) ms"
        guard let truth = reference.rmssd(in: wallStart...runEnd) else {
            results.append(.error(group, "RMSSD against the reference", "fewer than three reference RR intervals fall within the run", type: "noOverlap", seconds: seconds))
            return results
        }
        guard let bridge = observation.vitals.last(where: { $0.sample.metric == "hrvRmssd" && $0.sample.stable })?.sample.value else {
            if vitalsSeconds < rmssdEarliestSeconds {
                // Like a stable breathing bound longer than the run: not judged, rather than failed for a run too
                // short to hold a stable value.
                results.append(.skipped(group, "RMSSD against the reference",
                                        "no stable RMSSD in the plan's \(format(vitalsSeconds)) s vitals run; HRV is stable at the earliest after 60 s of face data and updates every 10 s: set durations.vitals to \(format(rmssdEarliestSeconds)) s or more to judge it"))
                return results
            }
            results.append(CheckResult(group: group, name: "RMSSD against the reference", verdict: .fail, measured: "no stable RMSSD",
                                       bound: rmssdBound, message: "the run produced no stable RMSSD; the reference's is \(format(truth)) ms",
                                       failureType: "missing", seconds: seconds))
            return results
        }
        let error = abs(bridge - truth)
        results.append(.measured(group, "RMSSD against the reference", within: error <= t.referenceRmssdMs,
                                 measured: "bridge \(format(bridge)) ms, reference \(format(truth)) ms (|error| \(format(error)) ms)",
                                 bound: rmssdBound, value: error, seconds: seconds))
        return results
    }
}
