// The link's transport on Apple's Network.framework: what the phone relay (Relay/iOS) dials the bridge with.
//
// Compiled only where Network exists. On Linux this module is empty; the file is type-checked in the default test
// suite against a stand-in `Network` module that declares exactly the API used here, each declaration quoted from
// Apple's documentation (Tests/GlassesRelayTests/AppleSurface/Network.swift, AppleSurfaceTests). It was never
// compiled against Apple's SDK.
//
// It holds no link logic: framing, the pair frame, pairing checks, credit, heartbeats, the close grace, the wait for
// a connection's outcome and the retries while nothing listens are GlassesLinkCore's `StreamLinks`, `StreamAcceptor`
// and `StreamDialing`, tested on Linux over an in-memory stream (Tests/GlassesLinkTests/StreamLinksTests.swift).
// This file starts connections and listeners, moves bytes, and maps Network's states and errors to the core's.
#if canImport(Network)
    import Foundation
    import GlassesLinkCore
    import Network
    import WearablesKit

    /// The core's ``LinkTransport`` on Network.framework: TCP only (`tcp:HOST:PORT`), dial and listen, as
    /// GlassesLink's `POSIXLinkTransport` offers on Linux.
    public struct NetworkFrameworkTransport: LinkTransport {
        /// Creates the transport.
        public init() {}

        /// Listens for hosts on a TCP address; waits (up to 10 s) until the listener is ready, so the address it
        /// returns carries the port Network chose for `tcp:HOST:0`.
        public func listen(
            on address: LinkAddress, options: LinkListenerOptions,
            onConnection: @escaping @Sendable (any HostLink) -> Void
        ) throws(LinkError) -> any LinkListening {
            try StreamLinks.checkListening(on: address, options: options)
            let (host, port) = try Self.tcp(address)
            let parameters = NWParameters.tcp
            parameters.requiredLocalEndpoint = .hostPort(host: NWEndpoint.Host(host), port: Self.port(port))
            let listener: NWListener
            do {
                listener = try NWListener(using: parameters, on: Self.port(port))
            } catch {
                throw LinkError(.unavailable, "cannot listen on \(address): \(error)")
            }
            let acceptor = StreamAcceptor(options: options, onConnection: onConnection)
            let queue = DispatchQueue(label: "glasses.link.network.listener")
            listener.newConnectionHandler = { connection in
                // A queue of its own: the service may hold the listener's queue while it hands a host over.
                acceptor.accept(NetworkStream(connection, queue: DispatchQueue(label: "glasses.link.network.connection")))
            }
            try StreamDialing.awaitReady(to: address, verb: "listen on", timeout: .seconds(10), start: { report in
                listener.stateUpdateHandler = { state in
                    if let mapped = Self.report(state) { report(mapped) }
                }
                listener.start(queue: queue)
            }, cancel: { listener.cancel() })
            let bound = LinkAddress.tcp(host: host, port: listener.port?.rawValue ?? port)
            return NetworkListening(address: bound, listener: listener, acceptor: acceptor)
        }

        /// Dials a listening host (`glasses-bridge --listen tcp:…`) and returns the device end, ready to open; blocks
        /// while connecting (up to ``LinkConnectionOptions/connectTimeout``).
        public func connectDevice(to address: LinkAddress, options: LinkConnectionOptions) throws(LinkError)
            -> any HostLink
        {
            let (host, port) = try Self.tcp(address)
            let stream = try StreamDialing.withListenerRetry(options: options, pollInterval: .milliseconds(250)) {
                timeout throws(LinkError) -> NetworkStream in
                let connection = NWConnection(host: NWEndpoint.Host(host), port: Self.port(port), using: .tcp)
                let queue = DispatchQueue(label: "glasses.link.network.connection")
                try StreamDialing.awaitReady(to: address, timeout: timeout, start: { report in
                    connection.stateUpdateHandler = { state in
                        if let mapped = Self.report(state) { report(mapped) }
                    }
                    connection.start(queue: queue)
                }, cancel: { connection.cancel() })
                return NetworkStream(connection, queue: nil)
            }
            return try StreamLinks.dialedHost(stream, options: options)
        }

        private static func tcp(_ address: LinkAddress) throws(LinkError) -> (String, UInt16) {
            guard case .tcp(let host, let port) = address else {
                throw LinkError(.unavailable, "the Network.framework transport carries tcp:HOST:PORT only, not \(address)")
            }
            return (host, port)
        }

        private static func port(_ number: UInt16) -> NWEndpoint.Port {
            NWEndpoint.Port(rawValue: number) ?? .any
        }

        /// A connection's state as the core's dial report; nil for the states that decide nothing.
        private static func report(_ state: NWConnection.State) -> StreamDialReport? {
            switch state {
            case .ready: .ready
            case .waiting(let error): isRefused(error) ? .refused("\(error)") : .waiting("\(error)")
            case .failed(let error): isRefused(error) ? .refused("\(error)") : .failed("\(error)")
            case .cancelled: .failed("cancelled")
            case .setup, .preparing: nil
            @unknown default: nil
            }
        }

        /// A listener's state as the core's report.
        private static func report(_ state: NWListener.State) -> StreamDialReport? {
            switch state {
            case .ready: .ready
            case .waiting(let error): .waiting("\(error)")
            case .failed(let error): .failed("\(error)")
            case .cancelled: .failed("cancelled")
            case .setup: nil
            @unknown default: nil
            }
        }

        private static func isRefused(_ error: NWError) -> Bool {
            if case .posix(.ECONNREFUSED) = error { return true }
            return false
        }
    }

    /// One NWConnection as the core's byte stream.
    final class NetworkStream: LinkByteStream {
        private let connection: NWConnection

        /// `queue`: where to start an accepted connection (nil for one already started).
        init(_ connection: NWConnection, queue: DispatchQueue?) {
            self.connection = connection
            if let queue { connection.start(queue: queue) }
        }

        func write(_ bytes: [UInt8], completion: @escaping @Sendable (String?) -> Void) {
            connection.send(content: Data(bytes), completion: .contentProcessed { error in completion(error.map { "\($0)" }) })
        }

        func read(_ completion: @escaping @Sendable (LinkStreamRead) -> Void) {
            connection.receive(minimumIncompleteLength: 1, maximumLength: 64 << 10) { data, _, isComplete, error in
                if let data, !data.isEmpty {
                    completion(.bytes([UInt8](data)))  // an end or error that came with it is delivered by the next read
                } else if let error {
                    completion(.failed("\(error)"))
                } else {
                    completion(isComplete ? .end : .failed("the connection delivered nothing"))
                }
            }
        }

        func finish() {
            // A write-close after the queued sends (Apple: "sending finalMessage … and marking the send complete").
            connection.send(content: nil, contentContext: .finalMessage, isComplete: true,
                            completion: .contentProcessed { [connection] _ in connection.cancel() })
        }

        func cancel() {
            connection.forceCancel()
        }
    }

    /// A started NWListener and the ends it accepted.
    final class NetworkListening: LinkListening {
        let address: LinkAddress
        private let listener: NWListener
        private let acceptor: StreamAcceptor

        init(address: LinkAddress, listener: NWListener, acceptor: StreamAcceptor) {
            self.address = address
            self.listener = listener
            self.acceptor = acceptor
        }

        func stop(closingConnections: Bool) {
            listener.cancel()
            acceptor.stop(closingConnections: closingConnections)
        }
    }
#endif
