import Foundation

/// A reference heart-rate recording (a chest strap's logger export) on the wall clock: heart rate and optional RR
/// intervals. The command reads the file with the report's reader (`ReferenceReader` in GlassesReport: one reader
/// and one set of column names for `report` and `check`) and builds this from it.
package struct ReferenceRecording: Sendable, Hashable {
    /// One reading.
    package struct Sample: Sendable, Hashable {
        /// When, wall clock.
        package var time: Date
        /// Heart rate, bpm.
        package var heartRate: Double
        /// RR intervals that ended with this reading, ms.
        package var rrIntervalsMs: [Double]

        /// Creates a sample.
        package init(time: Date, heartRate: Double, rrIntervalsMs: [Double] = []) {
            self.time = time
            self.heartRate = heartRate
            self.rrIntervalsMs = rrIntervalsMs
        }
    }

    /// Readings in time order.
    package var samples: [Sample]
    /// Which columns (or keys) were read, for messages: `time=timestamp, hr=heartrate, rr=rrms`.
    package var columnsUsed: String
    /// Where it came from.
    package var source: String

    /// Creates a recording (samples are sorted by time).
    package init(samples: [Sample], columnsUsed: String, source: String) {
        self.samples = samples.sorted { $0.time < $1.time }
        self.columnsUsed = columnsUsed
        self.source = source
    }

    /// `FILE (N readings from A to B; columns …)`.
    package var description: String {
        guard let first = samples.first, let last = samples.last else { return "\(source) (empty)" }
        return "\(source) (\(samples.count) readings, \(Self.iso(first.time)) to \(Self.iso(last.time)); \(columnsUsed))"
    }

    package static func iso(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: date)
    }

    /// The heart rate at `time`: interpolated between readings at most 5 s apart, or the nearest within 3 s.
    package func heartRate(at time: Date) -> Double? {
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
    package func rmssd(in range: ClosedRange<Date>) -> Double? {
        let intervals = samples.filter { range.contains($0.time) }.flatMap(\.rrIntervalsMs)
        guard intervals.count >= 3 else { return nil }
        let differences = zip(intervals, intervals.dropFirst()).map { ($1 - $0) * ($1 - $0) }
        return (differences.reduce(0, +) / Double(differences.count)).squareRoot()
    }

    /// Whether any reading carries RR intervals.
    package var hasRRIntervals: Bool { samples.contains { !$0.rrIntervalsMs.isEmpty } }
}

/// A reference recording that cannot be used.
package struct ReferenceError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of problem.
    package enum Code: String, Sendable, Hashable {
        /// The file could not be read.
        case unreadable
        /// Its content is not a reference this reads.
        case invalid
    }

    /// The kind of problem.
    package var code: Code
    /// `FILE: line N: what is wrong`.
    package var message: String

    /// Creates an error.
    package init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    /// The message.
    package var description: String { message }
}
