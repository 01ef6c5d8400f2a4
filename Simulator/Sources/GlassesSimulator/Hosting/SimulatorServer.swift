import Foundation
import GlassesLink
import Synchronization
import WearablesKit

#if canImport(Glibc)
    import Glibc
#endif

/// Serves simulated glasses on a Unix or TCP address: each host that connects is attached to the glasses (a new
/// connection replaces the previous one; connections while the glasses are powered off are closed at once).
///
/// The glasses' link (GlassesLink's device end, with its heartbeats, credit and pairing) listens on a private Unix
/// socket; the server accepts hosts on `address` and carries their bytes to it and back unchanged, which gives it
/// a place to put raw bytes on the wire between frames: it installs the glasses' garbage writer
/// (``SimulatedGlasses/setGarbageWriter(_:)``), so the `garbage` fault reaches the host's frame decoder.
/// (GlassesLink's socket links have no raw-write hook of their own; with one, the relay could go.)
public final class SimulatorServer: Sendable {
    /// The glasses being served.
    public let glasses: SimulatedGlasses
    /// The address actually bound (with the chosen port for `tcp:HOST:0`).
    public let address: LinkAddress
    private let listener: LinkListener
    private let front: FrontListener
    private let relays: RelayRegistry
    private let directory: String

    /// Starts listening.
    /// - Throws: `LinkError` when the address cannot be bound (`.unavailable`, also for a non-loopback TCP address
    ///   without `allowRemote` and a pairing token, and for Bluetooth).
    public init(glasses: SimulatedGlasses, address: LinkAddress,
                options: LinkListenerOptions = LinkListenerOptions()) throws(LinkError) {
        self.glasses = glasses
        if case .tcp(let host, _) = address, !LinkAddress.isLoopbackHost(host) {
            guard options.allowRemote else {
                throw LinkError(.unavailable,
                                "refusing to listen on \(address): only loopback is allowed without allowRemote and a pairing token")
            }
            guard let token = options.pairingToken, !token.isEmpty else {
                throw LinkError(.unavailable, "refusing to listen on \(address): a remote listener needs a pairing token")
            }
        }
        var template = Array("/tmp/glasses-sim-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ $0.baseAddress.flatMap { mkdtemp($0) } }) else {
            throw LinkError(.unavailable, "cannot create a private directory for the glasses' link: \(RelaySockets.errorText())")
        }
        let directory = String(cString: made)
        self.directory = directory
        let devicePath = directory + "/link"
        var inner = options
        inner.allowRemote = false
        do throws(LinkError) {
            listener = try LinkListener.listen(on: .unix(path: devicePath), options: inner) { [weak glasses] link in
                guard let glasses else {
                    link.close()
                    return
                }
                if glasses.isPoweredOn {
                    glasses.attach(link)
                } else {
                    link.open { _ in }
                    link.close()
                }
            }
        } catch {
            rmdir(directory)
            throw error
        }
        let relays = RelayRegistry()
        self.relays = relays
        do throws(LinkError) {
            front = try FrontListener.listen(on: address) { fd in
                guard let relay = SocketRelay.start(hostFD: fd, devicePath: devicePath) else { return }
                relays.replace(with: relay)
            }
        } catch {
            listener.stop()
            rmdir(directory)
            throw error
        }
        self.address = front.address
        glasses.setGarbageWriter { bytes throws(SimulatorError) in try relays.write(bytes) }
    }

    /// Stops listening and closes the connection.
    public func stop() {
        glasses.setGarbageWriter(nil)
        front.stop()
        listener.stop()  // closes the glasses' link; its relay forwards the goodbye, then ends
        rmdir(directory)
    }
}

/// The connection being carried now (the newest one: a new host replaces the previous one, as the glasses do).
private final class RelayRegistry: Sendable {
    private let current = Mutex<SocketRelay?>(nil)

    func replace(with relay: SocketRelay) {
        let old = current.withLock { slot -> SocketRelay? in
            defer { slot = relay }
            return slot
        }
        old?.shutdownBoth()
    }

    func write(_ bytes: Data) throws(SimulatorError) {
        guard let relay = current.withLock({ $0 }) else {
            throw SimulatorError(.faultUnavailable, "garbage bytes could not be written: no host is connected",
                                 context: ["fault": "garbage", "count": "\(bytes.count)"])
        }
        try relay.write(bytes)
    }
}

/// The public listening socket: binds a Unix or TCP address and hands each accepted connection's descriptor on.
private final class FrontListener: Sendable {
    let address: LinkAddress
    private let fd: Int32
    private let unixPath: String?
    private let acceptDone = DispatchSemaphore(value: 0)
    private let stopped = Atomic<Bool>(false)

    private init(address: LinkAddress, fd: Int32, unixPath: String?) {
        self.address = address
        self.fd = fd
        self.unixPath = unixPath
    }

    static func listen(on address: LinkAddress, onConnection: @escaping @Sendable (Int32) -> Void) throws(LinkError) -> FrontListener {
        let fd: Int32
        var bound = address
        var unixPath: String?
        switch address {
        case .unix(let path):
            fd = try bindUnix(path)
            unixPath = path
        case .tcp(let host, let port):
            let (created, actual) = try bindTCP(host: host, port: port)
            fd = created
            bound = .tcp(host: host, port: actual)
        case .bluetooth:
            throw LinkError(.unavailable, "listening on Bluetooth is not supported; the host connects out over RFCOMM")
        }
        guard Glibc.listen(fd, 16) == 0 else {
            let reason = RelaySockets.errorText()
            close(fd)
            throw LinkError(.unavailable, "cannot listen on \(address): \(reason)")
        }
        let front = FrontListener(address: bound, fd: fd, unixPath: unixPath)
        let thread = Thread { [front] in front.acceptLoop(onConnection) }
        thread.name = "glasses.sim.accept"
        thread.start()
        return front
    }

    func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        shutdown(fd, Int32(SHUT_RDWR))
        _ = acceptDone.wait(timeout: .now() + 5)
        close(fd)
        if let unixPath { unlink(unixPath) }
    }

    private func acceptLoop(_ onConnection: @Sendable (Int32) -> Void) {
        defer { acceptDone.signal() }
        while true {
            let client = accept(fd, nil, nil)
            if client < 0 {
                if errno == EINTR || errno == ECONNABORTED { continue }
                return  // shut down by stop(), or the socket broke
            }
            _ = fcntl(client, F_SETFD, FD_CLOEXEC)
            if stopped.load(ordering: .acquiring) {
                close(client)
                return
            }
            if case .tcp = address {
                var one: Int32 = 1
                setsockopt(client, Int32(IPPROTO_TCP), 1 /* TCP_NODELAY */, &one, socklen_t(MemoryLayout<Int32>.size))
            }
            onConnection(client)
        }
    }

    private static func bindUnix(_ path: String) throws(LinkError) -> Int32 {
        guard path.utf8.count <= LinkAddress.maxUnixPathLength else {
            throw LinkError(.unavailable, "cannot listen on unix:\(path): the path is longer than 107 bytes")
        }
        // A socket file left by a dead process is replaced; one with a live listener is not.
        var status = stat()
        if lstat(path, &status) == 0 {
            guard (status.st_mode & S_IFMT) == S_IFSOCK else {
                throw LinkError(.unavailable, "cannot listen on unix:\(path): a file that is not a socket is in the way")
            }
            if case .success(let probe) = RelaySockets.connectUnix(path) {
                close(probe)
                throw LinkError(.unavailable, "cannot listen on unix:\(path): another process is listening there")
            }
            unlink(path)
        }
        let fd = socket(AF_UNIX, RelaySockets.streamType | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw LinkError(.unavailable, "cannot create a Unix socket: \(RelaySockets.errorText())") }
        let failure = RelaySockets.withUnixAddress(path) { address, length in bind(fd, address, length) == 0 ? 0 : errno }
        guard let failure, failure == 0 else {
            close(fd)
            throw LinkError(.unavailable, "cannot listen on unix:\(path): \(RelaySockets.errorText(failure ?? ENAMETOOLONG))")
        }
        return fd
    }

    private static func bindTCP(host: String, port: UInt16) throws(LinkError) -> (Int32, UInt16) {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = RelaySockets.streamType
        hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            throw LinkError(.unavailable, "cannot resolve tcp:\(host):\(port): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(list) }
        var lastFailure = "no addresses"
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let candidate = entry {
            entry = candidate.pointee.ai_next
            let fd = socket(candidate.pointee.ai_family, RelaySockets.streamType | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else {
                lastFailure = RelaySockets.errorText()
                continue
            }
            var one: Int32 = 1
            setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
            guard bind(fd, candidate.pointee.ai_addr, candidate.pointee.ai_addrlen) == 0 else {
                lastFailure = RelaySockets.errorText()
                close(fd)
                continue
            }
            var storage = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let named = withUnsafeMutablePointer(to: &storage) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
            }
            guard named == 0 else {
                lastFailure = RelaySockets.errorText()
                close(fd)
                continue
            }
            let family = Int32(storage.ss_family)
            let actual: UInt16 = withUnsafePointer(to: &storage) { pointer in
                if family == AF_INET6 {
                    return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin6_port) }
                }
                return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin_port) }
            }
            return (fd, actual)
        }
        throw LinkError(.unavailable, "cannot listen on tcp:\(host):\(port): \(lastFailure)")
    }
}
