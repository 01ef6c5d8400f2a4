import Synchronization
import WearablesKit

/// A host end and a device end joined in memory, with the flow control and heartbeats of the socket transports.
///
/// Messages are handed over as values (no encoding) and delivered through the scheduler
/// (`schedule(after: .zero)`), so under a ``ManualScheduler`` everything is deterministic and nothing is ever
/// delivered from inside `send` or `close`. Closing either end delivers `.closed` to both. For fault injection,
/// ``sever()`` cuts the link (both ends see `.connectionLost`) and ``blackhole()`` silently stops carrying messages
/// (both ends time out on heartbeats, as with a dead radio link). Both ends read one clock, so the host end stamps
/// a sample's ``SampleTiming`` (received time, host-clock capture and send) from the first sample, with no heartbeat
/// clock exchange (`docs/PROTOCOL.md`, 7.5).
public final class InProcessLink: Sendable {
    /// The host's end, for WearablesKit.
    public let host: any DeviceLink
    /// The device's end, for the simulator.
    public let device: any HostLink

    private let hostEndpoint: LinkEndpoint
    private let deviceEndpoint: LinkEndpoint
    private let hostWire: InProcessWire
    private let deviceWire: InProcessWire

    /// Creates a joined pair.
    /// - Parameters:
    ///   - scheduler: delivers messages and drives heartbeats.
    ///   - initialCredit: video samples the host lets the device send before the first sample is delivered.
    ///   - liveness: heartbeat interval and timeout; `.disabled` when a test drains the scheduler completely.
    public init(scheduler: any EventScheduler, initialCredit: Int = 8, liveness: LinkLiveness = .standard) {
        let deliver: @Sendable (@escaping @Sendable () -> Void) -> Void = { work in
            scheduler.schedule(after: .zero, work)
        }
        hostEndpoint = LinkEndpoint(
            // One scheduler for both ends: sample times need no clock exchange (the offset is 0).
            configuration: EndpointConfiguration(
                role: .host, initialCredit: initialCredit, liveness: liveness, sharedClock: true),
            scheduler: scheduler,
            deliver: deliver
        )
        deviceEndpoint = LinkEndpoint(
            configuration: EndpointConfiguration(role: .device, liveness: liveness),
            scheduler: scheduler,
            deliver: deliver
        )
        hostWire = InProcessWire(peer: deviceEndpoint)
        deviceWire = InProcessWire(peer: hostEndpoint)
        hostEndpoint.attach(hostWire)
        deviceEndpoint.attach(deviceWire)
        host = HostEndLink(endpoint: hostEndpoint)
        device = DeviceEndLink(endpoint: deviceEndpoint)
    }

    /// Creates a joined pair and returns its two ends.
    /// - Parameters:
    ///   - scheduler: delivers messages and drives heartbeats.
    ///   - initialCredit: video samples the host lets the device send before the first sample is delivered.
    ///   - liveness: heartbeat interval and timeout.
    public static func makePair(
        scheduler: any EventScheduler,
        initialCredit: Int = 8,
        liveness: LinkLiveness = .standard
    ) -> (host: any DeviceLink, device: any HostLink) {
        let link = InProcessLink(scheduler: scheduler, initialCredit: initialCredit, liveness: liveness)
        return (link.host, link.device)
    }

    /// Cuts the link: both ends close with `.connectionLost`.
    public func sever() {
        hostWire.blackhole()
        deviceWire.blackhole()
        hostEndpoint.fail(LinkError(.connectionLost, "the link to the device was severed"), notifyPeer: false)
        deviceEndpoint.fail(LinkError(.connectionLost, "the link to the host was severed"), notifyPeer: false)
    }

    /// Stops carrying messages in both directions without closing anything: each end times out on heartbeats.
    public func blackhole() {
        hostWire.blackhole()
        deviceWire.blackhole()
    }

    /// Video samples the host end discarded because the device sent them without credit (always 0 here).
    public var uncreditedVideoSamples: UInt64 { hostEndpoint.uncreditedVideoSamples }
}

/// One direction of an in-process link: hands frames to the peer endpoint, which queues them for delivery.
///
/// The peer is held weakly: each endpoint keeps its wire (for statistics, even after close), so two strong wires
/// would tie the endpoints into a cycle that outlives the link. The ``InProcessLink`` and the link ends own the
/// endpoints; a peer that is gone is like a socket whose other end closed.
final class InProcessWire: LinkWire {
    private struct State {
        var peer: WeakPeer
        var carrying = true
    }

    private struct WeakPeer {
        weak var endpoint: LinkEndpoint?
    }

    private let state: Mutex<State>

    var decoderStatistics: LinkFrameDecoder.Statistics? { nil }

    init(peer: LinkEndpoint) {
        state = Mutex(State(peer: WeakPeer(endpoint: peer)))
    }

    func transmit(_ frame: LinkFrame) {
        guard let peer = state.withLock({ $0.carrying ? $0.peer.endpoint : nil }) else { return }
        peer.wireReceived(frame)
    }

    func shutdown() {
        // Like a socket's end of stream: the peer sees the link go away (unless the "radio" is dead).
        let peer = state.withLock { state -> LinkEndpoint? in
            defer { state.peer.endpoint = nil }
            return state.carrying ? state.peer.endpoint : nil
        }
        peer?.wireFailed(LinkError(.connectionLost, "the other end went away"))
    }

    func blackhole() {
        state.withLock { $0.carrying = false }
    }
}
