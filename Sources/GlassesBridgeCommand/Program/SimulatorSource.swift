import GlassesBridge
import GlassesLink
import GlassesSimulator
import WearablesKit

/// The simulator wiring of the command: the built-in glasses as a ``BridgeSource``. The GlassesBridge library
/// knows nothing of the simulator; only the command (and tests) join the two.
extension BridgeSource {
    /// Simulated glasses in this process, joined by an in-process link (a new one after every link loss).
    /// - Parameter liveness: the link's heartbeats (standard by default).
    public static func simulator(_ glasses: SimulatedGlasses, liveness: LinkLiveness = .standard) -> BridgeSource {
        let scheduler = glasses.scheduler
        return .glasses(
            "built-in simulator (\(glasses.info.name))",
            truth: { seconds in BridgeSource.truth(of: glasses, trailingSeconds: seconds) },
            connect: {
                let pair = InProcessLink.makePair(scheduler: scheduler, liveness: liveness)
                glasses.attach(pair.device)
                return pair.host
            }
        )
    }

    /// The simulator's truth over the trailing window of its device time.
    public static func truth(of glasses: SimulatedGlasses, trailingSeconds: Double) -> VitalsSnapshot? {
        let truth = glasses.groundTruth
        let end = min(glasses.deviceTime, truth.coveredThrough)
        guard end > 1 else { return nil }
        let window = max(0, end - trailingSeconds)...end
        return VitalsSnapshot(
            pulseRate: truth.meanPulseRate(in: window),
            breathingRate: truth.meanBreathingRate(in: window),
            hrvRmssd: truth.rmssd(window: window)
        )
    }
}

extension SimulatorOptions {
    /// Makes the simulated glasses these options describe.
    /// - Throws: ``BridgeFailure`` when the simulator rejects the settings.
    public func makeGlasses(scheduler: any EventScheduler) throws(BridgeFailure) -> SimulatedGlasses {
        let profile = SubjectProfile(pulseRate: pulseRate, breathingRate: breathingRate, seed: seed)
        do {
            return try SimulatedGlasses(profile: profile, scheduler: scheduler)
        } catch {
            throw BridgeFailure(.internalError, "The simulator could not start: \(error.message).")
        }
    }
}
