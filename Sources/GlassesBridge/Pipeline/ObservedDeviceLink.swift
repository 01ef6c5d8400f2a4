import WearablesKit

/// A device link that tells its owner why it closed, and what the glasses said of a stream fault, then passes every
/// event on unchanged.
///
/// WearablesKit turns a closed link into a device that is `.disconnected`, and a stream fault into DAT's bare
/// `StreamError`, which is all DAT's surface has room for; the reason (a goodbye that said the pairing token was
/// wrong, a flood the link refused, a heartbeat that never came, a feed of the wrong size) is what a person needs to
/// hear, so the controller takes it here, before WearablesKit sees the event.
package final class ObservedDeviceLink: DeviceLink {
    private let link: any DeviceLink
    private let closed: @Sendable (LinkError) -> Void
    private let fault: @Sendable (DeviceStreamFault, String) -> Void

    /// Wraps `link`; `closed` runs on the link's delivery context just before the `.closed` event is passed on, and
    /// `fault` before a stream fault's message is.
    package init(_ link: any DeviceLink, closed: @escaping @Sendable (LinkError) -> Void,
         fault: @escaping @Sendable (DeviceStreamFault, String) -> Void = { _, _ in }) {
        self.link = link
        self.closed = closed
        self.fault = fault
    }

    package func open(eventHandler: @escaping @Sendable (DeviceLinkEvent) -> Void) {
        let closed = closed, fault = fault
        link.open { event in
            switch event {
            case .closed(let error): closed(error)
            case .message(.fault(let kind, let message)): fault(kind, message)
            case .message: break
            }
            eventHandler(event)
        }
    }

    package func send(_ message: HostMessage) { link.send(message) }

    package func close() { link.close() }
}
