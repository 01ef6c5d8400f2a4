import Synchronization

/// An ordered outbox of side effects (listener callbacks, stream yields, link sends) for one Wearables instance.
///
/// State machines change state under their own locks and enqueue the effects of each change here, in the same
/// critical section, so effects keep the order of the transitions that caused them. Whoever changed state then calls
/// ``drain()`` after releasing its lock: the first thread to drain runs every pending effect, outside any lock;
/// a thread that finds a drain in progress (another thread, or a listener calling back into WearablesKit) returns at
/// once and its effects run in the ongoing drain. Effects of one instance therefore never run concurrently.
final class EffectQueue: Sendable {
    private struct State {
        var pending: [@Sendable () -> Void] = []
        var draining = false
    }

    private let state = Mutex(State())

    init() {}

    /// Appends an effect; it runs in the next or current drain.
    func enqueue(_ effect: @escaping @Sendable () -> Void) {
        state.withLock { $0.pending.append(effect) }
    }

    /// Runs pending effects unless a drain is already in progress.
    func drain() {
        let owner = state.withLock { state -> Bool in
            if state.draining { return false }
            state.draining = true
            return true
        }
        guard owner else { return }
        while true {
            let batch = state.withLock { state -> [@Sendable () -> Void] in
                if state.pending.isEmpty {
                    state.draining = false
                    return []
                }
                let batch = state.pending
                state.pending = []
                return batch
            }
            if batch.isEmpty { return }
            for effect in batch { effect() }
        }
    }
}
