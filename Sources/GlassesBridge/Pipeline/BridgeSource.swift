import Foundation
import GlassesLink
import GlassesSimulator
import WearablesKit

/// How time passes in a run.
public enum BridgeClock: Sendable {
    /// Wall-clock time: the scheduler runs actions when they fall due.
    case realTime(any EventScheduler)
    /// Virtual time: the pipeline advances the scheduler itself, as fast as the worker keeps up (tests,
    /// `--no-realtime`). Nothing is dropped for lateness, because time waits for the worker.
    case virtual(ManualScheduler)

    /// The scheduler every part of the run shares.
    public var scheduler: any EventScheduler {
        switch self {
        case .realTime(let scheduler): scheduler
        case .virtual(let scheduler): scheduler
        }
    }
}

/// Where a run's frames come from: glasses reached through links, or a file.
public struct BridgeSource: Sendable {
    enum Kind: Sendable {
        case glasses(connect: @Sendable () throws -> any DeviceLink)
        case file(path: String)
    }

    let kind: Kind
    /// Ground truth over the trailing `seconds` of device time, for simulated glasses.
    let truth: (@Sendable (_ trailingSeconds: Double) -> VitalsSnapshot?)?
    /// What the source is, for messages.
    public let description: String

    /// Glasses reached by opening links with `connect` (called again to reconnect after a loss).
    /// - Parameter truth: ground truth over the trailing seconds of device time, when known (simulators).
    public static func glasses(
        _ description: String,
        truth: (@Sendable (_ trailingSeconds: Double) -> VitalsSnapshot?)? = nil,
        connect: @escaping @Sendable () throws -> any DeviceLink
    ) -> BridgeSource {
        BridgeSource(kind: .glasses(connect: connect), truth: truth, description: description)
    }

    /// A recording (`.y4m`, `.mp4`, `.mkv`, Annex B HEVC) played as if glasses sent it.
    public static func file(_ path: String) -> BridgeSource {
        BridgeSource(kind: .file(path: path), truth: nil, description: "file:\(path)")
    }

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
    static func truth(of glasses: SimulatedGlasses, trailingSeconds: Double) -> VitalsSnapshot? {
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
            throw BridgeFailure(.internalError, "The simulator could not start: \(error).")
        }
    }
}
