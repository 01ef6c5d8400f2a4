import Synchronization

/// What a frame source keeps under its lock to be driven by a ``LifecyclePolicy``: the policy, the actions it
/// returned that are still to be performed, and the phase last reported.
///
/// The policy decides; the source acts. Events go in under the source's lock (``Mutex/lifecycleEvent(now:_:report:perform:)``),
/// and the actions come out one at a time, each performed outside the lock by whichever thread claimed the drain,
/// in the order the policy returned them, with each phase change reported before the action that follows it.
struct LifecycleDrive: Sendable {
    /// The policy.
    var policy: LifecyclePolicy
    fileprivate var pending: [LifecyclePolicy.Action] = []
    fileprivate var draining = false
    fileprivate var reportedPhase: LifecyclePolicy.Phase = .idle

    /// Starts with `policy`, nothing pending, `.idle` reported.
    init(policy: LifecyclePolicy) {
        self.policy = policy
    }

    /// The next thing to do: a phase change to report, an action to perform, or neither (the drain ends, and is
    /// released, when both are nil).
    fileprivate mutating func next() -> (action: LifecyclePolicy.Action?, phase: LifecyclePolicy.Phase?) {
        var change: LifecyclePolicy.Phase?
        if policy.phase != reportedPhase {
            reportedPhase = policy.phase
            change = policy.phase
        }
        guard !pending.isEmpty else {
            if change == nil { draining = false }
            return (nil, change)
        }
        return (pending.removeFirst(), change)
    }
}

/// A frame source's locked state that a ``LifecycleDrive`` is part of.
protocol LifecycleDriven {
    /// The policy and its pending actions.
    var lifecycle: LifecycleDrive { get set }
    /// Whether the source was torn down: events are then ignored.
    var tornDown: Bool { get }
}

extension Mutex where Value: LifecycleDriven {
    /// Gives the policy an event at `now` and performs what it returns (and anything still pending), unless another
    /// thread is doing so already: that one then performs them too, in order.
    /// - Parameters:
    ///   - body: the event, applied to the policy under the lock.
    ///   - report: tells of a phase change (outside the lock).
    ///   - perform: performs one action (outside the lock; it may send the policy further events).
    func lifecycleEvent(
        now: Duration, _ body: (inout LifecyclePolicy, Duration) -> [LifecyclePolicy.Action],
        report: (LifecyclePolicy.Phase) -> Void, perform: (LifecyclePolicy.Action) -> Void
    ) {
        withLock { state in
            guard !state.tornDown else { return }
            state.lifecycle.pending += body(&state.lifecycle.policy, now)
        }
        let claimed = withLock { state -> Bool in
            guard !state.lifecycle.draining else { return false }
            state.lifecycle.draining = true
            return true
        }
        guard claimed else { return }
        while true {
            let (action, phase) = withLock { $0.lifecycle.next() }
            if let phase { report(phase) }
            if let action {
                perform(action)
            } else if phase == nil {
                return
            }
        }
    }
}
