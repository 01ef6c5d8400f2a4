import GlassesLink
import GlassesRelay
import WearablesKit

extension RelayService {
    /// Creates a service that listens or dials over GlassesLink's POSIX sockets (Unix and TCP): what
    /// `glasses-relay` on Linux runs. The relay core itself takes its transport through ``LinkTransport``.
    public convenience init(client: RelayDATClient, clock: any RelayClock, mode: Mode,
                            wrapLink: @escaping @Sendable (any HostLink) -> any HostLink = { $0 },
                            notify: @escaping @Sendable (Notice) -> Void = { _ in }) {
        self.init(client: client, clock: clock, mode: mode, transport: POSIXLinkTransport(), wrapLink: wrapLink,
                  notify: notify)
    }
}
