import WearablesKit

/// One unit that travels on a link: a message from either end, or a farewell that says why the sender closed.
public enum LinkFrame: Sendable, Hashable {
    /// A message from the host to the device.
    case host(HostMessage)
    /// A message from the device to the host.
    case device(DeviceMessage)
    /// The sender is closing the link for this reason; nothing follows.
    case goodbye(LinkError)
}

/// Heartbeat timing for a link.
///
/// Both ends send a heartbeat every ``heartbeatInterval`` and close with ``LinkError/Code/heartbeatTimeout`` when
/// nothing at all arrived for ``timeout``.
public struct LinkLiveness: Sendable, Hashable {
    /// Whether heartbeats are sent and the timeout enforced.
    public var isEnabled: Bool
    /// How often each end sends a heartbeat.
    public var heartbeatInterval: Duration
    /// How long an end waits without receiving anything before it closes the link.
    public var timeout: Duration

    /// Creates liveness settings.
    public init(isEnabled: Bool = true, heartbeatInterval: Duration = .seconds(1), timeout: Duration = .seconds(5)) {
        self.isEnabled = isEnabled
        self.heartbeatInterval = heartbeatInterval
        self.timeout = timeout
    }

    /// A heartbeat every second and a 5 s timeout.
    public static let standard = LinkLiveness()
    /// No heartbeats and no timeout (for step-by-step tests that drain a ``ManualScheduler`` completely).
    public static let disabled = LinkLiveness(isEnabled: false)
}
