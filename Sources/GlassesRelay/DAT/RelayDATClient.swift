// The relay's DAT client. This file uses only the DAT 1.0 public surface (`../shared/reference/dat-sdk.md` §1):
// on Linux it compiles against WearablesKit, on iOS against Meta's MWDATCore and MWDATCamera, unchanged. The test
// suite proves it (DATSurfaceTests: this file and RelayModel.swift typecheck against modules that declare exactly
// that surface). Everything platform-specific, the reading of a `VideoFrame`, comes in as `frameAdapter`.
#if canImport(MWDATCore)
    import MWDATCamera
    import MWDATCore
    import MWDATMotion
#else
    import WearablesKit
#endif
import Foundation
import Synchronization

/// Drives one pair of glasses through DAT for a relay: device discovery, the session, the camera and its stream,
/// permissions and photos, in the order DAT's camera-streaming walkthrough uses, and reports what happens as
/// ``RelayEvent``s.
///
/// It keeps DAT's rules: one session per device (a second start while one runs reports the running one); at least
/// ``RelayRules/sessionRestartSpacingUs`` between a session stopping and the next starting (an early start waits);
/// listeners subscribed before `start()`; teardown parent to child (`camera.stop()` before `addCamera` again). It
/// hides nothing: a stream that streams without frames (a zombie) is passed on as it is, so the host's watchdog sees
/// it and restarts the camera through ``handle(_:)``.
public final class RelayDATClient: Sendable {
    /// Reads one DAT video frame into the link protocol's layouts; nil for a frame it cannot read (counted).
    public typealias FrameAdapter = @Sendable (VideoFrame) -> RelayVideoFrame?
    /// Reads DAT's audio frames (the platform's adapter, ``RelayFrameAdapter/readAudio(_:)``).
    public typealias AudioAdapter = @Sendable (AudioFrame) -> RelayAudioFrame?

    /// Counters of the relay's DAT side.
    public struct Counters: Sendable, Hashable {
        /// Frames DAT delivered and the relay passed on.
        public var framesForwarded: UInt64 = 0
        /// Frames the adapter could not read.
        public var framesUnreadable: UInt64 = 0
        /// Sessions created.
        public var sessionsCreated: UInt64 = 0
        /// Session starts that waited for the 2 s spacing.
        public var sessionStartsDelayed: UInt64 = 0
        /// Cameras added.
        public var camerasAdded: UInt64 = 0
        /// IMU samples DAT delivered and the relay passed on.
        public var motionSamplesForwarded: UInt64 = 0
        /// Audio frames DAT delivered and the relay passed on.
        public var audioFramesForwarded: UInt64 = 0
        /// Audio frames the adapter could not read.
        public var audioFramesUnreadable: UInt64 = 0
    }

    private struct State {
        var handler: (@Sendable (RelayEvent) -> Void)?
        var deviceID: String?
        var session: DeviceSession?
        var sessionGeneration: UInt64 = 0
        var sessionStartedReported = false
        var sessionPaused = false
        var sessionEndReason: String?
        var lastSessionStopUs: Int64?
        var sessionStartPending = false
        var sessionExistsRetries = 0
        var camera: Camera?
        var cameraGeneration: UInt64 = 0
        var settings: RelayStreamSettings?
        /// The stream generation of the host's latest start or stop (set together with ``cameraGeneration``, so a
        /// late DAT event of an earlier camera never carries a later start's number).
        var hostGeneration: UInt32?
        var photoRequestID: UInt32?
        var asyncWork = 0
        var counters = Counters()
        var started = false
        var lastError: RelayDATError?
        var motion: Motion?
        var motionGeneration: UInt64 = 0
        var motionTask: Task<Void, Never>?
    }

    private let wearables: any WearablesInterface
    private let clock: any RelayClock
    private let frameAdapter: FrameAdapter
    private let audioAdapter: AudioAdapter?
    private let state = Mutex(State())
    private let deviceTokens = ListenerTokenBag()
    private let deviceStateTokens = ListenerTokenBag()
    private let sessionTokens = ListenerTokenBag()
    private let streamTokens = ListenerTokenBag()
    private let motionTokens = ListenerTokenBag()

    /// Creates a client over a configured `Wearables` instance (on a phone, `Wearables.shared` after
    /// `Wearables.configure()`). `audioAdapter` reads DAT's audio frames (the platform's
    /// ``RelayFrameAdapter/readAudio(_:)``); without one the relay streams video only, and answers a host that asks
    /// for audio with `audioStreamingError`.
    public init(wearables: any WearablesInterface, clock: any RelayClock, frameAdapter: @escaping FrameAdapter,
                audioAdapter: AudioAdapter? = nil) {
        self.wearables = wearables
        self.clock = clock
        self.frameAdapter = frameAdapter
        self.audioAdapter = audioAdapter
    }

    /// Where events go from now on (nil: nowhere); the link server of the current host sets it.
    public func setEventHandler(_ handler: (@Sendable (RelayEvent) -> Void)?) {
        state.withLock { $0.handler = handler }
    }

    /// Counters so far.
    public var counters: Counters { state.withLock { $0.counters } }

    /// The last error DAT reported, in DAT's words (a stream's `StreamError` case name and description, or the
    /// relay's own words where DAT gave none), whether or not a host was connected to hear it; nil before any.
    public var lastError: RelayDATError? { state.withLock { $0.lastError } }

    /// Whether no permission query is in flight (a virtual-time test waits for it before moving time on).
    public var isIdle: Bool { state.withLock { $0.asyncWork == 0 } }

    /// The device DAT lists first, if any.
    public var currentDevice: RelayDeviceInfo? {
        guard let id = state.withLock({ $0.deviceID }), let device = wearables.deviceForIdentifier(id) else {
            return nil
        }
        return Self.info(of: device)
    }

    /// The current device's state, if any.
    public var currentDeviceState: RelayDeviceState? {
        guard let id = state.withLock({ $0.deviceID }), let device = wearables.deviceForIdentifier(id) else {
            return nil
        }
        return Self.state(of: device)
    }

    /// Starts watching DAT's device list. Call once.
    public func start() {
        let first = state.withLock { state -> Bool in
            defer { state.started = true }
            return !state.started
        }
        guard first else { return }
        wearables.addDevicesListener { [weak self] identifiers in self?.devicesChanged(identifiers) }
            .store(in: deviceTokens)
        devicesChanged(wearables.devices)
    }

    /// Reads DAT's device list again and selects its first device afresh (subscribing to its state again), as a
    /// person does after pairing or waking the glasses in the Meta AI app; reports the device as on a change. DAT
    /// has no scan of its own: the list is the Meta AI app's.
    public func rescan() {
        guard state.withLock({ $0.started }) else { return start() }
        devicesChanged(wearables.devices, afresh: true)
    }

    /// Carries out a host's request.
    public func handle(_ command: RelayCommand) {
        switch command {
        case .checkPermission(let name, let requestID):
            answerPermission(name, requestID: requestID, asking: false)
        case .requestPermission(let name, let requestID):
            answerPermission(name, requestID: requestID, asking: true)
        case .startSession:
            startSession()
        case .stopSession:
            stopSession(reason: "stopped by host")
        case .startStream(let settings, let generation):
            startStream(settings, hostGeneration: generation)
        case .stopStream(let generation):
            stopStream(report: true, hostGeneration: .some(generation))
        case .capturePhoto(let format, let requestID):
            capturePhoto(format: format, requestID: requestID)
        case .startMotion(let rate):
            startMotion(rateName: rate)
        case .stopMotion:
            stopMotion()
        }
    }

    /// The host went away: stop Motion, the camera and the session, so the glasses are free for the next host.
    public func hostLeft() {
        removeMotion()
        stopStream(report: false)
        stopSession(reason: "the host left")
    }

    // MARK: Devices

    private func devicesChanged(_ identifiers: [DeviceIdentifier], afresh: Bool = false) {
        let first = identifiers.first
        let changed = state.withLock { state -> Bool in
            guard afresh || state.deviceID != first else { return false }
            state.deviceID = first
            return true
        }
        guard changed else { return }
        deviceStateTokens.clear()
        guard let first, let device = wearables.deviceForIdentifier(first) else {
            emit(.deviceUnavailable)
            return
        }
        emit(.deviceAvailable(Self.info(of: device)))
        // Delivers the state at once, then on every change.
        device.addDeviceStateListener { [weak self] _ in
            guard let self, self.state.withLock({ $0.deviceID }) == first else { return }
            self.emit(.deviceState(Self.state(of: device)))
        }.store(in: deviceStateTokens)
    }

    private static func info(of device: Device) -> RelayDeviceInfo {
        RelayDeviceInfo(identifier: device.identifier, name: device.name, uuid: device.deviceUUID,
                        deviceType: caseName(device.deviceType()))
    }

    private static func state(of device: Device) -> RelayDeviceState {
        RelayDeviceState(
            linkState: caseName(device.linkState), compatibility: caseName(device.compatibility()),
            batteryLevel: device.batteryLevel, chargingState: caseName(device.chargingState),
            donState: caseName(device.donState), hingeState: caseName(device.hingeState),
            thermalLevel: caseName(device.thermalLevel))
    }

    // MARK: Permissions

    private func answerPermission(_ name: String, requestID: UInt32, asking: Bool) {
        guard let permission = Permission.allCases.first(where: { Self.caseName($0) == name }) else {
            emit(.permission(permission: name, granted: false, requestID: requestID))
            return
        }
        state.withLock { $0.asyncWork += 1 }
        let wearables = self.wearables
        Task { [weak self] in
            var granted = false
            do {
                let status = asking
                    ? try await wearables.requestPermission(permission)
                    : try await wearables.checkPermissionStatus(permission)
                granted = status == .granted
            } catch {
                granted = false
            }
            self?.emit(.permission(permission: name, granted: granted, requestID: requestID))
            self?.state.withLock { $0.asyncWork -= 1 }
        }
    }

    // MARK: Session

    private enum SessionStart {
        case now
        case after(Int64)
        case already(DeviceSession)
        case pending
    }

    private func startSession() {
        let now = clock.nowUs
        // A session DAT already stopped without telling us counts as gone.
        if let stale = state.withLock({ $0.session }), stale.state == .stopped {
            state.withLock { state in
                if state.session === stale {
                    state.session = nil
                    state.lastSessionStopUs = state.lastSessionStopUs ?? now
                }
            }
        }
        let decision = state.withLock { state -> SessionStart in
            if let session = state.session { return .already(session) }
            if state.sessionStartPending { return .pending }
            if let stopped = state.lastSessionStopUs {
                let wait = RelayRules.sessionRestartSpacingUs - (now - stopped)
                if wait > 0 {
                    state.sessionStartPending = true
                    state.counters.sessionStartsDelayed += 1
                    return .after(wait)
                }
            }
            return .now
        }
        switch decision {
        case .pending:
            return
        case .after(let wait):
            clock.schedule(afterUs: wait) { [weak self] in
                self?.state.withLock { $0.sessionStartPending = false }
                self?.startSession()
            }
            return
        case .already(let session):
            // One session per device: report the one that runs, as a fresh start would (started, then paused when
            // the device has paused it). One that is still stopping is waited out, then a new one starts.
            let current = session.state
            if current == .started {
                emit(.session(.started))
            } else if current == .paused {
                emit(.session(.started))
                emit(.session(.paused))
            } else if current == .stopping {
                clock.schedule(afterUs: 100_000) { [weak self] in self?.startSession() }
            }
            // `idle` and `starting`: its state listener reports `started` when it gets there.
            return
        case .now:
            break
        }
        let session: DeviceSession
        do {
            session = try wearables.createSession(deviceSelector: AutoDeviceSelector(wearables: wearables))
        } catch {
            // A session this client does not know still holds the device (a relay restarted while its last one was
            // stopping): wait the restart spacing and try again, a few times, before reporting the end.
            let retry = error == .sessionAlreadyExists && state.withLock { state -> Bool in
                guard state.sessionExistsRetries < 3 else { return false }
                state.sessionExistsRetries += 1
                state.sessionStartPending = true
                state.counters.sessionStartsDelayed += 1
                return true
            }
            if retry {
                clock.schedule(afterUs: RelayRules.sessionRestartSpacingUs) { [weak self] in
                    self?.state.withLock { $0.sessionStartPending = false }
                    self?.startSession()
                }
                return
            }
            state.withLock { $0.sessionExistsRetries = 0 }
            sessionStopped(reason: error.localizedDescription)
            return
        }
        let generation = state.withLock { state -> UInt64 in
            state.sessionGeneration += 1
            state.session = session
            state.sessionStartedReported = false
            state.sessionPaused = false
            state.sessionEndReason = nil
            state.sessionExistsRetries = 0
            state.counters.sessionsCreated += 1
            return state.sessionGeneration
        }
        sessionTokens.clear()
        // Subscribe before start() so no transition is missed.
        session.statePublisher.listen { [weak self] sessionState in
            self?.sessionStateChanged(sessionState, generation: generation)
        }.store(in: sessionTokens)
        session.errorPublisher.listen { [weak self] error in
            self?.state.withLock { state in
                if state.sessionGeneration == generation { state.sessionEndReason = error.localizedDescription }
            }
        }.store(in: sessionTokens)
        do {
            try session.start()
        } catch {
            let current = state.withLock { state -> Bool in
                guard state.sessionGeneration == generation else { return false }
                state.session = nil
                return true
            }
            if current { sessionStopped(reason: error.localizedDescription) }
        }
    }

    private func sessionStateChanged(_ sessionState: DeviceSessionState, generation: UInt64) {
        enum Report { case none, started, resumed, paused, stopped(String) }
        let report = state.withLock { state -> Report in
            guard state.sessionGeneration == generation, state.session != nil else { return .none }
            if sessionState == .started {
                if state.sessionPaused {
                    state.sessionPaused = false
                    return .resumed
                }
                guard !state.sessionStartedReported else { return .none }
                state.sessionStartedReported = true
                return .started
            }
            if sessionState == .paused {
                guard !state.sessionPaused else { return .none }
                state.sessionPaused = true
                return .paused
            }
            if sessionState == .stopped {
                state.session = nil
                return .stopped(state.sessionEndReason ?? "the session stopped")
            }
            return .none
        }
        switch report {
        case .none: break
        case .started: emit(.session(.started))
        case .resumed: emit(.session(.resumed))
        case .paused: emit(.session(.paused))
        case .stopped(let reason): sessionStopped(reason: reason)
        }
    }

    /// The session is gone: its camera and Motion with it; the next may start 2 s from now.
    private func sessionStopped(reason: String) {
        removeMotion()
        let now = clock.nowUs
        state.withLock { state in
            state.lastSessionStopUs = now
            state.camera = nil
            state.cameraGeneration += 1
        }
        streamTokens.clear()
        emit(.session(.ended(reason: reason)))
    }

    private func stopSession(reason: String) {
        let (session, hadCamera) = state.withLock { state -> (DeviceSession?, Bool) in
            state.sessionEndReason = reason
            return (state.session, state.camera != nil)
        }
        // As the walkthrough does: Motion and the camera first, then the session; the session's `.stopped` reports
        // the end.
        removeMotion()
        if hadCamera { stopStream(report: true) }
        session?.stop()
    }

    // MARK: Camera and stream

    private func startStream(_ settings: RelayStreamSettings, hostGeneration: UInt32?) {
        let session = state.withLock { $0.session }
        guard let session, session.state == .started else {
            emit(.fault(name: "internalError", message: "no session is started; start a session first"))
            refuseStart(hostGeneration)
            return
        }
        var settings = settings
        if settings.audio != nil, audioAdapter == nil {
            // No way to read DAT's audio here: the video alone, and the host told so, as glasses that cannot record.
            settings.audio = nil
            emit(.fault(name: "audioStreamingError", message: "this relay does not forward audio; streaming video without it"))
        }
        guard let configuration = Self.configuration(settings) else {
            emit(.fault(name: "internalError", message: "the glasses cannot stream \(settings)"))
            refuseStart(hostGeneration)
            return
        }
        // A camera already there stops first, so that addCamera can register a new one; from here on the stream
        // events carry this start's generation.
        stopStream(report: false, hostGeneration: .some(hostGeneration))
        let added: Camera?
        do {
            added = try session.addCamera(config: configuration)
        } catch {
            emit(.fault(name: "internalError", message: error.localizedDescription))
            emit(.stream(.stopped, generation: hostGeneration))
            return
        }
        guard let camera = added else {
            emit(.fault(name: "internalError", message: "the session is not started, so no camera could be added"))
            emit(.stream(.stopped, generation: hostGeneration))
            return
        }
        let generation = state.withLock { state -> UInt64 in
            state.cameraGeneration += 1
            state.camera = camera
            state.settings = settings
            state.counters.camerasAdded += 1
            return state.cameraGeneration
        }
        let stream = camera.stream
        stream.statePublisher.listen { [weak self] streamState in
            self?.streamStateChanged(streamState, generation: generation)
        }.store(in: streamTokens)
        stream.videoFramePublisher.listen { [weak self] frame in
            self?.frameArrived(frame, generation: generation)
        }.store(in: streamTokens)
        stream.photoDataPublisher.listen { [weak self] photo in
            self?.photoArrived(photo, generation: generation)
        }.store(in: streamTokens)
        stream.errorPublisher.listen { [weak self] error in
            self?.streamFailed(error, generation: generation)
        }.store(in: streamTokens)
        // Before start(), as DAT's audio skill says.
        stream.audioFramePublisher.listen { [weak self] frame in
            self?.audioArrived(frame, generation: generation)
        }.store(in: streamTokens)
        stream.start()
    }

    /// A start the glasses cannot carry out: `stopped`, answering it (the camera there, if any, runs on).
    private func refuseStart(_ generation: UInt32?) {
        state.withLock { $0.hostGeneration = generation }
        emit(.stream(.stopped, generation: generation))
    }

    /// Stops the camera; `hostGeneration`, when given, is the generation of the host's start or stop carried out.
    private func stopStream(report: Bool, hostGeneration newGeneration: UInt32?? = nil) {
        let (camera, hostGeneration) = state.withLock { state -> (Camera?, UInt32?) in
            defer {
                state.camera = nil
                state.cameraGeneration += 1
                state.photoRequestID = nil
            }
            if let newGeneration { state.hostGeneration = newGeneration }
            return (state.camera, state.hostGeneration)
        }
        streamTokens.clear()
        // Stopping the camera cascades to its stream and detaches it from the session.
        camera?.stop()
        if report { emit(.stream(.stopped, generation: hostGeneration)) }
    }

    private func streamStateChanged(_ streamState: StreamState, generation: UInt64) {
        let current = state.withLock { state -> (settings: RelayStreamSettings, hostGeneration: UInt32?)? in
            guard state.cameraGeneration == generation, let settings = state.settings else { return nil }
            return (settings, state.hostGeneration)
        }
        guard let (settings, hostGeneration) = current else { return }
        if streamState == .starting {
            emit(.stream(.starting(settings), generation: hostGeneration))
        } else if streamState == .streaming {
            emit(.stream(.streaming(settings), generation: hostGeneration))
        } else if streamState == .paused {
            emit(.stream(.paused, generation: hostGeneration))
        } else if streamState == .stopped {
            emit(.stream(.stopped, generation: hostGeneration))
        }
        // `waitingForDevice` and `stopping` are DAT's own business: the host hears `starting` or `stopped`.
    }

    private func frameArrived(_ frame: VideoFrame, generation: UInt64) {
        let receivedUs = clock.nowUs
        let current = state.withLock { $0.cameraGeneration == generation }
        guard current else { return }
        guard var converted = frameAdapter(frame) else {
            state.withLock { $0.counters.framesUnreadable += 1 }
            return
        }
        converted.receivedUs = receivedUs
        state.withLock { $0.counters.framesForwarded += 1 }
        emit(.video(converted))
    }

    private func audioArrived(_ frame: AudioFrame, generation: UInt64) {
        guard state.withLock({ $0.cameraGeneration == generation }) else { return }
        guard let read = audioAdapter?(frame) else {
            state.withLock { $0.counters.audioFramesUnreadable += 1 }
            return
        }
        state.withLock { $0.counters.audioFramesForwarded += 1 }
        emit(.audio(read))
    }

    private func photoArrived(_ photo: PhotoData, generation: UInt64) {
        let requestID = state.withLock { state -> UInt32? in
            guard state.cameraGeneration == generation else { return nil }
            defer { state.photoRequestID = nil }
            return state.photoRequestID ?? 0
        }
        guard let requestID else { return }
        emit(.photo(photo.data, format: Self.caseName(photo.format), requestID: requestID))
    }

    private func streamFailed(_ error: StreamError, generation: UInt64) {
        let current = state.withLock { state -> Bool in
            guard state.cameraGeneration == generation else { return false }
            if error == .photoCaptureFailed { state.photoRequestID = nil }
            return true
        }
        guard current else { return }
        emit(.fault(name: Self.faultName(error), message: error.localizedDescription))
    }

    /// `StreamError`'s case name, spelled out: its `description` may be a message (WearablesKit's is), so the
    /// name is not read from it. If-chains rather than a switch, so the same code compiles against a resilient
    /// DAT enum (which would need `@unknown default`) and WearablesKit's (where that default is dead code).
    static func faultName(_ error: StreamError) -> String {
        if case .deviceNotFound = error { return "deviceNotFound" }
        if case .deviceNotConnected = error { return "deviceNotConnected" }
        let named: [(StreamError, String)] = [
            (.internalError, "internalError"), (.timeout, "timeout"), (.videoStreamingError, "videoStreamingError"),
            (.audioStreamingError, "audioStreamingError"), (.permissionDenied, "permissionDenied"),
            (.hingesClosed, "hingesClosed"), (.thermalHot, "thermalHot"), (.batteryLow, "batteryLow"),
            (.peakPowerLimit, "peakPowerLimit"), (.photoCaptureFailed, "photoCaptureFailed"),
        ]
        return named.first { $0.0 == error }?.1 ?? "internalError"
    }

    private func capturePhoto(format name: String, requestID: UInt32) {
        let format: PhotoCaptureFormat
        switch name {
        case "jpeg": format = .jpeg
        case "heic": format = .heic
        default:
            emit(.fault(name: "photoCaptureFailed", message: "unknown photo format \(name)"))
            return
        }
        let camera = state.withLock { state -> Camera? in
            guard let camera = state.camera else { return nil }
            state.photoRequestID = requestID
            return camera
        }
        guard let camera else {
            emit(.fault(name: "photoCaptureFailed", message: "no stream is running; the camera cannot take a photo now"))
            return
        }
        if !camera.stream.capturePhoto(format: format) {
            state.withLock { if $0.photoRequestID == requestID { $0.photoRequestID = nil } }
            emit(.fault(name: "photoCaptureFailed",
                        message: "the glasses did not start the capture (one in flight, or no active session)"))
        }
    }

    // MARK: Motion

    /// DAT's sampling rates by case name.
    private static let motionRates: [(MotionSamplingRate, String)] = [
        (.hz5, "hz5"), (.hz10, "hz10"), (.hz15, "hz15"), (.hz24, "hz24"), (.hz30, "hz30"), (.hz60, "hz60"),
    ]

    /// Adds Motion to the started session at the rate and starts it, as DAT's motion walkthrough does (observers
    /// first, then `start()`); Motion already there at another rate is removed first, at the same rate started
    /// again. `unavailable` when there is no started session, DAT refuses, or the glasses have no IMU.
    private func startMotion(rateName: String) {
        guard let rate = Self.motionRates.first(where: { $0.1 == rateName })?.0 else { return emit(.motion(.unavailable)) }
        let (session, existing) = state.withLock { ($0.session, $0.motion) }
        guard let session, session.state == .started else { return emit(.motion(.unavailable)) }
        if let existing {
            if existing.configuration.samplingRate == rate {
                // `start()` is ignored unless stopped: a running one is reported as running.
                if existing.state == .stopped { existing.start() } else if existing.state == .started {
                    emit(.motion(.started(rate: rateName)))
                }
                return
            }
            removeMotion()
        }
        let added: Motion?
        do {
            added = try session.addMotion(configuration: MotionConfiguration(samplingRate: rate))
        } catch {
            return emit(.motion(.unavailable))
        }
        // DAT answers nil "rather than throwing when this pair has no IMU".
        guard let motion = added else { return emit(.motion(.unavailable)) }
        let generation = state.withLock { state -> UInt64 in
            state.motionGeneration += 1
            state.motion = motion
            return state.motionGeneration
        }
        motion.statePublisher.listen { [weak self] motionState in
            self?.motionStateChanged(motionState, rate: rateName, generation: generation)
        }.store(in: motionTokens)
        motion.errorPublisher.listen { [weak self] error in
            self?.motionFailed(error, generation: generation)
        }.store(in: motionTokens)
        // One reader drains the samples (DAT's stream has room for one) and passes them on in order.
        let task = Task { [weak self] in
            for await sample in motion.samples {
                self?.motionSampleArrived(sample, generation: generation)
            }
        }
        state.withLock { state in
            if state.motionGeneration == generation { state.motionTask = task } else { task.cancel() }
        }
        motion.start()
    }

    private func stopMotion() {
        guard let motion = state.withLock({ $0.motion }) else { return emit(.motion(.stopped)) }
        motion.stop()
    }

    /// Removes Motion, if any: the sample task is cancelled first ("removal is terminal").
    private func removeMotion() {
        let (motion, task, session) = state.withLock { state -> (Motion?, Task<Void, Never>?, DeviceSession?) in
            defer {
                state.motion = nil
                state.motionTask = nil
                state.motionGeneration += 1
            }
            return (state.motion, state.motionTask, state.session)
        }
        guard motion != nil else { return }
        motionTokens.clear()
        task?.cancel()
        try? session?.removeMotion()
    }

    private func motionStateChanged(_ motionState: MotionState, rate: String, generation: UInt64) {
        guard state.withLock({ $0.motionGeneration == generation }) else { return }
        if motionState == .started {
            emit(.motion(.started(rate: rate)))
        } else if motionState == .stopped {
            emit(.motion(.stopped))
        }
        // `starting` and `stopping` are DAT's own business: the host hears `started` or `stopped`.
    }

    private func motionFailed(_ error: MotionError, generation: UInt64) {
        guard state.withLock({ $0.motionGeneration == generation }) else { return }
        // The others (a dropped device, the capability closed) leave Motion stopped, which its state reports.
        if error == .sensorUnavailable { emit(.motion(.unavailable)) }
    }

    private func motionSampleArrived(_ sample: MotionSample, generation: UInt64) {
        let current = state.withLock { state -> Bool in
            guard state.motionGeneration == generation else { return false }
            state.counters.motionSamplesForwarded += 1
            return true
        }
        guard current else { return }
        emit(.motionSamples([Self.relayed(sample)]))
    }

    /// A DAT sample field for field.
    static func relayed(_ sample: MotionSample) -> RelayMotionSample {
        func vector(_ v: Vector3?) -> SIMD3<Float>? { v.map { SIMD3($0.x, $0.y, $0.z) } }
        let source: String
        if sample.source == .glasses { source = "glasses" } else if sample.source == .neuralBand { source = "neuralBand" } else {
            source = "unknown"
        }
        return RelayMotionSample(
            timestampNs: sample.timestampNs, accelerometer: vector(sample.accelerometer), gyroscope: vector(sample.gyroscope),
            magnetometer: vector(sample.magnetometer), orientation: sample.orientation.map { SIMD4($0.x, $0.y, $0.z, $0.w) },
            source: source)
    }

    // MARK: Helpers

    private func emit(_ event: RelayEvent) {
        let handler = state.withLock { state in
            if case .fault(let name, let message) = event { state.lastError = RelayDATError(name: name, message: message) }
            return state.handler
        }
        handler?(event)
    }

    private static func configuration(_ settings: RelayStreamSettings) -> StreamConfiguration? {
        let codec: VideoCodec
        switch settings.codec {
        case "raw": codec = .raw
        case "hvc1": codec = .hvc1
        default: return nil
        }
        guard let resolution = StreamingResolution.allCases.first(where: { caseName($0) == settings.resolution }) else {
            return nil
        }
        guard let audio = settings.audio else {
            return StreamConfiguration(videoCodec: codec, resolution: resolution, frameRate: settings.frameRate)
        }
        let rate: AudioSampleRate
        switch audio.sampleRate {
        case 16_000: rate = .rate16000
        case 44_100: rate = .rate44100
        case 48_000: rate = .rate48000
        default: return nil
        }
        return StreamConfiguration(videoCodec: codec, audioCodec: .pcm(sampleRate: rate, numberOfChannels: audio.channels),
                                   resolution: resolution, frameRate: settings.frameRate)
    }

    /// A payload-free DAT enum value's case name (`connected`, `rayBanMeta`), as `String(describing:)` gives it
    /// for enums without a custom description; associated values are cut off.
    static func caseName(_ value: Any) -> String {
        let text = String(describing: value)
        return String(text.prefix { $0 != "(" })
    }
}
