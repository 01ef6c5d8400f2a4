import WearablesKit

/// One unit that travels on a link: a message from either end, or a farewell that says why the sender closed.
public enum LinkFrame: Sendable, Hashable {
    /// A message from the host to the device.
    case host(HostMessage)
    /// A message from the device to the host.
    case device(DeviceMessage)
    /// The sender is closing the link for this reason; nothing follows.
    case goodbye(LinkError)
    /// The first frame a device sends when it dials a listening host: its protocol version and the pairing token the
    /// host's listener requires (nil when it requires none). The listener checks it before anything else is read.
    case pair(protocolVersion: UInt16, pairingToken: String?)
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

/// Counters of one link end, for logs and health reports.
public struct LinkDiagnostics: Sendable, Hashable {
    /// What the frame decoder met (garbage skipped, resynchronisations, CRC failures, skipped frames);
    /// nil on the in-process transport, which does not encode.
    public var decoder: LinkFrameDecoder.Statistics?
    /// Device end: video samples dropped because the host had not granted credit.
    public var droppedVideoSamples: UInt64
    /// Host end: video samples the device sent beyond its credit (discarded; a misbehaving device).
    public var uncreditedVideoSamples: UInt64
    /// Host end: video samples the device says (in its latest heartbeat) it dropped for lack of credit.
    public var deviceReportedDrops: UInt64
    /// Frames that belong to the other direction (ignored).
    public var misdirectedFrames: UInt64
    /// Host end: how the device's link clock relates to this end's (zero and unknown on a device end).
    public var clock: LinkClockStatistics

    /// Creates diagnostics.
    public init(
        decoder: LinkFrameDecoder.Statistics? = nil,
        droppedVideoSamples: UInt64 = 0,
        uncreditedVideoSamples: UInt64 = 0,
        deviceReportedDrops: UInt64 = 0,
        misdirectedFrames: UInt64 = 0,
        clock: LinkClockStatistics = LinkClockStatistics()
    ) {
        self.decoder = decoder
        self.droppedVideoSamples = droppedVideoSamples
        self.uncreditedVideoSamples = uncreditedVideoSamples
        self.deviceReportedDrops = deviceReportedDrops
        self.misdirectedFrames = misdirectedFrames
        self.clock = clock
    }
}

/// A link end that reports ``LinkDiagnostics``; every link GlassesLink creates conforms
/// (`(link as? any LinkDiagnosticsReporting)?.diagnostics`).
public protocol LinkDiagnosticsReporting: AnyObject, Sendable {
    /// Counters of this end so far.
    var diagnostics: LinkDiagnostics { get }
}
