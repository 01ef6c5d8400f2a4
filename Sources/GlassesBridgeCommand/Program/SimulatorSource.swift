import GlassesBridge
import GlassesLink
import GlassesSimulator
import WearablesKit

/// The simulator wiring of the command: the built-in glasses as a ``BridgeSource``. The GlassesBridge library
/// knows nothing of the simulator; only the command (and tests) join the two.
extension BridgeSource {
    /// Simulated glasses in this process, joined by an in-process link (a new one after every link loss).
    /// - Parameter liveness: the link's heartbeats (standard by default).
    package static func simulator(_ glasses: SimulatedGlasses, liveness: LinkLiveness = .standard) -> BridgeSource {
        let scheduler = glasses.scheduler
        return .glasses(
            "built-in simulator (\(glasses.info.name))",
            truth: { span in BridgeSource.truth(of: glasses, span: span) },
            connect: {
                let pair = InProcessLink.makePair(scheduler: scheduler, liveness: liveness)
                glasses.attach(pair.device)
                return pair.host
            }
        )
    }

    /// The simulator's truth over a span of its device time (``TruthSpan``).
    package static func truth(of glasses: SimulatedGlasses, span: TruthSpan) -> VitalsSnapshot? {
        let truth = glasses.groundTruth
        let end = min(glasses.deviceTime, truth.coveredThrough)
        guard end > 1 else { return nil }
        switch span {
        case .trailing(let rates, let hrv):
            let window = max(0, end - rates)...end
            return VitalsSnapshot(
                pulseRate: truth.meanPulseRate(in: window),
                breathingRate: truth.meanBreathingRate(in: window),
                hrvRmssd: truth.rmssd(window: max(0, end - hrv)...end)
            )
        case .wholeRun:
            // The median of 10 s means, from one pass over the run's intervals (a window's scan each would be
            // quadratic in the run's length).
            let bin = 10.0
            var sums: [Int: (seconds: Double, count: Int)] = [:]
            for interval in truth.rrIntervals(in: 0...end) {
                let index = Int(interval.time / bin)
                sums[index, default: (0, 0)].seconds += interval.seconds
                sums[index, default: (0, 0)].count += 1
            }
            let pulse = sums.values.compactMap { $0.count > 0 && $0.seconds > 0 ? 60 * Double($0.count) / $0.seconds : nil }
            let bins = Int((end / bin).rounded(.up))
            let breathing = (0..<bins).compactMap { i in
                truth.meanBreathingRate(in: Double(i) * bin...min(end, Double(i + 1) * bin))
            }
            // The median as the summary takes its own (VitalBasis).
            return VitalsSnapshot(pulseRate: VitalBasis(pulse)?.median, breathingRate: VitalBasis(breathing)?.median,
                                  hrvRmssd: truth.rmssd(window: 0...end))
        }
    }
}

extension SimulatorOptions {
    /// Makes the simulated glasses these options describe.
    /// - Throws: ``BridgeFailure`` when the simulator rejects the settings.
    package func makeGlasses(scheduler: any EventScheduler) throws(BridgeFailure) -> SimulatedGlasses {
        let profile = SubjectProfile(pulseRate: pulseRate, breathingRate: breathingRate, seed: seed)
        do {
            return try SimulatedGlasses(profile: profile, scheduler: scheduler)
        } catch {
            throw BridgeFailure(.internalError, "The simulator could not start: \(error.message).")
        }
    }
}
