import Synchronization

/// The one place a run's events are judged and put in order, before anyone sees them.
///
/// Events come from the pipeline's threads (the link's, the worker's, the SDK's metrics and status consumers, the
/// clock's). Each is judged under the lock as it arrives, by the run's ``FrameRateGate`` (a vital the stream's rate
/// does not support is never stable, in metrics payloads and in the summary; the engine's `frameRateTooLow` is
/// judged by the table; a verdict that repeats the last one is left out), and queued. The thread that finds no one
/// delivering becomes the deliverer and hands the queue to the receiver, outside the lock, until it is empty. So
/// the receiver sees every event judged, one at a time, in the order they were judged; and a metrics payload is
/// serialised to JSON once, after judgement, by the deliverer.
final class JudgedEventLine: Sendable {
    private let handOff: OrderedHandOff<FrameRateGate?, (event: BridgeEvent, seconds: Double)>

    /// - Parameters:
    ///   - gate: the frame-rate rule for this run; nil passes events as they are (a rate nobody knows).
    ///   - receiver: gets every judged event with its time, one at a time.
    init(gate: FrameRateGate?, receiver: @escaping @Sendable (BridgeEvent, Double) -> Void) {
        handOff = OrderedHandOff(gate) { item in
            if case .metrics(let payload, let json) = item.event, json.isEmpty {
                receiver(.metrics(payload, json: payload.jsonString()), item.seconds)
            } else {
                receiver(item.event, item.seconds)
            }
        }
    }

    /// Judges `event`, queues it for the receiver and returns it as judged: nil when it is left out. A metrics
    /// payload may be sent with an empty `json`: it is serialised once, after judgement, outside the lock.
    @discardableResult
    func send(_ event: BridgeEvent, at seconds: Double) -> BridgeEvent? {
        handOff.enqueue { gate -> (event: BridgeEvent, seconds: Double)? in
            guard var judge = gate else { return (event, seconds) }
            defer { gate = judge }
            return judge.adjust(event, at: seconds).map { ($0, seconds) }
        }?.event
    }

    /// Waits until every event sent so far has been handed to the receiver.
    func waitUntilDelivered() { handOff.waitUntilDelivered() }
}
