import WearablesKit

// The options of socket links, here in the core so that code above the core (the relay) can name a listening or
// dialing mode without a transport; GlassesLink's sockets and any other transport read them.

/// How a device end listens and behaves.
public struct LinkListenerOptions: Sendable {
    /// Drives heartbeats and the liveness timeout (real time by default).
    public var scheduler: any EventScheduler
    /// Heartbeat interval and timeout.
    public var liveness: LinkLiveness
    /// TCP only: allow listening on a non-loopback address (then ``pairingToken`` is required too).
    public var allowRemote: Bool
    /// The token a host must present in its hello; required for a non-loopback TCP address, optional otherwise.
    public var pairingToken: String?
    /// The largest frame body accepted or sent.
    public var maxPayloadSize: Int

    /// Creates options.
    public init(
        scheduler: any EventScheduler = DispatchEventScheduler(label: "glasses.link.device.timers"),
        liveness: LinkLiveness = .standard,
        allowRemote: Bool = false,
        pairingToken: String? = nil,
        maxPayloadSize: Int = LinkWireFormat.maxPayloadSize
    ) {
        self.scheduler = scheduler
        self.liveness = liveness
        self.allowRemote = allowRemote
        self.pairingToken = pairingToken
        self.maxPayloadSize = maxPayloadSize
    }
}

/// How a host end connects and behaves.
public struct LinkConnectionOptions: Sendable {
    /// Drives heartbeats and the liveness timeout (real time by default).
    public var scheduler: any EventScheduler
    /// Heartbeat interval and timeout.
    public var liveness: LinkLiveness
    /// Video samples the device may send before the host has handled the first one.
    public var initialCredit: Int
    /// The token to present in the hello when the device listens on a non-loopback address.
    public var pairingToken: String?
    /// How long connecting may take.
    public var connectTimeout: Duration
    /// The largest frame body accepted or sent.
    public var maxPayloadSize: Int
    /// Bluetooth only: the local adapter (`AA:BB:CC:DD:EE:FF`) to connect from; nil lets the kernel choose.
    public var bluetoothAdapter: String?
    /// Whether to keep dialling, every ``LinkConnector/listenerPollInterval``, while nothing listens at the address
    /// yet (``LinkError/Code/notListening``), until ``connectTimeout`` has passed: the other end may still be
    /// starting (a relay and a bridge launched together).
    public var waitsForListener: Bool

    /// Creates options.
    public init(
        scheduler: any EventScheduler = DispatchEventScheduler(label: "glasses.link.host.timers"),
        liveness: LinkLiveness = .standard,
        initialCredit: Int = 8,
        pairingToken: String? = nil,
        connectTimeout: Duration = .seconds(10),
        maxPayloadSize: Int = LinkWireFormat.maxPayloadSize,
        bluetoothAdapter: String? = nil,
        waitsForListener: Bool = false
    ) {
        self.scheduler = scheduler
        self.liveness = liveness
        self.initialCredit = initialCredit
        self.pairingToken = pairingToken
        self.connectTimeout = connectTimeout
        self.maxPayloadSize = maxPayloadSize
        self.bluetoothAdapter = bluetoothAdapter
        self.waitsForListener = waitsForListener
    }
}
