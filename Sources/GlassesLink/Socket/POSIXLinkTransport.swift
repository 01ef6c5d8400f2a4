import GlassesLinkCore
import WearablesKit

/// The core's ``LinkTransport`` on this module's sockets (Unix and TCP): ``LinkListener`` and ``LinkConnector``.
public struct POSIXLinkTransport: LinkTransport {
    /// Creates the transport.
    public init() {}

    public func listen(
        on address: LinkAddress,
        options: LinkListenerOptions,
        onConnection: @escaping @Sendable (any HostLink) -> Void
    ) throws(LinkError) -> any LinkListening {
        try LinkListener.listen(on: address, options: options, onConnection: onConnection)
    }

    public func connectDevice(to address: LinkAddress, options: LinkConnectionOptions) throws(LinkError) -> any HostLink {
        try LinkConnector.connectDevice(to: address, options: options)
    }
}

extension LinkListener: LinkListening {}
