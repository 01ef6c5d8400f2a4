import Foundation

/// Why a run ended badly: a code for the exit status, a message a person can act on.
public struct BridgeFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// The device could not be reached at all.
        case deviceUnavailable
        /// The glasses are too hot to stream.
        case thermal
        /// The glasses' battery is too low to stream.
        case battery
        /// The camera permission was denied on the glasses.
        case permissionDenied
        /// The stream stalled again and again, even after restarts.
        case repeatedStalls
        /// Reconnecting failed too many times.
        case reconnectExhausted
        /// The link to the device was lost and had not come back when the run ended: exit code 69.
        case deviceLost
        /// A bug or an unexpected failure in a module.
        case internalError
        /// An input file (a scenario) is not valid: a usage problem, exit code 64.
        case invalidInput
        /// A recording being played is malformed or truncated: exit code 65.
        case badInputData
        /// An output file (`--record`, `--video-out`, `--output`) cannot be written: exit code 73.
        case outputFailed
        /// Nothing ever arrived: no device connected, or no frame came, within the run: exit code 69.
        case noFrames
    }

    /// The kind of failure.
    public let kind: Kind
    /// What happened and what to do about it.
    public let message: String

    /// Creates a failure.
    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    /// The process exit code for this failure.
    public var exitCode: BridgeExitCode {
        switch kind {
        case .internalError: .internalError
        case .invalidInput: .usage
        case .badInputData: .dataError
        case .outputFailed: .cannotWriteOutput
        default: .deviceUnavailable
        }
    }

    /// `kind: message`.
    public var description: String { "\(kind.rawValue): \(message)" }
}

/// The lifecycle policy of a bridge run, as a plain state machine: one method per event, returning actions.
///
/// It encodes what DAT users learn the hard way: a stream that says `.streaming` but delivers nothing for 5 s is
/// dead and gets restarted (camera stopped, added and started again); so does a camera that never reaches
/// `.streaming` within 10 s of its start (a start lost on the way must not leave the run waiting forever); a lost link goes back to waiting and
/// reconnects with a backoff of at least 2 s (rapid restarts wedge real glasses); a session the device ended is
/// replaced by a new one, again no sooner than 2 s later; thermal, battery and permission errors stop the run with
/// a message a person can act on. Time comes in with each event, so tests drive it with virtual time. The owner
/// performs the actions outside any lock and reports the outcome of each as the next event.
public struct LifecyclePolicy: Sendable {
    /// Timings and limits.
    public struct Configuration: Sendable, Hashable {
        /// How long `.streaming` may go without a frame before the stream is declared dead.
        public var watchdogTimeout: Duration = .seconds(5)
        /// How long a camera may stay in ``Phase/startingStream`` (added and started, `.streaming` not yet reported)
        /// before the start is abandoned and the camera restarted (``CameraRestartReason/streamStartTimedOut``).
        public var streamStartTimeout: Duration = .seconds(10)
        /// The shortest wait before reconnecting or starting a new session or camera (never below 2 s).
        public var minimumBackoff: Duration = .seconds(2)
        /// The longest wait between attempts.
        public var maximumBackoff: Duration = .seconds(30)
        /// Watchdog restarts in a row, with no frame in between, before the run gives up.
        public var maximumConsecutiveStallRestarts: Int = 4
        /// Reconnect attempts in a row before the run gives up; nil retries until stopped.
        public var maximumReconnectAttempts: Int? = nil
        /// The device dials this host (listen mode): after a lost link the host waits for it to dial again at once,
        /// with no backoff (the connect action itself waits). New sessions and cameras still back off.
        public var reconnectWaitsForDevice = false
        /// The device is a network stream's publisher (a phone app), not glasses: messages name it so.
        public var deviceIsStreamPublisher = false

        /// Creates the defaults: 5 s watchdog, 10 s for a stream to start, 2–30 s backoff, 4 stall restarts (stalls and
        /// starts that time out, in a row), unlimited reconnects.
        public init() {}
    }

    /// Where the run is.
    public enum Phase: String, Sendable, Hashable {
        /// Not started.
        case idle
        /// Opening the link to the device.
        case connecting
        /// Waiting for the device to accept a session.
        case startingSession
        /// Camera added, waiting for `.streaming`.
        case startingStream
        /// Frames flowing (or supposed to be: the watchdog is armed).
        case streaming
        /// The device paused the stream (tap, doff, photo capture): keep the connection, wait.
        case paused
        /// Waiting out a backoff before reconnecting, or before a new session or camera.
        case waiting
        /// Over; see ``outcome``.
        case finished
    }

    /// A timer the policy asks the owner to run.
    package enum Timer: String, Sendable, Hashable {
        /// Check for a stalled stream.
        case watchdog
        /// Reconnect after a lost link.
        case reconnect
        /// Start a new device session.
        case newSession
        /// Add and start the camera again.
        case restartCamera
        /// Give up on a camera that has not reached `.streaming` (``Configuration/streamStartTimeout``).
        case streamStart
    }

    /// Why the policy restarted the camera at once (``Action/restartCamera`` from a timer), as reported in its
    /// notice and kept in ``lastCameraRestart``.
    package enum CameraRestartReason: String, Sendable, Hashable, CaseIterable {
        /// The stream said `.streaming` but no frame came for ``Configuration/watchdogTimeout`` (a zombie stream).
        case stalled
        /// The camera was started but never reached `.streaming` within ``Configuration/streamStartTimeout`` (a
        /// start lost on the way, or glasses that never answered it).
        case streamStartTimedOut
    }

    /// What the owner should do.
    package enum Action: Sendable, Hashable {
        /// Open the link to the device; report ``linkConnected(now:)`` or ``connectFailed(_:now:)``.
        case connect
        /// Close whatever is left of the link and session.
        case closeLink
        /// Create and start a device session; report ``sessionStarted(now:)`` or ``sessionFailed(_:now:)``.
        case startSession
        /// Add the camera and start its stream; report stream states, or ``cameraFailed(_:now:)``.
        case startCamera
        /// Stop the camera, then add and start it again (the cure for a zombie stream).
        case restartCamera
        /// Tell the timestamp mapper that the device timeline is about to change.
        case markDiscontinuity
        /// Call ``timerFired(_:generation:now:)`` with these values after `delay`.
        case schedule(Timer, after: Duration, generation: UInt64)
        /// Report a notable event to the user (state changes are read from ``phase``).
        case notice(String)
        /// Report an event the person should see even without `--verbose` (the link to the glasses lost).
        case warning(String)
        /// End the run: tear down in reverse order; nil is a normal end.
        case finish(BridgeFailure?)
    }

    /// Why a stream reported an error, as far as the policy cares.
    package enum StreamFault: String, Sendable, Hashable, CaseIterable {
        /// Generic failure of the stream or the device.
        case streamFailure
        /// The hinges closed (glasses folded).
        case hingesClosed
        /// The glasses are too hot.
        case thermal
        /// The battery is too low.
        case battery
        /// The camera permission was denied.
        case permissionDenied
        /// Power peak limit reached; transient.
        case peakPower
        /// A photo capture failed; the stream goes on.
        case photoCaptureFailed
        /// The device is not connected.
        case deviceNotConnected
    }

    /// Timings and limits.
    package let configuration: Configuration
    /// Where the run is.
    package private(set) var phase: Phase = .idle
    /// The failure that ended the run, when it ended badly.
    package private(set) var outcome: BridgeFailure?
    /// How many times the watchdog restarted the camera in this run.
    package private(set) var stallRestarts = 0
    /// How many times the link was re-established after a loss.
    package private(set) var reconnects = 0
    /// How many sessions were replaced after the device ended one.
    package private(set) var sessionRestarts = 0
    /// How many camera starts were abandoned because `.streaming` never came (``Configuration/streamStartTimeout``).
    package private(set) var streamStartTimeouts = 0
    /// Why the camera was last restarted at once by a timer, if it was.
    package private(set) var lastCameraRestart: CameraRestartReason?

    private var everConnected = false
    /// When and why the link was lost, while it has not come back; and the reconnect attempts made since.
    private var lostLink: (at: Duration, message: String, attempts: Int)?
    private var lastFrameAt: Duration = .zero
    private var consecutiveStallRestarts = 0
    private var retryAttempt = 0
    private var generations: [Timer: UInt64] = [:]
    private var nextGeneration: UInt64 = 0

    /// Creates a policy in ``Phase/idle``.
    package init(configuration: Configuration = Configuration()) {
        var configuration = configuration
        configuration.minimumBackoff = max(configuration.minimumBackoff, .seconds(2))
        configuration.maximumBackoff = max(configuration.maximumBackoff, configuration.minimumBackoff)
        self.configuration = configuration
    }

    /// The wait before retry number `attempt` (0-based): doubling from the minimum, capped at the maximum.
    package func backoff(attempt: Int) -> Duration {
        var delay = configuration.minimumBackoff
        for _ in 0..<min(attempt, 16) where delay < configuration.maximumBackoff { delay = delay * 2 }
        return min(delay, configuration.maximumBackoff)
    }

    // MARK: Events

    /// The run starts.
    package mutating func start(now: Duration) -> [Action] {
        guard phase == .idle else { return [] }
        phase = .connecting
        return [.connect]
    }

    /// The link to the device is open.
    package mutating func linkConnected(now: Duration) -> [Action] {
        guard phase == .connecting else { return [] }
        if everConnected { reconnects += 1 }
        everConnected = true
        lostLink = nil
        phase = .startingSession
        return [.startSession]
    }

    /// Opening the link failed.
    package mutating func connectFailed(_ message: String, now: Duration) -> [Action] {
        guard phase == .connecting else { return [] }
        guard everConnected else {
            return finish(BridgeFailure(.deviceUnavailable, message))
        }
        return retry(.reconnect, notice: "reconnect failed: \(message)")
    }

    /// A link opened but closed (or never introduced the glasses) before their hello: a refused pairing token,
    /// another protocol, a relay that went quiet. Dialling, it is the connect that failed. Listening, it was one
    /// relay's attempt, and the host waits for the next dial (each wait has the connect timeout of its own) rather
    /// than end a run no relay has yet served.
    package mutating func linkFailedBeforeHello(_ message: String, now: Duration) -> [Action] {
        guard phase == .connecting else { return [] }
        guard configuration.reconnectWaitsForDevice else { return connectFailed(message, now: now) }
        return [.warning("a relay dialled in but its link ended before the glasses said hello: \(message)")]
            + retry(.reconnect, notice: "the relay's link ended")
    }

    /// The device accepted a session, or resumed it (the glasses came back to the relay after a link loss).
    ///
    /// A resume while a camera restart waits out its backoff restarts the camera at once: the camera could not start
    /// while the session was paused, and the wait was for the session, not a pause between attempts (the glasses
    /// dropping off a relay's radio otherwise streamed again one backoff, 4 s, later than they could).
    package mutating func sessionStarted(now: Duration) -> [Action] {
        switch phase {
        case .startingSession:
            phase = .startingStream
            return [.markDiscontinuity, .startCamera] + armStreamStart()
        case .waiting where generations[.restartCamera] != nil:
            invalidate(.restartCamera)
            phase = .startingStream
            return [.notice("the session is back: restarting the camera now"), .markDiscontinuity, .restartCamera]
                + armStreamStart()
        default:
            return []
        }
    }

    /// Starting a session failed (for instance the glasses are folded).
    package mutating func sessionFailed(_ message: String, now: Duration) -> [Action] {
        guard phase == .startingSession else { return [] }
        return retry(.newSession, notice: "session could not start: \(message)")
    }

    /// The device ended the session (fold, doff timeout, "Session ended by device"): build a new one.
    package mutating func sessionEnded(reason: String, now: Duration) -> [Action] {
        // While connecting or waiting to reconnect there is no session to replace.
        guard isActive, phase != .idle, phase != .connecting, generations[.reconnect] == nil else { return [] }
        sessionRestarts += 1
        phase = .waiting
        invalidate(.watchdog)
        invalidate(.restartCamera)
        invalidate(.newSession)
        let delay = backoff(attempt: retryAttempt)
        retryAttempt += 1
        return [.markDiscontinuity, .notice("session ended by device (\(reason)); starting a new one in \(Self.format(delay))")]
            + schedule(.newSession, after: delay)
    }

    /// Adding or starting the camera failed.
    package mutating func cameraFailed(_ message: String, now: Duration) -> [Action] {
        guard phase == .startingStream || phase == .streaming || phase == .paused else { return [] }
        return retry(.restartCamera, notice: "camera could not start: \(message)")
    }

    /// The stream reports `.streaming` (at start or after a pause).
    package mutating func streamStreaming(now: Duration) -> [Action] {
        guard phase == .startingStream || phase == .paused || phase == .streaming else { return [] }
        let wasStreaming = phase == .streaming
        phase = .streaming
        invalidate(.streamStart)
        lastFrameAt = now
        if wasStreaming { return [] }
        return schedule(.watchdog, after: configuration.watchdogTimeout)
    }

    /// The stream reports `.paused` (tap, doff, photo capture): wait, do not restart.
    package mutating func streamPaused(now: Duration) -> [Action] {
        guard phase == .streaming || phase == .startingStream else { return [] }
        phase = .paused
        invalidate(.watchdog)
        invalidate(.streamStart)
        return []
    }

    /// The stream stopped without the bridge asking (the device stopped the camera).
    package mutating func streamStopped(now: Duration) -> [Action] {
        guard phase == .streaming || phase == .paused || phase == .startingStream else { return [] }
        invalidate(.watchdog)
        return retry(.restartCamera, notice: "stream stopped by the device; restarting the camera")
    }

    /// A frame arrived.
    package mutating func frameReceived(now: Duration) {
        lastFrameAt = now
        consecutiveStallRestarts = 0
        retryAttempt = 0
    }

    /// The stream reported an error.
    package mutating func streamError(_ fault: StreamFault, message: String, now: Duration) -> [Action] {
        guard isActive else { return [] }
        switch fault {
        case .thermal:
            return finish(BridgeFailure(
                .thermal, "The glasses are too hot to stream (\(message)). Take them off, let them cool for a few minutes, then run again."
            ))
        case .battery:
            return finish(BridgeFailure(
                .battery, "The glasses' battery is too low to stream (\(message)). Put them in the charging case, then run again."
            ))
        case .permissionDenied:
            return finish(BridgeFailure(
                .permissionDenied, "The camera permission was denied on the glasses (\(message)). Grant camera access to this app on the glasses or their companion app, then run again."
            ))
        case .photoCaptureFailed:
            return [.notice("photo capture failed: \(message)")]
        case .hingesClosed:
            // Folding ends the session; the device reports that separately and the policy rebuilds it then.
            return [.notice("the glasses were folded (\(message)); waiting for them to be opened")]
        case .deviceNotConnected:
            return linkLost(message, now: now)
        case .streamFailure, .peakPower:
            guard phase == .streaming || phase == .startingStream || phase == .paused else { return [] }
            invalidate(.watchdog)
            return retry(.restartCamera, notice: "stream error: \(message); restarting the camera")
        }
    }

    /// The link to the device closed unexpectedly: back to waiting, reconnect after a backoff.
    package mutating func linkLost(_ message: String, now: Duration) -> [Action] {
        guard isActive, phase != .idle else { return [] }
        if phase == .connecting { return connectFailed(message, now: now) }
        // Already waiting to reconnect (the loss was reported twice, by the link and by the stream).
        if generations[.reconnect] != nil { return [] }
        invalidate(.watchdog)
        invalidate(.newSession)
        invalidate(.restartCamera)
        lostLink = (now, message, 0)
        // The loss is a warning, shown without --verbose; the attempts that follow are notices.
        return [.closeLink] + retry(.reconnect, notice: "link lost: \(message); reconnecting").map { action in
            if case .notice(let text) = action { return .warning(text) }
            return action
        }
    }

    /// A timer asked for by ``Action/schedule(_:after:generation:)`` fired.
    package mutating func timerFired(_ timer: Timer, generation: UInt64, now: Duration) -> [Action] {
        guard isActive, generations[timer] == generation else { return [] }
        generations[timer] = nil
        switch timer {
        case .watchdog:
            guard phase == .streaming else { return [] }
            let silent = now - lastFrameAt
            guard silent >= configuration.watchdogTimeout else {
                return schedule(.watchdog, after: configuration.watchdogTimeout - silent)
            }
            consecutiveStallRestarts += 1
            if consecutiveStallRestarts > configuration.maximumConsecutiveStallRestarts {
                return finish(BridgeFailure(
                    .repeatedStalls,
                    "The stream stalled \(consecutiveStallRestarts) times in a row with no frame. Fold the glasses, "
                        + "put them in the case for 10 seconds to restart the camera, then run again."
                ))
            }
            stallRestarts += 1
            phase = .startingStream
            lastCameraRestart = .stalled
            return [.notice("no frame for \(Self.format(silent)) while streaming: restarting the camera"),
                    .markDiscontinuity, .restartCamera] + armStreamStart()
        case .streamStart:
            guard phase == .startingStream else { return [] }
            // Counted with the stalls: a camera that neither starts nor delivers ends the run the same way.
            consecutiveStallRestarts += 1
            if consecutiveStallRestarts > configuration.maximumConsecutiveStallRestarts {
                return finish(BridgeFailure(
                    .repeatedStalls,
                    "The camera did not start or stalled \(consecutiveStallRestarts) times in a row with no frame. "
                        + "Fold the glasses, put them in the case for 10 seconds to restart the camera, then run again."
                ))
            }
            streamStartTimeouts += 1
            lastCameraRestart = .streamStartTimedOut
            return [.notice("the stream did not start within \(Self.format(configuration.streamStartTimeout)) "
                            + "(\(CameraRestartReason.streamStartTimedOut.rawValue)): restarting the camera"),
                    .markDiscontinuity, .restartCamera] + armStreamStart()
        case .reconnect:
            guard phase == .waiting else { return [] }
            phase = .connecting
            lostLink?.attempts += 1
            return [.connect]
        case .newSession:
            guard phase == .waiting else { return [] }
            phase = .startingSession
            return [.startSession]
        case .restartCamera:
            guard phase == .waiting else { return [] }
            phase = .startingStream
            return [.markDiscontinuity, .restartCamera] + armStreamStart()
        }
    }

    /// The run should end (duration reached, end of file, SIGINT, SIGTERM): normally, unless the link to the device
    /// was lost and has not come back, which is ``BridgeFailure/Kind/deviceLost`` (a run whose glasses vanished
    /// did not do what was asked, however it ended).
    package mutating func stopRequested(now: Duration) -> [Action] {
        guard isActive else { return [] }
        if let lost = lostLink {
            let attempts = lost.attempts == 1 ? "1 reconnect attempt" : "\(lost.attempts) reconnect attempts"
            // A listening bridge does not reconnect: it waits for the relay to dial in again.
            if configuration.deviceIsStreamPublisher {
                let notBack = configuration.reconnectWaitsForDevice ? "no publisher had connected again" : "it had not come back (\(attempts))"
                return finish(BridgeFailure(
                    .deviceLost, "Lost the stream \(Self.format(now - lost.at)) before the run ended (\(lost.message)), and "
                        + "\(notBack). Check that the phone app is still streaming to this address."))
            }
            let notBack = configuration.reconnectWaitsForDevice ? "no relay had dialled in again" : "they had not come back (\(attempts))"
            return finish(BridgeFailure(
                .deviceLost, "Lost the glasses \(Self.format(now - lost.at)) before the run ended (\(lost.message)), and "
                    + "\(notBack). Check that they are on, unfolded and in range, and that the relay is still running."))
        }
        return finish(nil)
    }

    /// The run must end because of a failure outside the device's control (for example the SDK failed).
    package mutating func failed(_ failure: BridgeFailure, now: Duration) -> [Action] {
        guard isActive else { return [] }
        return finish(failure)
    }

    // MARK: Helpers

    private var isActive: Bool { phase != .finished }

    private mutating func retry(_ timer: Timer, notice: String) -> [Action] {
        if timer == .reconnect, let limit = configuration.maximumReconnectAttempts, retryAttempt >= limit {
            return finish(BridgeFailure(
                .reconnectExhausted, "Lost the glasses and could not reconnect after \(retryAttempt) attempts. Check that they are on, unfolded and in range."
            ))
        }
        if timer == .reconnect, configuration.reconnectWaitsForDevice {
            retryAttempt += 1
            phase = .waiting
            let who = configuration.deviceIsStreamPublisher ? "waiting for the publisher to connect again" : "waiting for the glasses to dial again"
            return [.notice("\(notice): \(who)")] + schedule(timer, after: .zero)
        }
        let delay = backoff(attempt: retryAttempt)
        retryAttempt += 1
        phase = .waiting
        return [.notice("\(notice) in \(Self.format(delay))")] + schedule(timer, after: delay)
    }

    private mutating func schedule(_ timer: Timer, after delay: Duration) -> [Action] {
        nextGeneration += 1
        let generation = nextGeneration
        generations[timer] = generation
        return [.schedule(timer, after: delay, generation: generation)]
    }

    /// Entering ``Phase/startingStream``: the start must reach `.streaming` within the timeout.
    private mutating func armStreamStart() -> [Action] {
        schedule(.streamStart, after: configuration.streamStartTimeout)
    }

    private mutating func invalidate(_ timer: Timer) {
        generations[timer] = nil
    }

    private mutating func finish(_ failure: BridgeFailure?) -> [Action] {
        phase = .finished
        outcome = failure
        generations.removeAll()
        return [.finish(failure)]
    }

    static func format(_ duration: Duration) -> String {
        let seconds = duration.inSeconds
        return seconds.rounded() == seconds ? "\(Int(seconds)) s" : String(format: "%.1f s", seconds)
    }
}
