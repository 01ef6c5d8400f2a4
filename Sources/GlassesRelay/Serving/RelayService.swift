import Foundation
import GlassesLinkCore
import GlassesMedia
import Synchronization
import WearablesKit

/// Puts a ``RelayDATClient`` on the network: waits for a bridge to dial it (`listen`), or dials a listening bridge
/// (`dial`) and dials again after the link is lost, serving one host at a time.
public final class RelayService: Sendable {
    /// Which side opens the connection.
    public enum Mode: Sendable {
        /// The bridge dials the relay: `glasses-bridge --device tcp:RELAY:PORT`.
        case listen(LinkAddress, LinkListenerOptions)
        /// The relay dials the bridge: `glasses-bridge --listen tcp:HOST:PORT`. `retryDelay` is the pause between
        /// attempts after a failure or a lost link.
        case dial(LinkAddress, LinkConnectionOptions, retryDelay: Duration)
    }

    /// Something a person running the relay should see.
    public enum Notice: Sendable, Hashable {
        /// A host connected (or the relay's dial succeeded) and said hello: it is served.
        case hostConnected(String)
        /// The link to the host closed, and why.
        case hostLeft(String)
        /// Dialing the host failed; the relay tries again.
        case dialFailed(String)
        /// A second host was turned away while one is served.
        case hostRefused(String)
        /// The host refused this relay (wrong token, another protocol version); the relay stops dialing.
        case refusedByHost(String)
        /// The link closed before the host said hello, for another reason than a refusal (a listening bridge that
        /// serves a device already turns this relay away as busy); the relay dials again in dial mode.
        case hostClosedBeforeHello(String)
    }

    private struct State {
        var server: RelayLinkServer?
        var listener: (any LinkListening)?
        var stopped = false
        var hostsServed = 0
        var hostsRefused = 0
        /// ``RelayLinkServer/samplesDelivered`` of the hosts served before the current one.
        var samplesDeliveredBefore: UInt64 = 0
    }

    /// Whether a host said hello, shared by one server's callbacks.
    private final class Greeting: Sendable {
        let said = Mutex(false)
    }

    private let client: RelayDATClient
    private let clock: any RelayClock
    private let mode: Mode
    private let transport: any LinkTransport
    private let notify: @Sendable (Notice) -> Void
    private let state = Mutex(State())
    private let dialWake = DispatchSemaphore(value: 0)

    /// Creates a service; ``start()`` begins listening or dialing.
    /// - Parameter clock: must read the time line of the scheduler in `mode`'s link options (``SchedulerRelayClock``
    ///   over that scheduler), so that sample times are on the link clock the host relates to its own.
    /// - Parameter transport: listens or dials at `mode`'s address (on Linux, GlassesLink's `POSIXLinkTransport`;
    ///   `GlassesRelayPOSIX` adds an initializer that plugs it in).
    /// - Parameter wrapLink: wraps each host link before the server uses it (tests count messages with it).
    public init(client: RelayDATClient, clock: any RelayClock, mode: Mode, transport: any LinkTransport,
                wrapLink: @escaping @Sendable (any HostLink) -> any HostLink = { $0 },
                notify: @escaping @Sendable (Notice) -> Void = { _ in }) {
        self.client = client
        self.clock = clock
        self.mode = mode
        self.transport = transport
        self.wrapLink = wrapLink
        self.notify = notify
    }

    private let wrapLink: @Sendable (any HostLink) -> any HostLink

    /// The server of the host connected now, if any.
    public var currentServer: RelayLinkServer? { state.withLock { $0.server.flatMap { $0.isClosed ? nil : $0 } } }

    /// Hosts served so far (that said hello), and hosts turned away because one was connected.
    public var hostCounts: (served: Int, refused: Int) { state.withLock { ($0.hostsServed, $0.hostsRefused) } }

    /// Video samples the hosts' links carried to them so far, over every host (those dropped for credit left out).
    public var samplesDelivered: UInt64 {
        let (before, server) = state.withLock { ($0.samplesDeliveredBefore, $0.server) }
        return before + (server?.samplesDelivered ?? 0)
    }

    /// The listening address (with the port chosen for `tcp:HOST:0`), in listen mode.
    public var listeningAddress: LinkAddress? { state.withLock { $0.listener?.address } }

    /// Starts the client and begins listening or dialing.
    /// - Throws: ``LinkError`` when the listening address cannot be bound.
    public func start() throws(LinkError) {
        client.start()
        switch mode {
        case .listen(let address, let options):
            let listener = try transport.listen(on: address, options: options) { [weak self] link in
                self?.serve(link, peer: "a bridge")
            }
            state.withLock { $0.listener = listener }
        case .dial(let address, let options, let retryDelay):
            let thread = Thread { [weak self] in self?.dialLoop(address, options, retryDelay) }
            thread.name = "glasses.relay.dial"
            thread.start()
        }
    }

    /// Stops listening or dialing and closes the host's link (the camera and session stop with it).
    public func stop() {
        let (server, listener) = state.withLock { state -> (RelayLinkServer?, (any LinkListening)?) in
            state.stopped = true
            return (state.server, state.listener)
        }
        listener?.stop(closingConnections: false)
        server?.close()
        dialWake.signal()
    }

    /// Serves a host link unless one is served already.
    private func serve(_ raw: any HostLink, peer: String) {
        let link = wrapLink(raw)
        let greeting = Greeting()
        let server = RelayLinkServer(link: link, client: client, clock: clock, onClose: { [weak self] error in
            guard let self else { return }
            // After stop() the relay closed the link itself: nothing to tell.
            if error.code != .incompatible, !state.withLock({ $0.stopped }) {
                notify(greeting.said.withLock { $0 } ? .hostLeft(error.message) : .hostClosedBeforeHello(error.message))
            }
            dialWake.signal()
        }, onHello: { [weak self] in
            greeting.said.withLock { $0 = true }
            self?.state.withLock { $0.hostsServed += 1 }
            self?.notify(.hostConnected(peer))
        })
        // A bridge that reconnects may arrive before its old link's close has reached us: give that close a
        // moment before calling the newcomer a second host.
        let deadline = ContinuousClock.now + .seconds(1)
        while let current = state.withLock({ $0.server }), !current.isClosed, ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.01)
        }
        let accepted = state.withLock { state -> Bool in
            guard !state.stopped else { return false }
            if let current = state.server, !current.isClosed {
                state.hostsRefused += 1
                return false
            }
            if let previous = state.server { state.samplesDeliveredBefore += previous.samplesDelivered }
            state.server = server
            return true
        }
        guard accepted else {
            // Opened only to say why it is turned away.
            link.open { _ in }
            link.send(.fault(.internalError, message: "this relay already serves another host"))
            link.close()
            notify(.hostRefused(peer))
            return
        }
        server.open()
    }

    private func dialLoop(_ address: LinkAddress, _ options: LinkConnectionOptions, _ retryDelay: Duration) {
        while !state.withLock({ $0.stopped }) {
            // Dial only once the glasses are there: the bridge expects a hello soon after the pair frame.
            if client.currentDevice == nil {
                _ = dialWake.wait(timeout: .now() + .milliseconds(200))
                continue
            }
            do {
                let link = try transport.connectDevice(to: address, options: options)
                serve(link, peer: address.description)
                // Wait until this link closes (the server's onClose signals) or the service stops.
                while let server = state.withLock({ $0.stopped ? nil : $0.server }), !server.isClosed {
                    _ = dialWake.wait(timeout: .now() + .seconds(1))
                }
                if let server = state.withLock({ $0.server }), server.wasRefused {
                    state.withLock { $0.stopped = true }
                    notify(.refusedByHost(server.closeReason?.message ?? "the bridge refused this relay"))
                    return
                }
            } catch {
                notify(.dialFailed(error.message))
            }
            guard !state.withLock({ $0.stopped }) else { return }
            _ = dialWake.wait(timeout: .now() + .nanoseconds(Int(clamping: retryDelay.wholeNanoseconds)))
        }
    }
}
