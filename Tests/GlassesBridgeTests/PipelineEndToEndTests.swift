import Foundation
import Testing
import GlassesSimulator
import SmartSpectraInput
import Synchronization
import WearablesKit
@testable import GlassesBridge

/// The pipeline against the in-process simulator, in virtual time, with a fast recording engine.
@Suite("Pipeline end to end (in-process simulator, virtual time)", .serialized)
struct PipelineEndToEndTests {
    /// Checks what every run must satisfy: the accounting identity and a valid timeline in every engine run.
    private func checkInvariants(_ result: BridgeRunResult, _ run: SimulatedRun, sourceLocation: SourceLocation = #_sourceLocation) {
        let accounting = result.summary.stats.accounting
        #expect(accounting.isBalanced, "received \(accounting.received) != submitted \(accounting.submitted) + rejected \(accounting.rejected) + dropped \(accounting.dropped)", sourceLocation: sourceLocation)
        #expect(accounting.rejectedByCode["timestampGap"] == nil, "timestampGap rejections: \(accounting.rejectedByCode)", sourceLocation: sourceLocation)
        #expect(accounting.rejectedByCode["nonMonotonicTimestamp"] == nil, sourceLocation: sourceLocation)
        for timestamps in run.backend.log.allTimestamps {
            for (previous, next) in zip(timestamps, timestamps.dropFirst()) {
                #expect(next > previous && next - previous <= 2_000_000, "engine saw \(previous) -> \(next)", sourceLocation: sourceLocation)
            }
        }
    }

    @Test func aCleanRunSubmitsEveryFrameAndReportsVitals() async throws {
        let run = try SimulatedRun(seconds: 4)
        let result = await run.run()
        checkInvariants(result, run)
        #expect(result.exitCode == .success)
        #expect(result.summary.reason == "duration")
        let accounting = result.summary.stats.accounting
        #expect(accounting.received >= 3 * 24)
        #expect(accounting.submitted == accounting.received)
        #expect(result.summary.vitals.pulseRate == 70)
        #expect(result.summary.vitals.breathingRate == 14)
        #expect(result.summary.truth?.pulseRate != nil)
        #expect(run.events.phases.contains(.streaming))
        if case .summary = run.events.all.last?.event {} else { Issue.record("the last event is not the summary") }
    }

    @Test func aTapPauseLongerThanTwoSecondsRestartsCustomInput() async throws {
        let run = try SimulatedRun(seconds: 10)
        let glasses = run.glasses
        run.at(3) { glasses.tap() }
        run.at(6) { glasses.tap() }
        let result = await run.run()
        checkInvariants(result, run)
        #expect(run.events.phases.contains(.paused))
        #expect(result.summary.stats.inputRestarts >= 1)
        #expect(run.backend.log.allTimestamps.count >= 2, "custom input was not stopped and started")
        #expect(run.events.submitted(by: 9.5) > run.events.submitted(by: 6.5), "no frames after the pause")
    }

    @Test func doffPausesAndDonResumes() async throws {
        let run = try SimulatedRun(seconds: 10)
        let glasses = run.glasses
        run.at(3) { glasses.doff() }
        run.at(6) { glasses.don() }
        let result = await run.run()
        checkInvariants(result, run)
        #expect(run.events.phases.contains(.paused))
        #expect(result.summary.stats.inputRestarts >= 1)
        #expect(run.events.submitted(by: 9.5) > run.events.submitted(by: 6.5))
    }

    @Test func foldEndsTheSessionAndANewOneStartsAfterUnfold() async throws {
        let run = try SimulatedRun(seconds: 11)
        let glasses = run.glasses
        run.at(3) { glasses.fold() }
        run.at(4.5) { glasses.unfold() }
        let result = await run.run()
        checkInvariants(result, run)
        #expect(result.exitCode == .success)
        #expect(result.summary.stats.sessionRestarts >= 1)
        #expect(run.events.submitted(by: 10.5) > run.events.submitted(by: 5.5), "streaming did not come back")
    }

    @Test func thermalStopsCleanlyWithAnActionableMessage() async throws {
        let run = try SimulatedRun(seconds: 10)
        let glasses = run.glasses
        run.at(3) { glasses.setThermalLevel(.critical) }
        let result = await run.run()
        checkInvariants(result, run)
        #expect(result.exitCode == .deviceUnavailable)
        #expect(result.summary.failure?.kind == .thermal)
        #expect(result.summary.failure?.message.contains("cool") == true)
        #expect(result.summary.durationSeconds < 4)
    }

    @Test func linkLossReconnectsAfterABackoff() async throws {
        let run = try SimulatedRun(seconds: 10)
        let glasses = run.glasses
        run.at(3) { glasses.inject(.linkLoss) }
        let result = await run.run()
        checkInvariants(result, run)
        #expect(result.exitCode == .success)
        #expect(result.summary.stats.reconnects >= 1)
        #expect(run.events.phases.contains(.waiting))
        #expect(run.events.submitted(by: 9.5) > run.events.submitted(by: 5.5), "no frames after reconnecting")
    }

    @Test func aZombieStreamIsRecoveredByTheWatchdog() async throws {
        let run = try SimulatedRun(seconds: 12)
        let glasses = run.glasses
        run.at(3) { glasses.inject(.zombieStream(true)) }
        // Real glasses recover once the camera is restarted; the simulator's zombie ends when told.
        run.at(9) { glasses.inject(.zombieStream(false)) }
        let result = await run.run()
        checkInvariants(result, run)
        #expect(result.exitCode == .success)
        #expect(result.summary.stats.stallRestarts >= 1)
        #expect(run.events.notices.contains { $0.contains("restarting the camera") })
        #expect(run.events.submitted(by: 11.5) > run.events.submitted(by: 9.5), "no frames after the watchdog restart")
    }

    @Test func aDroppedKeyframeIsSkippedUntilTheNextOne() async throws {
        let run = try SimulatedRun(codec: .hvc1, seconds: 6)
        let glasses = run.glasses
        run.at(2) { glasses.inject(.dropKeyframe) }
        let result = await run.run()
        checkInvariants(result, run)
        let accounting = result.summary.stats.accounting
        let skipped = (accounting.droppedByReason[.awaitingKeyframe] ?? 0) + (accounting.droppedByReason[.decodeFailed] ?? 0)
        #expect(skipped > 0, "no frame was skipped after the lost keyframe: \(accounting.droppedByReason)")
        #expect(run.events.submitted(by: 5.5) > run.events.submitted(by: 3), "decoding did not recover")
    }

    @Test func aPhotoMidStreamArrivesAndTheStreamGoesOn() async throws {
        let run = try SimulatedRun(seconds: 6)
        let pipeline = run.pipeline
        let captured = Captured()
        run.at(3) { captured.set(pipeline.capturePhoto()) }
        let result = await run.run()
        checkInvariants(result, run)
        #expect(captured.value == true)
        #expect(run.events.notices.contains { $0.hasPrefix("photo received") })
        #expect(run.events.submitted(by: 5.5) > run.events.submitted(by: 3.5))
    }

    @Test func aSlowEngineMakesTheDeviceDropLateFramesAtTheSource() async throws {
        // The engine holds its first frame until 4 s of virtual time: everything the glasses send meanwhile
        // finds the host behind.
        var backend = RecordingBackend()
        let gate = Gate()
        backend.gate = gate
        let run = try SimulatedRun(seconds: 6, backend: backend) { settings in
            settings.virtualTimeWaitsForEngine = false
        }
        run.at(4) { gate.open() }
        let result = await run.run()
        checkInvariants(result, run)
        let accounting = result.summary.stats.accounting
        // One owner of "the host is slow": the link grants credit only for room in the hand-off, so the device
        // drops late frames itself (its counters show it) and nothing downstream has to.
        #expect(run.glasses.statistics.droppedForCredit > 0, "the device dropped nothing for lack of credit")
        // The bridge reports what the device's heartbeats counted (they lag the device by up to a second).
        let reported = result.summary.stats.deviceDroppedFrames
        #expect(reported > 0 && reported <= run.glasses.statistics.droppedForCredit,
                "deviceDroppedFrames \(reported), the glasses counted \(run.glasses.statistics.droppedForCredit)")
        #expect((accounting.droppedByReason[.late] ?? 0) == 0, "the hand-off dropped: \(accounting.droppedByReason)")
        #expect(result.summary.stats.engineDroppedFrames == 0)
        #expect(accounting.submitted > 0)
        // Four seconds without a frame reaching custom input: the next one starts a fresh timeline (checkInvariants
        // has already proved there was no gap rejection), and frames flow again afterwards.
        #expect(result.summary.stats.inputRestarts >= 1)
        #expect(run.events.notices.contains { $0.hasPrefix("custom input restarted for a fresh timeline after a pause") })
        #expect(run.events.submitted(by: 6) > run.events.submitted(by: 4.5))
    }

    /// Glasses sending HEVC get half a second of hand-off places, and so of credit (`BridgeSettings.encodedBacklog`):
    /// an engine that stalls for about half a second from the first frame (11 frames at 24 fps) costs the glasses no
    /// frame. With the places raw frames get (3), the same stall makes them drop for credit.
    @Test(arguments: [true, false])
    func hevcGlassesWaitOutAHalfSecondStall(halfSecondOfPlaces: Bool) async throws {
        var backend = RecordingBackend()
        let gate = Gate()
        backend.gate = gate
        let clock = Mutex<ManualScheduler?>(nil)
        let firstArrival = Mutex<Duration?>(nil)
        let run = try SimulatedRun(codec: .hvc1, seconds: 3, backend: backend) { settings in
            settings.virtualTimeWaitsForEngine = false
            if !halfSecondOfPlaces { settings.encodedBacklog = .zero }
            // The engine holds the first frame until 480 ms after it arrived.
            settings.frameObserver = { _, arrival in
                let first = firstArrival.withLock { first in
                    defer { first = first ?? arrival }
                    return first == nil
                }
                if first { clock.withLock { $0 }?.schedule(after: .milliseconds(480)) { gate.open() } }
            }
        }
        clock.withLock { $0 = run.scheduler }
        let result = await run.run()
        checkInvariants(result, run)
        #expect(firstArrival.withLock { $0 } != nil, "no frame arrived")
        let droppedForCredit = run.glasses.statistics.droppedForCredit
        let accounting = result.summary.stats.accounting
        #expect(accounting.submitted > 0)
        if halfSecondOfPlaces {
            #expect(droppedForCredit == 0, "the glasses dropped \(droppedForCredit) for credit")
            #expect(accounting.dropped == 0, "dropped: \(accounting.droppedByReason)")
        } else {
            #expect(droppedForCredit > 0, "with 3 places the glasses dropped nothing: the stall was too short to test")
        }
    }

    /// #19: a run ends with work still pending on its virtual clock (the next stats tick, heartbeats, the frame
    /// clock). None of it may keep the scheduler, the glasses or the pipeline alive once the run's owner lets go: the
    /// stats tick once captured its own scheduler, and that cycle leaked everything pending on it.
    @Test func aFinishedRunReleasesItsSchedulerGlassesAndPipeline() async throws {
        weak var weakScheduler: ManualScheduler?
        weak var weakGlasses: SimulatedGlasses?
        weak var weakPipeline: BridgePipeline?
        do {
            let run = try SimulatedRun(seconds: 3)
            weakScheduler = run.scheduler
            weakGlasses = run.glasses
            weakPipeline = run.pipeline
            let result = await run.run()
            #expect(result.summary.reason == "duration")
            #expect(run.scheduler.pendingCount > 0, "the run must leave work pending for this test to mean anything")
        }
        // The run's helper threads let go of the pipeline just after they resume it.
        let deadline = ContinuousClock.now + .seconds(5)
        while weakScheduler != nil || weakGlasses != nil || weakPipeline != nil, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(weakPipeline == nil, "the pipeline outlived its run")
        #expect(weakGlasses == nil, "the simulated glasses outlived the run")
        #expect(weakScheduler == nil, "the scheduler outlived the run (a cycle through its pending work)")
    }
}

final class Captured: Sendable {
    private let state = Mutex<Bool?>(nil)
    func set(_ value: Bool) { state.withLock { $0 = value } }
    var value: Bool? { state.withLock { $0 } }
}
