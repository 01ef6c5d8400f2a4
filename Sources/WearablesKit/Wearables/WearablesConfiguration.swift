/// How a ``WearablesInstance`` keeps time and how long it waits for the glasses.
///
/// The timings are set only through the checked initializer (they were settable afterwards, which skipped the check:
/// a start timeout of zero then read as glasses that never answered).
public struct WearablesConfiguration: Sendable {
    /// Where timers run: real time by default; tests and simulations pass a ``ManualScheduler``.
    public var scheduler: any EventScheduler
    /// How long a stream waits in ``StreamState/waitingForDevice`` (and a session waits for lost glasses)
    /// before giving up with ``StreamError/deviceNotConnected(_:)``; real glasses wait about 31 s.
    public private(set) var deviceWaitTimeout: Duration
    /// How long a stream waits in ``StreamState/starting`` before ``StreamError/timeout``,
    /// and a session waits in ``DeviceSessionState/starting`` before failing.
    public private(set) var startTimeout: Duration
    /// How long `stop()` waits for the glasses to acknowledge before declaring the stream or session stopped.
    public private(set) var stopGracePeriod: Duration
    /// How long a photo capture may take before ``StreamError/photoCaptureFailed``.
    public private(set) var photoCaptureTimeout: Duration
    /// How long a permission query or request waits for the glasses before ``PermissionError/requestTimeout``.
    public private(set) var permissionTimeout: Duration
    /// The battery level (percent) at or below which a running stream reports ``StreamError/batteryLow``.
    public private(set) var batteryLowThreshold: Int

    /// Creates a configuration, rejecting values that cannot work.
    /// - Throws: ``WearablesConfigurationError`` naming the offending setting.
    public init(
        scheduler: any EventScheduler = DispatchEventScheduler(label: "wearables.scheduler"),
        deviceWaitTimeout: Duration = .seconds(31),
        startTimeout: Duration = .seconds(10),
        stopGracePeriod: Duration = .seconds(2),
        photoCaptureTimeout: Duration = .seconds(10),
        permissionTimeout: Duration = .seconds(60),
        batteryLowThreshold: Int = 5
    ) throws(WearablesConfigurationError) {
        let durations: [(String, Duration)] = [
            ("deviceWaitTimeout", deviceWaitTimeout), ("startTimeout", startTimeout),
            ("stopGracePeriod", stopGracePeriod), ("photoCaptureTimeout", photoCaptureTimeout),
            ("permissionTimeout", permissionTimeout),
        ]
        for (name, value) in durations where value <= .zero || value > .seconds(24 * 3600) {
            throw WearablesConfigurationError(
                setting: name, message: "must be more than 0 s and at most 24 h (got \(value))")
        }
        guard (0...100).contains(batteryLowThreshold) else {
            throw WearablesConfigurationError(
                setting: "batteryLowThreshold", message: "must be a percentage from 0 to 100 (got \(batteryLowThreshold))")
        }
        self.scheduler = scheduler
        self.deviceWaitTimeout = deviceWaitTimeout
        self.startTimeout = startTimeout
        self.stopGracePeriod = stopGracePeriod
        self.photoCaptureTimeout = photoCaptureTimeout
        self.permissionTimeout = permissionTimeout
        self.batteryLowThreshold = batteryLowThreshold
    }

    /// The default configuration: real time, 31 s device wait, 10 s start timeout.
    public static func standard() -> WearablesConfiguration {
        // The defaults are in range by construction.
        do { return try WearablesConfiguration() } catch { preconditionFailure("default configuration rejected: \(error)") }
    }
}
