import SmartSpectraInput

/// Counters of a run at an instant, for periodic stats and the summary.
public struct BridgeStats: Sendable, Hashable {
    /// Where every frame went.
    public var accounting = FrameAccounting()
    /// Frames per second arriving from the device, over the last stats interval.
    public var framesPerSecondIn: Double = 0
    /// Frames per second accepted by custom input, over the last stats interval.
    public var framesPerSecondOut: Double = 0
    /// Times custom input was stopped and started for a fresh timeline (pauses over 2 s, new sessions).
    public var inputRestarts = 0
    /// Times the watchdog restarted a stalled stream.
    public var stallRestarts = 0
    /// Times the link was re-established.
    public var reconnects = 0
    /// Times a session the device ended was replaced.
    public var sessionRestarts = 0
    /// Video samples the device reported dropping for lack of link credit (never received).
    public var deviceDroppedFrames: UInt64 = 0
    /// Frames the engine's own queue discarded after accepting them (it fell behind).
    public var engineDroppedFrames: UInt64 = 0
    /// Capture → `sendFrame` accepted, and the link's part: over the last stats interval in `stats`, over the whole
    /// run in the summary; nil when no frame carried timing on the host's clock (not measured).
    public var latency: LatencySummary?
    /// Capture → `sendFrame` accepted for every frame measured since the run began (in `stats` and the summary
    /// alike), in fixed buckets for a histogram; nil when no frame was measured.
    public var latencyBuckets: LatencyBuckets?

    /// Creates zeroed stats.
    public init() {}
}

/// The end of a run, as the summary reports it.
public struct BridgeSummary: Sendable, Hashable {
    /// The run's vitals: the median of each one's stable values (nil where none was stable).
    public var vitals = VitalsSnapshot()
    /// What each of ``vitals`` rests on: how many stable values, and their quartiles.
    public var basis = VitalsBasis()
    /// The simulator's ground truth over the whole run, when simulated (``TruthSpan/wholeRun``: medians of 10 s
    /// means, as the run's values are medians of windows).
    public var truth: VitalsSnapshot?
    /// How the run's pulse agreed with its live reference, when it had one (`--reference lsl:…`).
    public var reference: ReferenceAgreement?
    /// Why ``vitals`` has no pulse rate (nil when it has one).
    public var pulseAbsence: VitalAbsence?
    /// Why ``vitals`` has no breathing rate (nil when it has one).
    public var breathingAbsence: VitalAbsence?
    /// Why ``vitals`` has no HRV value (nil when it has one).
    public var hrvAbsence: VitalAbsence?
    /// Final counters.
    public var stats = BridgeStats()
    /// Stream time covered, in seconds.
    public var durationSeconds: Double = 0
    /// Why the run ended: `duration`, `endOfFile`, `signal`, or a failure kind.
    public var reason: String = "duration"
    /// The failure, when the run ended badly.
    public var failure: BridgeFailure?
    /// What a network stream brought (its protocol, container, codec and size, as last received); nil for glasses
    /// and files, and when no publisher was served.
    public var receivedStream: ReceivedStream?
    /// What the glasses' IMU came to, when it was asked for (``BridgeSettings/motion``); nil otherwise.
    public var motion: MotionSummary?

    /// Creates an empty summary.
    public init() {}

    /// The summary of a run that failed before it could start (a recording that cannot be read, a socket that
    /// cannot be opened): nothing measured, each requested vital absent because no frame reached the engine.
    public static func notStarted(_ failure: BridgeFailure, metrics: MetricSelection) -> BridgeSummary {
        let tracker = VitalsTracker()
        let requested = metrics.metrics
        var summary = BridgeSummary()
        summary.pulseAbsence = tracker.pulseAbsence(requested: requested.contains(.pulseRate))?.noFrameMeasured()
        summary.breathingAbsence = tracker.breathingAbsence(requested: requested.contains(.breathingRate))?.noFrameMeasured()
        summary.hrvAbsence = tracker.hrvAbsence(requested: requested.contains(.hrv))?.noFrameMeasured()
        summary.failure = failure
        summary.reason = failure.kind.rawValue
        return summary
    }
}

/// What a run's IMU (DAT 1.0 Motion, `--motion`) came to: how many samples arrived and, when the head moved enough
/// to tell, how far the IMU's clock is from the video's (`docs/VITALS-ENGINE.md`, *The IMU's clock against the
/// video's*). The engine does not use the IMU for the vitals yet.
public struct MotionSummary: Sendable, Hashable {
    /// IMU samples received.
    public var samples = 0
    /// Frames on which the engine measured the camera's motion (the picture's side of the alignment).
    public var framesMeasured = 0
    /// The IMU's clock minus the video's, seconds: an instant the video stamps `t` the IMU stamps `t + offset`; nil
    /// when it could not be told (``absence`` says why).
    public var clockOffsetSeconds: Double?
    /// The share of the picture's motion the IMU's rotation explains at that offset, 0–1.
    public var fit: Double?
    /// Pixels the picture moves across per radian about the gyroscope's X axis (the camera's focal length in pixels,
    /// signed by the axes' conventions).
    public var pixelsPerRadianAcross: Double?
    /// Pixels the picture moves down per radian about the gyroscope's Y axis.
    public var pixelsPerRadianDown: Double?
    /// Why there is no offset, in words (nil when there is one).
    public var absence: String?
    /// Gyroscope readings the vitals engine took (0 when the backend is not the embedded engine): from the first, it
    /// leaves strong back-and-forth rotation (a nod) out of the pulse's colour at the nod's rhythm and above, and fits
    /// the rest where it explains more than chance (`docs/VITALS-ENGINE.md`, *The wearer's own motion*).
    public var engineReadings = 0
    /// The IMU's clock offset as the vitals engine found it on its own (custom input's timeline, seconds); nil until
    /// it has (meanwhile it reads the IMU at the frames' own times).
    public var engineClockOffsetSeconds: Double?

    /// Creates an empty summary.
    public init() {}
}

/// Something the bridge reports while it runs; formatters turn these into text, NDJSON or CSV.
public enum BridgeEvent: Sendable {
    /// The lifecycle phase changed (`connecting`, `streaming`, `paused`, …), with an optional detail.
    case state(LifecyclePolicy.Phase, detail: String?)
    /// A notable event (restart, reconnect, input restarted for a fresh timeline).
    case notice(String)
    /// Something the person should know before trusting the run (an unmeasured frame rate); shown even without
    /// `--verbose`.
    case warning(String)
    /// An error: a code name and a message a person can act on.
    case error(code: String, message: String)
    /// The engine's validation verdict changed.
    case validation(ValidationStatus)
    /// A metrics payload (only what is new), with its protobuf JSON encoding.
    case metrics(Metrics, json: String)
    /// Periodic counters, the latest vitals, the simulator's truth (simulated runs) and a live reference's heart
    /// rate at this instant (runs with `--reference lsl:…`; its pulse nil while it has no reading near).
    case stats(BridgeStats, vitals: VitalsSnapshot, truth: VitalsSnapshot?, reference: VitalsSnapshot? = nil)
    /// The final summary; nothing follows.
    case summary(BridgeSummary)
}

/// What a network stream (`--device rtmp://…`, `srt://…`, `rtsp://…`, `udp://…`) brought, as the summary reports it.
public struct ReceivedStream: Sendable, Hashable {
    /// The protocol: `rtmp`, `srt`, `rtsp` or `udp`.
    public var transport: String
    /// The container libavformat read (`flv`, `mpegts`, `rtsp`).
    public var container: String
    /// The video codec as libavcodec names it (`h264`, `hevc`).
    public var codec: String
    /// The picture width last received.
    public var width: Int
    /// The picture height last received.
    public var height: Int
    /// Whether the stream also carried audio (ignored).
    public var hasAudio: Bool

    /// Creates a description.
    public init(transport: String, container: String, codec: String, width: Int, height: Int, hasAudio: Bool) {
        self.transport = transport
        self.container = container
        self.codec = codec
        self.width = width
        self.height = height
        self.hasAudio = hasAudio
    }
}
