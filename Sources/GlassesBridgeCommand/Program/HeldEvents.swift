import GlassesBridge
import Synchronization

/// Holds a pipeline's events until the output is open, then passes them on in order.
///
/// The pipeline is built before the output, so that a command line it refuses (a metric the engine cannot produce,
/// a bad scenario) leaves no output behind; an event it emits in between (a listener's refusal) waits here.
final class HeldEvents: Sendable {
    typealias Target = @Sendable (BridgeEvent, Double) -> Void

    private struct State {
        var target: Target?
        var held: [(BridgeEvent, Double)] = []
    }

    private let state = Mutex(State())

    /// Passes the event on, or holds it while there is no output yet.
    func emit(_ event: BridgeEvent, at seconds: Double) {
        let target = state.withLock { state -> Target? in
            if let target = state.target { return target }
            state.held.append((event, seconds))
            return nil
        }
        target?(event, seconds)
    }

    /// Sends the held events to `target`, then every later one. The events are passed on outside the lock, and
    /// the target is set only once nothing is held, so that an event emitted meanwhile keeps its place.
    func open(_ target: @escaping Target) {
        while true {
            let held = state.withLock { state -> [(BridgeEvent, Double)] in
                if state.held.isEmpty { state.target = target }
                defer { state.held = [] }
                return state.held
            }
            if held.isEmpty { return }
            for (event, seconds) in held { target(event, seconds) }
        }
    }
}
