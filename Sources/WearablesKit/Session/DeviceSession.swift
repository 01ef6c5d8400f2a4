import Synchronization

/// A session with one pair of glasses: DAT's `DeviceSession`, made by `createSession(deviceSelector:)`.
///
/// Subscribe before `start()`. The glasses drive `paused`/`started`; a lost link pauses the session and, if the
/// glasses do not come back within the device wait timeout, ends it with
/// `unexpectedError(description: "Device unavailable")`. Glasses that end the session themselves produce
/// `unexpectedError(description: "Session ended by device")`. `stopped` is terminal; the state and error streams
/// finish after it. Stopping the session stops its camera; stopping the camera never stops the session.
public final class DeviceSession: Sendable {
    /// The glasses this session runs on.
    public let deviceId: DeviceIdentifier

    private struct Core {
        var machine = DeviceSessionStateMachine()
        var camera: Camera?
        /// The attached motion capability, if any (``DeviceSession/addMotion(configuration:)``).
        var motion: Motion?
        /// Detached cameras' streams still waiting for the glasses to acknowledge their stop; they get the stream
        /// messages first, and a new camera's stream waits for them (the link protocol has no stream identifiers).
        var retiring: [Stream] = []
        var timers = TimerTable<DeviceSessionStateMachine.Timer>()
    }

    private let core = Mutex(Core())
    // Weak: the device holds its current session (`Device.claim`), and the WearablesInstance owns the device.
    private let deviceReference: WeakReference<Device>
    private var boundDevice: Device? { deviceReference.object }
    private let context: InstanceContext
    private let stateBroadcaster: Broadcaster<DeviceSessionState>
    private let errorBroadcaster: Broadcaster<DeviceSessionError>

    init(device: Device, context: InstanceContext) {
        self.deviceId = device.identifier
        self.deviceReference = WeakReference(device)
        self.context = context
        self.stateBroadcaster = Broadcaster(effects: context.effects)
        self.errorBroadcaster = Broadcaster(effects: context.effects)
    }

    // MARK: Public surface

    /// The current state.
    public var state: DeviceSessionState { core.withLock { $0.machine.state } }
    /// The glasses this session runs on.
    public var device: Device? { boundDevice }
    /// State changes (not the current state; use ``stateStream()`` to get it first).
    public var statePublisher: any Announcer<DeviceSessionState> { stateBroadcaster }
    /// Session errors.
    public var errorPublisher: any Announcer<DeviceSessionError> { errorBroadcaster }
    /// The attached camera, if any.
    public var camera: Camera? { core.withLock { $0.camera } }

    /// The current state first, then every change; finishes after `.stopped`. Never drops a state.
    public func stateStream() -> AsyncStream<DeviceSessionState> {
        let stream = core.withLock { core in
            stateBroadcaster.makeStream(bufferingPolicy: .unbounded, initial: core.machine.state)
        }
        context.effects.drain()
        return stream
    }

    /// Session errors; finishes after `.stopped`. Keeps the oldest 64 undelivered errors.
    public func errorStream() -> AsyncStream<DeviceSessionError> {
        errorBroadcaster.makeStream(bufferingPolicy: .bufferingOldest(64), initial: nil)
    }

    /// Starts the session: `idle → starting`, then `started` when the glasses accept.
    ///
    /// Does nothing if already starting, started or paused.
    /// - Throws: ``DeviceSessionError/sessionAlreadyStopped`` once stopping or stopped,
    ///   ``DeviceSessionError/noEligibleDevice`` if the glasses are not connected and compatible,
    ///   ``DeviceSessionError/sessionAlreadyExists`` if another session on them has not stopped.
    public func start() throws(DeviceSessionError) {
        let result = core.withLock { core -> Result<Void, DeviceSessionError> in
            switch core.machine.state {
            case .stopping, .stopped: return .failure(.sessionAlreadyStopped)
            case .starting, .started, .paused: return .success(())
            case .idle: break
            }
            guard let boundDevice, boundDevice.isEligible else { return .failure(.noEligibleDevice) }
            guard boundDevice.claim(self) else { return .failure(.sessionAlreadyExists) }
            switch core.machine.start() {
            case .success(let actions):
                apply(actions, &core)
                return .success(())
            case .failure(let error):
                boundDevice.release(self)
                return .failure(error)
            }
        }
        context.effects.drain()
        try result.get()
    }

    /// Stops the session and, first, its camera: `stopping`, then `stopped` when the glasses acknowledge
    /// (or after the stop grace period). Does nothing once stopping or stopped.
    public func stop() {
        perform { $0.stop() }
    }

    /// Attaches the camera capability.
    ///
    /// The configuration is checked first: a frame rate the glasses do not support (anything but 2, 7, 15, 24 or
    /// 30 fps) is refused here, never rounded, whatever the session's state.
    ///
    /// - Returns: the camera, or nil unless the session is `.started`.
    /// - Throws: ``DeviceSessionError/unsupportedStreamConfiguration(_:)`` (an
    ///   ``DeviceSessionError/unexpectedError(description:)`` carrying the ``StreamConfigurationError`` message) for
    ///   an unsupported configuration; ``DeviceSessionError/capabilityAlreadyActive`` when a camera is already
    ///   attached.
    public func addCamera(config: StreamConfiguration = StreamConfiguration()) throws(DeviceSessionError) -> Camera? {
        do { try config.validate() } catch { throw .unsupportedStreamConfiguration(error) }
        let result = core.withLock { core -> Result<Camera?, DeviceSessionError> in
            guard core.machine.state == .started else { return .success(nil) }
            guard core.camera == nil else { return .failure(.capabilityAlreadyActive) }
            guard let boundDevice else { return .failure(.noEligibleDevice) }
            let camera = Camera(configuration: config, session: self, device: boundDevice, context: context)
            core.camera = camera
            camera.stream.deviceReadinessChanged(isReady(core))
            camera.photo.deviceReadinessChanged(core.machine.isReady)
            return .success(camera)
        }
        context.effects.drain()
        return try result.get()
    }

    // MARK: Internal: the instance routes link events here (the caller drains)

    func handle(_ event: DeviceSessionEvent) {
        update { $0.deviceReported(event) }
    }

    func linkLost() { update { $0.linkLost() } }

    func linkRestored() { update { $0.linkRestored() } }

    func deviceStateChanged(from old: DeviceState, to new: DeviceState) {
        core.withLock { core in
            apply(core.machine.deviceStateChanged(from: old, to: new), &core)
            core.camera?.stream.deviceStateChanged(from: old, to: new)
        }
    }

    /// Routes a motion message to the attached motion capability (dropped when none is attached).
    func routeToMotion(_ message: DeviceMessage) {
        core.withLock { core in core.motion?.handle(message) }
    }

    /// Routes a standalone photo message to the camera's photo capability (dropped when no camera is attached).
    func routeToPhoto(_ message: DeviceMessage) {
        core.withLock { core in core.camera?.photo.handle(message) }
    }

    /// Routes a stream-level message: to the oldest retiring stream first, else to the camera's stream.
    func routeToStream(_ message: DeviceMessage) {
        core.withLock { core in
            if let retiring = core.retiring.first {
                retiring.handle(message)
                pruneRetiring(&core)
            } else {
                core.camera?.stream.handle(message)
            }
        }
    }

    /// The camera was stopped by the app: detach it (called with no lock held).
    func cameraDidStop(_ camera: Camera) {
        core.withLock { core in
            guard core.camera === camera else { return }
            core.camera = nil
            if !camera.stream.isStopped { core.retiring.append(camera.stream) }
        }
    }

    /// A stream reached `.stopped` (called from the effect queue).
    func streamDidStop(_ stream: Stream) {
        core.withLock { core in pruneRetiring(&core) }
    }

    // MARK: Performing actions

    private func isReady(_ core: Core) -> Bool {
        core.machine.isReady && core.retiring.isEmpty
    }

    private func pruneRetiring(_ core: inout Core) {
        let before = core.retiring.count
        core.retiring.removeAll { $0.isStopped }
        if before != core.retiring.count { core.camera?.stream.deviceReadinessChanged(isReady(core)) }
    }

    private func perform(_ event: (inout DeviceSessionStateMachine) -> [DeviceSessionStateMachine.Action]) {
        update(event)
        context.effects.drain()
    }

    private func update(_ event: (inout DeviceSessionStateMachine) -> [DeviceSessionStateMachine.Action]) {
        core.withLock { core in apply(event(&core.machine), &core) }
    }

    /// Performs actions under the session lock; cascades go down (camera, stream, device), never up.
    private func apply(_ actions: [DeviceSessionStateMachine.Action], _ core: inout Core) {
        guard !actions.isEmpty else { return }
        for action in actions {
            switch action {
            case .send(let message):
                boundDevice?.send(message)
            case .state(let state):
                stateBroadcaster.publish(state)
            case .error(let error):
                errorBroadcaster.publish(error)
            case .schedule(let timer):
                core.timers.arm(timer, after: duration(of: timer), on: context.scheduler) { [weak self] generation in
                    self?.timerFired(timer, generation: generation)
                }
            case .cancel(let timer):
                core.timers.cancel(timer)
            case .stopCamera:
                core.motion?.sessionClosed()
                core.motion = nil
                if let camera = core.camera {
                    core.camera = nil
                    camera.stopForSession()
                    if !camera.stream.isStopped { core.retiring.append(camera.stream) }
                }
            case .endCamera:
                core.motion?.sessionClosed()
                core.motion = nil
                core.camera?.endForSession()
                core.camera = nil
                for stream in core.retiring { stream.end() }
                core.retiring = []
            case .linkLost:
                for stream in core.retiring { stream.linkLost() }
                core.retiring.removeAll { $0.isStopped }
                core.camera?.stream.linkLost()
                core.camera?.photo.linkLost()
                core.motion?.linkLost()
            case .finish:
                boundDevice?.release(self)
                stateBroadcaster.finish()
                errorBroadcaster.finish()
            }
        }
        core.camera?.stream.deviceReadinessChanged(isReady(core))
        core.camera?.photo.deviceReadinessChanged(core.machine.isReady)
        core.motion?.deviceReadinessChanged(core.machine.isReady)
    }

    private func duration(of timer: DeviceSessionStateMachine.Timer) -> Duration {
        switch timer {
        case .start: context.configuration.startTimeout
        case .stop: context.configuration.stopGracePeriod
        case .deviceUnavailable: context.configuration.deviceWaitTimeout
        }
    }

    private func timerFired(_ timer: DeviceSessionStateMachine.Timer, generation: UInt64) {
        core.withLock { core in
            guard core.timers.claimFiring(timer, generation: generation) else { return }
            apply(core.machine.timerFired(timer), &core)
        }
        context.effects.drain()
    }
}

// MARK: - Motion (DAT 1.0's MWDATMotion)

extension DeviceSession {
    /// Attaches the motion (IMU) capability: DAT 1.0's `addMotion(configuration:)`.
    ///
    /// The capability is returned `.stopped`: subscribe, then call ``Motion/start()``. Attach it once the camera
    /// stream is `.streaming` (real glasses fail an earlier attach with `deviceDisconnected`).
    ///
    /// - Returns: the capability; nil unless the session is `.started`, and nil (rather than throwing, as DAT does)
    ///   when the glasses have no IMU. Glasses say so in their hello (``DeviceInfo/hasIMU``): the in-process
    ///   simulator does; glasses over a socket link (GlassesLink's wire) do when both ends carry the motion
    ///   messages (`docs/PROTOCOL.md`), and read as having none otherwise.
    /// - Throws: ``DeviceSessionError/capabilityAlreadyActive`` when a motion capability is already attached.
    public func addMotion(configuration: MotionConfiguration = MotionConfiguration()) throws(DeviceSessionError) -> Motion? {
        let result = core.withLock { core -> Result<Motion?, DeviceSessionError> in
            guard core.machine.state == .started else { return .success(nil) }
            guard let boundDevice, boundDevice.info.hasIMU else { return .success(nil) }
            guard core.motion == nil else { return .failure(.capabilityAlreadyActive) }
            let motion = Motion(configuration: configuration, device: boundDevice, context: context)
            core.motion = motion
            motion.deviceReadinessChanged(core.machine.isReady)
            return .success(motion)
        }
        context.effects.drain()
        return try result.get()
    }

    /// Removes the motion capability: DAT 1.0's `removeMotion()`. Terminal: the glasses are asked to stop, the
    /// capability goes `.stopped` and its publishers and ``Motion/samples`` finish; it never starts again (attach a
    /// new one with ``addMotion(configuration:)``). Does nothing when none is attached.
    public func removeMotion() throws(DeviceSessionError) {
        core.withLock { core in
            core.motion?.remove()
            core.motion = nil
        }
        context.effects.drain()
    }

    /// The attached motion capability, if any (a Linux addition, like ``camera``).
    public var motion: Motion? { core.withLock { $0.motion } }
}
