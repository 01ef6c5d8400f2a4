import Foundation
import WearablesKit

/// The pure behaviour of a pair of simulated glasses: one mutating method per event, each returning the actions
/// the owner (``SimulatedGlasses``) performs outside its lock. No I/O, no time, no rendering.
struct GlassesCore: Sendable {
    /// What the owner must do.
    enum Action: Sendable, Equatable {
        /// Send a message to the host.
        case send(DeviceMessage)
        /// Begin (or re-begin, after a pause or a configuration change) emitting frames with this configuration.
        case startFrames(StreamConfiguration)
        /// Stop emitting frames (pause or stop).
        case stopFrames
        /// Capture a photo and deliver it after the capture delay.
        case capturePhoto(PhotoCaptureFormat, requestID: UInt32)
        /// Close the link (power off).
        case closeLink
        /// Begin (or re-begin at another rate) emitting IMU samples.
        case startMotion(MotionSamplingRate)
        /// Stop emitting IMU samples.
        case stopMotion
        /// Warm the camera up for standalone photos; ``photoStartResolved()`` follows after the start delay.
        case startPhotoCapability
        /// Take a standalone photo and send it in chunks (``standalonePhotoSent(requestID:)`` at the end).
        case takeStandalonePhoto(PhotoResolution, PhotoQuality, requestID: UInt32)
        /// Refuse the capture after the camera's short attempt (about 100 ms on real glasses).
        case refuseStandalonePhoto(requestID: UInt32, message: String)
        /// Drop any standalone photo under way (its chunks stop).
        case abandonStandalonePhoto
    }

    /// The stream as the glasses see it.
    enum StreamPhase: Sendable, Equatable {
        case idle
        case streaming(StreamConfiguration)
        /// Paused by the wearer (tap), by taking the glasses off, or by a photo capture.
        case paused(StreamConfiguration)
    }

    /// Why the stream is paused; the stream resumes only when every reason is gone.
    struct PauseReasons: OptionSet, Sendable, Hashable {
        let rawValue: UInt8
        static let tap = PauseReasons(rawValue: 1)
        static let doffed = PauseReasons(rawValue: 2)
        static let photo = PauseReasons(rawValue: 4)
    }

    private(set) var info: DeviceInfo
    private(set) var state: DeviceState
    private(set) var powered = true
    private(set) var linkOpen = false
    private(set) var helloDone = false
    private(set) var sessionActive = false
    private(set) var stream: StreamPhase = .idle
    private(set) var pauses: PauseReasons = []
    /// The configuration the host asked for.
    private(set) var requested: StreamConfiguration?
    /// The stream generation of the latest `startStream` or `stopStream` on this link (nil when it carried none, or
    /// before any); every stream event echoes it, so the host can tell which request an event answers.
    private(set) var streamGeneration: UInt32?
    /// Permission status per permission, and the answer the wearer gives to a request.
    var permissions: [Permission: PermissionStatus] = [.camera: .granted, .microphone: .granted]
    var requestAnswers: [Permission: PermissionStatus] = [.camera: .granted, .microphone: .granted]
    /// A cap on the stream's bit rate (bits per second), if any.
    private(set) var bandwidthCap: Int?
    /// The HEVC bitrate (bits per second).
    var hevcBitrate: Int = 2_000_000
    /// Whether the next photo capture fails.
    var failNextCapture = false
    /// The IMU's sampling rate while it runs (nil: stopped).
    private(set) var motionRate: MotionSamplingRate?
    /// The standalone photo capability: starting (warming up), started, and the capture under way.
    private(set) var photoStarting = false
    private(set) var photoStarted = false
    private(set) var photoCapture: UInt32?

    init(info: DeviceInfo, state: DeviceState) {
        self.info = info
        self.state = state
    }

    var isStreaming: Bool {
        if case .streaming = stream { return true }
        return false
    }

    var currentConfiguration: StreamConfiguration? {
        switch stream {
        case .idle: nil
        case .streaming(let c), .paused(let c): c
        }
    }

    // MARK: Link

    /// A link to a host opened.
    mutating func linkOpened() -> [Action] {
        linkOpen = true
        helloDone = false
        return []
    }

    /// The link closed: the session and stream end silently.
    mutating func linkClosed() -> [Action] {
        linkOpen = false
        helloDone = false
        streamGeneration = nil
        sessionActive = false
        pauses = []
        let wasActive = stream != .idle
        stream = .idle
        return (wasActive ? [.stopFrames] : []) + endMotion(report: false) + endPhoto(report: false)
    }

    // MARK: Host messages

    mutating func handle(_ message: HostMessage) -> [Action] {
        guard powered else { return [] }
        switch message {
        case .hello:
            helloDone = true
            var s = state
            s.linkState = .connected
            state = s
            return [.send(.hello(info)), .send(.deviceState(state))]
        case .checkPermission(let p, let id):
            return [.send(.permission(p, permissions[p] ?? .denied, requestID: id))]
        case .requestPermission(let p, let id):
            let answer = requestAnswers[p] ?? .denied
            permissions[p] = answer
            return [.send(.permission(p, answer, requestID: id))]
        case .startSession:
            if state.hingeState == .closed {
                return [.send(.session(.ended(reason: "hinges closed")))]
            }
            if state.thermalLevel >= .critical {
                return [.send(.session(.ended(reason: "thermal critical")))]
            }
            sessionActive = true
            var actions: [Action] = [.send(.session(.started))]
            if state.donState == .doffed { actions.append(.send(.session(.paused))) }
            return actions
        case .stopSession:
            let actions = endStream(report: true) + endMotion(report: true) + endPhoto(report: true)
            let wasActive = sessionActive
            sessionActive = false
            return actions + (wasActive ? [.send(.session(.ended(reason: "stopped by host")))] : [])
        case .startStream(let configuration, let generation):
            streamGeneration = generation
            return startStream(configuration)
        case .stopStream(let generation):
            streamGeneration = generation
            return endStream(report: true, always: true)
        case .capturePhoto(let format, let id):
            guard case .streaming(let c) = stream, !pauses.contains(.photo) else {
                return [.send(.fault(.photoCaptureFailed, message: "no stream is streaming; the camera cannot take a photo now"))]
            }
            if format != .jpeg {
                return [.send(.fault(.photoCaptureFailed, message: "the simulated glasses capture JPEG only"))]
            }
            if failNextCapture {
                failNextCapture = false
                return [.send(.fault(.photoCaptureFailed, message: "simulated capture failure"))]
            }
            pauses.insert(.photo)
            stream = .paused(c)
            return [.stopFrames, streamEvent(.paused), .capturePhoto(format, requestID: id)]
        case .frameCredit, .heartbeat:
            return []
        case .startMotion(let rate):
            guard sessionActive, info.hasIMU else {
                motionRate = nil
                return [.stopMotion, .send(.motion(.unavailable))]
            }
            motionRate = rate
            return [.startMotion(rate), .send(.motion(.started(rate)))]
        case .stopMotion:
            return endMotion(report: true, always: true)
        case .startPhoto:
            guard sessionActive, info.hasStandalonePhoto else {
                return [.send(.photoCapability(.unavailable(.serviceUnavailable, message: "no session, or no standalone photo on these glasses")))]
            }
            guard permissions[.camera] == .granted else {
                return [.send(.photoCapability(.unavailable(.permissionDenied, message: "camera permission denied")))]
            }
            guard !photoStarted else { return [.send(.photoCapability(.started))] }
            guard !photoStarting else { return [] }
            photoStarting = true
            return [.startPhotoCapability]
        case .stopPhoto:
            return endPhoto(report: true, always: true)
        case .standalonePhoto(let resolution, let quality, let id):
            guard photoStarted else {
                return [.send(.photoCapability(.captureFailed(requestID: id, .captureFailure, message: "the photo capability is not started")))]
            }
            guard photoCapture == nil else {
                return [.send(.photoCapability(.captureFailed(requestID: id, .busy, message: "a capture is in progress")))]
            }
            if isStreaming {
                // Stream and photo compete for the camera: a running stream blocks standalone photos.
                return [.refuseStandalonePhoto(requestID: id, message: "the camera is streaming video: stop the stream before a standalone photo")]
            }
            if failNextCapture {
                failNextCapture = false
                return [.refuseStandalonePhoto(requestID: id, message: "simulated capture failure")]
            }
            photoCapture = id
            // A transfer stops the IMU, and nothing brings it back (what Meta's sample app records of real glasses).
            return endMotion(report: true) + [.takeStandalonePhoto(resolution, quality, requestID: id)]
        }
    }

    /// The camera warmed up for standalone photos (after the start delay).
    mutating func photoStartResolved() -> [Action] {
        guard photoStarting else { return [] }
        photoStarting = false
        photoStarted = true
        return [.send(.photoCapability(.started))]
    }

    /// The last chunk of the standalone photo `requestID` went out.
    mutating func standalonePhotoSent(requestID: UInt32) -> [Action] {
        if photoCapture == requestID { photoCapture = nil }
        return []
    }

    /// Stops the standalone photo capability (a capture under way is dropped); with `report` the host hears
    /// `stopped` (when it was active, or `always`).
    private mutating func endPhoto(report: Bool, always: Bool = false) -> [Action] {
        let wasActive = photoStarted || photoStarting
        let capturing = photoCapture != nil
        photoStarted = false
        photoStarting = false
        photoCapture = nil
        var actions: [Action] = capturing ? [.abandonStandalonePhoto] : []
        if report && (wasActive || always) { actions.append(.send(.photoCapability(.stopped))) }
        return actions
    }

    /// Stops the IMU: the sampling clock stops and, with `report`, the host hears `stopped` (when it ran, or `always`).
    private mutating func endMotion(report: Bool, always: Bool = false) -> [Action] {
        let wasRunning = motionRate != nil
        motionRate = nil
        var actions: [Action] = wasRunning ? [.stopMotion] : []
        if report && (wasRunning || always) { actions.append(.send(.motion(.stopped))) }
        return actions
    }

    /// The photo was delivered: resume video.
    mutating func photoDelivered(_ photo: PhotoData, requestID: UInt32) -> [Action] {
        var actions: [Action] = [.send(.photo(photo, requestID: requestID))]
        pauses.remove(.photo)
        actions += resumeIfClear()
        return actions
    }

    /// The photo could not be captured: report `photoCaptureFailed` and resume video.
    mutating func photoFailed(message: String) -> [Action] {
        var actions: [Action] = [.send(.fault(.photoCaptureFailed, message: message))]
        pauses.remove(.photo)
        actions += resumeIfClear()
        return actions
    }

    /// A stream event for the host, echoing the latest stream generation.
    private func streamEvent(_ event: DeviceStreamEvent) -> Action {
        .send(.stream(event, generation: streamGeneration))
    }

    private mutating func startStream(_ configuration: StreamConfiguration) -> [Action] {
        guard sessionActive else {
            return [.send(.fault(.internalError, message: "no session is active; start a session first")),
                    streamEvent(.stopped)]
        }
        if permissions[.camera] != .granted {
            return [.send(.fault(.permissionDenied, message: "camera permission is denied on the glasses")),
                    streamEvent(.stopped)]
        }
        var actions: [Action] = []
        if stream != .idle { actions += [.stopFrames] }
        requested = configuration
        let effective = adapted(configuration)
        actions.append(streamEvent(.starting(effective)))
        if let audio = configuration.audioCodec, !Self.recordsAudio(audio) {
            // The video goes on without the audio asked for.
            actions.append(.send(.fault(.audioStreamingError, message:
                "the simulated glasses record 1 or 2 channels, not \(audio.numberOfChannels); streaming video without audio")))
        }
        if pauses.isEmpty {
            stream = .streaming(effective)
            actions += [streamEvent(.streaming(effective)), .startFrames(effective)]
        } else {
            stream = .paused(effective)
            actions.append(streamEvent(.paused))
        }
        return actions
    }

    private mutating func endStream(report: Bool, always: Bool = false) -> [Action] {
        let wasActive = stream != .idle
        stream = .idle
        requested = nil
        pauses.remove(.photo)
        var actions: [Action] = wasActive ? [.stopFrames] : []
        if report && (wasActive || always) { actions.append(streamEvent(.stopped)) }
        return actions
    }

    private mutating func pause(_ reason: PauseReasons) -> [Action] {
        let wasClear = pauses.isEmpty
        pauses.insert(reason)
        guard wasClear, case .streaming(let c) = stream else { return [] }
        stream = .paused(c)
        var actions: [Action] = [.stopFrames, streamEvent(.paused)]
        if reason != .photo { actions.append(.send(.session(.paused))) }
        return actions
    }

    private mutating func resume(_ reason: PauseReasons) -> [Action] {
        guard pauses.contains(reason) else { return [] }
        pauses.remove(reason)
        return resumeIfClear(sessionEvent: reason != .photo)
    }

    private mutating func resumeIfClear(sessionEvent: Bool = false) -> [Action] {
        guard pauses.isEmpty, case .paused(let c) = stream else { return [] }
        stream = .streaming(c)
        var actions: [Action] = []
        if sessionEvent { actions.append(.send(.session(.resumed))) }
        return actions + [streamEvent(.streaming(c)), .startFrames(c)]
    }

    // MARK: Wearer and environment

    private mutating func setState(_ change: (inout DeviceState) -> Void) -> [Action] {
        var s = state
        change(&s)
        guard s != state else { return [] }
        state = s
        return linkOpen && helloDone && powered ? [.send(.deviceState(s))] : []
    }

    mutating func powerOff() -> [Action] {
        guard powered else { return [] }
        var actions: [Action] = []
        if stream != .idle { actions.append(.stopFrames) }
        actions += endMotion(report: false) + endPhoto(report: false)
        stream = .idle
        sessionActive = false
        pauses = []
        powered = false
        actions.append(.closeLink)
        return actions
    }

    mutating func powerOn() -> [Action] {
        powered = true
        return []
    }

    mutating func don() -> [Action] {
        setState { $0.donState = .donned } + (sessionActive ? resume(.doffed) : [])
    }

    mutating func doff() -> [Action] {
        let actions = setState { $0.donState = .doffed }
        if sessionActive { return actions + pause(.doffed) }
        pauses.insert(.doffed)
        return actions
    }

    /// Folding closes the hinges: the stream stops and the session ends, as when real glasses drop the radio link.
    mutating func fold() -> [Action] {
        var actions = setState { $0.hingeState = .closed }
        actions += endStream(report: true) + endMotion(report: true) + endPhoto(report: true)
        if sessionActive {
            sessionActive = false
            actions.append(.send(.session(.ended(reason: "hinges closed"))))
        }
        pauses = []
        return actions
    }

    /// Unfolding opens the hinges; it does not restart a session.
    mutating func unfold() -> [Action] {
        setState { $0.hingeState = .open }
    }

    /// A captouch tap toggles a wearer pause.
    mutating func tap() -> [Action] {
        guard sessionActive else { return [] }
        if pauses.contains(.tap) { return resume(.tap) }
        return pause(.tap)
    }

    mutating func setBattery(_ level: Int?) -> [Action] {
        let clamped = level.map { min(max($0, 0), 100) }
        var actions = setState { $0.batteryLevel = clamped }
        if let clamped, clamped == 0 { actions += powerOff() }
        return actions
    }

    mutating func setCharging(_ charging: ChargingState) -> [Action] {
        setState { $0.chargingState = charging }
    }

    /// Thermal level; at `.critical` and above the glasses end the stream and session to cool down.
    mutating func setThermal(_ level: ThermalLevel) -> [Action] {
        var actions = setState { $0.thermalLevel = level }
        if level >= .critical, sessionActive {
            actions.append(.send(.fault(.thermalHot, message: "the glasses are too hot (\(level.rawValue)); the camera stopped")))
            actions += endStream(report: true) + endMotion(report: true) + endPhoto(report: true)
            sessionActive = false
            pauses = []
            actions.append(.send(.session(.ended(reason: "thermal \(level.rawValue)"))))
        }
        return actions
    }

    /// The stream's bandwidth cap changed: adapt the running stream if needed.
    mutating func setBandwidthCap(_ cap: Int?) -> [Action] {
        bandwidthCap = cap
        guard let requested, let current = currentConfiguration else { return [] }
        let effective = adapted(requested)
        guard effective != current else { return [] }
        if case .streaming = stream {
            stream = .streaming(effective)
            return [.stopFrames, streamEvent(.streaming(effective)), .startFrames(effective)]
        }
        stream = .paused(effective)
        return []
    }

    // MARK: Adaptation

    /// Bits per second a configuration needs.
    func bitrate(of c: StreamConfiguration) -> Int {
        switch c.videoCodec {
        case .raw:
            let s = c.resolution.videoFrameSize
            return Int(s.width * s.height) * 12 * Int(c.frameRate)
        case .hvc1:
            // The encoder's rate scales with pixels per second relative to medium at 30 fps.
            let s = c.resolution.videoFrameSize
            let ratio = Double(s.width * s.height * c.frameRate) / Double(504 * 896 * 30)
            return Int(Double(hevcBitrate) * ratio)
        }
    }

    /// The configuration the glasses actually stream under the bandwidth cap: lower resolution first, then frame
    /// rate, never below 15 fps (or the requested rate if that is lower).
    /// Whether the simulated microphones can give `codec`: 1 or 2 channels, at any of DAT's rates.
    static func recordsAudio(_ codec: AudioCodec) -> Bool {
        (1...2).contains(codec.numberOfChannels)
    }

    /// The audio the current stream records, if it asked for audio the microphones can give.
    var recordedAudio: AudioCodec? {
        guard let audio = requested?.audioCodec, Self.recordsAudio(audio) else { return nil }
        return audio
    }

    func adapted(_ requested: StreamConfiguration) -> StreamConfiguration {
        guard let cap = bandwidthCap else { return requested }
        let resolutions: [StreamingResolution] = [.high, .medium, .low]
        let startIndex = resolutions.firstIndex(of: requested.resolution) ?? 0
        let floorRate = min(requested.frameRate, 15)
        let rates = StreamConfiguration.supportedFrameRates.filter { $0 <= requested.frameRate && $0 >= floorRate }
            .sorted(by: >)
        var candidate = requested
        for resolution in resolutions[startIndex...] {
            candidate = (try? StreamConfiguration.validated(videoCodec: requested.videoCodec, resolution: resolution,
                                                  frameRate: requested.frameRate)) ?? requested
            if bitrate(of: candidate) <= cap { return candidate }
        }
        for rate in rates {
            candidate = (try? StreamConfiguration.validated(videoCodec: requested.videoCodec, resolution: .low, frameRate: rate))
                ?? candidate
            if bitrate(of: candidate) <= cap { return candidate }
        }
        return candidate
    }
}
