import WearablesKit

/// A device link that tells its owner why it closed, then passes every event on unchanged.
///
/// WearablesKit turns a closed link into a device that is `.disconnected`, which is all DAT's surface has room for;
/// the reason (a goodbye that said the pairing token was wrong, a flood the link refused, a heartbeat that never
/// came) is what a person needs to hear, so the controller takes it here, before WearablesKit sees the close.
final class ObservedDeviceLink: DeviceLink {
    private let link: any DeviceLink
    private let closed: @Sendable (LinkError) -> Void

    /// Wraps `link`; `closed` runs on the link's delivery context just before the `.closed` event is passed on.
    init(_ link: any DeviceLink, closed: @escaping @Sendable (LinkError) -> Void) {
        self.link = link
        self.closed = closed
    }

    func open(eventHandler: @escaping @Sendable (DeviceLinkEvent) -> Void) {
        let closed = closed
        link.open { event in
            if case .closed(let error) = event { closed(error) }
            eventHandler(event)
        }
    }

    func send(_ message: HostMessage) { link.send(message) }

    func close() { link.close() }
}
