import Glibc
import Foundation
import GlassesMedia
import WearablesKit

#if canImport(Glibc)
    import Glibc
#endif

/// Opens the host end of a link to glasses (or to `glasses-sim`) over a socket.
public enum LinkConnector {
    /// Connects to a device and returns the host end, ready to ``DeviceLink/open(eventHandler:)``.
    ///
    /// Blocks while connecting (up to ``LinkConnectionOptions/connectTimeout``): call it from a thread or queue,
    /// not from the cooperative pool.
    /// - Throws: ``LinkError`` `.unavailable` when the connection cannot be made, with a one-line reason
    ///   (for Bluetooth on a kernel without it: "Bluetooth is not available in this kernel …").
    public static func connect(
        to address: LinkAddress,
        options: LinkConnectionOptions = LinkConnectionOptions()
    ) throws(LinkError) -> any DeviceLink {
        let handle = try openSocket(to: address, options: options, bluetooth: true)
        let endpoint = SocketLinks.makeEndpoint(
            handle: handle,
            configuration: EndpointConfiguration(
                role: .host, initialCredit: options.initialCredit, liveness: options.liveness,
                pairingTokenToPresent: options.pairingToken),
            scheduler: options.scheduler,
            maxPayloadSize: options.maxPayloadSize
        )
        return HostEndLink(endpoint: endpoint)
    }

    /// Dials a listening host (`glasses-bridge --listen`) as a device and returns the device end, ready to
    /// ``HostLink/open(eventHandler:)``: what a relay does when the host cannot dial it.
    ///
    /// The connection opens with a `pair` frame carrying ``LinkConnectionOptions/pairingToken``; a host that refuses
    /// it answers with a goodbye, which the returned link delivers as its `.closed` event (for example
    /// `.incompatible` "pairing failed: the device presented a wrong pairing token"). Blocks while connecting.
    /// - Throws: ``LinkError`` `.unavailable` when the connection cannot be made; Bluetooth is not supported here.
    public static func connectDevice(
        to address: LinkAddress,
        options: LinkConnectionOptions = LinkConnectionOptions()
    ) throws(LinkError) -> any HostLink {
        let handle = try openSocket(to: address, options: options, bluetooth: false)
        let pair = try LinkFrameEncoder(maxPayloadSize: options.maxPayloadSize)
            .encode(.pair(protocolVersion: linkProtocolVersion, pairingToken: options.pairingToken))
        if let failure = pair.withUnsafeBytes({ SocketCalls.writeAll(handle, $0) }) {
            throw LinkError(.unavailable, "cannot pair with \(address): \(SocketCalls.describe(failure))")
        }
        let endpoint = SocketLinks.makeEndpoint(
            handle: handle,
            configuration: EndpointConfiguration(role: .device, liveness: options.liveness),
            scheduler: options.scheduler,
            maxPayloadSize: options.maxPayloadSize
        )
        return DeviceEndLink(endpoint: endpoint)
    }

    /// How often a connection that finds nothing listening is tried again (``LinkConnectionOptions/waitsForListener``).
    public static let listenerPollInterval = Duration.milliseconds(250)

    /// A connected socket to `address`; RFCOMM only when `bluetooth` (hosts dial Bluetooth, devices do not). With
    /// ``LinkConnectionOptions/waitsForListener``, an address where nothing listens yet is tried again until the
    /// connect timeout has passed.
    private static func openSocket(
        to address: LinkAddress, options: LinkConnectionOptions, bluetooth: Bool
    ) throws(LinkError) -> SocketHandle {
        // The retries while nothing listens are the core's, shared with every transport.
        try StreamDialing.withListenerRetry(options: options, pollInterval: listenerPollInterval) {
            timeout throws(LinkError) -> SocketHandle in
            try openSocketOnce(to: address, timeout: timeout, options: options, bluetooth: bluetooth)
        }
    }

    /// One attempt at ``openSocket(to:options:bluetooth:)`` within `timeout`.
    private static func openSocketOnce(
        to address: LinkAddress, timeout: Duration, options: LinkConnectionOptions, bluetooth: Bool
    ) throws(LinkError) -> SocketHandle {
        switch address {
        case .unix(let path):
            return try connectUnix(path: path, timeout: timeout)
        case .tcp(let host, let port):
            return try connectTCP(host: host, port: port, timeout: timeout)
        case .bluetooth(let device, let channel):
            guard bluetooth else {
                throw LinkError(.unavailable, "a device dials a host over Unix or TCP sockets only, not Bluetooth")
            }
            return try RFCOMMSocket.connect(
                device: device, channel: channel, adapter: options.bluetoothAdapter, timeout: timeout)
        }
    }

    static func connectUnix(path: String, timeout: Duration) throws(LinkError) -> SocketHandle {
        guard path.utf8.count <= LinkAddress.maxUnixPathLength else {
            throw LinkError(.unavailable, "cannot connect to unix:\(path): the path is longer than 107 bytes")
        }
        let handle: SocketHandle
        switch SocketCalls.socket(domain: AF_UNIX, type: Int32(SOCK_STREAM.rawValue)) {
        case .success(let created): handle = created
        case .failure(let code):
            throw LinkError(.unavailable, "cannot create a Unix socket: \(code)")
        }
        let failure = SocketCalls.withUnixAddress(path) { address, length in
            SocketCalls.connect(handle, address: address, length: length, timeout: timeout)
        }
        if let failure {
            // No socket file, or one nobody accepts on: the listener may not have started yet.
            let code: LinkError.Code = failure == ENOENT || failure == ECONNREFUSED ? .notListening : .unavailable
            throw LinkError(code, "cannot connect to unix:\(path): \(SocketCalls.describe(failure))")
        }
        return handle
    }

    static func connectTCP(host: String, port: UInt16, timeout: Duration) throws(LinkError) -> SocketHandle {
        try SocketCalls.firstTCPSocket(host: host, port: port, passive: false, verb: "connect to") {
            (handle, address, length) -> Result<Void, SystemError> in
            if let failure = SocketCalls.connect(handle, address: address, length: length, timeout: timeout) {
                return .failure(SystemError(failure))
            }
            SocketCalls.setOption(handle, level: Int32(IPPROTO_TCP), name: TCP_NODELAY, value: 1)
            return .success(())
        }.handle
    }
}
