import Foundation
import Synchronization
import WearablesKit

/// Joins the ``LifecyclePolicy`` to WearablesKit: turns sessions, cameras, streams and link states into policy
/// events, and performs the policy's actions (connect, start a session, add and start the camera, restart it,
/// schedule timers).
///
/// WearablesKit calls back on whichever thread delivered a link event or fired a timer, sometimes from inside a
/// call the controller made. So events only append the policy's actions to a queue under the lock, and one thread
/// at a time performs them, in order, outside the lock.
final class GlassesController: Sendable {
    /// How the controller reaches the glasses and reports back.
    struct Dependencies: Sendable {
        let wearables: WearablesInstance
        let scheduler: any EventScheduler
        let streamConfiguration: StreamConfiguration
        let handoff: FrameHandoff
        let counters: BridgeCounters
        /// Opens a new link to the glasses (the device end is already being served).
        let connect: @Sendable () throws -> any DeviceLink
        /// The glasses dial this host (`connect` waits for them): `connect` runs on a thread of its own, not on the
        /// scheduler's, so timers (the run's duration, stats, and in virtual time the clock the relay needs to come
        /// back) keep running while the bridge waits for the next dial.
        var connectWaitsForDevice = false
        /// `connect` may block (a dial that waits for its listener; always so when ``connectWaitsForDevice``): it runs
        /// on a thread of its own, not on the scheduler's.
        var connectOnOwnThread = false
        /// Keeps what the glasses sent (`--record`), if asked.
        let record: (@Sendable (VideoFrame) -> Void)?
        /// Sees every delivered frame with its host arrival time (``BridgeSettings/frameObserver``).
        let observe: (@Sendable (VideoFrame, Duration) -> Void)?
        /// Reports an event for the output.
        let emit: @Sendable (BridgeEvent) -> Void
        /// The run must end (nil: normally).
        let finish: @Sendable (BridgeFailure?) -> Void
        /// How long to wait for the glasses to introduce themselves on a new link.
        var helloTimeout: Duration = .seconds(10)
        /// Where the glasses' IMU goes, when the run asks for it (``BridgeSettings/motion``): Motion is added to each
        /// session once its stream streams (where DAT's sample attaches it).
        var motion: MotionClockMonitor? = nil
    }

    private struct State: LifecycleDriven {
        var lifecycle: LifecycleDrive
        var deviceID: DeviceIdentifier?
        var deviceTokens: [any AnyListenerToken] = []
        var session: DeviceSession?
        var sessionID: UInt64 = 0
        var sessionTokens: [any AnyListenerToken] = []
        var stoppingSessionByRequest = false
        var lastSessionProblem: String?
        var camera: Camera?
        var cameraID: UInt64 = 0
        var cameraTokens: [any AnyListenerToken] = []
        /// The session Motion was added to (its ``sessionID``), and the listeners on it.
        var motionSessionID: UInt64?
        var motionTokens: [any AnyListenerToken] = []
        var connectAttempt: UInt64 = 0
        /// A ``Dependencies/connectWaitsForDevice`` wait is under way on its own thread.
        var awaitingDevice = false
        var linkUp = false
        /// Why the current attempt's link closed, in words (nil while open, or closed by this side).
        var closeReason: String?
        /// The glasses' own words with their latest stream fault (DAT's `StreamError` carries none).
        var lastDeviceFault: String?
        /// The same, from the current link only: a loss right after it is told with it.
        var linkFault: String?
        var tornDown = false
        /// The current link, for the device's count of frames it dropped for lack of credit.
        var dropReporter: (any DeviceDropReporting)?
        /// What earlier links' devices reported (each link counts from 0).
        var dropsOnEarlierLinks: UInt64 = 0
    }

    private let state: Mutex<State>
    private let deps: Dependencies

    init(policy: LifecyclePolicy, dependencies: Dependencies) {
        self.state = Mutex(State(lifecycle: LifecycleDrive(policy: policy)))
        self.deps = dependencies
    }

    // MARK: Public surface for the pipeline

    /// Starts connecting.
    func start() {
        event { $0.start(now: $1) }
    }

    /// Ends the run normally (duration, signal, end of input).
    func stop() {
        event { $0.stopRequested(now: $1) }
    }

    /// Ends the run with a failure from outside the device (the SDK, the decoder).
    func fail(_ failure: BridgeFailure) {
        event { $0.failed(failure, now: $1) }
    }

    /// The policy's counters.
    var restartCounts: (stalls: Int, reconnects: Int, sessions: Int) {
        state.withLock { ($0.lifecycle.policy.stallRestarts, $0.lifecycle.policy.reconnects, $0.lifecycle.policy.sessionRestarts) }
    }

    /// Frames the glasses dropped because this host had not granted credit, over every link of the run (from
    /// the devices' heartbeats; 0 on links that do not report it).
    var deviceDroppedFrames: UInt64 {
        let (earlier, current) = state.withLock { ($0.dropsOnEarlierLinks, $0.dropReporter) }
        // Read outside the controller's lock: the link has its own.
        return earlier &+ (current?.deviceReportedDrops ?? 0)
    }

    /// The current phase.
    var phase: LifecyclePolicy.Phase { state.withLock { $0.lifecycle.policy.phase } }

    /// Asks the glasses for a photo during the stream; false when not streaming or a capture is in flight.
    func capturePhoto() -> Bool {
        guard let stream = state.withLock({ $0.camera?.stream }) else { return false }
        return stream.capturePhoto(format: .jpeg)
    }

    /// Stops frame delivery: the camera and the session stop, every listener is dropped. Called once, at teardown.
    func stopDelivery() {
        let (camera, session, tokens) = state.withLock { state -> (Camera?, DeviceSession?, [any AnyListenerToken]) in
            state.tornDown = true
            let tokens = state.cameraTokens + state.sessionTokens + state.deviceTokens
            state.cameraTokens = []
            state.sessionTokens = []
            state.deviceTokens = []
            state.stoppingSessionByRequest = true
            defer {
                state.camera = nil
                state.session = nil
            }
            return (state.camera, state.session, tokens)
        }
        _ = tokens  // dropped here, outside the lock: the subscriptions end
        camera?.stop()
        session?.stop()
    }

    // MARK: Events

    private func event(_ body: (inout LifecyclePolicy, Duration) -> [LifecyclePolicy.Action]) {
        state.lifecycleEvent(now: deps.scheduler.now, body, report: { deps.emit(.state($0, detail: nil)) }, perform: perform)
    }

    private func perform(_ action: LifecyclePolicy.Action) {
        switch action {
        case .connect: connect()
        case .closeLink: closeSessionAndCamera()
        case .startSession: startSession()
        case .startCamera: startCamera()
        case .restartCamera:
            stopCamera()
            startCamera()
        case .markDiscontinuity:
            deps.handoff.push(control: .discontinuity)
        case .schedule(let timer, let delay, let generation):
            deps.scheduler.schedule(after: delay) { [weak self] in
                self?.event { $0.timerFired(timer, generation: generation, now: $1) }
            }
        case .notice(let message):
            deps.emit(.notice(message))
        case .warning(let message):
            deps.emit(.warning(NoticeWording.sentence(message)))
        case .finish(let failure):
            if let failure { deps.emit(.error(code: failure.kind.rawValue, message: failure.message)) }
            deps.finish(failure)
        }
    }

    // MARK: Actions

    private func connect() {
        let attempt = state.withLock { state -> UInt64 in
            state.connectAttempt += 1
            state.linkUp = false
            state.awaitingDevice = deps.connectWaitsForDevice
            return state.connectAttempt
        }
        guard deps.connectWaitsForDevice || deps.connectOnOwnThread else {
            connected(attempt: attempt, result: Result { try deps.connect() })
            return
        }
        // Waiting for a device to dial blocks for as long as it takes: never on the scheduler's thread, which would
        // stop every timer of the run (in virtual time, the very clock a restarting relay needs to dial again).
        let thread = Thread { [weak self] in
            guard let self else { return }
            let result = Result { try self.deps.connect() }
            self.connected(attempt: attempt, result: result)
        }
        thread.name = "glasses-bridge.connect"
        thread.start()
    }

    /// Whether the controller is waiting, on its own thread, for the glasses to dial (virtual time holds still a
    /// moment for it: ``waitWhileAwaitingDevice(upTo:)``).
    var isAwaitingDevice: Bool { state.withLock { $0.awaitingDevice } }

    /// In virtual time: waits, in real time and at most `limit`, while a dialled connection is awaited, so that the
    /// clock does not race ahead of a relay that is dialling now. Returns at once when nothing is awaited.
    func waitWhileAwaitingDevice(upTo limit: Duration) {
        let deadline = ContinuousClock.now + limit
        while isAwaitingDevice, ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.000_2)
        }
    }

    /// The outcome of connect attempt `attempt`: attach the link, or report the failure.
    private func connected(attempt: UInt64, result: Result<any DeviceLink, any Error>) {
        let (current, tornDown) = state.withLock { ($0.connectAttempt == attempt, $0.tornDown) }
        // The wait is over once the link is attached (or the failure reported), not before: virtual time holds
        // still until then, so that nothing runs ahead of the new link's opening.
        // (A failure reported below may already have started the next attempt, whose wait is its own.)
        defer {
            state.withLock { if $0.connectAttempt == attempt { $0.awaitingDevice = false } }
        }
        let link: any DeviceLink
        switch result {
        case .failure(let error):
            guard current else { return }
            let message = (error as? BridgeFailure)?.message ?? error.localizedDescription
            event { $0.connectFailed(message, now: $1) }
            return
        case .success(let opened):
            link = opened
        }
        guard current, !tornDown else {
            // The run ended (or moved on) while the device dialled: nobody will use this link.
            link.close()
            return
        }
        // Backpressure has one owner: the link grants the device credit only for places free in the hand-off, and
        // the worker makes room when it takes a frame. A slow host makes the device drop late frames at the source.
        if let gated = link as? any VideoCreditGating {
            let handoff = deps.handoff
            gated.gateVideoCredit { handoff.room }
            handoff.setRoomObserver { [weak gated] in gated?.videoRoomChanged() }
        }
        let previous = state.withLock { $0.dropReporter }
        let previousDrops = previous?.deviceReportedDrops ?? 0
        state.withLock { state in
            state.dropsOnEarlierLinks &+= previousDrops
            state.dropReporter = link as? any DeviceDropReporting
        }
        state.withLock { $0.closeReason = nil }
        deps.wearables.attach(link: ObservedDeviceLink(link, closed: { [weak self] error in self?.linkClosed(attempt: attempt, error) },
                                                       fault: { [weak self] _, message in
                                                           guard !message.isEmpty else { return }
                                                           self?.state.withLock { state in
                                                               state.lastDeviceFault = message
                                                               state.linkFault = message
                                                           }
                                                       }))
        watchForDevice()
        // Weakly: a pending timer must not keep the link (and through it the scheduler that holds the timer) alive.
        deps.scheduler.schedule(after: deps.helloTimeout) { [weak self, weak link] in
            guard let self else { return }
            let stillWaiting = self.state.withLock { $0.connectAttempt == attempt && !$0.linkUp }
            if stillWaiting {
                link?.close()  // a link that never said hello is not kept open beside the next attempt's
                self.event { $0.linkFailedBeforeHello("the glasses did not introduce themselves within 10 s", now: $1) }
            }
        }
        // Glasses already known reconnect the same Device; its link-state listener reports `.connected`.
    }

    /// The link of connect attempt `attempt` closed with `error`: kept for the loss's message, and a link that
    /// closed before the glasses said hello fails the attempt at once, with the reason (a refused pairing token,
    /// another protocol version) instead of a hello timeout ten seconds later.
    private func linkClosed(attempt: UInt64, _ error: LinkError) {
        guard error.code != .closedLocally else { return }
        let reason = Self.reason(error)
        let beforeHello = state.withLock { state -> Bool in
            guard state.connectAttempt == attempt else { return false }
            state.closeReason = reason
            return !state.linkUp
        }
        if beforeHello { event { $0.linkFailedBeforeHello(reason, now: $1) } }
    }

    /// A link's close in a person's words: what the link said, without the error code's name.
    static func reason(_ error: LinkError) -> String {
        error.message.isEmpty ? "the connection closed (\(error.code))" : error.message
    }

    /// Subscribes to the device list once, then to the first device's link state.
    private func watchForDevice() {
        let needsWatch = state.withLock { $0.deviceTokens.isEmpty && $0.deviceID == nil }
        guard needsWatch else { return }
        let token = deps.wearables.addDevicesListener { [weak self] identifiers in
            guard let self, let first = identifiers.first else { return }
            self.deviceAppeared(first)
        }
        state.withLock { $0.deviceTokens.append(token) }
    }

    private func deviceAppeared(_ identifier: DeviceIdentifier) {
        let isNew = state.withLock { state -> Bool in
            guard state.deviceID == nil else { return false }
            state.deviceID = identifier
            return true
        }
        guard isNew, let device = deps.wearables.deviceForIdentifier(identifier) else { return }
        deps.emit(.notice("found \(device.nameOrId()) (\(device.info.deviceType.rawValue), firmware \(device.info.firmwareVersion))"))
        let token = device.addLinkStateListener { [weak self] linkState in
            self?.linkStateChanged(linkState)
        }
        state.withLock { $0.deviceTokens.append(token) }
    }

    private func linkStateChanged(_ linkState: LinkState) {
        switch linkState {
        case .connected:
            state.withLock { state in
                state.linkUp = true
                state.linkFault = nil
            }
            event { $0.linkConnected(now: $1) }
        case .disconnected:
            let (wasUp, closeReason, fault) = state.withLock { state -> (Bool, String?, String?) in
                defer { state.linkUp = false }
                return (state.linkUp, state.closeReason, state.linkFault)
            }
            // Glasses that stop over a fault of their own (a feed file that broke) say why before they go.
            let reason = (closeReason ?? "the connection closed") + (fault.map { "; the glasses had reported a stream fault: \($0)" } ?? "")
            if wasUp { event { $0.linkLost(reason, now: $1) } }
        case .connecting:
            break
        }
    }

    private func startSession() {
        guard let deviceID = state.withLock({ $0.deviceID }) else {
            event { $0.sessionFailed("no glasses known", now: $1) }
            return
        }
        let session: DeviceSession
        do {
            session = try deps.wearables.createSession(deviceSelector: SpecificDeviceSelector(device: deviceID))
        } catch {
            event { $0.sessionFailed(error.description, now: $1) }
            return
        }
        let id = state.withLock { state -> UInt64 in
            state.sessionID += 1
            state.session = session
            state.stoppingSessionByRequest = false
            state.lastSessionProblem = nil
            return state.sessionID
        }
        let stateToken = session.statePublisher.listen { [weak self] sessionState in
            self?.sessionStateChanged(sessionState, id: id)
        }
        let errorToken = session.errorPublisher.listen { [weak self] error in
            self?.sessionError(error, id: id)
        }
        state.withLock { $0.sessionTokens = [stateToken, errorToken] }
        do {
            try session.start()
        } catch {
            event { $0.sessionFailed(error.description, now: $1) }
        }
    }

    private func sessionStateChanged(_ sessionState: DeviceSessionState, id: UInt64) {
        let (current, requested, problem) = state.withLock { ($0.sessionID == id, $0.stoppingSessionByRequest, $0.lastSessionProblem) }
        guard current else { return }
        switch sessionState {
        case .started:
            event { $0.sessionStarted(now: $1) }
        case .stopped where !requested:
            event { $0.sessionEnded(reason: problem ?? "the session stopped", now: $1) }
        default:
            break
        }
    }

    private func sessionError(_ error: DeviceSessionError, id: UInt64) {
        guard state.withLock({ $0.sessionID == id }) else { return }
        switch error {
        case .thermalCritical, .thermalEmergency:
            event { $0.streamError(.thermal, message: error.description, now: $1) }
        case .batteryCritical:
            event { $0.streamError(.battery, message: error.description, now: $1) }
        case .unexpectedError(let description):
            state.withLock { $0.lastSessionProblem = description }
        default:
            state.withLock { $0.lastSessionProblem = error.description }
            deps.emit(.notice("session: \(error.description)"))
        }
    }

    private func startCamera() {
        guard let session = state.withLock({ $0.session }) else {
            event { $0.cameraFailed("no session", now: $1) }
            return
        }
        let camera: Camera
        do {
            guard let added = try session.addCamera(config: deps.streamConfiguration) else {
                event { $0.cameraFailed("the session is not started", now: $1) }
                return
            }
            camera = added
        } catch {
            event { $0.cameraFailed(error.description, now: $1) }
            return
        }
        let stream = camera.stream
        let id = state.withLock { state -> UInt64 in
            state.cameraID += 1
            state.camera = camera
            return state.cameraID
        }
        let scheduler = deps.scheduler
        let handoff = deps.handoff
        let record = deps.record
        let observe = deps.observe
        let tokens: [any AnyListenerToken] = [
            stream.statePublisher.listen { [weak self] streamState in self?.streamStateChanged(streamState, id: id) },
            stream.errorPublisher.listen { [weak self] error in self?.streamError(error, id: id) },
            stream.videoFramePublisher.listen { [weak self] frame in
                guard let self else { return }
                let now = scheduler.now
                let current = self.state.withLock { state -> Bool in
                    guard state.cameraID == id, !state.tornDown else { return false }
                    state.lifecycle.policy.frameReceived(now: now)
                    return true
                }
                guard current else { return }
                record?(frame)
                observe?(frame, now)
                handoff.push(frame, hostUs: now.wholeMicroseconds)
            },
            stream.photoDataPublisher.listen { [weak self] photo in
                self?.deps.emit(.notice("photo received: \(photo.data.count) bytes of \(photo.format.rawValue)"))
            },
        ]
        state.withLock { $0.cameraTokens = tokens }
        stream.start()
    }

    private func stopCamera() {
        let (camera, tokens) = state.withLock { state -> (Camera?, [any AnyListenerToken]) in
            let taken = (state.camera, state.cameraTokens)
            state.camera = nil
            state.cameraTokens = []
            state.cameraID += 1
            return taken
        }
        _ = tokens
        camera?.stop()
    }

    private func closeSessionAndCamera() {
        stopCamera()
        let (session, tokens) = state.withLock { state -> (DeviceSession?, [any AnyListenerToken]) in
            let taken = (state.session, state.sessionTokens)
            state.session = nil
            state.sessionTokens = []
            state.sessionID += 1
            return taken
        }
        _ = tokens
        session?.stop()
    }

    private func streamStateChanged(_ streamState: StreamState, id: UInt64) {
        guard state.withLock({ $0.cameraID == id }) else { return }
        switch streamState {
        case .streaming:
            event { $0.streamStreaming(now: $1) }
            attachMotion()
        case .paused: event { $0.streamPaused(now: $1) }
        case .stopped: event { $0.streamStopped(now: $1) }
        case .stopping, .waitingForDevice, .starting: break
        }
    }

    /// Adds Motion to the current session and starts it at 30 Hz, once per session, when the run asks for it.
    private func attachMotion() {
        guard let monitor = deps.motion else { return }
        let target = state.withLock { state -> (DeviceSession, UInt64)? in
            guard let session = state.session, state.motionSessionID != state.sessionID else { return nil }
            state.motionSessionID = state.sessionID
            return (session, state.sessionID)
        }
        guard let (session, id) = target else { return }
        let motion: Motion
        do {
            guard let added = try session.addMotion(configuration: MotionConfiguration(samplingRate: .hz30)) else {
                monitor.glassesUnavailable("the glasses have no IMU (their hello says so)")
                return
            }
            motion = added
        } catch {
            monitor.glassesUnavailable("the glasses' motion could not be added: \(error.description)")
            return
        }
        let tokens: [any AnyListenerToken] = [
            motion.sampleBatchPublisher.listen { [weak self] batch in
                guard self?.state.withLock({ $0.sessionID == id }) == true else { return }
                monitor.samples(batch)
            },
            motion.errorPublisher.listen { [weak self] error in
                guard self?.state.withLock({ $0.sessionID == id }) == true else { return }
                if error == .sensorUnavailable { monitor.glassesUnavailable("the glasses refused their motion sensor (sensorUnavailable)") }
            },
        ]
        state.withLock { $0.motionTokens = tokens }
        monitor.attached()
        motion.start()
    }

    /// The glasses' own words with their latest stream fault, if they gave any.
    var lastDeviceFault: String? { state.withLock { $0.lastDeviceFault } }

    private func streamError(_ error: StreamError, id: UInt64) {
        guard state.withLock({ $0.cameraID == id }) else { return }
        let fault: LifecyclePolicy.StreamFault
        switch error {
        case .thermalHot: fault = .thermal
        case .batteryLow: fault = .battery
        case .permissionDenied: fault = .permissionDenied
        case .hingesClosed: fault = .hingesClosed
        case .photoCaptureFailed: fault = .photoCaptureFailed
        case .peakPowerLimit: fault = .peakPower
        case .deviceNotConnected, .deviceNotFound: fault = .deviceNotConnected
        case .videoStreamingError, .audioStreamingError:
            // Malformed samples are dropped by WearablesKit and the stream goes on; a real stall is the watchdog's.
            let said = state.withLock { $0.lastDeviceFault }.map { " The glasses said: \($0)" } ?? ""
            deps.emit(.notice("stream: \(error.description)\(said)"))
            return
        case .internalError, .timeout: fault = .streamFailure
        }
        event { $0.streamError(fault, message: error.description, now: $1) }
    }
}
