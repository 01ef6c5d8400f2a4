import Foundation
import Synchronization

/// Hands items from many threads to one receiver, one at a time, in the order they were queued, without calling
/// the receiver while a lock is held.
///
/// Each item is made and queued under the lock (with whatever state the caller keeps beside the queue, `Context`,
/// so that deciding an item and queueing it are one step). The thread that finds no one delivering becomes the
/// deliverer and hands the queue out, outside the lock, until it is empty; the others return at once.
package final class OrderedHandOff<Context: Sendable, Item: Sendable>: Sendable {
    private struct State: Sendable {
        var context: Context
        var queue: [Item] = []
        var delivering = false
    }

    private let state: Mutex<State>
    private let deliver: @Sendable (Item) -> Void

    /// - Parameters:
    ///   - context: the state kept beside the queue.
    ///   - deliver: receives every item, one at a time, in queue order.
    package init(_ context: Context, deliver: @escaping @Sendable (Item) -> Void) {
        state = Mutex(State(context: context))
        self.deliver = deliver
    }

    /// Makes an item from the context under the lock (nil queues nothing), queues it, delivers the queue if no one
    /// else is, and returns the item.
    @discardableResult
    package func enqueue(_ make: (inout Context) -> Item?) -> Item? {
        let (item, deliverer) = state.withLock { state -> (Item?, Bool) in
            guard let item = make(&state.context) else { return (nil, false) }
            state.queue.append(item)
            guard !state.delivering else { return (item, false) }
            state.delivering = true
            return (item, true)
        }
        if deliverer { drain() }
        return item
    }

    /// Waits until every item queued so far has been delivered.
    package func waitUntilDelivered() {
        while state.withLock({ $0.delivering || !$0.queue.isEmpty }) { sched_yield() }
    }

    private func drain() {
        while true {
            let batch = state.withLock { state -> [Item] in
                let batch = state.queue
                state.queue.removeAll(keepingCapacity: true)
                if batch.isEmpty { state.delivering = false }
                return batch
            }
            if batch.isEmpty { return }
            for item in batch { deliver(item) }
        }
    }
}
