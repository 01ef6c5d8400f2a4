/// The pure lifecycle of a ``Motion`` capability: one mutating method per event, each returning the actions to
/// perform.
///
/// No I/O, no locks, no time: the owner (``Motion``) performs the actions outside its lock. DAT 1.0's documented and
/// observed rules: the capability is created `.stopped`; `start()` is silently ignored unless `.stopped`; `stop()`
/// pauses (the same capability can start again); removal is terminal. The glasses may stop the IMU on their own
/// (then `stopping → stopped`, as a photo transfer does on real glasses).
struct MotionStateMachine: Sendable {
    /// What the owner must do.
    enum Action: Hashable, Sendable {
        case send(HostMessage)
        case state(MotionState)
        case error(MotionError)
        /// Deliver these samples to `samples`.
        case samples([MotionSample])
        /// Removed (or the session ended): finish every publisher and the sample stream.
        case finish
    }

    let configuration: MotionConfiguration

    private(set) var state: MotionState = .stopped
    /// Whether the session is started and the link is up.
    private(set) var deviceReady = false
    /// Removed or closed with its session: never starts again.
    private(set) var removed = false

    init(configuration: MotionConfiguration) {
        self.configuration = configuration
    }

    // MARK: Calls from the app

    /// `start()`: from `.stopped` to `.starting`, asking the glasses; ignored in any other state. With no glasses
    /// to ask (session paused, link down) it reports ``MotionError/deviceDisconnected`` and stays stopped.
    mutating func start() -> [Action] {
        guard !removed, state == .stopped else { return [] }
        guard deviceReady else { return [.error(.deviceDisconnected)] }
        return [transition(.starting), .send(.startMotion(configuration.samplingRate))]
    }

    /// `stop()`: from `.starting` or `.started` to `.stopping`, asking the glasses; `.stopped` when they answer.
    mutating func stop() -> [Action] {
        guard !removed else { return [] }
        switch state {
        case .starting, .started:
            return [transition(.stopping), .send(.stopMotion)]
        case .stopped, .stopping:
            return []
        }
    }

    /// `removeMotion()`: terminal. Asks the glasses to stop if they were asked to start, goes `.stopped` and finishes.
    mutating func remove() -> [Action] {
        guard !removed else { return [] }
        removed = true
        var actions: [Action] = []
        switch state {
        case .starting, .started:
            actions += [.send(.stopMotion), transition(.stopping), transition(.stopped)]
        case .stopping:
            actions.append(transition(.stopped))
        case .stopped:
            break
        }
        return actions + [.finish]
    }

    // MARK: Events from the session and the glasses

    /// The session is started and the link up (true), or not.
    mutating func deviceReadinessChanged(_ ready: Bool) -> [Action] {
        deviceReady = ready
        return []
    }

    /// The glasses reported an IMU state.
    mutating func deviceReported(_ event: DeviceMotionEvent) -> [Action] {
        guard !removed else { return [] }
        switch (event, state) {
        case (.started, .starting):
            return [transition(.started)]
        case (.stopped, .stopping):
            return [transition(.stopped)]
        case (.stopped, .starting), (.stopped, .started):
            // The glasses stopped the IMU on their own.
            return [transition(.stopping), transition(.stopped)]
        case (.unavailable, .starting), (.unavailable, .started):
            return [.error(.sensorUnavailable), transition(.stopping), transition(.stopped)]
        case (.unavailable, .stopping):
            return [transition(.stopped)]
        default:
            return []
        }
    }

    /// The glasses sent samples: delivered while `.started` (and `.starting`, in case samples overtake the state),
    /// dropped otherwise.
    mutating func samplesArrived(_ samples: [MotionSample]) -> [Action] {
        guard !removed, state == .started || state == .starting, !samples.isEmpty else { return [] }
        return [.samples(samples)]
    }

    /// The link to the glasses dropped: an active capability reports ``MotionError/deviceDisconnected`` and stops
    /// (it may be started again once the glasses are back).
    mutating func linkLost() -> [Action] {
        deviceReady = false
        guard !removed else { return [] }
        switch state {
        case .starting, .started:
            return [.error(.deviceDisconnected), transition(.stopping), transition(.stopped)]
        case .stopping:
            return [transition(.stopped)]
        case .stopped:
            return []
        }
    }

    /// The session stopped or ended: an active capability reports ``MotionError/capabilityClosed``; either way it
    /// stops for good, as after removal.
    mutating func sessionClosed() -> [Action] {
        deviceReady = false
        guard !removed else { return [] }
        removed = true
        var actions: [Action] = []
        switch state {
        case .starting, .started:
            actions += [.error(.capabilityClosed), transition(.stopping), transition(.stopped)]
        case .stopping:
            actions.append(transition(.stopped))
        case .stopped:
            break
        }
        return actions + [.finish]
    }

    private mutating func transition(_ next: MotionState) -> Action {
        state = next
        return .state(next)
    }
}
