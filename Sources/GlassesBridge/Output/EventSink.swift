/// A destination of a run's judged events: the terminal or a file (text, NDJSON, CSV), the `--report` recorder, and
/// any other place a run's output goes (a Lab Streaming Layer outlet, a Prometheus endpoint).
///
/// The pipeline decides everything before a sink sees an event (the frame-rate table's rule, the summary's basis,
/// every verdict); a sink only carries the events somewhere. A run hands each event to every sink in the same
/// order, one event at a time (``EventFanOut``).
///
/// A sink is told the run's devices when it is made: in a run of several, `device` is the index into them, and 0
/// in a run of one.
package protocol EventSink: Sendable {
    /// Takes one event of the device at index `device`, at `seconds` since the run began. Called for one event at a
    /// time, in the run's order; it must return quickly (a sink that does slow I/O queues it).
    func receive(_ event: BridgeEvent, device: Int, at seconds: Double)
    /// Takes the totals that close a run of several devices, after every device's summary.
    func receiveTotals(_ totals: MultiDeviceTotals, at seconds: Double)
    /// The run is over: writes what is kept for the end, flushes and releases. Returns why the sink failed (a
    /// file that could not be written, exit 73; a destination that went away) if it did, else nil. Called once.
    func finish() -> BridgeFailure?
    /// The run will not start (a destination opened after this one failed): releases what opening took (a socket,
    /// an outlet) and writes nothing. Called instead of ``finish()``.
    func discard()
}

extension EventSink {
    /// Takes the totals of a run of several devices: nothing, by default.
    package func receiveTotals(_ totals: MultiDeviceTotals, at seconds: Double) {}
    /// Releases nothing, by default (a sink that holds nothing until it is finished).
    package func discard() {}
}

/// Every sink of a run, fed in one order: each sink sees the events in the same order, one at a time, and no sink
/// is called while a lock is held (``OrderedHandOff``).
package final class EventFanOut: EventSink {
    private enum Item: Sendable {
        case event(BridgeEvent, device: Int, seconds: Double)
        case totals(MultiDeviceTotals, seconds: Double)
    }

    private let sinks: [any EventSink]
    private let handOff: OrderedHandOff<Void, Item>

    /// Feeds `sinks`, in that order.
    package init(_ sinks: [any EventSink]) {
        self.sinks = sinks
        handOff = OrderedHandOff(()) { item in
            for sink in sinks {
                switch item {
                case .event(let event, let device, let seconds): sink.receive(event, device: device, at: seconds)
                case .totals(let totals, let seconds): sink.receiveTotals(totals, at: seconds)
                }
            }
        }
    }

    package func receive(_ event: BridgeEvent, device: Int, at seconds: Double) {
        handOff.enqueue { _ in .event(event, device: device, seconds: seconds) }
    }

    package func receiveTotals(_ totals: MultiDeviceTotals, at seconds: Double) {
        handOff.enqueue { _ in .totals(totals, seconds: seconds) }
    }

    /// Waits for the events still being handed out, then finishes every sink (each once, in order). Returns their
    /// failures as one: the first one's kind, every message.
    package func finish() -> BridgeFailure? {
        handOff.waitUntilDelivered()
        let failures = sinks.compactMap { $0.finish() }
        guard let first = failures.first else { return nil }
        return BridgeFailure(first.kind, failures.map(\.message).joined(separator: " "))
    }
}
