/// The lifecycle of a ``DeviceSession``: DAT's `DeviceSessionState`.
///
/// `idle → starting → started ⇄ paused → stopping → stopped`; `stopped` is terminal.
public enum DeviceSessionState: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Created, not started.
    case idle
    /// `start()` was called; waiting for the glasses to accept.
    case starting
    /// The glasses accepted; capabilities can be added.
    case started
    /// The glasses paused the session (tap, doff, another experience) or the link dropped; it resumes by itself.
    case paused
    /// `stop()` was called; waiting for the glasses to acknowledge.
    case stopping
    /// Over for good; create a new session to start again.
    case stopped

    /// The case name.
    public var description: String { rawValue }
}

/// The pure lifecycle of a device session: one mutating method per event, each returning the actions to perform.
struct DeviceSessionStateMachine: Sendable {
    /// The timers a session arms.
    enum Timer: Hashable, Sendable, CaseIterable {
        /// Waiting for the glasses to accept `startSession` (start timeout).
        case start
        /// Waiting for the glasses to acknowledge `stopSession` (stop grace period).
        case stop
        /// Waiting for lost glasses to come back (device wait timeout).
        case deviceUnavailable
    }

    /// What the owner must do.
    enum Action: Hashable, Sendable {
        case send(HostMessage)
        case state(DeviceSessionState)
        case error(DeviceSessionError)
        case schedule(Timer)
        case cancel(Timer)
        /// Cascade down: stop the camera (its stream asks the glasses to stop).
        case stopCamera
        /// The glasses are gone or ended the session: stop the camera and its stream at once, without messages.
        case endCamera
        /// Tell the camera stream the link dropped.
        case linkLost
        /// The session is over: release the glasses and finish every publisher and async stream.
        case finish
    }

    /// The description of the error a device-ended session reports, as DAT does.
    static let endedByDevice = "Session ended by device"
    /// The description of the error a session reports when its glasses do not come back in time.
    static let deviceUnavailable = "Device unavailable"
    /// The description of the error a session reports when its glasses never accept it.
    static let startNotAcknowledged = "The glasses did not accept the session in time"

    private(set) var state: DeviceSessionState = .idle
    private(set) var linkUp = true

    /// Whether capabilities may run: started with the link up.
    var isReady: Bool { state == .started && linkUp }

    /// Whether the session has not reached `.stopped`.
    var isLive: Bool { state != .stopped }

    /// `start()`; the owner has checked that the glasses are eligible and claimed.
    mutating func start() -> Result<[Action], DeviceSessionError> {
        switch state {
        case .idle:
            linkUp = true
            return .success([transition(.starting), .send(.startSession), .schedule(.start)])
        case .starting, .started, .paused:
            return .success([])
        case .stopping, .stopped:
            return .failure(.sessionAlreadyStopped)
        }
    }

    /// `stop()`: cascades to the camera, then asks the glasses to stop.
    mutating func stop() -> [Action] {
        switch state {
        case .idle:
            return [transition(.stopped), .finish]
        case .starting, .started, .paused:
            var actions: [Action] = [.cancel(.start), .cancel(.deviceUnavailable), transition(.stopping), .stopCamera]
            if linkUp {
                actions += [.send(.stopSession), .schedule(.stop)]
            } else {
                actions += [.endCamera, transition(.stopped), .finish]
            }
            return actions
        case .stopping, .stopped:
            return []
        }
    }

    /// The glasses reported a session event.
    mutating func deviceReported(_ event: DeviceSessionEvent) -> [Action] {
        switch (event, state) {
        case (.started, .starting), (.started, .paused), (.resumed, .paused):
            guard linkUp else { return [] }
            return [.cancel(.start), .cancel(.deviceUnavailable), transition(.started)]
        case (.paused, .started):
            return [transition(.paused)]
        case (.ended, .starting), (.ended, .started), (.ended, .paused):
            return [.error(.unexpectedError(description: Self.endedByDevice))] + ended()
        case (.ended, .stopping):
            return ended()
        default:
            return []
        }
    }

    /// The link dropped.
    mutating func linkLost() -> [Action] {
        switch state {
        case .starting, .started, .paused:
            linkUp = false
            var actions: [Action] = [.cancel(.start), .linkLost]
            if state != .paused { actions.append(transition(.paused)) }
            actions.append(.schedule(.deviceUnavailable))
            return actions
        case .stopping:
            linkUp = false
            return ended()
        case .idle, .stopped:
            linkUp = false
            return []
        }
    }

    /// A new link to the same glasses is up: ask them to resume the session.
    mutating func linkRestored() -> [Action] {
        let wasDown = !linkUp
        linkUp = true
        guard wasDown, state == .paused else { return [] }
        return [.send(.startSession)]
    }

    /// The glasses' state changed: critical heat becomes a session error.
    func deviceStateChanged(from old: DeviceState, to new: DeviceState) -> [Action] {
        guard state == .starting || state == .started || state == .paused else { return [] }
        if new.thermalLevel >= .emergency && old.thermalLevel < .emergency { return [.error(.thermalEmergency)] }
        if new.thermalLevel >= .critical && old.thermalLevel < .critical { return [.error(.thermalCritical)] }
        return []
    }

    /// A timer fired.
    mutating func timerFired(_ timer: Timer) -> [Action] {
        switch (timer, state) {
        case (.start, .starting):
            return [.error(.unexpectedError(description: Self.startNotAcknowledged)), .send(.stopSession)] + ended()
        case (.stop, .stopping):
            return ended()
        case (.deviceUnavailable, .paused) where !linkUp:
            return [.error(.unexpectedError(description: Self.deviceUnavailable))] + ended()
        default:
            return []
        }
    }

    private mutating func ended() -> [Action] {
        Timer.allCases.map { Action.cancel($0) } + [.endCamera, transition(.stopped), .finish]
    }

    private mutating func transition(_ next: DeviceSessionState) -> Action {
        state = next
        return .state(next)
    }
}
