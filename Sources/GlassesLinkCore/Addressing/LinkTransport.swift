import WearablesKit

/// A transport that carries device ends of links: listens for hosts, or dials a listening host, at a
/// ``LinkAddress``. The core declares it so that code above the core (the relay) needs no sockets of its own;
/// GlassesLink's POSIX sockets implement it (`POSIXLinkTransport`), and another platform's transport can too.
public protocol LinkTransport: Sendable {
    /// Starts listening at `address`; `onConnection` receives each accepted host.
    /// - Throws: ``LinkError`` when the address cannot be bound.
    func listen(
        on address: LinkAddress,
        options: LinkListenerOptions,
        onConnection: @escaping @Sendable (any HostLink) -> Void
    ) throws(LinkError) -> any LinkListening

    /// Dials a listening host as a device and returns the device end, ready to open. Blocks while connecting.
    /// - Throws: ``LinkError`` when the connection cannot be made.
    func connectDevice(to address: LinkAddress, options: LinkConnectionOptions) throws(LinkError) -> any HostLink
}

/// A listener a ``LinkTransport`` started.
public protocol LinkListening: AnyObject, Sendable {
    /// The address actually bound (for `tcp:HOST:0`, with the port the transport chose).
    var address: LinkAddress { get }
    /// Stops accepting; with `closingConnections`, closes the links it accepted too.
    func stop(closingConnections: Bool)
}
