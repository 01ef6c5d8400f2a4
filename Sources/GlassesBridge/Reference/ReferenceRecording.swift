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

    static func iso(_ date: Date) -> String {
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
