import Foundation
import GlassesMedia
import Synchronization
import WearablesKit

// Link ends over a callback byte stream (Network.framework's `NWConnection`, for one): everything a stream transport
// needs beyond moving bytes lives here, in the portable core, where Linux tests run it over an in-memory stream.
// A transport built on it only starts connections, moves bytes and maps its errors to text.

/// What one read of a ``LinkByteStream`` produced.
package enum LinkStreamRead: Sendable, Hashable {
    /// Bytes from the peer, in order (never empty).
    case bytes([UInt8])
    /// The peer closed its sending side: nothing more will come.
    case end
    /// The stream broke; the transport's description of why.
    case failed(String)
}

/// A connected byte stream that a transport moves bytes on. Calls come from the core's own queues; completions may
/// come on any thread.
package protocol LinkByteStream: AnyObject, Sendable {
    /// Queues `bytes` after every write queued before; `completion` gets nil once they are handed to the system, or
    /// the transport's description of why they could not be.
    func write(_ bytes: [UInt8], completion: @escaping @Sendable (String?) -> Void)
    /// Asks for the next bytes; the core asks again only after `completion` ran.
    func read(_ completion: @escaping @Sendable (LinkStreamRead) -> Void)
    /// Closes the sending side once the writes queued so far are out (the goodbye goes first).
    func finish()
    /// Cuts the stream at once; a pending read completes (with `.end` or `.failed`).
    func cancel()
}

/// Moves frames over a ``LinkByteStream``: a serial queue encodes and writes, a read chain decodes.
final class StreamWire: RawByteWire {
    private let stream: any LinkByteStream
    private let encoder: LinkFrameEncoder
    private let writer = DispatchQueue(label: "glasses.link.stream.writer")
    private let endpoint: Mutex<LinkEndpoint?>
    private let decoder: Mutex<LinkFrameDecoder>
    private let statistics = Mutex(LinkFrameDecoder.Statistics())
    private let closing = Atomic<Bool>(false)
    private let peerName: String
    private let shutdownGrace: Duration

    var decoderStatistics: LinkFrameDecoder.Statistics? { statistics.withLock { $0 } }

    init(stream: any LinkByteStream, endpoint: LinkEndpoint, peerName: String, maxPayloadSize: Int,
         shutdownGrace: Duration) {
        self.stream = stream
        self.encoder = LinkFrameEncoder(maxPayloadSize: maxPayloadSize)
        self.endpoint = Mutex(endpoint)
        self.decoder = Mutex(LinkFrameDecoder(maxPayloadSize: maxPayloadSize))
        self.peerName = peerName
        self.shutdownGrace = shutdownGrace
    }

    private var currentEndpoint: LinkEndpoint? { endpoint.withLock { $0 } }

    /// Starts the read chain.
    func start() {
        readNext()
    }

    func transmit(_ frame: LinkFrame) {
        guard !closing.load(ordering: .acquiring) else { return }
        writer.async { [self] in
            let bytes: [UInt8]
            do throws(LinkError) {
                bytes = try encoder.encode(frame)
            } catch {
                currentEndpoint?.fail(error, notifyPeer: false)
                return
            }
            write(bytes)
        }
    }

    func transmitRaw(_ bytes: [UInt8]) -> Bool {
        guard !closing.load(ordering: .acquiring) else { return false }
        writer.async { [self] in write(bytes) }
        return true
    }

    /// On the writer queue: hands bytes to the stream, in queue order.
    private func write(_ bytes: [UInt8]) {
        stream.write(bytes) { [self] failure in
            guard let failure, !closing.load(ordering: .acquiring) else { return }
            currentEndpoint?.wireFailed(LinkError(.connectionLost, "writing to the \(peerName) failed: \(failure)"))
        }
    }

    func shutdown() {
        guard !closing.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let stream = stream
        writer.async { stream.finish() }
        // A peer that stopped reading must not keep the stream open forever.
        let grace = DispatchTimeInterval.nanoseconds(Int(clamping: shutdownGrace.wholeNanoseconds))
        DispatchQueue.global().asyncAfter(deadline: .now() + grace) { stream.cancel() }
    }

    private func readNext() {
        stream.read { [self] result in
            switch result {
            case .bytes(let bytes):
                FrameCopyCounter.record(.socketRead, bytes: bytes.count)
                let outputs = decoder.withLock { decoder in
                    let outputs = decoder.decode(bytes)
                    statistics.withLock { [decoder] in $0 = decoder.statistics }
                    return outputs
                }
                for output in outputs {
                    switch output {
                    case .frame(let frame): currentEndpoint?.wireReceived(frame)
                    case .lost(let type): currentEndpoint?.wireLost(type)
                    case .failure(let error): currentEndpoint?.wireFailed(error)
                    }
                }
                readNext()
            case .end:
                currentEndpoint?.wireFailed(LinkError(.connectionLost, "the \(peerName) closed the connection"))
                endpoint.withLock { $0 = nil }
            case .failed(let reason):
                currentEndpoint?.wireFailed(LinkError(.connectionLost, "reading from the \(peerName) failed: \(reason)"))
                endpoint.withLock { $0 = nil }
            }
        }
    }
}

/// Builds link ends over ``LinkByteStream``s, as GlassesLink's `SocketLinks` does over sockets.
package enum StreamLinks {
    /// How long a closing wire waits for its queued frames (the goodbye) before cutting the stream anyway.
    package static let shutdownGrace = Duration.seconds(2)

    /// The end of a link over `stream` with `configuration`; its wire reads from now on.
    package static func makeEndpoint(
        stream: any LinkByteStream, configuration: EndpointConfiguration, scheduler: any EventScheduler,
        maxPayloadSize: Int, shutdownGrace: Duration = shutdownGrace
    ) -> LinkEndpoint {
        let delivery = DispatchQueue(label: "glasses.link.\(configuration.role.name).events")
        let endpoint = LinkEndpoint(configuration: configuration, scheduler: scheduler) { work in
            delivery.async(execute: work)
        }
        let wire = StreamWire(stream: stream, endpoint: endpoint, peerName: configuration.role.peerName,
                              maxPayloadSize: maxPayloadSize, shutdownGrace: shutdownGrace)
        endpoint.attach(wire)
        wire.start()
        return endpoint
    }

    /// The device end of a stream this device dialed to a listening host: the `pair` frame (protocol version and
    /// ``LinkConnectionOptions/pairingToken``) goes first, as over a socket; a host that refuses it answers with a
    /// goodbye, which the link delivers as its `.closed` event.
    package static func dialedHost(_ stream: any LinkByteStream, options: LinkConnectionOptions) throws(LinkError)
        -> any HostLink
    {
        let pair = try LinkFrameEncoder(maxPayloadSize: options.maxPayloadSize)
            .encode(.pair(protocolVersion: linkProtocolVersion, pairingToken: options.pairingToken))
        // A failed write here is seen again by the wire's first read or write, which closes the link.
        stream.write(pair) { _ in }
        let endpoint = makeEndpoint(
            stream: stream, configuration: EndpointConfiguration(role: .device, liveness: options.liveness),
            scheduler: options.scheduler, maxPayloadSize: options.maxPayloadSize)
        return DeviceEndLink(endpoint: endpoint)
    }

    /// The host end of a stream this host dialed to a device (what a bridge does; the tests' peer of a listener).
    package static func dialedDevice(_ stream: any LinkByteStream, options: LinkConnectionOptions) -> any DeviceLink {
        let endpoint = makeEndpoint(
            stream: stream,
            configuration: EndpointConfiguration(
                role: .host, initialCredit: options.initialCredit, liveness: options.liveness,
                pairingTokenToPresent: options.pairingToken),
            scheduler: options.scheduler, maxPayloadSize: options.maxPayloadSize)
        return HostEndLink(endpoint: endpoint)
    }

    /// Whether a device may listen on `address` with `options`: only loopback TCP without ``LinkListenerOptions/
    /// allowRemote`` and a non-empty pairing token, and never on Bluetooth (the messages GlassesLink's listener gives).
    package static func checkListening(on address: LinkAddress, options: LinkListenerOptions) throws(LinkError) {
        switch address {
        case .unix:
            return
        case .tcp(let host, _):
            guard !LinkAddress.isLoopbackHost(host) else { return }
            guard options.allowRemote else {
                throw LinkError(
                    .unavailable,
                    "refusing to listen on \(address): only loopback is allowed without allowRemote and a pairing token")
            }
            guard let token = options.pairingToken, !token.isEmpty else {
                throw LinkError(.unavailable, "refusing to listen on \(address): a remote listener needs a pairing token")
            }
        case .bluetooth:
            throw LinkError(.unavailable, "listening on Bluetooth is not supported; the host connects out over RFCOMM")
        }
    }
}

/// The device ends a stream listener accepted: makes each one (checking the host's pairing token), hands it over,
/// and closes them all when the listener stops.
package final class StreamAcceptor: Sendable {
    private struct State {
        var stopped = false
        var links: [LinkEndpoint] = []
    }

    private let options: LinkListenerOptions
    private let onConnection: @Sendable (any HostLink) -> Void
    private let state = Mutex(State())

    package init(options: LinkListenerOptions, onConnection: @escaping @Sendable (any HostLink) -> Void) {
        self.options = options
        self.onConnection = onConnection
    }

    /// Makes the device end over an accepted stream and hands it over; after ``stop(closingConnections:)``, cuts
    /// the stream instead.
    package func accept(_ stream: any LinkByteStream) {
        let accepted = state.withLock { state -> Bool in
            state.links.removeAll { $0.isClosed }
            return !state.stopped
        }
        guard accepted else {
            stream.cancel()
            return
        }
        let endpoint = StreamLinks.makeEndpoint(
            stream: stream,
            configuration: EndpointConfiguration(
                role: .device, liveness: options.liveness, requiredPairingToken: options.pairingToken),
            scheduler: options.scheduler, maxPayloadSize: options.maxPayloadSize)
        let tracked = state.withLock { state -> Bool in
            guard !state.stopped else { return false }
            state.links.append(endpoint)
            return true
        }
        guard tracked else {
            endpoint.close()
            return
        }
        onConnection(DeviceEndLink(endpoint: endpoint))
    }

    /// Accepts no more; with `closingConnections`, closes the ends accepted so far.
    package func stop(closingConnections: Bool) {
        let links = state.withLock { state -> [LinkEndpoint] in
            state.stopped = true
            defer { state.links = [] }
            return state.links
        }
        if closingConnections { links.forEach { $0.close() } }
    }
}

/// What a stream transport's connection attempt reported, mapped from its states.
package enum StreamDialReport: Sendable, Hashable {
    /// Connected: the stream is ready to carry bytes.
    case ready
    /// Not connected yet, for this reason (no network path, for one); the attempt goes on until its timeout.
    case waiting(String)
    /// Nothing listens at the address (connection refused).
    case refused(String)
    /// The attempt failed for good.
    case failed(String)
}

/// Dialing over a stream transport: the wait for a connection attempt's outcome, and the retries while nothing
/// listens yet.
package enum StreamDialing {
    /// Starts one connection attempt with `start` (which installs the report callback and starts the connection)
    /// and waits up to `timeout` for it to become ready. A listener's start is waited for the same way, with
    /// `verb` "listen on".
    /// - Throws: ``LinkError`` `.notListening` when refused, `.unavailable` when it failed or timed out; `cancel`
    ///   has then been called.
    package static func awaitReady(
        to address: LinkAddress, verb: String = "connect to", timeout: Duration,
        start: (@escaping @Sendable (StreamDialReport) -> Void) -> Void, cancel: () -> Void
    ) throws(LinkError) {
        struct Outcome {
            var decided: StreamDialReport?
            var waiting: String?
            var over = false
        }
        let outcome = Mutex(Outcome())
        let decided = DispatchSemaphore(value: 0)
        start { report in
            let signal = outcome.withLock { outcome -> Bool in
                guard !outcome.over else { return false }
                if case .waiting(let reason) = report {
                    outcome.waiting = reason
                    return false
                }
                outcome.decided = report
                outcome.over = true
                return true
            }
            if signal { decided.signal() }
        }
        _ = decided.wait(timeout: .now() + .nanoseconds(Int(clamping: timeout.wholeNanoseconds)))
        // Reports after this point (the connection's later states) are ignored.
        let (report, waiting) = outcome.withLock { outcome -> (StreamDialReport?, String?) in
            outcome.over = true
            return (outcome.decided, outcome.waiting)
        }
        switch report {
        case .ready:
            return
        case .refused(let reason):
            cancel()
            throw LinkError(.notListening, "cannot \(verb) \(address): \(reason)")
        case .failed(let reason):
            cancel()
            throw LinkError(.unavailable, "cannot \(verb) \(address): \(reason)")
        case .waiting, nil:
            cancel()
            let seconds = timeout.formattedSeconds
            throw LinkError(
                .unavailable, "cannot \(verb) \(address): timed out after \(seconds) s" + (waiting.map { " (\($0))" } ?? ""))
        }
    }

    /// Runs `attempt` with the time left until ``LinkConnectionOptions/connectTimeout``; with
    /// ``LinkConnectionOptions/waitsForListener``, an attempt that finds nothing listening (`.notListening`) is made
    /// again every `pollInterval` until the timeout has passed.
    package static func withListenerRetry<T>(
        options: LinkConnectionOptions, pollInterval: Duration,
        _ attempt: (Duration) throws(LinkError) -> T
    ) throws(LinkError) -> T {
        let deadline = ContinuousClock.now + options.connectTimeout
        while true {
            do throws(LinkError) {
                return try attempt(max(deadline - ContinuousClock.now, .milliseconds(1)))
            } catch {
                guard error.code == .notListening, options.waitsForListener else { throw error }
                // The last attempt is at the deadline, so the whole timeout was waited, as the message says.
                let remaining = deadline - ContinuousClock.now
                guard remaining > .zero else {
                    throw LinkError(.notListening, error.message
                        + " (nothing listened there within the \(options.connectTimeout.formattedSeconds) s connect timeout)")
                }
                Thread.sleep(forTimeInterval: min(pollInterval, remaining).inSeconds)
            }
        }
    }
}

extension Duration {
    /// Whole seconds as `10`, others as `2.5`.
    fileprivate var formattedSeconds: String {
        let seconds = inSeconds
        return seconds == seconds.rounded() ? String(format: "%.0f", seconds) : String(format: "%.1f", seconds)
    }
}
