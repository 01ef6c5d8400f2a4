import Synchronization

/// The IMU of a started ``DeviceSession``: DAT 1.0's `Motion` (MWDATMotion, experimental), made by
/// ``DeviceSession/addMotion(configuration:)``.
///
/// It is returned `.stopped`: subscribe first, then call ``start()``. ``start()`` is silently ignored unless the
/// capability is `.stopped`; ``stop()`` pauses it (the same `Motion` can start again); removing it
/// (``DeviceSession/removeMotion()``) is terminal, as is the end of its session: then every publisher and
/// ``samples`` finish.
public final class Motion: Sendable {
    /// IMU samples while `.started`. Room for one reader; keeps the newest 256 undelivered samples.
    public let samples: AsyncStream<MotionSample>
    /// What the capability was created with.
    public let configuration: MotionConfiguration

    /// How many undelivered samples ``samples`` keeps (DAT: "the sample stream buffers the newest 256 samples").
    public static let sampleBufferSize = 256

    private let core: Mutex<MotionStateMachine>
    private let continuation: AsyncStream<MotionSample>.Continuation
    private let deviceReference: WeakReference<Device>
    private let context: InstanceContext
    private let stateBroadcaster: Broadcaster<MotionState>
    private let errorBroadcaster: Broadcaster<MotionError>
    private let sampleBroadcaster: Broadcaster<[MotionSample]>

    init(configuration: MotionConfiguration, device: Device, context: InstanceContext) {
        self.configuration = configuration
        self.core = Mutex(MotionStateMachine(configuration: configuration))
        (samples, continuation) = AsyncStream.makeStream(
            of: MotionSample.self, bufferingPolicy: .bufferingNewest(Self.sampleBufferSize))
        self.deviceReference = WeakReference(device)
        self.context = context
        self.stateBroadcaster = Broadcaster(effects: context.effects)
        self.errorBroadcaster = Broadcaster(effects: context.effects)
        self.sampleBroadcaster = Broadcaster(effects: context.effects)
    }

    /// State changes (not the current state: read ``state`` for that).
    public var statePublisher: any Announcer<MotionState> { stateBroadcaster }
    /// Motion errors.
    public var errorPublisher: any Announcer<MotionError> { errorBroadcaster }
    /// The current state.
    public var state: MotionState { core.withLock { $0.state } }

    /// Every batch of samples as it arrives, in order with the state changes, beside ``samples`` (not DAT: for
    /// this repository's pipeline, which must see every sample in virtual time without a reader task).
    package var sampleBatchPublisher: any Announcer<[MotionSample]> { sampleBroadcaster }

    /// Asks the glasses to start sampling: `.stopped → .starting`, then `.started` when they answer. Silently
    /// ignored unless `.stopped` (and after removal). With no glasses to ask it publishes
    /// ``MotionError/deviceDisconnected`` and stays `.stopped`.
    public func start() {
        perform { $0.start() }
    }

    /// Asks the glasses to stop sampling: `.stopping`, then `.stopped` when they answer. Does nothing unless
    /// `.starting` or `.started`.
    public func stop() {
        perform { $0.stop() }
    }

    // MARK: Internal: the session calls these under its own lock (it drains afterwards)

    func remove() { update { $0.remove() } }

    func sessionClosed() { update { $0.sessionClosed() } }

    func linkLost() { update { $0.linkLost() } }

    func deviceReadinessChanged(_ ready: Bool) { update { $0.deviceReadinessChanged(ready) } }

    /// A motion message from the glasses.
    func handle(_ message: DeviceMessage) {
        switch message {
        case .motion(let event): update { $0.deviceReported(event) }
        case .motionSamples(let batch): update { $0.samplesArrived(batch) }
        default: break
        }
    }

    // MARK: Performing actions

    private func perform(_ event: (inout MotionStateMachine) -> [MotionStateMachine.Action]) {
        update(event)
        context.effects.drain()
    }

    private func update(_ event: (inout MotionStateMachine) -> [MotionStateMachine.Action]) {
        core.withLock { machine in apply(event(&machine)) }
    }

    /// Performs actions under the motion lock; every delivery goes through the effect queue, in order.
    private func apply(_ actions: [MotionStateMachine.Action]) {
        for action in actions {
            switch action {
            case .send(let message):
                deviceReference.object?.send(message)
            case .state(let state):
                stateBroadcaster.publish(state)
            case .error(let error):
                errorBroadcaster.publish(error)
            case .samples(let batch):
                let continuation = continuation
                context.effects.enqueue { for sample in batch { continuation.yield(sample) } }
                sampleBroadcaster.publish(batch)
            case .finish:
                let continuation = continuation
                stateBroadcaster.finish()
                errorBroadcaster.finish()
                sampleBroadcaster.finish()
                context.effects.enqueue { continuation.finish() }
            }
        }
    }
}
