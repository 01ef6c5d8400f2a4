import Foundation
import GlassesMedia
import Synchronization
import WearablesKit

/// The host side of a link that the device dials: `glasses-bridge --listen`, for relays on phones behind NAT or on
/// a hotspot, which can dial out but cannot be dialled.
///
/// A dialing device opens with a `pair` frame (its protocol version and the pairing token); the listener reads that
/// frame alone, within a handshake timeout (5 s by default), before anything else of the connection is read. A wrong or missing
/// token, another first frame, or another protocol version is refused with a goodbye that says why, and nothing
/// more is read. One device is served at a time: a second connection while one is open is refused as busy. Every
/// refusal is counted (``statistics``) and reported through `onRefusal`.
public final class DeviceListener: Sendable {
    /// What the listener accepted and refused so far.
    public struct Statistics: Sendable, Hashable {
        /// Devices that paired and were handed over.
        public var accepted = 0
        /// Connections refused for a missing or wrong pairing token.
        public var refusedPairing = 0
        /// Connections refused because another device was connected.
        public var refusedBusy = 0
        /// Connections refused for not opening with a valid `pair` frame in time, or another protocol version.
        public var refusedProtocol = 0

        /// Every refusal.
        public var refused: Int { refusedPairing + refusedBusy + refusedProtocol }
    }

    /// A refused connection, for messages.
    public struct Refusal: Sendable, Hashable, CustomStringConvertible {
        /// Where the connection came from (`HOST:PORT` or a Unix-socket peer).
        public var peer: String
        /// Why it was refused, in words.
        public var reason: String
        /// `refused a device from PEER: REASON`.
        public var description: String { "refused a device from \(peer): \(reason)" }
    }

    private struct State {
        var statistics = Statistics()
        /// Handed over and not yet taken by ``waitForDevice(timeout:)``.
        var pending: HostEndLink?
        /// The link taken last; the listener is busy while it is open.
        var current: HostEndLink?
        var stopped = false

        var isBusy: Bool {
            if pending != nil { return true }
            if let current, !current.endpoint.isClosed { return true }
            return false
        }
    }

    /// What the listener and its handshake threads share.
    private final class Shared: Sendable {
        let state = Mutex(State())
        /// Signalled once for each link handed over (and on stop).
        let arrivals = DispatchSemaphore(value: 0)
        /// The accepting listener, set right after binding (a handshake that finds it unset still hands its link
        /// over, and ``DeviceListener/stop()`` closes it through `state`).
        let listener = Mutex<LinkListener?>(nil)
    }

    /// The address bound (with the port the kernel chose for `tcp:HOST:0`).
    public var address: LinkAddress { listener.address }
    /// How long a dialing device has to send its `pair` frame, by default.
    public static let defaultHandshakeTimeout: Duration = .seconds(5)

    /// Internal for the leak test (`DeviceListenerTests`), which checks that it is freed after ``stop()``.
    let listener: LinkListener
    private let shared: Shared

    private init(listener: LinkListener, shared: Shared) {
        self.listener = listener
        self.shared = shared
    }

    /// Starts listening for devices on `address`.
    ///
    /// For TCP, a non-loopback host needs `options.allowRemote` and a non-empty `options.pairingToken`. With a token
    /// set (on any address), a device must present it.
    /// - Parameters:
    ///   - initialCredit: the credit each accepted link's host end grants when it opens.
    ///   - onRefusal: called (on a handshake thread) for each refused connection.
    /// - Throws: ``LinkError`` `.unavailable` when the address cannot be bound or remote listening is not allowed.
    public static func listen(
        on address: LinkAddress,
        options: LinkListenerOptions = LinkListenerOptions(),
        initialCredit: Int = 8,
        handshakeTimeout: Duration = defaultHandshakeTimeout,
        onRefusal: @escaping @Sendable (Refusal) -> Void = { _ in }
    ) throws(LinkError) -> DeviceListener {
        let shared = Shared()
        // Each accepted socket is paired on a thread of its own, so a silent peer cannot hold up the next one.
        let listener = try LinkListener.start(address, options: options, accept: { connection in
            let thread = Thread {
                handshake(connection, options: options, initialCredit: initialCredit, timeout: handshakeTimeout,
                          shared: shared, onRefusal: onRefusal)
            }
            thread.name = "glasses.link.pairing"
            thread.start()
            return nil
        }, handOver: { _ in })
        shared.listener.withLock { $0 = listener }
        return DeviceListener(listener: listener, shared: shared)
    }

    /// What was accepted and refused so far.
    public var statistics: Statistics { shared.state.withLock { $0.statistics } }

    /// Waits (blocking) for the next paired device and returns the host end of its link, ready to open.
    ///
    /// Call it from a thread or queue, not the cooperative pool.
    /// - Throws: ``LinkError`` `.unavailable` when no device paired within `timeout`, or the listener stopped.
    public func waitForDevice(timeout: Duration) throws(LinkError) -> any DeviceLink {
        let deadline = DispatchTime.now() + .nanoseconds(Int(clamping: timeout.wholeNanoseconds))
        while true {
            let taken = shared.state.withLock { state -> Result<HostEndLink?, LinkError> in
                if state.stopped { return .failure(LinkError(.unavailable, "the listener on \(address) stopped")) }
                guard let link = state.pending else { return .success(nil) }
                state.pending = nil
                state.current = link
                return .success(link)
            }
            switch taken {
            case .failure(let error): throw error
            case .success(let link?): return link
            case .success(nil): break
            }
            if shared.arrivals.wait(timeout: deadline) == .timedOut {
                let refused = statistics.refused
                let detail = refused == 0 ? "" : " (\(refused) connection\(refused == 1 ? " was" : "s were") refused)"
                throw LinkError(.unavailable, "no device connected to \(address) within \(Self.seconds(timeout))\(detail)")
            }
        }
    }

    /// Stops listening and closes the links it accepted.
    public func stop() {
        let links = shared.state.withLock { state -> [HostEndLink] in
            state.stopped = true
            defer { state.pending = nil }
            return [state.pending, state.current].compactMap { $0 }
        }
        listener.stop()
        // The accepting listener holds the handshake closure, which holds `shared`: let go of it, or the two keep
        // each other alive after the stop.
        shared.listener.withLock { $0 = nil }
        links.forEach { $0.close() }
        shared.arrivals.signal()
    }

    private static func handshake(
        _ connection: SocketHandle, options: LinkListenerOptions, initialCredit: Int, timeout: Duration,
        shared: Shared, onRefusal: @Sendable (Refusal) -> Void
    ) {
        let peer = SocketCalls.peerDescription(connection)
        func refuse(_ error: LinkError, counting count: WritableKeyPath<Statistics, Int>) {
            shared.state.withLock { $0.statistics[keyPath: count] += 1 }
            if let bytes = try? LinkFrameEncoder().encode(.goodbye(error)) {
                _ = bytes.withUnsafeBytes { SocketCalls.writeAll(connection, $0) }
            }
            connection.shutdown()
            onRefusal(Refusal(peer: peer, reason: error.message))
        }
        let frame: LinkFrame
        switch readPairFrame(connection, timeout: timeout) {
        case .success(let read): frame = read
        case .failure(let error):
            refuse(error, counting: \.refusedProtocol)
            return
        }
        guard case .pair(let version, let token) = frame else {
            refuse(LinkError(.incompatible, "pairing failed: a dialing device must open with a pair frame"),
                   counting: \.refusedProtocol)
            return
        }
        guard version == linkProtocolVersion else {
            refuse(LinkError(.incompatible,
                             "the device speaks link protocol \(version), this host speaks \(linkProtocolVersion)"),
                   counting: \.refusedProtocol)
            return
        }
        if let required = options.pairingToken, !required.isEmpty,
           !EndpointStateMachine.tokensMatch(token, required) {
            let what = token == nil ? "no pairing token" : "a wrong pairing token"
            refuse(LinkError(.incompatible, "pairing failed: the device presented \(what)"), counting: \.refusedPairing)
            return
        }
        let busy = shared.state.withLock { $0.isBusy }
        if busy {
            refuse(LinkError(.unavailable, "busy: another device is already connected to this listener"),
                   counting: \.refusedBusy)
            return
        }
        let endpoint = SocketLinks.makeEndpoint(
            handle: connection,
            configuration: EndpointConfiguration(role: .host, initialCredit: initialCredit, liveness: options.liveness),
            scheduler: options.scheduler,
            maxPayloadSize: options.maxPayloadSize
        )
        guard shared.listener.withLock({ $0 })?.track(endpoint) ?? true else {
            endpoint.close()
            return
        }
        let link = HostEndLink(endpoint: endpoint)
        let handedOver = shared.state.withLock { state -> Bool in
            guard !state.stopped, !state.isBusy else { return false }
            state.pending = link
            state.statistics.accepted += 1
            return true
        }
        guard handedOver else {
            // Another device paired in the meantime, or the listener stopped.
            endpoint.close()
            return
        }
        shared.arrivals.signal()
    }

    /// `2 s`, `0.5 s`: a duration as people write it.
    static func seconds(_ duration: Duration) -> String {
        let value = duration.inSeconds
        return value == value.rounded() ? "\(Int64(value)) s" : String(format: "%.1f s", value)
    }

    /// Reads the first frame of a connection, header then body, within `timeout`.
    private static func readPairFrame(_ connection: SocketHandle, timeout: Duration) -> Result<LinkFrame, LinkError> {
        let deadline = ContinuousClock.now + timeout
        func describe(_ failure: SocketCalls.ExactReadFailure) -> LinkError {
            switch failure {
            case .closed: LinkError(.connectionLost, "the device closed the connection before pairing")
            case .timedOut: LinkError(.incompatible, "pairing failed: no pair frame within \(seconds(timeout))")
            case .failed(let error): LinkError(.connectionLost, "reading the pair frame failed: \(error)")
            }
        }
        let header: [UInt8]
        switch SocketCalls.readExactly(connection, count: LinkWireFormat.headerSize, deadline: deadline) {
        case .success(let bytes): header = bytes
        case .failure(let failure): return .failure(describe(failure))
        }
        guard Array(header[0..<4]) == LinkWireFormat.magic, header[5] == LinkMessageType.pair.rawValue else {
            return .failure(LinkError(.incompatible, "pairing failed: a dialing device must open with a pair frame"))
        }
        let length = header[8..<12].reduce(0) { ($0 << 8) | Int($1) }
        guard length <= LinkWireFormat.maxControlBodySize else {
            return .failure(LinkError(.protocolViolation, "pairing failed: the pair frame announces \(length) bytes"))
        }
        var bytes = header
        if length > 0 {
            switch SocketCalls.readExactly(connection, count: length, deadline: deadline) {
            case .success(let body): bytes += body
            case .failure(let failure): return .failure(describe(failure))
            }
        }
        var decoder = LinkFrameDecoder()
        let outputs = bytes.withUnsafeBytes { decoder.decode($0) }
        guard outputs.count == 1, case .frame(let frame) = outputs[0] else {
            return .failure(LinkError(.incompatible, "pairing failed: the pair frame is damaged"))
        }
        return .success(frame)
    }
}
