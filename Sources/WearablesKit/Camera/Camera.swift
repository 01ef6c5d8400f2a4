import Synchronization

/// The camera capability of a started ``DeviceSession``: DAT's `Camera`, made by `addCamera(config:)`.
///
/// It owns its ``stream``. `stop()` stops the stream and detaches the camera from its session, so a later
/// `addCamera(config:)` can attach a new one; it never stops the session.
public final class Camera: Sendable {
    /// The camera's video stream.
    public let stream: Stream
    /// The standalone photo capability (DAT 1.0's `Camera.photo`, experimental). It competes with ``stream`` for the
    /// camera: stop one before using the other. Closed for good when the camera stops.
    public let photo: Photo

    private let core = Mutex<CameraState>(.started)
    private let session: WeakReference<DeviceSession>
    private let context: InstanceContext
    private let stateBroadcaster: Broadcaster<CameraState>

    init(configuration: StreamConfiguration, session: DeviceSession, device: Device, context: InstanceContext) {
        self.stream = Stream(configuration: configuration, device: device, context: context)
        self.photo = Photo(device: device, context: context)
        self.session = WeakReference(session)
        self.context = context
        self.stateBroadcaster = Broadcaster(effects: context.effects)
        stream.setOwners(camera: self, session: session)
    }

    /// The current state.
    public var state: CameraState { core.withLock { $0 } }

    /// State changes (the camera is created `.started`).
    public var statePublisher: any Announcer<CameraState> { stateBroadcaster }

    /// The current state first, then every change; finishes after `.stopped`.
    public func stateStream() -> AsyncStream<CameraState> {
        let stream = core.withLock { state in
            stateBroadcaster.makeStream(bufferingPolicy: .unbounded, initial: state)
        }
        context.effects.drain()
        return stream
    }

    /// Stops the stream and the photo capability, and detaches the camera from its session (which keeps running).
    public func stop() {
        let proceed = beginStopping()
        guard proceed else { return }
        photo.close(tellGlasses: true)
        stream.detach()
        session.object?.cameraDidStop(self)
        finishIfStreamStopped()
        context.effects.drain()
    }

    // MARK: Internal: the session cascades into these, under its own lock

    /// The session is stopping: stop the stream; the session does its own bookkeeping.
    func stopForSession() {
        guard beginStopping() else { return }
        photo.close(tellGlasses: true)
        stream.detach()
        finishIfStreamStopped()
    }

    /// The session ended: the stream is stopped at once, without asking the glasses.
    func endForSession() {
        _ = beginStopping()
        photo.close(tellGlasses: false)
        stream.end()
        finishIfStreamStopped()
    }

    /// The stream reached `.stopped`.
    func streamDidStop() {
        finishIfStreamStopped()
    }

    private func beginStopping() -> Bool {
        core.withLock { state -> Bool in
            guard state == .started || state == .starting else { return false }
            state = .stopping
            stateBroadcaster.publish(.stopping)
            return true
        }
    }

    private func finishIfStreamStopped() {
        guard stream.isStopped else { return }
        core.withLock { state in
            guard state == .stopping else { return }
            state = .stopped
            stateBroadcaster.publish(.stopped)
            stateBroadcaster.finish()
        }
    }
}
