import Dispatch
import Synchronization

/// A scheduled action that can be cancelled before it runs.
public struct ScheduledAction: Sendable {
    private let cancelAction: @Sendable () -> Void

    /// Wraps a cancellation closure.
    public init(cancel: @escaping @Sendable () -> Void) {
        self.cancelAction = cancel
    }

    /// Cancels the action; harmless if it already ran or was cancelled.
    public func cancel() { cancelAction() }
}

/// A source of time and deferred work: real time in production, virtual time in tests and simulations.
///
/// Everything in GlassesBridge that waits (stream timeouts, heartbeats, the watchdog, reconnect backoff, the
/// simulator's frame clock) waits through a scheduler, so a ``ManualScheduler`` can run hours of glasses time in
/// milliseconds, deterministically.
public protocol EventScheduler: Sendable {
    /// Time elapsed since the scheduler's epoch.
    var now: Duration { get }
    /// Runs `action` once `delay` has elapsed (at once for zero or negative delays, but never inside this call).
    @discardableResult
    func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) -> ScheduledAction
}

/// A one-way flag shared between a scheduled action and its canceller.
private final class CancellationFlag: Sendable {
    private let cancelled = Atomic<Bool>(false)
    var isCancelled: Bool { cancelled.load(ordering: .acquiring) }
    func cancel() { cancelled.store(true, ordering: .releasing) }
}

/// A scheduler in real time: actions run on a private serial dispatch queue.
public final class DispatchEventScheduler: EventScheduler {
    private let queue: DispatchQueue
    private let epoch = ContinuousClock.now

    /// Creates a scheduler whose actions run serially on a new queue with `label`.
    public init(label: String = "glasses.scheduler") {
        self.queue = DispatchQueue(label: label)
    }

    /// Time since this scheduler was created.
    public var now: Duration { ContinuousClock.now - epoch }

    /// Runs `action` on the scheduler's queue after `delay`.
    @discardableResult
    public func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) -> ScheduledAction {
        let flag = CancellationFlag()
        let nanos = max(0, delay.wholeNanoseconds)
        queue.asyncAfter(deadline: .now() + .nanoseconds(Int(clamping: nanos))) {
            if !flag.isCancelled { action() }
        }
        return ScheduledAction { flag.cancel() }
    }
}

/// A scheduler in virtual time: nothing runs until the owner advances the clock.
///
/// Actions due at the same instant run in the order they were scheduled. Actions run on the thread that calls
/// ``advance(by:)``, ``advance(to:)`` or ``runUntilIdle()``, outside any lock, so they may schedule more work.
public final class ManualScheduler: EventScheduler {
    private struct Entry {
        let deadline: Duration
        let sequence: UInt64
        let action: @Sendable () -> Void
    }

    /// Where an entry sits in time order: by deadline, then by the order it was scheduled.
    private struct Key: Comparable {
        let deadline: Duration
        let sequence: UInt64
        static func < (a: Key, b: Key) -> Bool { (a.deadline, a.sequence) < (b.deadline, b.sequence) }
    }

    private struct State {
        var now: Duration = .zero
        var nextSequence: UInt64 = 0
        /// The live entries; cancelling removes one here, and its key is skipped when it reaches the heap's top.
        var pending: [UInt64: Entry] = [:]
        /// A binary min-heap of keys, so the next action is found in O(log n), not by a scan of everything pending.
        var heap: [Key] = []

        mutating func push(_ key: Key) {
            heap.append(key)
            var child = heap.count - 1
            while child > 0 {
                let parent = (child - 1) / 2
                guard heap[child] < heap[parent] else { break }
                heap.swapAt(child, parent)
                child = parent
            }
        }

        mutating func popMinimum() -> Key? {
            guard let first = heap.first else { return nil }
            let last = heap.removeLast()
            if !heap.isEmpty {
                heap[0] = last
                var parent = 0
                while true {
                    let left = 2 * parent + 1, right = left + 1
                    var smallest = parent
                    if left < heap.count, heap[left] < heap[smallest] { smallest = left }
                    if right < heap.count, heap[right] < heap[smallest] { smallest = right }
                    if smallest == parent { break }
                    heap.swapAt(parent, smallest)
                    parent = smallest
                }
            }
            return first
        }

        /// The earliest live entry's key, dropping keys of cancelled entries on the way.
        mutating func peekLive() -> Key? {
            while let top = heap.first {
                if pending[top.sequence] != nil { return top }
                _ = popMinimum()
            }
            return nil
        }

        /// Rebuilds the heap from the live entries when cancelled keys outnumber them.
        mutating func compactIfStale() {
            guard heap.count > 64, heap.count > 2 * pending.count else { return }
            heap = pending.values.map { Key(deadline: $0.deadline, sequence: $0.sequence) }.sorted()
        }
    }

    private let state = Mutex(State())

    /// Creates a scheduler at virtual time zero.
    public init() {}

    /// The current virtual time.
    public var now: Duration { state.withLock { $0.now } }

    /// How many actions are pending.
    public var pendingCount: Int { state.withLock { $0.pending.count } }

    /// Schedules `action` at `now + delay` of virtual time.
    @discardableResult
    public func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) -> ScheduledAction {
        let id: UInt64 = state.withLock { state in
            let id = state.nextSequence
            state.nextSequence += 1
            let deadline = state.now + max(delay, .zero)
            state.pending[id] = Entry(deadline: deadline, sequence: id, action: action)
            state.push(Key(deadline: deadline, sequence: id))
            return id
        }
        return ScheduledAction { [weak self] in
            self?.state.withLock { state in
                state.pending.removeValue(forKey: id)
                state.compactIfStale()
            }
        }
    }

    /// Advances virtual time by `duration`, running every action that falls due, in deadline order.
    public func advance(by duration: Duration) {
        advance(to: now + duration)
    }

    /// Advances virtual time to `deadline`, running every action due up to and including it.
    public func advance(to deadline: Duration) {
        while let entry = popDue(upTo: deadline) {
            entry.action()
        }
        state.withLock { $0.now = max($0.now, deadline) }
    }

    /// Runs every action due now (including ones they schedule for now) without advancing time.
    public func runUntilIdle() {
        advance(to: now)
    }

    /// Runs the next pending action, advancing time to its deadline; returns false when nothing is pending.
    @discardableResult
    public func runNext() -> Bool {
        guard let entry = popDue(upTo: nil) else { return false }
        entry.action()
        return true
    }

    private func popDue(upTo deadline: Duration?) -> Entry? {
        state.withLock { state in
            guard let key = state.peekLive() else { return nil }
            if let deadline, key.deadline > deadline { return nil }
            _ = state.popMinimum()
            guard let next = state.pending.removeValue(forKey: key.sequence) else { return nil }
            state.now = max(state.now, next.deadline)
            return next
        }
    }
}
