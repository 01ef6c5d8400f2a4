import Foundation
import GlassesVideo
import Synchronization
import WearablesKit

/// Counters of what the simulated glasses did, for tests and logs.
public struct GlassesStatistics: Sendable, Hashable {
    /// Video samples handed to the link.
    public var samplesSent: UInt64 = 0
    /// Keyframes among them.
    public var keyframesSent: UInt64 = 0
    /// Payload bytes handed to the link.
    public var bytesSent: UInt64 = 0
    /// Samples withheld by faults (drops, zombie, gaps).
    public var samplesWithheld: UInt64 = 0
    /// Samples damaged by faults (corrupt, truncated).
    public var samplesDamaged: UInt64 = 0
    /// Photos delivered.
    public var photosDelivered: UInt64 = 0
    /// Video samples the link dropped for lack of host credit.
    public var droppedForCredit: UInt64 = 0
}

/// What the glasses' camera shows.
public enum CameraFeed: Sendable {
    /// The rendered person (the default): known vitals, ground truth available.
    case rendered
    /// The rendered scene with this image as the face (pulse applied to its skin-coloured pixels).
    case faceImage(FaceImage)
    /// A solid frame of one luma value (a covered lens, a test pattern).
    case solid(luma: UInt8)
    /// Frames of a video file instead of the rendered person, looping (see ``VideoFileFeed``); the file must have
    /// the stream's resolution, and there is no ground truth.
    case videoFile(VideoFileFeed)

    /// Whether the glasses' ground truth describes what this feed shows (only the rendered person, with or
    /// without an image face).
    public var hasGroundTruth: Bool {
        switch self {
        case .rendered, .faceImage: true
        case .solid, .videoFile: false
        }
    }
}

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

        /// Creates options; defaults are 2 Mbit/s HEVC, a 200 ms photo capture of 720×1280 at quality 85.
        public init(hevcBitrate: Int = 2_000_000, photoCaptureDelay: Duration = .milliseconds(200),
                    photoSize: VideoFrameSize = VideoFrameSize(width: 720, height: 1280), photoQuality: Int = 85,
                    deviceType: DeviceType = .simulated, firmwareVersion: String = "sim-1.0",
                    initialState: DeviceState = DeviceState()) {
            self.hevcBitrate = hevcBitrate
            self.photoCaptureDelay = photoCaptureDelay
            self.photoSize = photoSize
            self.photoQuality = photoQuality
            self.deviceType = deviceType
            self.firmwareVersion = firmwareVersion
            self.initialState = initialState
        }
    }

    private struct State {
        var core: GlassesCore
        var link: (any HostLink)?
        var linkGeneration: UInt64 = 0
        var frameGeneration: UInt64 = 0
        var faults = FaultState()
        var stats = GlassesStatistics()
        var lastPts: Int64?
        var lastSendAt: Duration = .zero
        var feed: CameraFeed = .rendered
        var feedScene: SimulatedScene?
        var capturedPhoto: Data?
        var random: SeededRandom
        var logger: (@Sendable (String) -> Void)?
        var sampleObserver: (@Sendable (DeviceMessage) -> Void)?
        var garbageWriter: (@Sendable (Data) -> Bool)?
        var linkLossAction: (@Sendable () -> Void)?
    }

    private struct EncoderSlot {
        var encoder: HEVCEncoder?
        var key: String = ""
        var pendingConfiguration = false
    }

    /// The rendered person and their ground truth.
    public let scene: SimulatedScene
    /// Who the glasses say they are.
    public let info: DeviceInfo
    /// The scheduler driving frames and delays.
    public let scheduler: any EventScheduler
    private let options: Options
    private let epoch: Duration
    private let state: Mutex<State>
    private let encoderSlot = Mutex(EncoderSlot())

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
                               supportedPhotoFormats: [.jpeg])
        self.scheduler = scheduler
        self.options = options
        self.epoch = scheduler.now
        var core = GlassesCore(info: info, state: options.initialState)
        core.hevcBitrate = options.hevcBitrate
        self.state = Mutex(State(core: core, random: SeededRandom(seed: profile.seed, stream: 41)))
    }

    // MARK: Link

    /// Connects the glasses to a host through `link` (the device end); a previous link is closed first.
    /// The glasses answer once the host says hello.
    public func attach(_ link: any HostLink) {
        let (old, generation, stop): ((any HostLink)?, UInt64, Bool) = state.withLock { s in
            let old = s.link
            s.link = link
            s.linkGeneration += 1
            let wasStreaming = s.core.currentConfiguration != nil
            _ = s.core.linkClosed()
            _ = s.core.linkOpened()
            if wasStreaming { s.frameGeneration += 1 }
            return (old, s.linkGeneration, wasStreaming)
        }
        _ = stop
        old?.close()
        log("link attached")
        link.open { [weak self] event in
            self?.linkEvent(event, generation: generation)
        }
    }

    /// Installs a writer for raw bytes below the message layer (a socket transport's hook), used by
    /// ``SimulatedFault/garbageBytes(count:)``; it returns false when it could not write.
    public func setGarbageWriter(_ writer: (@Sendable (Data) -> Bool)?) {
        state.withLock { $0.garbageWriter = writer }
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
    /// The next photo capture fails with `photoCaptureFailed`.
    public func simulateCaptureFailure() {
        apply("next capture fails") { core in
            core.failNextCapture = true
            return []
        }
    }
    /// Uses fixed JPEG bytes for photos (nil: capture from the camera feed).
    public func setCapturedPhoto(_ jpeg: Data?) { state.withLock { $0.capturedPhoto = jpeg } }
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

    /// Injects a fault.
    public func inject(_ fault: SimulatedFault) {
        log("fault: \(fault)")
        switch fault {
        case .linkLoss:
            let (link, action) = state.withLock { ($0.link, $0.linkLossAction) }
            if let action { action() } else { link?.close() }
        case .zombieStream(let on):
            state.withLock { $0.faults.zombie = on }
        case .dropFrames(let count):
            state.withLock { $0.faults.dropRemaining += max(0, count) }
        case .dropKeyframe:
            state.withLock { $0.faults.dropNextKeyframe = true }
        case .corruptSamples(let count):
            state.withLock { $0.faults.corruptRemaining += max(0, count) }
        case .truncateSamples(let count):
            state.withLock { $0.faults.truncateRemaining += max(0, count) }
        case .latency(let latency, let jitter):
            state.withLock { s in
                s.faults.latencyMs = max(0, latency)
                s.faults.jitterMs = max(0, jitter)
            }
        case .duplicateTimestamp:
            state.withLock { $0.faults.duplicateNext = true }
        case .timestampJump(let ms):
            state.withLock { $0.faults.timestampOffsetUs += Int64(ms * 1000) }
        case .frameGap(let ms):
            let until = scheduler.now + .microseconds(Int64(max(0, ms) * 1000))
            state.withLock { $0.faults.skipUntil = until }
        case .deviceFault(let fault, let message):
            let link = state.withLock { $0.link }
            link?.send(.fault(fault, message: message))
        case .burst(let count):
            state.withLock { $0.faults.burst = max(1, count) }
        case .garbageBytes(let count):
            let (writer, bytes): ((@Sendable (Data) -> Bool)?, Data) = state.withLock { s in
                (s.garbageWriter, Data((0..<max(0, count)).map { _ in UInt8(truncatingIfNeeded: s.random.next()) }))
            }
            if let writer, writer(bytes) { return }
            log("garbage bytes need a socket transport's raw writer; none is installed, nothing was sent")
        }
    }

    // MARK: Actions

    private func apply(_ what: String, _ change: (inout GlassesCore) -> [GlassesCore.Action]) {
        let actions = state.withLock { change(&$0.core) }
        log(what)
        perform(actions)
    }

    private func perform(_ actions: [GlassesCore.Action]) {
        for action in actions {
            switch action {
            case .send(let message):
                let link = state.withLock { $0.link }
                link?.send(message)
            case .startFrames(let configuration):
                let generation: UInt64 = state.withLock { s in
                    s.frameGeneration += 1
                    return s.frameGeneration
                }
                encoderSlot.withLock { $0.pendingConfiguration = true }
                log("streaming \(configuration.videoCodec.rawValue) \(configuration.resolution.videoFrameSize) @ \(configuration.frameRate) fps")
                let start = scheduler.now
                scheduler.schedule(after: .zero) { [weak self] in
                    self?.tick(generation: generation, configuration: configuration, start: start, index: 0)
                }
            case .stopFrames:
                state.withLock { $0.frameGeneration += 1 }
            case .capturePhoto(_, let requestID):
                let time = deviceTime
                scheduler.schedule(after: options.photoCaptureDelay) { [weak self] in
                    self?.deliverPhoto(requestID: requestID, at: time)
                }
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

    private func deliverPhoto(requestID: UInt32, at time: Double) {
        let (fixed, feed, feedScene, stillWanted) = state.withLock { s in
            (s.capturedPhoto, s.feed, s.feedScene, s.core.currentConfiguration != nil)
        }
        guard stillWanted else { return }
        let jpeg: Data
        if let fixed {
            jpeg = fixed
        } else {
            let w = Int(options.photoSize.width), h = Int(options.photoSize.height)
            let image: RawVideoImage
            if case .videoFile(let file) = feed {
                // A file feed is photographed at its own size (the frame last streamed), not scaled.
                do { image = try file.currentImage() } catch {
                    log("photo from the video feed failed: \(error.message)")
                    let actions = state.withLock { $0.core.photoFailed(message: "no frame from the video feed: \(error.message)") }
                    perform(actions)
                    return
                }
            } else {
                image = render(feed: feed, feedScene: feedScene, time: time, width: w, height: h)
            }
            jpeg = JPEGEncoder.encode(image, quality: options.photoQuality)
        }
        let actions = state.withLock { s in
            s.stats.photosDelivered += 1
            return s.core.photoDelivered(PhotoData(data: jpeg, format: .jpeg), requestID: requestID)
        }
        log("photo delivered (\(jpeg.count) bytes)")
        perform(actions)
    }

    private func render(feed: CameraFeed, feedScene: SimulatedScene?, time: Double, width: Int, height: Int) -> RawVideoImage {
        switch feed {
        case .rendered: return scene.render(at: time, width: width, height: height)
        case .faceImage: return (feedScene ?? scene).render(at: time, width: width, height: height)
        case .videoFile:
            preconditionFailure("video-file frames come from frameImage(feed:…)")
        case .solid(let luma):
            var data = Data(repeating: luma, count: width * height)
            data.append(Data(repeating: 128, count: width * height / 2))
            return RawVideoImage(width: width, height: height, lumaBytesPerRow: width, chromaBytesPerRow: width, data: data)!
        }
    }

    // MARK: Frames

    private func tick(generation: UInt64, configuration: StreamConfiguration, start: Duration, index: Int) {
        let interval = Duration.seconds(1) / Int(configuration.frameRate)
        let now = scheduler.now
        struct Plan {
            var feed: CameraFeed
            var feedScene: SimulatedScene?
            var skip: Bool
            var burst: Int
        }
        let plan: Plan? = state.withLock { s in
            guard s.frameGeneration == generation, s.link != nil else { return nil }
            var skip = s.faults.zombie
            if let until = s.faults.skipUntil {
                if now < until { skip = true } else { s.faults.skipUntil = nil }
            }
            if skip { s.stats.samplesWithheld += 1 }
            let burst = s.faults.burst
            s.faults.burst = 1
            return Plan(feed: s.feed, feedScene: s.feedScene, skip: skip, burst: burst)
        }
        guard let plan else { return }
        if !plan.skip {
            for _ in 0..<plan.burst {
                emitFrame(configuration: configuration, now: now, plan: (plan.feed, plan.feedScene))
            }
        }
        let next = start + interval * (index + 1)
        scheduler.schedule(after: next - scheduler.now) { [weak self] in
            self?.tick(generation: generation, configuration: configuration, start: start, index: index + 1)
        }
    }

    private func emitFrame(configuration: StreamConfiguration, now: Duration, plan: (CameraFeed, SimulatedScene?)) {
        let time = Self.seconds(now - epoch)
        let size = configuration.resolution.videoFrameSize
        let image: RawVideoImage
        if case .videoFile(let file) = plan.0 {
            do {
                try file.checkSize(width: Int(size.width), height: Int(size.height))
                image = try file.nextImage()
            } catch {
                log("video feed failed: \(error.message)")
                let link = state.withLock { s -> (any HostLink)? in
                    s.frameGeneration += 1
                    return s.link
                }
                link?.send(.fault(.videoStreamingError, message: error.message))
                return
            }
        } else {
            image = render(feed: plan.0, feedScene: plan.1, time: time, width: Int(size.width), height: Int(size.height))
        }
        let ptsBase = Int64((now - epoch).components.seconds) * 1_000_000
            + (now - epoch).components.attoseconds / 1_000_000_000_000
        var messages: [DeviceMessage] = []
        var sample: VideoSample
        switch configuration.videoCodec {
        case .raw:
            sample = VideoSample(presentationTimeUs: ptsBase, isKeyframe: true,
                                 format: .nv12(width: image.width, height: image.height, lumaBytesPerRow: image.lumaBytesPerRow,
                                               chromaBytesPerRow: image.chromaBytesPerRow),
                                 payload: image.data)
        case .hvc1:
            let bitrate = state.withLock { $0.core.bitrate(of: configuration) }
            let result: Result<(EncodedHEVCSample, HEVCCodecConfiguration?), VideoCodecError> = encoderSlot.withLock { slot in
                let key = "\(image.width)x\(image.height)@\(configuration.frameRate)/\(bitrate)"
                do {
                    var newConfig = false
                    if slot.encoder == nil || slot.key != key {
                        slot.encoder = try HEVCEncoder(width: image.width, height: image.height,
                                                       frameRate: Int(configuration.frameRate), bitrate: max(bitrate, 10_000),
                                                       keyframeInterval: Int(configuration.frameRate))
                        slot.key = key
                        newConfig = true
                    }
                    let force = slot.pendingConfiguration || newConfig
                    if slot.pendingConfiguration { newConfig = true }
                    slot.pendingConfiguration = false
                    let out = try slot.encoder!.encode(image, presentationTimeUs: ptsBase, forceKeyframe: force)
                    guard let first = out.first else {
                        throw VideoCodecError(code: .encodeFailed, message: "the encoder returned no sample")
                    }
                    return .success((first, newConfig ? slot.encoder!.codecConfiguration : nil))
                } catch let error as VideoCodecError {
                    slot.encoder = nil
                    return .failure(error)
                } catch {
                    slot.encoder = nil
                    return .failure(VideoCodecError(code: .encodeFailed, message: "\(error)"))
                }
            }
            switch result {
            case .success(let (encoded, config)):
                if let config { messages.append(.codecConfiguration(config)) }
                sample = VideoSample(presentationTimeUs: ptsBase, isKeyframe: encoded.isKeyframe, format: .hevc,
                                     payload: encoded.data)
            case .failure(let error):
                log("encoder failed: \(error)")
                let link = state.withLock { s -> (any HostLink)? in
                    s.frameGeneration += 1
                    return s.link
                }
                link?.send(.fault(.videoStreamingError, message: "the HEVC encoder failed: \(error)"))
                return
            }
        }
        // Faults on the way out.
        let (send, delay, observer, link): (Bool, Duration, (@Sendable (DeviceMessage) -> Void)?, (any HostLink)?) = state.withLock { s in
            var f = s.faults
            var send = true
            if f.dropRemaining > 0 {
                f.dropRemaining -= 1
                send = false
            } else if f.dropNextKeyframe, sample.isKeyframe, configuration.videoCodec == .hvc1 || true {
                f.dropNextKeyframe = false
                send = false
            }
            if send {
                var pts = sample.presentationTimeUs + f.timestampOffsetUs
                if f.duplicateNext, let last = s.lastPts {
                    pts = last
                    f.duplicateNext = false
                }
                sample.presentationTimeUs = pts
                s.lastPts = pts
                if f.corruptRemaining > 0 {
                    f.corruptRemaining -= 1
                    var bytes = [UInt8](sample.payload)
                    let n = max(1, bytes.count / 50)
                    for _ in 0..<n where !bytes.isEmpty {
                        bytes[Int(s.random.next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: s.random.next())
                    }
                    if !bytes.isEmpty { bytes[Int(s.random.next() % UInt64(min(bytes.count, 8)))] ^= 0xFF }
                    sample.payload = Data(bytes)
                    s.stats.samplesDamaged += 1
                } else if f.truncateRemaining > 0 {
                    f.truncateRemaining -= 1
                    let keep = sample.payload.count / 4 + Int(s.random.next() % UInt64(max(1, sample.payload.count / 2)))
                    sample.payload = Data(sample.payload.prefix(keep))
                    s.stats.samplesDamaged += 1
                }
                s.stats.samplesSent += 1
                if sample.isKeyframe { s.stats.keyframesSent += 1 }
                s.stats.bytesSent += UInt64(sample.payload.count)
            } else {
                s.stats.samplesWithheld += 1
            }
            s.faults = f
            var delay = Duration.zero
            if f.latencyMs > 0 || f.jitterMs > 0 {
                let ms = f.latencyMs + f.jitterMs * s.random.unit()
                var at = now + .microseconds(Int64(ms * 1000))
                if at < s.lastSendAt { at = s.lastSendAt }
                s.lastSendAt = at
                delay = at - now
            }
            return (send, delay, s.sampleObserver, s.link)
        }
        if send { messages.append(.videoSample(sample)) }
        guard let link, !messages.isEmpty else { return }
        for m in messages { observer?(m) }
        let outgoing = messages
        if delay <= .zero {
            for m in outgoing { link.send(m) }
        } else {
            scheduler.schedule(after: delay) { for m in outgoing { link.send(m) } }
        }
    }

    // MARK: Helpers

    static func seconds(_ d: Duration) -> Double {
        Double(d.components.seconds) + Double(d.components.attoseconds) * 1e-18
    }

    private func log(_ line: String) {
        let logger = state.withLock { $0.logger }
        logger?("[\(info.identifier) t=\(String(format: "%.3f", deviceTime))s] \(line)")
    }

    static func describe(_ m: HostMessage) -> String {
        switch m {
        case .hello(let v, _): "hello v\(v)"
        case .checkPermission(let p, _): "check permission \(p.rawValue)"
        case .requestPermission(let p, _): "request permission \(p.rawValue)"
        case .startSession: "start session"
        case .stopSession: "stop session"
        case .startStream(let c): "start stream \(c.videoCodec.rawValue) \(c.resolution.rawValue) \(c.frameRate) fps"
        case .stopStream: "stop stream"
        case .capturePhoto(let f, _): "capture photo \(f.rawValue)"
        case .frameCredit(let n): "credit \(n)"
        case .heartbeat(let s): "heartbeat \(s)"
        }
    }
}
