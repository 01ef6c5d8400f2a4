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

    private struct State {
        var now: Duration = .zero
        var nextSequence: UInt64 = 0
        var pending: [UInt64: Entry] = [:]
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
            state.pending[id] = Entry(deadline: state.now + max(delay, .zero), sequence: id, action: action)
            return id
        }
        return ScheduledAction { [weak self] in
            _ = self?.state.withLock { $0.pending.removeValue(forKey: id) }
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
            guard let next = state.pending.values.min(by: { ($0.deadline, $0.sequence) < ($1.deadline, $1.sequence) })
            else { return nil }
            if let deadline, next.deadline > deadline { return nil }
            state.pending.removeValue(forKey: next.sequence)
            state.now = max(state.now, next.deadline)
            return next
        }
    }
}
