import Foundation
import GlassesVideo
import Synchronization
import WearablesKit

/// A simulated pair of glasses: the device end of the link protocol, in the spirit of Meta's MockDeviceKit.
///
/// It answers the host's hello, permission, session, stream and photo requests through any ``HostLink``; renders
/// frames of a ``SimulatedScene`` at the configured resolution and frame rate on an ``EventScheduler`` (virtual time
/// with ``ManualScheduler``, real time with ``DispatchEventScheduler``); sends `.raw` as NV12 video range or
/// `.hvc1` through libx265; and lets tests fold, tap, doff, heat, drain, cap bandwidth and inject faults.
/// Presentation times are the scheduler's time since the glasses were created, in microseconds; the scene (and
/// so the ground truth) uses the same clock in seconds.
public final class SimulatedGlasses: Sendable {
    /// Settings fixed at creation.
    public struct Options: Sendable {
        /// HEVC bitrate at 504×896, 30 fps, in bits per second (scaled with pixels per second for other sizes).
        public var hevcBitrate: Int
        /// Time between a photo request and its delivery.
        public var photoCaptureDelay: Duration
        /// Size of captured photos (portrait).
        public var photoSize: VideoFrameSize
        /// JPEG quality 1...100.
        public var photoQuality: Int
        /// The kind of glasses reported.
        public var deviceType: DeviceType
        /// Firmware version reported.
        public var firmwareVersion: String
        /// The device state at creation.
        public var initialState: DeviceState
        /// Worker threads for the HEVC encoder, 1…16 (default 1). Real glasses encode in hardware; in real time a
        /// 720×1280 stream at 24 fps needs more than one core of libx265 on a small machine.
        public var encoderThreads: Int
        /// Whether the HEVC encoder spends CPU on psycho-visual tuning (default true, libx265's `ultrafast`). Off
        /// saves about a third of the encoder's CPU at the same bit rate: for real time on a small machine.
        public var encoderPsychovisual: Bool
        /// Whether the glasses announce an IMU in their hello (default true) and answer `startMotion` with samples.
        public var hasIMU: Bool
        /// The link protocol version the glasses announce in their hello; another value than
        /// `linkProtocolVersion` stands in for glasses on an older or newer protocol (the host refuses the link).
        public var protocolVersion: UInt16
        /// How far the IMU's clock runs ahead of the video's (default zero: one clock, as DAT's sample assumes). A
        /// sample the IMU takes at video time `t` carries `t + motionClockOffset`; negative runs it behind. DAT
        /// documents only the IMU's clock, so a host must not assume the two agree: this lets tests shift it.
        public var motionClockOffset: Duration
        /// Whether the glasses offer DAT 1.0's standalone photo in their hello (default true).
        public var hasStandalonePhoto: Bool
        /// How long the camera takes to warm up for standalone photos (`startPhoto` → `started`; default 150 ms).
        public var photoStartDelay: Duration

        /// Creates options; defaults are 2 Mbit/s HEVC, a 200 ms photo capture of 720×1280 at quality 85.
        public init(hevcBitrate: Int = 2_000_000, photoCaptureDelay: Duration = .milliseconds(200),
                    photoSize: VideoFrameSize = VideoFrameSize(width: 720, height: 1280), photoQuality: Int = 85,
                    deviceType: DeviceType = .simulated, firmwareVersion: String = "sim-1.0",
                    initialState: DeviceState = DeviceState(), protocolVersion: UInt16 = linkProtocolVersion,
                    encoderThreads: Int = 1, encoderPsychovisual: Bool = true, hasIMU: Bool = true,
                    motionClockOffset: Duration = .zero, hasStandalonePhoto: Bool = true,
                    photoStartDelay: Duration = .milliseconds(150)) {
            self.hasIMU = hasIMU
            self.hasStandalonePhoto = hasStandalonePhoto
            self.photoStartDelay = photoStartDelay
            self.motionClockOffset = motionClockOffset
            self.hevcBitrate = hevcBitrate
            self.photoCaptureDelay = photoCaptureDelay
            self.photoSize = photoSize
            self.photoQuality = photoQuality
            self.deviceType = deviceType
            self.firmwareVersion = firmwareVersion
            self.initialState = initialState
            self.protocolVersion = protocolVersion
            self.encoderThreads = encoderThreads
            self.encoderPsychovisual = encoderPsychovisual
        }
    }

    /// Everything that changes, behind one lock.
    struct State {
        var core: GlassesCore
        var link: (any HostLink)?
        var linkGeneration: UInt64 = 0
        var frameGeneration: UInt64 = 0
        /// Bumped whenever the IMU's sampling clock stops or restarts: ticks of an older clock stop.
        var motionGeneration: UInt64 = 0
        /// Bumped when a standalone photo under way is dropped: its remaining chunks are not sent.
        var standalonePhotoGeneration: UInt64 = 0
        var faults = FaultState()
        var stats = GlassesStatistics()
        var lastPts: Int64?
        var lastSendAt: Duration = .zero
        var feed: CameraFeed = .rendered
        var feedScene: SimulatedScene?
        var random: SeededRandom
        var logger: (@Sendable (String) -> Void)?
        var sampleObserver: (@Sendable (DeviceMessage) -> Void)?
        var garbageWriter: GarbageWriter?
        var linkLossAction: (@Sendable () -> Void)?
        var failureHandler: (@Sendable (SimulatorError) -> Void)?
        var feedFailureHandler: (@Sendable (SimulatorError) -> Void)?
    }

    /// The rendered person and their ground truth.
    public let scene: SimulatedScene
    /// Who the glasses say they are.
    public let info: DeviceInfo
    /// The scheduler driving frames and delays.
    public let scheduler: any EventScheduler
    let options: Options
    let epoch: Duration
    let state: Mutex<State>
    let encoder: FrameEncoder

    /// Creates glasses showing a person with `profile`.
    /// - Throws: ``SimulatorError`` `invalidProfile` for an out-of-range profile.
    public init(name: String = "Simulated Glasses", identifier: DeviceIdentifier? = nil,
                profile: SubjectProfile = SubjectProfile(), scheduler: any EventScheduler,
                options: Options = Options()) throws(SimulatorError) {
        self.scene = try SimulatedScene(profile: profile)
        var random = SeededRandom(seed: profile.seed, stream: 40)
        let uuidBytes = (0..<16).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        let uuid = UUID(uuid: (uuidBytes[0], uuidBytes[1], uuidBytes[2], uuidBytes[3], uuidBytes[4], uuidBytes[5],
                               uuidBytes[6], uuidBytes[7], uuidBytes[8], uuidBytes[9], uuidBytes[10], uuidBytes[11],
                               uuidBytes[12], uuidBytes[13], uuidBytes[14], uuidBytes[15]))
        self.info = DeviceInfo(identifier: identifier ?? "sim-\(profile.seed)", name: name, uuid: uuid,
                               deviceType: options.deviceType, firmwareVersion: options.firmwareVersion,
                               supportedCodecs: VideoCodec.allCases, supportedResolutions: StreamingResolution.allCases,
                               supportedFrameRates: StreamConfiguration.supportedFrameRates,
                               supportedPhotoFormats: [.jpeg], protocolVersion: options.protocolVersion,
                               hasIMU: options.hasIMU, hasStandalonePhoto: options.hasStandalonePhoto)
        self.scheduler = scheduler
        self.options = options
        self.encoder = FrameEncoder(threads: options.encoderThreads, psychovisual: options.encoderPsychovisual)
        self.epoch = scheduler.now
        var core = GlassesCore(info: info, state: options.initialState)
        core.hevcBitrate = options.hevcBitrate
        self.state = Mutex(State(core: core, random: SeededRandom(seed: profile.seed, stream: 41)))
    }

    // MARK: Link

    /// Connects the glasses to a host through `link` (the device end); a previous link is closed first.
    /// The glasses answer once the host says hello.
    public func attach(_ link: any HostLink) {
        let (old, generation): ((any HostLink)?, UInt64) = state.withLock { s in
            let old = s.link
            s.link = link
            s.linkGeneration += 1
            // A stream of the previous link ends with it: its frame clock stops (the new host starts its own).
            if s.core.currentConfiguration != nil { s.frameGeneration += 1 }
            s.motionGeneration += 1
            _ = s.core.linkClosed()
            _ = s.core.linkOpened()
            return (old, s.linkGeneration)
        }
        old?.close()
        log("link attached")
        link.open { [weak self] event in
            self?.linkEvent(event, generation: generation)
        }
    }

    /// Installs a writer for raw bytes below the message layer, between frames (a socket transport's hook; a
    /// ``SimulatorServer`` installs one), used by ``SimulatedFault/garbageBytes(count:)``. Without one, garbage
    /// cannot be injected: ``tryInject(_:)`` throws and ``inject(_:)`` reports a failure. The writer throws when it
    /// cannot write (no host connected).
    public func setGarbageWriter(_ writer: GarbageWriter?) {
        state.withLock { $0.garbageWriter = writer }
    }

    /// Whether a raw-byte writer is installed (garbage bytes can be injected).
    public var hasGarbageWriter: Bool { state.withLock { $0.garbageWriter != nil } }

    /// Receives every scheduled scenario event that could not be performed (a fault the link cannot carry); each
    /// is also counted in ``GlassesStatistics/failedEvents`` and logged as an error. `glasses-sim` and the bridge
    /// should end the run with an error when it is called.
    public func setFailureHandler(_ handler: (@Sendable (SimulatorError) -> Void)?) {
        state.withLock { $0.failureHandler = handler }
    }

    /// Receives the error when a video-file feed cannot give its next frame mid-stream: the file is truncated,
    /// cannot be decoded, or its timestamps are broken. By then the frame clock has stopped and the host has heard
    /// a `videoStreamingError` fault with the same message; the file would fail the same way on every later stream,
    /// so `glasses-sim` ends the run with it (exit 65). With a handler installed the glasses log only that the
    /// stream stopped, leaving the message to the handler; without one they log the message. A file whose size is
    /// not the stream's (a host's choice) stops the stream with the fault too, but is not reported here.
    public func setFeedFailureHandler(_ handler: (@Sendable (SimulatorError) -> Void)?) {
        state.withLock { $0.feedFailureHandler = handler }
    }

    /// Reports a scheduled event that failed: counted, logged as an error, and handed to the failure handler.
    func reportFailure(_ error: SimulatorError) {
        let handler = state.withLock { s in
            s.stats.failedEvents += 1
            return s.failureHandler
        }
        log("error: \(error.message)")
        handler?(error)
    }

    /// Installs how a link loss is produced (for example `InProcessLink.sever()`); by default the glasses close
    /// their end of the link.
    public func setLinkLossAction(_ action: (@Sendable () -> Void)?) {
        state.withLock { $0.linkLossAction = action }
    }

    private func linkEvent(_ event: HostLinkEvent, generation: UInt64) {
        let actions: [GlassesCore.Action] = state.withLock { s in
            guard s.linkGeneration == generation else { return [] }
            switch event {
            case .message(let message):
                return s.core.handle(message)
            case .closed:
                s.link = nil
                s.linkGeneration += 1
                return s.core.linkClosed()
            }
        }
        switch event {
        case .message(let m):
            if case .heartbeat = m {} else if case .frameCredit = m {} else { log("host: \(Self.describe(m))") }
        case .closed(let error): log("link closed: \(error)")
        }
        perform(actions)
    }

    // MARK: Device controls (MockDeviceKit style)

    /// The current device state.
    public var deviceState: DeviceState { state.withLock { $0.core.state } }
    /// Whether the glasses are powered.
    public var isPoweredOn: Bool { state.withLock { $0.core.powered } }
    /// Whether a session is active.
    public var isSessionActive: Bool { state.withLock { $0.core.sessionActive } }
    /// The configuration being streamed (after bandwidth adaptation), if a stream is running or paused.
    public var streamConfiguration: StreamConfiguration? { state.withLock { $0.core.currentConfiguration } }
    /// Whether frames are flowing.
    public var isStreaming: Bool { state.withLock { $0.core.isStreaming } }
    /// Counters.
    public var statistics: GlassesStatistics {
        state.withLock { s in
            var stats = s.stats
            stats.droppedForCredit = s.link?.droppedVideoSamples ?? 0
            return stats
        }
    }
    /// Ground truth of the rendered person through now. It describes the rendered person only: while the camera
    /// feed is a video file (or a solid frame) the pixels do not carry it, and ``hasGroundTruth`` is false.
    public var groundTruth: GroundTruth { scene.groundTruth(through: deviceTime) }
    /// Whether ``groundTruth`` describes what the camera currently shows (false for a video-file or solid feed,
    /// whose vitals are unknown).
    public var hasGroundTruth: Bool { state.withLock { $0.feed.hasGroundTruth } }
    /// The device clock in seconds (the scene time of the next frame).
    public var deviceTime: Double { Self.seconds(scheduler.now - epoch) }

    /// Powers the glasses on (a host may connect again).
    public func powerOn() { apply("power on") { $0.powerOn() } }
    /// Powers the glasses off: the stream and session end and the link closes.
    public func powerOff() { apply("power off") { $0.powerOff() } }
    /// The wearer puts the glasses on (a stream paused by doffing resumes).
    public func don() { apply("don") { $0.don() } }
    /// The wearer takes the glasses off (the stream pauses; hosts see `hingesClosed`, as DAT 0.9+ reports).
    public func doff() { apply("doff") { $0.doff() } }
    /// Closes the hinges: the stream stops and the session ends.
    public func fold() { apply("fold") { $0.fold() } }
    /// Opens the hinges (the host must start a new session).
    public func unfold() { apply("unfold") { $0.unfold() } }
    /// A captouch tap: pauses a streaming session, or resumes a paused one.
    public func tap() { apply("captouch tap") { $0.tap() } }
    /// Sets the battery level in percent (nil = unknown); 0 powers the glasses off.
    public func setBatteryLevel(_ level: Int?) { apply("battery \(level.map(String.init) ?? "unknown") %") { $0.setBattery(level) } }
    /// Sets the charging state.
    public func setChargingState(_ charging: ChargingState) { apply("charging \(charging.rawValue)") { $0.setCharging(charging) } }
    /// Sets the thermal level; `.critical` and above stop the stream and end the session.
    public func setThermalLevel(_ level: ThermalLevel) { apply("thermal \(level.rawValue)") { $0.setThermal(level) } }
    /// Sets the current status of a permission on the glasses.
    public func setPermission(_ permission: Permission, _ status: PermissionStatus) {
        apply("permission \(permission.rawValue) \(status.rawValue)") { core in
            core.permissions[permission] = status
            return []
        }
    }
    /// Sets what the wearer answers to the next permission requests.
    public func setPermissionRequestResult(_ permission: Permission, _ status: PermissionStatus) {
        apply("permission request answer \(permission.rawValue) \(status.rawValue)") { core in
            core.requestAnswers[permission] = status
            return []
        }
    }
    /// Caps the stream's bit rate (nil removes the cap); the glasses lower resolution first, then frame rate
    /// (never below 15 fps), and report the effective configuration with `streaming`.
    public func setBandwidthCap(bitsPerSecond cap: Int?) {
        apply("bandwidth cap \(cap.map { "\($0) bit/s" } ?? "off")") { $0.setBandwidthCap(cap) }
    }
    /// The next photo capture fails: a stream photo with `photoCaptureFailed`, a standalone photo with
    /// ``DevicePhotoEvent/captureFailed(requestID:_:message:)`` (as DAT's mock `simulateCaptureFailure()`, one-shot).
    public func simulateCaptureFailure() {
        apply("next capture fails") { core in
            core.failNextCapture = true
            return []
        }
    }
    /// Changes what the camera shows.
    ///
    /// A ``CameraFeed/videoFile(_:)`` feed replaces the rendered person frame by frame; timing, encoding and faults
    /// stay the glasses' own. Its size must be the streamed resolution: while a stream runs, a mismatch is refused
    /// here; a stream started (or adapted) later at another size stops with a `videoStreamingError` fault.
    /// - Throws: ``SimulatorError`` when the feed cannot be used (`invalidFeed` for a video file whose size is not
    ///   the running stream's).
    public func setCameraFeed(_ feed: CameraFeed) throws(SimulatorError) {
        var feedScene: SimulatedScene?
        if case .faceImage(let image) = feed { feedScene = try SimulatedScene(profile: scene.profile, face: image) }
        if case .videoFile(let file) = feed, let size = streamConfiguration?.resolution.videoFrameSize {
            try file.checkSize(width: Int(size.width), height: Int(size.height))
        }
        state.withLock { s in
            s.feed = feed
            s.feedScene = feedScene
        }
        if case .videoFile(let file) = feed {
            log("camera feed: video file \(file.path) (\(file.width)x\(file.height), looping; no ground truth)")
        } else {
            log("camera feed changed")
        }
    }
    /// Changes the rendered person's mean pulse rate from now on.
    public func setPulseRate(_ bpm: Double) {
        scene.setPulseRate(bpm)
        state.withLock { $0.feedScene }?.setPulseRate(bpm)
        log("pulse rate \(bpm) bpm")
    }
    /// Changes the rendered person's mean breathing rate from now on.
    public func setBreathingRate(_ brpm: Double) {
        scene.setBreathingRate(brpm)
        state.withLock { $0.feedScene }?.setBreathingRate(brpm)
        log("breathing rate \(brpm) breaths/min")
    }
    /// Receives a line for every notable thing the glasses do (for `glasses-sim` and debugging).
    public func setLogHandler(_ handler: (@Sendable (String) -> Void)?) { state.withLock { $0.logger = handler } }
    /// Receives every codec configuration and video sample the glasses send, after faults (for `--write`).
    public func setSampleObserver(_ observer: (@Sendable (DeviceMessage) -> Void)?) {
        state.withLock { $0.sampleObserver = observer }
    }


    // MARK: Actions

    func apply(_ what: String, _ change: (inout GlassesCore) -> [GlassesCore.Action]) {
        let actions = state.withLock { change(&$0.core) }
        log(what)
        perform(actions)
    }

    func perform(_ actions: [GlassesCore.Action]) {
        for action in actions {
            switch action {
            case .send(let message):
                let link = state.withLock { $0.link }
                link?.send(message)
            case .startFrames(let configuration):
                startFrames(configuration)
            case .stopFrames:
                state.withLock { $0.frameGeneration += 1 }
            case .capturePhoto(_, let requestID):
                schedulePhoto(requestID: requestID)
            case .startMotion(let rate):
                startMotion(rate)
            case .stopMotion:
                state.withLock { $0.motionGeneration += 1 }
            case .startPhotoCapability:
                scheduler.schedule(after: options.photoStartDelay) { [weak self] in
                    self?.apply("standalone photo started") { $0.photoStartResolved() }
                }
            case .takeStandalonePhoto(let resolution, let quality, let requestID):
                takeStandalonePhoto(resolution, quality, requestID: requestID)
            case .refuseStandalonePhoto(let requestID, let message):
                refuseStandalonePhoto(requestID: requestID, message: message)
            case .abandonStandalonePhoto:
                state.withLock { $0.standalonePhotoGeneration += 1 }
            case .closeLink:
                let link = state.withLock { s -> (any HostLink)? in
                    let l = s.link
                    s.link = nil
                    s.linkGeneration += 1
                    return l
                }
                link?.close()
            }
        }
    }

    // MARK: Helpers

    static func seconds(_ d: Duration) -> Double {
        Double(d.components.seconds) + Double(d.components.attoseconds) * 1e-18
    }

    func log(_ line: String) {
        let logger = state.withLock { $0.logger }
        logger?("[\(info.identifier) t=\(String(format: "%.3f", deviceTime))s] \(line)")
    }

    private static func describe(generation: UInt32?) -> String {
        generation.map { " (generation \($0))" } ?? ""
    }

    static func describe(_ m: HostMessage) -> String {
        switch m {
        case .hello(let v, _): "hello v\(v)"
        case .checkPermission(let p, _): "check permission \(p.rawValue)"
        case .requestPermission(let p, _): "request permission \(p.rawValue)"
        case .startSession: "start session"
        case .stopSession: "stop session"
        case .startStream(let c, let g):
            "start stream \(c.videoCodec.rawValue) \(c.resolution.rawValue) \(c.frameRate) fps\(describe(generation: g))"
        case .stopStream(let g): "stop stream\(describe(generation: g))"
        case .capturePhoto(let f, _): "capture photo \(f.rawValue)"
        case .frameCredit(let n): "credit \(n)"
        case .heartbeat(let s, _): "heartbeat \(s)"
        case .startMotion(let rate): "start motion \(rate.hertz) Hz"
        case .stopMotion: "stop motion"
        case .startPhoto: "start standalone photo"
        case .stopPhoto: "stop standalone photo"
        case .standalonePhoto(let resolution, let quality, let id): "standalone photo \(resolution.rawValue) \(quality.rawValue) (request \(id))"
        }
    }
}
