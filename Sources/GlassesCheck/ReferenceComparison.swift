import Foundation
import GlassesBridge

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
