import Foundation
import Synchronization

/// DAT 1.0's standalone photo (`Camera.photo`, experimental): photos up to the sensor's full resolution, with their
/// own lifecycle beside the stream's.
///
/// Subscribe, call ``start()``, wait for `.started`, then ``capturePhoto(resolution:quality:)``; the photo arrives on
/// ``photoDataPublisher`` after progress on ``transferProgressPublisher``. The stream and the photo compete for the
/// camera: glasses refuse a capture while the stream is streaming (the simulated glasses fail it after about 100 ms,
/// as Meta's sample app records of real glasses), so stop the stream first. ``Camera/stop()`` (and the session's
/// stop or end) closes the capability for good; ``stop()`` pauses it and a stopped capability can start again.
/// Publishers deliver asynchronously and in order; ``photoDataPublisher`` replays nothing.
public final class Photo: Sendable {
    /// How long a capture may take, from the request to the photo's last byte, before it fails with
    /// ``PhotoError/captureFailure(underlying:)`` (a Linux choice: Meta's sample app allows 15 s for a transfer that
    /// is "supposed to be about a second").
    public static let captureTimeout: Duration = .seconds(15)

    private enum Timer: Hashable { case capture }

    private struct Core {
        var machine: PhotoStateMachine
        var timers = TimerTable<Timer>()
    }

    private let core: Mutex<Core>
    private let deviceReference: WeakReference<Device>
    private let context: InstanceContext
    private let stateBroadcaster: Broadcaster<PhotoState>
    private let dataBroadcaster: Broadcaster<PhotoCaptureData>
    private let errorBroadcaster: Broadcaster<PhotoError>
    private let progressBroadcaster: Broadcaster<PhotoTransferProgress>

    init(device: Device, context: InstanceContext) {
        self.core = Mutex(Core(machine: PhotoStateMachine(deviceOffersPhoto: device.info.hasStandalonePhoto)))
        self.deviceReference = WeakReference(device)
        self.context = context
        self.stateBroadcaster = Broadcaster(effects: context.effects)
        self.dataBroadcaster = Broadcaster(effects: context.effects)
        self.errorBroadcaster = Broadcaster(effects: context.effects)
        self.progressBroadcaster = Broadcaster(effects: context.effects)
    }

    /// State changes (not the current state: read ``state`` for that).
    public var statePublisher: any Announcer<PhotoState> { stateBroadcaster }
    /// Every photo that arrived whole.
    public var photoDataPublisher: any Announcer<PhotoCaptureData> { dataBroadcaster }
    /// Photo errors.
    public var errorPublisher: any Announcer<PhotoError> { errorBroadcaster }
    /// How much of the photo under way has arrived (after every piece).
    public var transferProgressPublisher: any Announcer<PhotoTransferProgress> { progressBroadcaster }
    /// The current state.
    public var state: PhotoState { core.withLock { $0.machine.state } }

    /// Asks the glasses to start the capability: `.stopped → .starting`, then `.started` when they answer. Ignored
    /// unless `.stopped`. Glasses that do not offer standalone photos publish ``PhotoError/serviceUnavailable``;
    /// with no glasses to ask, ``PhotoError/sessionSetupFailed(underlying:)``.
    public func start() {
        perform { $0.start() }
    }

    /// Stops the capability: `.stopping`, then `.stopped` when the glasses answer (a capture in progress fails).
    /// While `.starting` the stop is recorded and honoured as soon as the start resolves.
    public func stop() {
        perform { $0.stop() }
    }

    /// Asks the glasses for a photo. The capability must be `.started`, else ``PhotoError/notReady`` is published;
    /// one capture at a time, else ``PhotoError/busy``.
    public func capturePhoto(resolution: PhotoResolution = .medium, quality: PhotoQuality = .medium) {
        perform { $0.capture(resolution: resolution, quality: quality) }
    }

    // MARK: Internal: the camera and the session call these under their own locks (they drain afterwards)

    func deviceReadinessChanged(_ ready: Bool) { update { $0.deviceReadinessChanged(ready) } }

    func linkLost() { update { $0.linkLost() } }

    /// The camera stopped: terminal. `tellGlasses` when they can still be asked to stop.
    func close(tellGlasses: Bool) { update { $0.close(tellGlasses: tellGlasses) } }

    /// A photo message from the glasses.
    func handle(_ message: DeviceMessage) {
        switch message {
        case .photoCapability(let event): update { $0.deviceReported(event) }
        case .photoChunk(let chunk): update { $0.chunkArrived(chunk) }
        default: break
        }
    }

    // MARK: Performing actions

    private func perform(_ event: (inout PhotoStateMachine) -> [PhotoStateMachine.Action]) {
        update(event)
        context.effects.drain()
    }

    private func update(_ event: (inout PhotoStateMachine) -> [PhotoStateMachine.Action]) {
        core.withLock { core in apply(event(&core.machine), &core) }
    }

    private func timerFired(requestID: UInt32, generation: UInt64) {
        core.withLock { core in
            guard core.timers.claimFiring(.capture, generation: generation) else { return }
            apply(core.machine.timedOut(requestID: requestID), &core)
        }
        context.effects.drain()
    }

    /// Performs actions under the photo lock; every delivery goes through the effect queue, in order.
    private func apply(_ actions: [PhotoStateMachine.Action], _ core: inout Core) {
        for action in actions {
            switch action {
            case .send(let message):
                deviceReference.object?.send(message)
            case .state(let state):
                stateBroadcaster.publish(state)
            case .error(let failure):
                errorBroadcaster.publish(Self.error(failure))
            case .progress(let progress):
                progressBroadcaster.publish(progress)
            case .photo(let data, let metadata):
                dataBroadcaster.publish(PhotoCaptureData(imageData: data, metadata: metadata, timestamp: Date()))
            case .armTimer(let requestID):
                core.timers.arm(.capture, after: Self.captureTimeout, on: context.scheduler) { [weak self] generation in
                    self?.timerFired(requestID: requestID, generation: generation)
                }
            case .cancelTimer:
                core.timers.cancel(.capture)
            case .finish:
                stateBroadcaster.finish()
                dataBroadcaster.finish()
                errorBroadcaster.finish()
                progressBroadcaster.finish()
            }
        }
    }

    private static func error(_ failure: PhotoStateMachine.Failure) -> PhotoError {
        switch failure {
        case .notReady: .notReady
        case .busy: .busy
        case .serviceUnavailable: .serviceUnavailable
        case .permissionDenied: .permissionDenied
        case .deviceHealthCritical: .deviceHealthCritical
        case .deviceDisconnected: .deviceDisconnected
        case .captureFailure(let why): .captureFailure(underlying: PhotoFailureDetail(why))
        case .sessionSetupFailed(let why): .sessionSetupFailed(underlying: PhotoFailureDetail(why))
        }
    }
}
