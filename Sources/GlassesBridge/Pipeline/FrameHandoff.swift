import Foundation
import Synchronization
import WearablesKit

/// The bounded hand-off between frame delivery (WearablesKit callbacks, file playback) and the pipeline's worker.
///
/// Backpressure is decided at the source, not here: a link grants the device credit only for the ``room`` left
/// (see `VideoCreditGating`), and the observer set with ``setRoomObserver(_:)`` hears whenever the worker takes a
/// frame, so a slow host makes the device drop late frames. A file source waits for room (``pushWaitingForRoom``
/// in virtual time, ``waitForRoom(until:)`` for a moment in real time) or skips a late frame itself. The hand-off
/// still never grows beyond `frameCapacity` frames: should a source push into a full hand-off anyway, the oldest
/// waiting frame is dropped and counted as ``FrameDropReason/late``.
/// Control items (a device-timeline discontinuity, the end) are never dropped and keep their place in order. The
/// worker blocks in ``next()``; virtual-time drivers block in ``waitUntilIdle()`` or ``waitUntilSettled()``.
final class FrameHandoff: @unchecked Sendable {
    // @unchecked Sendable: every stored property is read and written only while `condition` is locked.

    /// What travels to the worker.
    enum Item {
        /// A frame from the device, with the host time (µs) it arrived at.
        case frame(VideoFrame, hostUs: Int64)
        /// The device timeline is about to change (new session, restarted camera, reconnect).
        case discontinuity
        /// No more items: the worker drains what is left and ends.
        case finish
    }

    private let condition = NSCondition()
    private var items: [Item] = []
    private var waitingFrames = 0
    private var busy = false
    private var workerWaitsForEngine = false
    private var finished = false
    private var roomObserver: (@Sendable () -> Void)?
    private let counters: BridgeCounters

    /// How many frames may wait for the worker.
    let frameCapacity: Int

    init(frameCapacity: Int, counters: BridgeCounters) {
        self.frameCapacity = max(1, frameCapacity)
        self.counters = counters
    }

    /// Hands over a frame (never blocks); counts it as received, and drops the oldest waiting frame when full.
    ///
    /// After ``push(control:)`` with `.finish` the run has ended: a frame the source was already delivering when
    /// it was told to stop came after the end, so it is neither taken nor counted (counting it as received and
    /// dropped would report a loss in a run that lost nothing, at random, whenever a timed run's last frame races
    /// its end).
    func push(_ frame: VideoFrame, hostUs: Int64) {
        condition.lock()
        if finished {
            condition.unlock()
            return
        }
        counters.update { $0.recordReceived(atUs: hostUs) }
        var droppedLate = false
        if waitingFrames >= frameCapacity, let index = items.firstIndex(where: { if case .frame = $0 { true } else { false } }) {
            items.remove(at: index)
            waitingFrames -= 1
            droppedLate = true
        }
        items.append(.frame(frame, hostUs: hostUs))
        waitingFrames += 1
        condition.broadcast()
        condition.unlock()
        if droppedLate { counters.update { $0.recordDropped(.late) } }
    }

    /// Hands over a frame once there is room for it, blocking the calling source thread meanwhile (file playback).
    func pushWaitingForRoom(_ frame: VideoFrame, hostUs: Int64) {
        condition.lock()
        while waitingFrames >= frameCapacity, !finished { condition.wait() }
        condition.unlock()
        push(frame, hostUs: hostUs)
    }

    /// Blocks the calling source thread until there is room for a frame or `deadline` passes (a file in real time
    /// that gives a late frame a moment, ``LateFramePolicy``); true when there is room. False after `.finish` too:
    /// the run has ended and a frame pushed now would not be taken.
    func waitForRoom(until deadline: ContinuousClock.Instant) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while waitingFrames >= frameCapacity, !finished {
            let left = deadline - ContinuousClock.now
            guard left > .zero else { return false }
            _ = condition.wait(until: Date(timeIntervalSinceNow: left.inSeconds))
        }
        return !finished
    }

    /// Places free for frames now: what a source may still send without anything being dropped.
    var room: Int {
        condition.lock()
        defer { condition.unlock() }
        return max(0, frameCapacity - waitingFrames)
    }

    /// `observer` runs (outside the lock) every time the worker takes a frame, i.e. whenever room appears.
    func setRoomObserver(_ observer: @escaping @Sendable () -> Void) {
        condition.lock()
        roomObserver = observer
        condition.unlock()
    }

    /// The worker is blocked waiting for the engine to catch up (`true`) or working again (`false`).
    func setWorkerWaitsForEngine(_ waiting: Bool) {
        condition.lock()
        workerWaitsForEngine = waiting
        condition.broadcast()
        condition.unlock()
    }

    /// Hands over a control item; after `.finish` later frames are outside the run and are not counted.
    func push(control item: Item) {
        condition.lock()
        if case .finish = item { finished = true }
        items.append(item)
        condition.broadcast()
        condition.unlock()
    }

    /// The next item, blocking until there is one; marks the worker busy until ``done()``.
    func next() -> Item {
        condition.lock()
        while items.isEmpty { condition.wait() }
        let item = items.removeFirst()
        var tookFrame = false
        if case .frame = item {
            waitingFrames -= 1
            tookFrame = true
        }
        busy = true
        let observer = roomObserver
        condition.broadcast()
        condition.unlock()
        if tookFrame { observer?() }
        return item
    }

    /// The worker finished the item it took.
    func done() {
        condition.lock()
        busy = false
        condition.broadcast()
        condition.unlock()
    }

    /// Blocks until nothing waits and the worker is not busy.
    func waitUntilIdle() {
        condition.lock()
        while !items.isEmpty || busy { condition.wait() }
        condition.unlock()
    }

    /// Blocks until the worker is idle, or is blocked waiting for the engine (virtual time that does not wait for
    /// the engine: the engine falls behind as in real time, and time moves on).
    func waitUntilSettled() {
        condition.lock()
        while !((items.isEmpty && !busy) || workerWaitsForEngine) { condition.wait() }
        condition.unlock()
    }

}

/// The run's shared counters: frame accounting plus restart counts, behind one lock.
final class BridgeCounters: Sendable {
    private let state = Mutex(BridgeStats())

    init() {}

    /// Changes the accounting.
    func update(_ body: (inout FrameAccounting) -> Void) {
        state.withLock { body(&$0.accounting) }
    }

    /// Changes any counter.
    func updateStats(_ body: (inout BridgeStats) -> Void) {
        state.withLock { body(&$0) }
    }

    /// A snapshot.
    var snapshot: BridgeStats { state.withLock { $0 } }

    /// Latency, apart from the counters: recorded by the worker, read per stats interval and for the summary.
    private let latency = Mutex(LatencyTracker())

    /// `sendFrame` accepted a frame with `timing` at host time `acceptedUs`.
    func recordLatency(_ timing: FrameTiming, acceptedUs: Int64) {
        latency.withLock { $0.record(timing, acceptedUs: acceptedUs) }
    }

    /// Latency over the stats interval that ends now (nil when no frame was measured); starts the next one.
    func takeIntervalLatency() -> LatencySummary? { latency.withLock { $0.takeInterval() } }

    /// Latency over the whole run (nil when no frame was measured).
    var runLatency: LatencySummary? { latency.withLock { $0.run } }

    /// Every frame measured in the run so far, in fixed buckets (nil when none was).
    var runLatencyBuckets: LatencyBuckets? {
        latency.withLock { $0.runBuckets.count > 0 ? $0.runBuckets : nil }
    }
}
