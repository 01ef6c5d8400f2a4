import Foundation
import Synchronization
import Testing
@testable import WearablesKit

/// A deterministic pair of glasses for tests: a `DeviceLink` double that answers the host like glasses do, on a
/// `ManualScheduler`, one event per scheduler action (serial, never inside `send`/`close`).
final class TestDevice: DeviceLink {
    /// How the glasses answer.
    struct Behaviour: Sendable {
        var answersHello = true
        var answersSession = true
        var answersStreamStart = true
        var reachesStreaming = true
        var answersStreamStop = true
        var answersPhoto = true
        var answersPermissions = true
        var permissions: [Permission: PermissionStatus] = [.camera: .granted, .microphone: .denied]
        /// Answer `requestPermission` with this (the wearer's choice); nil → same as `permissions`.
        var requestAnswer: PermissionStatus? = .granted
        /// Answer `startStream` with this fault and `.stopped` instead of streaming.
        var startFault: DeviceStreamFault?
        /// Send frames while streaming.
        var sendsFrames = false
        /// Echo the stream generation of the latest start or stop in stream events (false: glasses from before
        /// generations, whose events carry none).
        var echoesGeneration = true
        /// Deliver the `stopped` that acknowledges a `stopStream` this long after it (a late acknowledgement);
        /// nil: at once.
        var stopAcknowledgementDelay: Duration?
    }

    private struct State {
        var handler: (@Sendable (DeviceLinkEvent) -> Void)?
        var sent: [HostMessage] = []
        var closed = false
        var behaviour: Behaviour
        var streaming: StreamConfiguration?
        var frameTimer: ScheduledAction?
        var nextPTS: Int64 = 0
        /// The stream generation of the latest start or stop the host sent.
        var generation: UInt32?
    }

    let info: DeviceInfo
    let scheduler: ManualScheduler
    let initialState: DeviceState
    private let state: Mutex<State>

    /// Computed, not stored: a stored static keeps its parameter sets until exit where LeakSanitizer cannot see the
    /// references, and reports them as leaks.
    static var codecConfiguration: HEVCCodecConfiguration {
        HEVCCodecConfiguration(
            videoParameterSets: [Data([0x40, 0x01, 0x0C])], sequenceParameterSets: [SyntheticSPS.make(width: 360, height: 640)],
            pictureParameterSets: [Data([0x44, 0x01, 0xC0])], width: 360, height: 640)
    }

    init(
        id: DeviceIdentifier = "glasses-1", scheduler: ManualScheduler, behaviour: Behaviour = Behaviour(),
        state: DeviceState = DeviceState(), protocolVersion: UInt16 = linkProtocolVersion,
        photoFormats: [PhotoCaptureFormat] = [.jpeg]
    ) {
        self.info = DeviceInfo(
            identifier: id, name: "Test glasses \(id)", supportedPhotoFormats: photoFormats, protocolVersion: protocolVersion)
        self.scheduler = scheduler
        self.initialState = state
        self.state = Mutex(State(behaviour: behaviour))
    }

    var behaviour: Behaviour {
        get { state.withLock { $0.behaviour } }
        set { state.withLock { $0.behaviour = newValue } }
    }

    /// Everything the host sent, in order.
    var sent: [HostMessage] { state.withLock { $0.sent } }
    var isClosed: Bool { state.withLock { $0.closed } }

    /// Messages of one kind the host sent.
    func sentCount(_ matches: (HostMessage) -> Bool) -> Int { sent.filter(matches).count }

    // MARK: DeviceLink

    func open(eventHandler: @escaping @Sendable (DeviceLinkEvent) -> Void) {
        state.withLock { $0.handler = eventHandler }
    }

    func send(_ message: HostMessage) {
        let behaviour = state.withLock { state -> Behaviour? in
            guard !state.closed else { return nil }
            state.sent.append(message)
            return state.behaviour
        }
        guard let behaviour else { return }
        respond(to: message, behaviour)
    }

    func close() {
        closeLink(LinkError(.closedLocally, "closed by the host"))
    }

    // MARK: Controls for tests

    /// Delivers `message` on the next scheduler turn (or after `delay`).
    func deliver(_ message: DeviceMessage, after delay: Duration = .zero) {
        deliverEvent(.message(message), after: delay)
    }

    /// A stream event as these glasses send it: with the latest generation, if they echo it.
    func streamEvent(_ event: DeviceStreamEvent) -> DeviceMessage {
        let (echoes, generation) = state.withLock { ($0.behaviour.echoesGeneration, $0.generation) }
        return .stream(event, generation: echoes ? generation : nil)
    }

    /// Drops the link (the glasses went out of range).
    func drop() {
        closeLink(LinkError(.connectionLost, "glasses out of range"))
    }

    /// Reports a new device state.
    func report(_ change: (inout DeviceState) -> Void) {
        var state = initialState
        change(&state)
        deliver(.deviceState(state))
    }

    /// Sends a raw NV12 sample of the configured size (or a malformed one).
    func sendRawFrame(pts: Int64, truncated: Bool = false, timing: SampleTiming? = nil) {
        let size = StreamingResolution.low.videoFrameSize
        let (width, height) = (Int(size.width), Int(size.height))
        let stride = width + 16
        let bytes = stride * height + stride * height / 2
        let payload = Data(count: truncated ? bytes / 2 : bytes)
        deliver(.videoSample(VideoSample(
            presentationTimeUs: pts, isKeyframe: true,
            format: .nv12(width: width, height: height, lumaBytesPerRow: stride, chromaBytesPerRow: stride),
            payload: payload, timing: timing)))
    }

    /// Sends an HEVC sample: two length-prefixed NAL units (or a truncated one).
    func sendHEVCFrame(pts: Int64, keyframe: Bool = true, truncated: Bool = false) {
        var payload = Data([0, 0, 0, 3, 0x26, 0x01, 0xAF, 0, 0, 0, 2, 0x02, 0x01])
        if truncated { payload = Data([0, 0, 0, 9, 0x26, 0x01]) }
        deliver(.videoSample(VideoSample(presentationTimeUs: pts, isKeyframe: keyframe, format: .hevc, payload: payload)))
    }

    // MARK: Behaviour

    private func respond(to message: HostMessage, _ behaviour: Behaviour) {
        switch message {
        case .hello:
            guard behaviour.answersHello else { return }
            deliver(.hello(info))
            deliver(.deviceState(initialState))
        case .checkPermission(let permission, let id):
            guard behaviour.answersPermissions else { return }
            deliver(.permission(permission, behaviour.permissions[permission] ?? .denied, requestID: id))
        case .requestPermission(let permission, let id):
            guard behaviour.answersPermissions else { return }
            let answer = behaviour.requestAnswer ?? behaviour.permissions[permission] ?? .denied
            deliver(.permission(permission, answer, requestID: id))
        case .startSession:
            if behaviour.answersSession { deliver(.session(.started)) }
        case .stopSession:
            stopFrames()
            if behaviour.answersSession { deliver(.session(.ended(reason: "stopped by host"))) }
        case .startStream(let configuration, let generation):
            state.withLock { $0.generation = generation }
            guard behaviour.answersStreamStart else { return }
            if let fault = behaviour.startFault {
                deliver(.fault(fault, message: "refused"))
                deliver(streamEvent(.stopped))
                return
            }
            deliver(streamEvent(.starting(configuration)))
            guard behaviour.reachesStreaming else { return }
            if configuration.videoCodec == .hvc1 { deliver(.codecConfiguration(Self.codecConfiguration)) }
            deliver(streamEvent(.streaming(configuration)))
            startFrames(configuration, behaviour)
        case .stopStream(let generation):
            state.withLock { $0.generation = generation }
            stopFrames()
            if behaviour.answersStreamStop {
                deliver(streamEvent(.stopped), after: behaviour.stopAcknowledgementDelay ?? .zero)
            }
        case .capturePhoto(let format, let id):
            guard behaviour.answersPhoto else { return }
            deliver(streamEvent(.paused))
            deliver(.photo(PhotoData(data: Data([0xFF, 0xD8, 0xFF, 0xD9]), format: format), requestID: id))
            deliver(streamEvent(.streaming(state.withLock { $0.streaming } ?? StreamConfiguration())))
        case .frameCredit, .heartbeat:
            break
        case .startMotion, .stopMotion:
            break  // these glasses announce no IMU (DeviceInfo.hasIMU is false), so no host asks
        case .startPhoto, .stopPhoto, .standalonePhoto:
            break  // nor standalone photos (DeviceInfo.hasStandalonePhoto is false)
        }
    }

    private func startFrames(_ configuration: StreamConfiguration, _ behaviour: Behaviour) {
        state.withLock { $0.streaming = configuration }
        guard behaviour.sendsFrames else { return }
        scheduleFrame(configuration)
    }

    private func scheduleFrame(_ configuration: StreamConfiguration) {
        let interval = Duration.seconds(1) / Int(configuration.frameRate)
        let timer = scheduler.schedule(after: interval) { [weak self] in
            guard let self else { return }
            let pts = self.state.withLock { state -> Int64? in
                guard state.streaming != nil, !state.closed else { return nil }
                defer { state.nextPTS += 1_000_000 / Int64(configuration.frameRate) }
                return state.nextPTS
            }
            guard let pts else { return }
            if configuration.videoCodec == .hvc1 { self.sendHEVCFrame(pts: pts) } else { self.sendRawFrame(pts: pts) }
            self.scheduleFrame(configuration)
        }
        state.withLock { $0.frameTimer = timer }
    }

    private func stopFrames() {
        let timer = state.withLock { state -> ScheduledAction? in
            state.streaming = nil
            defer { state.frameTimer = nil }
            return state.frameTimer
        }
        timer?.cancel()
    }

    private func deliverEvent(_ event: DeviceLinkEvent, after delay: Duration = .zero) {
        scheduler.schedule(after: delay) { [weak self] in
            guard let self else { return }
            let handler = self.state.withLock { state -> (@Sendable (DeviceLinkEvent) -> Void)? in
                guard !state.closed else { return nil }
                if case .closed = event { state.closed = true }
                return state.handler
            }
            handler?(event)
        }
    }

    private func closeLink(_ error: LinkError) {
        stopFrames()
        deliverEvent(.closed(error))
    }
}

/// Collects values delivered to a listener, thread-safely.
final class Recorder<Value: Sendable>: Sendable {
    private let storage = Mutex<[Value]>([])

    var values: [Value] { storage.withLock { $0 } }
    var count: Int { storage.withLock { $0.count } }
    var last: Value? { storage.withLock { $0.last } }

    func record(_ value: Value) { storage.withLock { $0.append(value) } }

    var callback: @Sendable (Value) -> Void { { [self] value in self.record(value) } }

    func removeAll() { storage.withLock { $0.removeAll() } }
}

/// An instance, its virtual clock and one pair of test glasses.
struct Rig {
    let scheduler: ManualScheduler
    let wearables: WearablesInstance
    let device: TestDevice

    init(
        behaviour: TestDevice.Behaviour = TestDevice.Behaviour(), state: DeviceState = DeviceState(),
        deviceWaitTimeout: Duration = .seconds(31), photoFormats: [PhotoCaptureFormat] = [.jpeg]
    ) throws {
        let scheduler = ManualScheduler()
        self.scheduler = scheduler
        self.wearables = Wearables.makeInstance(
            configuration: try WearablesConfiguration(scheduler: scheduler, deviceWaitTimeout: deviceWaitTimeout))
        self.device = TestDevice(scheduler: scheduler, behaviour: behaviour, state: state, photoFormats: photoFormats)
    }

    /// Attaches the glasses and lets them introduce themselves.
    func connect() {
        wearables.attach(link: device)
        scheduler.runUntilIdle()
    }

    /// Attaches a fresh link from the same glasses (a reconnect).
    func reconnect(behaviour: TestDevice.Behaviour? = nil) -> TestDevice {
        let link = TestDevice(
            id: device.info.identifier, scheduler: scheduler, behaviour: behaviour ?? device.behaviour,
            state: device.initialState, photoFormats: device.info.supportedPhotoFormats)
        wearables.attach(link: link)
        scheduler.runUntilIdle()
        return link
    }

    func run() { scheduler.runUntilIdle() }

    /// A started session on the test glasses.
    func startedSession() throws -> DeviceSession {
        connect()
        let session = try wearables.createSession(deviceSelector: SpecificDeviceSelector(device: device.info.identifier))
        try session.start()
        run()
        #expect(session.state == .started)
        return session
    }

    /// A started session with a camera attached (stream not started).
    func camera(_ configuration: StreamConfiguration = StreamConfiguration()) throws -> (DeviceSession, Camera) {
        let session = try startedSession()
        let camera = try #require(try session.addCamera(config: configuration))
        return (session, camera)
    }

    /// A session, a camera and a streaming stream.
    func streaming(_ configuration: StreamConfiguration = StreamConfiguration()) throws -> (DeviceSession, Camera, WearablesKit.Stream) {
        let (session, camera) = try camera(configuration)
        camera.stream.start()
        run()
        #expect(camera.stream.state == .streaming)
        return (session, camera, camera.stream)
    }
}

/// Waits, by yielding (never sleeping), until `condition` holds; fails the test after many turns.
func eventually(_ condition: () -> Bool, sourceLocation: SourceLocation = #_sourceLocation) async {
    for _ in 0..<200_000 {
        if condition() { return }
        await Task.yield()
    }
    Issue.record("condition never became true", sourceLocation: sourceLocation)
}

extension HostMessage {
    var isStartStream: Bool { if case .startStream = self { true } else { false } }
    var isStopStream: Bool { if case .stopStream = self { true } else { false } }
    /// The stream generation a `startStream` or `stopStream` carries (nil for other messages, or none).
    var streamGeneration: UInt32? {
        switch self {
        case .startStream(_, let generation), .stopStream(let generation): generation
        default: nil
        }
    }
    var isStartSession: Bool { self == .startSession }
    var isStopSession: Bool { self == .stopSession }
    var isCapturePhoto: Bool { if case .capturePhoto = self { true } else { false } }
}
