import Synchronization

/// One subscriber of a ``Broadcaster``: a listener callback or an AsyncStream continuation.
final class Subscriber<Value: Sendable>: Sendable {
    let active = Atomic<Bool>(true)
    private let onValue: @Sendable (Value) -> Void
    private let onFinish: @Sendable () -> Void

    init(onValue: @escaping @Sendable (Value) -> Void, onFinish: @escaping @Sendable () -> Void) {
        self.onValue = onValue
        self.onFinish = onFinish
    }

    func deliver(_ value: Value) {
        if active.load(ordering: .acquiring) { onValue(value) }
    }

    func finish() {
        active.store(false, ordering: .releasing)
        onFinish()
    }
}

/// A fan-out of values to listeners and AsyncStreams, delivering through the owner's ``EffectQueue``.
///
/// `publish` and `finish` snapshot the subscribers and enqueue the delivery; the owner drains the queue after
/// releasing its own lock. A subscriber that cancels between the snapshot and the delivery is skipped.
final class Broadcaster<Value: Sendable>: Announcer, Sendable {
    typealias T = Value

    private struct State {
        var subscribers: [UInt64: Subscriber<Value>] = [:]
        var nextID: UInt64 = 0
        var finished = false
    }

    private let state = Mutex(State())
    private let effects: EffectQueue

    init(effects: EffectQueue) {
        self.effects = effects
    }

    /// Whether ``finish()`` was called.
    var isFinished: Bool { state.withLock { $0.finished } }

    /// How many subscribers are registered.
    var subscriberCount: Int { state.withLock { $0.subscribers.count } }

    func listen(_ listener: @escaping @Sendable (Value) -> Void) -> any AnyListenerToken {
        listen(initial: nil, listener)
    }

    /// Subscribes `listener`, first delivering `initial` (if any) in effect order.
    func listen(initial: Value?, _ listener: @escaping @Sendable (Value) -> Void) -> ListenerToken {
        let subscriber = Subscriber<Value>(onValue: listener, onFinish: {})
        let id = register(subscriber, initial: initial)
        return ListenerToken { [weak self] in
            subscriber.active.store(false, ordering: .releasing)
            if let id { self?.remove(id) }
        }
    }

    /// Makes an AsyncStream subscriber, first yielding `initial` (if any); finished streams finish at once.
    func makeStream(bufferingPolicy: AsyncStream<Value>.Continuation.BufferingPolicy, initial: Value?) -> AsyncStream<Value> {
        let (stream, continuation) = AsyncStream.makeStream(of: Value.self, bufferingPolicy: bufferingPolicy)
        let subscriber = Subscriber<Value>(
            onValue: { continuation.yield($0) },
            onFinish: { continuation.finish() }
        )
        if let id = register(subscriber, initial: initial) {
            continuation.onTermination = { [weak self] _ in
                subscriber.active.store(false, ordering: .releasing)
                self?.remove(id)
            }
        } else if initial == nil {
            // Finished already, and nothing to deliver first: the stream ends now. Enqueued, it waited for the owner's
            // next drain, which an idle owner (a stopped stream, an ended session) may never have.
            subscriber.finish()
        } else {
            effects.enqueue { subscriber.finish() }  // after `initial`, in effect order (the caller drains)
        }
        return stream
    }

    /// Delivers `value` to the current subscribers (when the owner drains).
    func publish(_ value: Value) {
        let targets = state.withLock { Array($0.subscribers.values) }
        guard !targets.isEmpty else { return }
        effects.enqueue { for target in targets { target.deliver(value) } }
    }

    /// Ends every subscription: streams finish, listeners go quiet, later subscribers get nothing.
    func finish() {
        let targets = state.withLock { state -> [Subscriber<Value>] in
            guard !state.finished else { return [] }
            state.finished = true
            let targets = Array(state.subscribers.values)
            state.subscribers = [:]
            return targets
        }
        guard !targets.isEmpty else { return }
        effects.enqueue { for target in targets { target.finish() } }
    }

    /// Registers `subscriber`; returns nil (and registers nothing) when finished.
    private func register(_ subscriber: Subscriber<Value>, initial: Value?) -> UInt64? {
        let id = state.withLock { state -> UInt64? in
            if let initial {
                effects.enqueue { subscriber.deliver(initial) }
            }
            guard !state.finished else { return nil }
            let id = state.nextID
            state.nextID += 1
            state.subscribers[id] = subscriber
            return id
        }
        return id
    }

    private func remove(_ id: UInt64) {
        let removed = state.withLock { $0.subscribers.removeValue(forKey: id) }
        _ = removed  // released outside the lock
    }
}
