import Foundation
import Synchronization
import WearablesKit

/// Serves the link protocol (`docs/PROTOCOL.md`) to one host over one link, on behalf of a ``RelayDATClient``: the
/// device's identity and state, session and stream events, errors, codec configurations and samples (HEVC passed on
/// byte for byte), photos; and the host's requests, carried out through DAT.
///
/// The device end of the link (a ``HostLink``) enforces credit, heartbeats and closing; the server answers the
/// host's hello once DAT lists a device, and stops the camera and the session when the host goes.
public final class RelayLinkServer: Sendable {
    /// What the server passed on so far.
    public struct Counters: Sendable, Hashable {
        /// Video samples handed to the link (the link drops those the host has no credit for: see
        /// ``HostLink/droppedVideoSamples``).
        public var samplesSent: UInt64 = 0
        /// Codec configurations sent.
        public var codecConfigurationsSent: UInt64 = 0
        /// Photos sent.
        public var photosSent: UInt64 = 0
        /// Stream errors passed on.
        public var faultsSent: UInt64 = 0
        /// Events DAT reported in a form the link cannot carry (an unknown configuration), skipped.
        public var eventsSkipped: UInt64 = 0
        /// IMU samples passed on.
        public var motionSamplesSent: UInt64 = 0
        /// Audio samples passed on.
        public var audioSamplesSent: UInt64 = 0
    }

    private struct State {
        var helloReceived = false
        var helloSent = false
        var closed = false
        var closeReason: LinkError?
        var lastParameterSets: RelayParameterSets?
        var device: RelayDeviceInfo?
        var deviceState: RelayDeviceState?
        var counters = Counters()
    }

    /// The device end of the link to the host.
    public let link: any HostLink
    private let client: RelayDATClient
    private let clock: any RelayClock
    private let onClose: @Sendable (LinkError) -> Void
    private let onHello: @Sendable () -> Void
    private let state = Mutex(State())

    /// Creates a server; nothing happens until ``open()``.
    /// - Parameters:
    ///   - clock: the time line of the link's scheduler (``SchedulerRelayClock`` over it): every sample's capture and
    ///     send times are read on it, and the host relates that clock to its own by heartbeat exchange.
    ///   - onClose: called once when the link to the host has closed (after the client was told).
    ///   - onHello: called once when the host says hello: from then on it is served (a host that closes before,
    ///     such as a listening bridge that turns a second device away as busy, never was).
    public init(link: any HostLink, client: RelayDATClient, clock: any RelayClock,
                onClose: @escaping @Sendable (LinkError) -> Void = { _ in },
                onHello: @escaping @Sendable () -> Void = {}) {
        self.link = link
        self.client = client
        self.clock = clock
        self.onClose = onClose
        self.onHello = onHello
    }

    /// What was passed on so far.
    public var counters: Counters { state.withLock { $0.counters } }

    /// Whether the host's link has closed.
    public var isClosed: Bool { state.withLock { $0.closed } }

    /// Whether the host said hello (it was served, not only connected).
    public var hostSaidHello: Bool { state.withLock { $0.helloReceived } }

    /// Video samples the link carried to the host: those handed to it less those it dropped for lack of credit.
    public var samplesDelivered: UInt64 {
        let sent = counters.samplesSent, dropped = link.droppedVideoSamples
        return sent > dropped ? sent - dropped : 0
    }

    /// Why the link closed, once it has.
    public var closeReason: LinkError? { state.withLock { $0.closeReason } }

    /// Whether the host turned the relay away before it said hello (a wrong token, another protocol version):
    /// trying again would fail the same way.
    public var wasRefused: Bool {
        state.withLock { !$0.helloReceived && $0.closeReason?.code == .incompatible }
    }

    /// Starts serving: takes the client's events and opens the link.
    public func open() {
        state.withLock { state in
            state.device = client.currentDevice
            state.deviceState = client.currentDeviceState
        }
        client.setEventHandler { [weak self] event in self?.relay(event) }
        link.open { [weak self] event in
            guard let self else { return }
            switch event {
            case .message(let message): self.received(message)
            case .closed(let error): self.linkClosed(error)
            }
        }
    }

    /// Closes the link to the host.
    public func close() {
        link.close()
    }

    // MARK: Host to DAT

    private func received(_ message: HostMessage) {
        switch message {
        case .hello:
            let first = state.withLock { state -> Bool in
                defer { state.helloReceived = true }
                return !state.helloReceived
            }
            if first { onHello() }
            sendHelloIfReady()
        case .checkPermission(let permission, let requestID):
            client.handle(.checkPermission(permission: permission.rawValue, requestID: requestID))
        case .requestPermission(let permission, let requestID):
            client.handle(.requestPermission(permission: permission.rawValue, requestID: requestID))
        case .startSession:
            client.handle(.startSession)
        case .stopSession:
            client.handle(.stopSession)
        case .startStream(let configuration, let generation):
            client.handle(.startStream(RelayStreamSettings(
                codec: configuration.videoCodec.rawValue, resolution: configuration.resolution.rawValue,
                frameRate: configuration.frameRate,
                audio: configuration.audioCodec.map { RelayAudioSettings(sampleRate: $0.sampleRate.hertz, channels: $0.numberOfChannels) }),
                generation: generation))
        case .stopStream(let generation):
            client.handle(.stopStream(generation: generation))
        case .capturePhoto(let format, let requestID):
            client.handle(.capturePhoto(format: format.rawValue, requestID: requestID))
        case .frameCredit, .heartbeat:
            break  // the link end keeps credit and liveness
        case .startMotion(let rate):
            client.handle(.startMotion(rate: Self.rateName(rate)))
        case .stopMotion:
            client.handle(.stopMotion)
        case .startPhoto:
            // The relay does not forward DAT's standalone photo (its hello does not offer it): a host that asks
            // anyway is told so.
            send(.photoCapability(.unavailable(.serviceUnavailable, message: "the relay does not forward standalone photos")))
        case .stopPhoto:
            send(.photoCapability(.stopped))
        case .standalonePhoto(_, _, let requestID):
            send(.photoCapability(.captureFailed(
                requestID: requestID, .serviceUnavailable, message: "the relay does not forward standalone photos")))
        }
    }

    private func linkClosed(_ error: LinkError) {
        let first = state.withLock { state -> Bool in
            defer {
                state.closed = true
                state.closeReason = state.closeReason ?? error
            }
            return !state.closed
        }
        guard first else { return }
        client.setEventHandler(nil)
        client.hostLeft()
        onClose(error)
    }

    // MARK: DAT to host

    private func relay(_ event: RelayEvent) {
        switch event {
        case .deviceAvailable(let device):
            state.withLock { $0.device = device }
            sendHelloIfReady()
        case .deviceUnavailable:
            let known = state.withLock { state -> RelayDeviceState? in
                state.deviceState?.linkState = "disconnected"
                return state.helloSent ? state.deviceState : nil
            }
            if let known { send(.deviceState(Self.deviceState(known))) }
        case .deviceState(let deviceState):
            let helloSent = state.withLock { state -> Bool in
                state.deviceState = deviceState
                return state.helloSent
            }
            if helloSent { send(.deviceState(Self.deviceState(deviceState))) }
        case .permission(let name, let granted, let requestID):
            guard let permission = Permission(rawValue: name) else { return skip() }
            send(.permission(permission, granted ? .granted : .denied, requestID: requestID))
        case .session(let sessionEvent):
            switch sessionEvent {
            case .started: send(.session(.started))
            case .paused: send(.session(.paused))
            case .resumed: send(.session(.resumed))
            case .ended(let reason): send(.session(.ended(reason: reason)))
            }
        case .stream(let streamEvent, let generation):
            // The generation of the host's start or stop the DAT client was carrying out, echoed as glasses do.
            switch streamEvent {
            case .starting(let settings):
                guard let configuration = Self.configuration(settings) else { return skip() }
                send(.stream(.starting(configuration), generation: generation))
            case .streaming(let settings):
                guard let configuration = Self.configuration(settings) else { return skip() }
                send(.stream(.streaming(configuration), generation: generation))
            case .paused: send(.stream(.paused, generation: generation))
            case .stopped: send(.stream(.stopped, generation: generation))
            }
        case .fault(let name, let message):
            state.withLock { $0.counters.faultsSent += 1 }
            send(.fault(Self.fault(named: name), message: message))
        case .video(let frame):
            forward(frame)
        case .photo(let data, let name, let requestID):
            guard let format = PhotoCaptureFormat(rawValue: name) else { return skip() }
            state.withLock { $0.counters.photosSent += 1 }
            send(.photo(PhotoData(data: data, format: format), requestID: requestID))
        case .motion(.started(let name)):
            guard let rate = Self.motionRates.first(where: { $0.1 == name })?.0 else { return skip() }
            send(.motion(.started(rate)))
        case .motion(.stopped):
            send(.motion(.stopped))
        case .motion(.unavailable):
            send(.motion(.unavailable))
        case .motionSamples(let samples):
            state.withLock { $0.counters.motionSamplesSent += UInt64(samples.count) }
            send(.motionSamples(samples.map(Self.motionSample)))
        case .audio(let frame):
            guard let rate = AudioSampleRate(hertz: frame.sampleRate) else { return skip() }
            let sample = AudioSample(presentationTimeUs: frame.presentationTimeUs, sampleRate: rate, channels: frame.channels)
            // What DAT gave must also be what the link carries (channels, whole frames, at most a second).
            guard sample.problem == nil, sample.channels == frame.channels.count else { return skip() }
            state.withLock { $0.counters.audioSamplesSent += 1 }
            send(.audioSample(sample))
        }
    }

    private func forward(_ frame: RelayVideoFrame) {
        switch frame.content {
        case .hevc(let accessUnit, let isKeyframe, let sets):
            let changed = state.withLock { state -> Bool in
                guard state.lastParameterSets != sets else { return false }
                state.lastParameterSets = sets
                state.counters.codecConfigurationsSent += 1
                return true
            }
            if changed {
                send(.codecConfiguration(HEVCCodecConfiguration(
                    videoParameterSets: sets.vps, sequenceParameterSets: sets.sps, pictureParameterSets: sets.pps,
                    width: sets.width, height: sets.height)))
            }
            sendSample(VideoSample(
                presentationTimeUs: frame.presentationTimeUs, isKeyframe: isKeyframe, format: .hevc,
                payload: accessUnit), frame: frame)
        case .nv12(let width, let height, let luma, let chroma, let data):
            sendSample(VideoSample(
                presentationTimeUs: frame.presentationTimeUs, isKeyframe: true,
                format: .nv12(width: width, height: height, lumaBytesPerRow: luma, chromaBytesPerRow: chroma),
                payload: data), frame: frame)
        }
    }

    private func sendSample(_ sample: VideoSample, frame: RelayVideoFrame) {
        var timed = sample
        // On the relay's link clock (``clock`` reads the links' scheduler), so the host can map both onto its own.
        timed.timing = SampleTiming(captureUs: frame.captureUs ?? frame.receivedUs, sentUs: clock.nowUs)
        // A closed link carries nothing: a sample that races the close is not counted as handed over.
        guard state.withLock({ state -> Bool in
            if !state.closed { state.counters.samplesSent += 1 }
            return !state.closed
        }) else { return }
        send(.videoSample(timed))
    }

    private func sendHelloIfReady() {
        let hello = state.withLock { state -> (RelayDeviceInfo, RelayDeviceState?)? in
            guard state.helloReceived, !state.helloSent, !state.closed, let device = state.device else { return nil }
            state.helloSent = true
            return (device, state.deviceState)
        }
        guard let (device, deviceState) = hello else { return }
        send(.hello(DeviceInfo(
            identifier: device.identifier, name: device.name, uuid: device.uuid,
            deviceType: DeviceType(rawValue: device.deviceType) ?? .unknown,
            firmwareVersion: "unknown (through a DAT relay)",
            // DAT 1.0 does not say what a device supports; everything its API accepts is offered, and the glasses
            // refuse what they cannot do (a photo format, say) through DAT's own errors. Likewise the IMU: DAT's
            // `addMotion` says whether there is one only when asked, so a `startMotion` may be answered
            // `unavailable`.
            supportedPhotoFormats: [.heic, .jpeg], hasIMU: true)))
        send(.deviceState(deviceState.map(Self.deviceState) ?? DeviceState()))
    }

    private func send(_ message: DeviceMessage) {
        link.send(message)
    }

    private func skip() {
        state.withLock { $0.counters.eventsSkipped += 1 }
    }

    // MARK: Names to the link's types

    static func deviceState(_ relayed: RelayDeviceState) -> DeviceState {
        DeviceState(
            linkState: LinkState(rawValue: relayed.linkState) ?? .connected,
            compatibility: Compatibility(rawValue: relayed.compatibility) ?? .undefined,
            batteryLevel: relayed.batteryLevel,
            chargingState: ChargingState(rawValue: relayed.chargingState) ?? .unknown,
            donState: DonState(rawValue: relayed.donState) ?? .unknown,
            hingeState: HingeState(rawValue: relayed.hingeState) ?? .unknown,
            thermalLevel: ThermalLevel(rawValue: relayed.thermalLevel) ?? .unknown)
    }

    static func configuration(_ settings: RelayStreamSettings) -> StreamConfiguration? {
        guard let codec = VideoCodec(rawValue: settings.codec),
              let resolution = StreamingResolution(rawValue: settings.resolution) else { return nil }
        guard let configuration = try? StreamConfiguration.validated(videoCodec: codec, resolution: resolution,
                                                                     frameRate: settings.frameRate) else { return nil }
        guard let audio = settings.audio,
              let rate = AudioSampleRate(hertz: audio.sampleRate) else { return configuration }
        return StreamConfiguration(videoCodec: codec, audioCodec: .pcm(sampleRate: rate, numberOfChannels: audio.channels),
                                   resolution: resolution, frameRate: settings.frameRate)
    }

    /// The sampling rates by DAT case name.
    static let motionRates: [(MotionSamplingRate, String)] = [
        (.hz5, "hz5"), (.hz10, "hz10"), (.hz15, "hz15"), (.hz24, "hz24"), (.hz30, "hz30"), (.hz60, "hz60"),
    ]

    static func rateName(_ rate: MotionSamplingRate) -> String {
        motionRates.first { $0.0 == rate }?.1 ?? "hz10"
    }

    /// A relayed sample as the link's; an unknown source name is `unknown`, as DAT's default.
    static func motionSample(_ s: RelayMotionSample) -> MotionSample {
        let sources: [String: MotionSource] = ["glasses": .glasses, "neuralBand": .neuralBand]
        return MotionSample(
            timestampNs: s.timestampNs, accelerometer: s.accelerometer.map { Vector3($0) }, gyroscope: s.gyroscope.map { Vector3($0) },
            magnetometer: s.magnetometer.map { Vector3($0) },
            orientation: s.orientation.map { Quaternion(x: $0.x, y: $0.y, z: $0.z, w: $0.w) }, source: sources[s.source] ?? .unknown)
    }

    /// DAT's `StreamError` case name as the link's fault; the cases the link has no code for travel as
    /// `internalError` (device gone) or `videoStreamingError` (timeout, audio), with DAT's message.
    static func fault(named name: String) -> DeviceStreamFault {
        if let fault = DeviceStreamFault(rawValue: name) { return fault }
        switch name {
        case "timeout", "audioStreamingError": return .videoStreamingError
        default: return .internalError
        }
    }
}
