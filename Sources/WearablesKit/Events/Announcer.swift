import Synchronization

/// A source of values of one kind that listeners subscribe to: DAT's `Announcer`.
///
/// Listeners receive values published after they subscribed (except where a member says it delivers the current
/// value at once). A listener stays subscribed while its token is alive: cancel the token or drop it to stop.
public protocol Announcer<T>: Sendable {
    /// The kind of value announced.
    associatedtype T: Sendable
    /// Subscribes `listener`; keep the returned token for as long as you want callbacks.
    ///
    /// Callbacks of one ``WearablesInstance`` never run concurrently; they may run on the thread that delivered a
    /// link event, fired a timer, or called into WearablesKit. Do not block in them.
    func listen(_ listener: @escaping @Sendable (T) -> Void) -> any AnyListenerToken
}

/// A subscription handle: cancelling it, or dropping the last reference to it, ends the subscription.
public protocol AnyListenerToken: Sendable {
    /// Ends the subscription; no callback starts after this returns.
    func cancel() async
}

extension AnyListenerToken {
    /// Keeps this token alive in `bag` until the bag is cleared or cancelled.
    public func store(in bag: ListenerTokenBag) {
        bag.insert(self)
    }
}

/// A container that keeps listener tokens alive together and ends them together.
public actor ListenerTokenBag {
    private let tokens = Mutex<[any AnyListenerToken]>([])

    /// Creates an empty bag.
    public init() {}

    /// Keeps `token` alive; nil is ignored.
    public nonisolated func insert(_ token: (any AnyListenerToken)?) {
        guard let token else { return }
        tokens.withLock { $0.append(token) }
    }

    /// Drops every token, which ends their subscriptions.
    public nonisolated func clear() {
        let dropped = tokens.withLock { tokens -> [any AnyListenerToken] in
            let dropped = tokens
            tokens = []
            return dropped
        }
        _ = dropped  // released here, outside the lock
    }

    /// Cancels every token and empties the bag.
    public func cancelAll() async {
        let dropped = tokens.withLock { tokens -> [any AnyListenerToken] in
            let dropped = tokens
            tokens = []
            return dropped
        }
        for token in dropped { await token.cancel() }
    }

    /// How many tokens the bag holds.
    public nonisolated var count: Int { tokens.withLock { $0.count } }
}

/// The token ``Broadcaster`` hands out: runs its cancellation exactly once, on `cancel()` or on deinit.
final class ListenerToken: AnyListenerToken {
    private let cancelled = Atomic<Bool>(false)
    private let onCancel: @Sendable () -> Void

    init(onCancel: @escaping @Sendable () -> Void) {
        self.onCancel = onCancel
    }

    func cancel() async { cancelNow() }

    func cancelNow() {
        if cancelled.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged {
            onCancel()
        }
    }

    deinit { cancelNow() }
}
