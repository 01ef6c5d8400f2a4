/// A weak reference that can be stored in a `let` of a Sendable class (parent links that must not form cycles).
struct WeakReference<Object: AnyObject & Sendable>: Sendable {
    weak var object: Object?

    init(_ object: Object?) {
        self.object = object
    }
}
