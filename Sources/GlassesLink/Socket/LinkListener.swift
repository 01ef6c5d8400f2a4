import Foundation
import Synchronization
import WearablesKit

#if canImport(Glibc)
    import Glibc
#endif

/// The device side of socket links: accepts hosts on a Unix or TCP address and hands each one over as a
/// ``HostLink``. `glasses-sim --listen` is built on this.
public final class LinkListener: Sendable {
    private struct State {
        var stopped = false
        var links: [LinkEndpoint] = []
    }

    /// The address actually bound (for `tcp:HOST:0`, with the port the kernel chose).
    public let address: LinkAddress
    private let handle: SocketHandle
    private let options: LinkListenerOptions
    /// What to do with an accepted connection: returns the link end to close on ``stop(closingConnections:)``, if
    /// one was made at once.
    private let onAccepted: @Sendable (SocketHandle) -> LinkEndpoint?
    private let handOver: @Sendable (LinkEndpoint) -> Void
    private let state = Mutex(State())
    private let acceptLoopDone = DispatchSemaphore(value: 0)
    /// The accepting thread's `pthread_self()`, so that ``stop(closingConnections:)`` called from a connection
    /// callback does not wait for itself.
    private let acceptThread = Atomic<UInt>(0)

    private init(
        address: LinkAddress,
        handle: SocketHandle,
        options: LinkListenerOptions,
        onAccepted: @escaping @Sendable (SocketHandle) -> LinkEndpoint?,
        handOver: @escaping @Sendable (LinkEndpoint) -> Void
    ) {
        self.address = address
        self.handle = handle
        self.options = options
        self.onAccepted = onAccepted
        self.handOver = handOver
    }

    /// Starts listening; `onConnection` receives each accepted host (on the listener's thread; open it there or
    /// hand it on).
    ///
    /// For TCP, a non-loopback host needs both `options.allowRemote` and a non-empty `options.pairingToken`; a host
    /// that then presents no or the wrong token in its hello is closed with `.incompatible`. For Unix sockets, a
    /// stale socket file nobody listens on is replaced.
    /// - Throws: ``LinkError`` `.unavailable` when the address cannot be bound or remote listening is not allowed;
    ///   `.incompatible` for Bluetooth (the device side of RFCOMM is not implemented).
    public static func listen(
        on address: LinkAddress,
        options: LinkListenerOptions = LinkListenerOptions(),
        onConnection: @escaping @Sendable (any HostLink) -> Void
    ) throws(LinkError) -> LinkListener {
        try start(address, options: options) { connection in
            let endpoint = SocketLinks.makeEndpoint(
                handle: connection,
                configuration: EndpointConfiguration(
                    role: .device, liveness: options.liveness, requiredPairingToken: options.pairingToken),
                scheduler: options.scheduler,
                maxPayloadSize: options.maxPayloadSize
            )
            return endpoint
        } handOver: { endpoint in
            onConnection(DeviceEndLink(endpoint: endpoint))
        }
    }

    /// Binds `address` (checking the remote rules), starts the accepting thread and returns the listener.
    /// `accept` makes a link end from each accepted socket (or nil when it hands the socket on by other means);
    /// `handOver` gets each end once the listener tracks it.
    static func start(
        _ address: LinkAddress,
        options: LinkListenerOptions,
        accept: @escaping @Sendable (SocketHandle) -> LinkEndpoint?,
        handOver: @escaping @Sendable (LinkEndpoint) -> Void
    ) throws(LinkError) -> LinkListener {
        // The remote rules and Bluetooth's refusal are the core's, shared with every transport.
        try StreamLinks.checkListening(on: address, options: options)
        let handle: SocketHandle
        var bound = address
        switch address {
        case .unix(let path):
            handle = try bindUnix(path: path)
        case .tcp(let host, let port):
            let (created, actualPort) = try bindTCP(host: host, port: port)
            handle = created
            bound = .tcp(host: host, port: actualPort)
        case .bluetooth:
            throw LinkError(.unavailable, "listening on Bluetooth is not supported; the host connects out over RFCOMM")
        }
        if let error = SocketCalls.listen(handle, backlog: 16) {
            throw LinkError(.unavailable, "cannot listen on \(address): \(error)")
        }
        let listener = LinkListener(
            address: bound, handle: handle, options: options, onAccepted: accept, handOver: handOver)
        let thread = Thread { [listener] in listener.acceptLoop() }
        thread.name = "glasses.link.accept"
        thread.start()
        return listener
    }

    /// Stops accepting, closes the links it accepted unless `closingConnections` is false, and removes the Unix
    /// socket file. Waits (briefly) for the accepting thread to end, and for the closed links to write what they had
    /// queued (a fault, the goodbye): at most the socket wire's 2 s grace and a second, for a peer that stopped
    /// reading, so that a process may exit right after.
    public func stop(closingConnections: Bool = true) {
        let links: [LinkEndpoint]? = state.withLock { state in
            guard !state.stopped else { return nil }
            state.stopped = true
            defer { state.links = [] }
            return state.links
        }
        guard let links else { return }
        handle.shutdown()
        if case .unix(let path) = address { SocketCalls.removeSocketFile(path) }
        if closingConnections {
            links.forEach { $0.close() }
            // A process that exits right after stop() would otherwise drop what the writers still hold (a fault sent
            // just before, the goodbye). Bounded: a peer that stopped reading is cut after the wire's grace.
            let deadline = DispatchTime.now() + SocketWire.shutdownGrace + .seconds(1)
            for link in links { link.waitForWireDrain(until: deadline) }
        }
        if acceptThread.load(ordering: .acquiring) != UInt(pthread_self()) {
            _ = acceptLoopDone.wait(timeout: .now() + 5)
        }
    }

    /// Tracks a link end made after the accept (by a handshake), so ``stop(closingConnections:)`` closes it too.
    /// - Returns: false when the listener has stopped; the caller closes the end.
    func track(_ endpoint: LinkEndpoint) -> Bool {
        state.withLock { state in
            guard !state.stopped else { return false }
            state.links.removeAll { $0.isClosed }
            state.links.append(endpoint)
            return true
        }
    }

    private func acceptLoop() {
        acceptThread.store(UInt(pthread_self()), ordering: .releasing)
        defer { acceptLoopDone.signal() }
        while true {
            guard case .success(let connection) = SocketCalls.accept(handle) else {
                return  // shut down by stop(), or the socket broke
            }
            if case .tcp = address {
                SocketCalls.setOption(connection, level: Int32(IPPROTO_TCP), name: TCP_NODELAY, value: 1)
            }
            guard let endpoint = onAccepted(connection) else { continue }
            let accepted = state.withLock { state -> Bool in
                guard !state.stopped else { return false }
                state.links.removeAll { $0.isClosed }
                state.links.append(endpoint)
                return true
            }
            guard accepted else {
                endpoint.close()
                return
            }
            handOver(endpoint)
        }
    }

    private static func bindUnix(path: String) throws(LinkError) -> SocketHandle {
        guard path.utf8.count <= LinkAddress.maxUnixPathLength else {
            throw LinkError(.unavailable, "cannot listen on unix:\(path): the path is longer than 107 bytes")
        }
        // A socket file left by a dead process is replaced; one with a live listener is not.
        if let isSocket = SocketCalls.isSocketFile(path) {
            guard isSocket else {
                throw LinkError(
                    .unavailable, "cannot listen on unix:\(path): a file that is not a socket is in the way")
            }
            if (try? LinkConnector.connectUnix(path: path, timeout: .seconds(1))) != nil {
                throw LinkError(.unavailable, "cannot listen on unix:\(path): another process is listening there")
            }
            SocketCalls.removeSocketFile(path)
        }
        let handle: SocketHandle
        switch SocketCalls.socket(domain: AF_UNIX, type: Int32(SOCK_STREAM.rawValue)) {
        case .success(let created): handle = created
        case .failure(let error): throw LinkError(.unavailable, "cannot create a Unix socket: \(error)")
        }
        let result = SocketCalls.withUnixAddress(path) { address, length in
            SocketCalls.bind(handle, address: address, length: length)
        }
        if let result {
            throw LinkError(.unavailable, "cannot listen on unix:\(path): \(result)")
        }
        return handle
    }

    static func bindTCP(host: String, port: UInt16) throws(LinkError) -> (SocketHandle, UInt16) {
        try SocketCalls.firstTCPSocket(host: host, port: port, passive: true, verb: "listen on") {
            (handle, address, length) -> Result<UInt16, SystemError> in
            SocketCalls.setOption(handle, level: SOL_SOCKET, name: SO_REUSEADDR, value: 1)
            if let error = SocketCalls.bind(handle, address: address, length: length) { return .failure(error) }
            guard let actual = SocketCalls.boundPort(handle) else { return .failure(SystemError(errno)) }
            return .success(actual)
        }
    }
}
