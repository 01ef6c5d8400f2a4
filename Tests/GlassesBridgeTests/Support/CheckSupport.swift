import Foundation
import GlassesSimulator
import Synchronization
import Testing
import WearablesKit
@testable import GlassesBridge
@testable import GlassesCheck
import GlassesBridgeCommand

/// `glasses-bridge check` against the in-process simulator in virtual time, with the fast recording engine.
struct CheckRig {
    let scheduler = ManualScheduler()
    let glasses: SimulatedGlasses
    static let startDate = Date(timeIntervalSince1970: 1_796_126_400)  // 2026-12-01T12:00:00Z

    init(seed: UInt64 = 7) throws {
        glasses = try SimulatedGlasses(profile: SubjectProfile(seed: seed), scheduler: scheduler)
    }

    /// A short plan: one or two small configurations, 1 s warm-up, 3 s measured, a 6 s vitals run.
    static func plan(_ groups: [CheckGroup], streams: [StreamConfiguration] = [StreamConfiguration(videoCodec: .raw, resolution: .low, frameRate: 24)]) -> CheckPlan {
        var plan = CheckPlan()
        plan.name = "test-plan"
        plan.groups = groups
        plan.streams = streams
        plan.lifecycleStream = StreamConfiguration(videoCodec: .raw, resolution: .low, frameRate: 24)
        plan.warmUpSeconds = 1
        plan.measureSeconds = 3
        plan.vitalsSeconds = 6
        plan.tolerances.pulseStableWithinSeconds = 4
        plan.tolerances.breathingStableWithinSeconds = 4
        return plan
    }

    /// Runs the plan; `control` replaces the simulator's tap and link loss (a device that misbehaves).
    func run(_ plan: CheckPlan, reference: ReferenceRecording? = nil, control: CheckDeviceControl? = nil,
             backend: @escaping @Sendable () -> RecordingBackend = { RecordingBackend() },
             emit: @escaping @Sendable (CheckEvent) -> Void = { _ in }) async -> CheckReport {
        let glasses = self.glasses
        let target = CheckTarget(
            source: .simulator(glasses), clock: .virtual(scheduler),
            control: control ?? CheckDeviceControl(tap: { glasses.tap() }, loseLink: { glasses.inject(.linkLoss) }),
            startDate: Self.startDate)
        let runner = CheckRunner(plan: plan, target: target, reference: reference, backend: { backend() }, emit: emit)
        return await runner.run()
    }

    /// Runs `action` at `seconds` of virtual time from now.
    func at(_ seconds: Double, _ action: @escaping @Sendable () -> Void) {
        scheduler.schedule(after: .milliseconds(Int64(seconds * 1000)), action)
    }
}

extension CheckReport {
    /// `group: name` of every failed or errored check.
    var failing: Set<String> { Set(problems.map(\.fullName)) }

    /// The result with this full name.
    func result(_ fullName: String) -> CheckResult? { results.first { $0.fullName == fullName } }

    /// Every result, one a line, for failure messages.
    var listing: String { results.map { "\($0.verdict.rawValue) \($0.fullName): \($0.message)" }.joined(separator: "\n") }
}
