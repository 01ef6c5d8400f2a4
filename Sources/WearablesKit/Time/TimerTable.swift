/// The armed timers of one state-machine owner, keyed by what they time.
///
/// Re-arming a timer cancels the previous one, and each arming gets a fresh generation number, so a firing that
/// raced with a re-arm or a cancel is recognised as stale and ignored. Lives inside the owner's lock; the scheduler
/// never runs an action inside `schedule`, so arming under that lock is safe.
struct TimerTable<Key: Hashable> {
    private var armed: [Key: (generation: UInt64, action: ScheduledAction)] = [:]
    private var lastGeneration: UInt64 = 0

    /// Arms `key` to call `fire` with its generation after `delay`, replacing any armed timer for `key`.
    mutating func arm(
        _ key: Key, after delay: Duration, on scheduler: any EventScheduler,
        fire: @escaping @Sendable (_ generation: UInt64) -> Void
    ) {
        armed[key]?.action.cancel()
        lastGeneration += 1
        let generation = lastGeneration
        let action = scheduler.schedule(after: delay) { fire(generation) }
        armed[key] = (generation, action)
    }

    /// Cancels the timer for `key`, if armed.
    mutating func cancel(_ key: Key) {
        armed.removeValue(forKey: key)?.action.cancel()
    }

    /// Whether a firing of `key` with `generation` is the live one; if so, the timer is disarmed.
    mutating func claimFiring(_ key: Key, generation: UInt64) -> Bool {
        guard armed[key]?.generation == generation else { return false }
        armed[key] = nil
        return true
    }
}
