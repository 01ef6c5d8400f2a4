import Synchronization

/// A value behind a mutex, shareable between threads.
final class LockedBox<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>

    init(_ value: Value) { mutex = Mutex(value) }

    /// Runs `body` with the value locked; `body` must not call back into this box.
    func withLock<R: Sendable>(_ body: (inout sending Value) -> sending R) -> R {
        mutex.withLock { body(&$0) }
    }
}
