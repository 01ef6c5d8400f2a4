import Foundation
import GlassesVideo
import SmartSpectraInput
import Synchronization
import WearablesKit

/// A recording played as if glasses sent it, on a thread of its own.
///
/// In real time it is paced by the file's timestamps; a frame whose time has come while the worker has no room
/// waits for room up to the run's lateness tolerance and is then skipped at the source (``LateFramePolicy``: counted
/// as ``FrameDropReason/late``, and an HEVC frame's dependants up to the next keyframe with it). In virtual time it
/// advances the run's clock to each frame's time and waits for room in the hand-off, so nothing is dropped.
/// Pipelined (the default), it reads and pushes ahead while the worker decodes and the engine processes earlier
/// frames: the hand-off's capacity bounds how far ahead, and the run's timers drain the chain before they act
/// (``BridgePipeline``). Serial, it also waits for the worker (and, when asked, the engine) after every frame.
final class FilePlaybackSource: FrameSource {
    /// What the source needs from the run.
    struct Dependencies: Sendable {
        let path: String
        let clock: BridgeClock
        let startedAt: Duration
        /// When the run's `--duration` ends it (nil: no duration), on the run's clock.
        let stopAt: Duration?
        let handoff: FrameHandoff
        let counters: BridgeCounters
        /// Blocks until the engine has processed every frame accepted so far.
        let waitForEngineQueue: @Sendable () -> Void
        let waitForEngine: Bool
        /// In virtual time, whether reading runs ahead of decoding and the engine (false: one frame at a time).
        let pipelined: Bool
        /// In real time, how long past its time a frame may wait for room before it is skipped.
        let latenessTolerance: Duration
        /// The same for an HEVC frame, when longer (one skipped costs every frame up to the next keyframe).
        let encodedLatenessTolerance: Duration
        let record: (@Sendable (VideoFrame) -> Void)?
        let emit: @Sendable (BridgeEvent) -> Void
        /// The run must end; `reason` names why when it ended normally.
        let finish: @Sendable (_ reason: String, _ failure: BridgeFailure?) -> Void
    }

    private let deps: Dependencies
    private let stopped = Atomic<Bool>(false)

    init(dependencies: Dependencies) {
        self.deps = dependencies
    }

    var restartCounts: (stalls: Int, reconnects: Int, sessions: Int) { (0, 0, 0) }
    var deviceDroppedFrames: UInt64 { 0 }
    var pipelineDrivesVirtualTime: Bool { false }
    var lastDeviceFault: String? { nil }

    func start() {
        let thread = Thread { [self] in play() }
        thread.name = "glasses-bridge.file"
        thread.start()
    }

    func stop() {
        stopped.store(true, ordering: .releasing)
        deps.finish("endOfInput", nil)
    }

    func fail(_ failure: BridgeFailure) {
        stopped.store(true, ordering: .releasing)
        deps.emit(.error(code: failure.kind.rawValue, message: failure.message))
        deps.finish(failure.kind.rawValue, failure)
    }

    func stopDelivery() {
        stopped.store(true, ordering: .releasing)
    }

    func capturePhoto() -> Bool { false }

    /// Waits until the worker has handled every frame pushed so far (and, when time waits for it, the engine too).
    private func drain() {
        deps.handoff.waitUntilIdle()
        if deps.waitForEngine { deps.waitForEngineQueue() }
    }

    private var isStopped: Bool { stopped.load(ordering: .acquiring) }

    /// The reader's message, naming the file once: the readers' own messages mostly name it already ("x.mp4 is
    /// truncated: …", "cannot open x.mp4: …"), and are then told as they are, as a sentence; others are led by
    /// `lead` and the path ("Cannot play x.mp4: …").
    static func naming(_ path: String, _ message: String, lead: String = "") -> String {
        if message.hasPrefix(path) { return message }  // a file's name is never re-cased
        if message.contains(path) { return message.prefix(1).uppercased() + message.dropFirst() }
        return lead.isEmpty ? "\(path): \(message)" : "\(lead) \(path): \(message)"
    }

    private func play() {
        let reader: VideoFileReader
        do {
            reader = try VideoFileReader(path: deps.path)
        } catch {
            fail(BridgeFailure(.badInputData, Self.naming(deps.path, error.message, lead: "Cannot play") + "."))
            return
        }
        deps.emit(.state(.streaming, detail: "\(reader.width)x\(reader.height) from \(deps.path)"))
        let wallStart = ContinuousClock.now
        var latePolicy = LateFramePolicy(tolerance: deps.latenessTolerance, encodedTolerance: deps.encodedLatenessTolerance)
        var firstUs: Int64?
        while !isStopped {
            let frame: VideoFrame?
            do {
                frame = try reader.nextFrame()
            } catch {
                // A damaged or truncated file is not a complete run: say so and end with its own exit code.
                fail(BridgeFailure(.badInputData, Self.naming(deps.path, error.message)))
                return
            }
            guard let frame else {
                // Pipelined in virtual time: the last frames are processed before the run ends, as in the serial run.
                if case .virtual = deps.clock, deps.pipelined { drain() }
                deps.finish("endOfFile", nil)
                return
            }
            let first = firstUs ?? frame.presentationTimeUs
            firstUs = first
            let (elapsedUs, overflow) = frame.presentationTimeUs.subtractingReportingOverflow(first)
            let offset = Duration.microseconds(overflow ? 0 : max(0, elapsedUs))
            switch deps.clock {
            case .virtual(let scheduler):
                if let stopAt = deps.stopAt, deps.startedAt + offset > stopAt {
                    // The next frame is after the run's end (a gap in the file's timestamps): time goes to the end,
                    // where the duration's timer ends the run, not on to the frame.
                    scheduler.advance(to: stopAt)
                    if !isStopped { deps.finish("duration", nil) }
                    return
                }
                scheduler.advance(to: deps.startedAt + offset)
                if isStopped { return }
                deps.record?(frame)
                deps.handoff.pushWaitingForRoom(frame, hostUs: deps.clock.scheduler.now.wholeMicroseconds)
                if !deps.pipelined { drain() }
            case .realTime:
                let due = wallStart + offset
                let now = ContinuousClock.now
                if due > now { Thread.sleep(forTimeInterval: (due - now).inSeconds) }
                // Told to stop while waiting for this frame's time: the frame is after the run's end.
                if isStopped { return }
                deps.record?(frame)
                let dependence = LateFramePolicy.Dependence(of: frame)
                var action = latePolicy.frameDue(dependence, due: offset, room: deps.handoff.room)
                if case .waitForRoom(let until) = action {
                    // The worker is behind and this frame's time has come: give it a moment before skipping it.
                    let gotRoom = deps.handoff.waitForRoom(until: wallStart + until)
                    if isStopped { return }
                    action = latePolicy.waitEnded(dependence, gotRoom: gotRoom)
                }
                switch action {
                case .push, .waitForRoom:
                    deps.handoff.push(frame, hostUs: deps.clock.scheduler.now.wholeMicroseconds)
                case .skip(let reason):
                    // Skipped here, at the source, as glasses would.
                    deps.counters.update {
                        $0.recordReceived(atUs: deps.clock.scheduler.now.wholeMicroseconds)
                        $0.recordDropped(reason)
                    }
                }
            }
        }
    }
}
