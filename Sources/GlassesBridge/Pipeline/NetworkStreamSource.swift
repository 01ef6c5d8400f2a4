import Foundation
import GlassesVideo
import Synchronization
import WearablesKit

/// A network stream (RTMP, SRT, RTSP, UDP MPEG-TS) as a source, under the same ``LifecyclePolicy`` as glasses: the
/// policy's actions are performed on the stream, and what happens to the stream comes back as its events.
///
/// | policy | here |
/// | --- | --- |
/// | ``LifecyclePolicy/Action/connect`` | listen for a publisher (or dial one, SRT caller) on a thread of its own, up to the connect timeout; a refused publisher (wrong RTMP key, a stream that cannot be read) is warned about and listened for again within the same wait |
/// | ``LifecyclePolicy/Action/startSession`` | nothing to start: reported started at once |
/// | ``LifecyclePolicy/Action/startCamera``, ``LifecyclePolicy/Action/restartCamera`` | read the connection's frames on a thread of its own (once per connection); reported streaming |
/// | ``LifecyclePolicy/Action/closeLink`` | the connection's blocking calls are interrupted and it is closed |
/// | a frame | ``LifecyclePolicy/frameReceived(now:)``, then the hand-off (a late frame waits up to the lateness tolerance for room, then is skipped with its HEVC dependants, ``LateFramePolicy``) |
/// | the publisher ends the stream, the connection breaks, or nothing arrives for ``Dependencies/readTimeout`` | ``LifecyclePolicy/linkLost(_:now:)``: a listener listens again at once, a caller dials again after the policy's backoff |
///
/// So a stream that stalls while connected gets the watchdog (5 s: a notice, a new timeline; a stream that
/// delivers nothing through 4 restarts ends the run, exit 69); the stream's timestamps go through the worker's
/// ``TimestampMapper`` like the glasses' (a jump in them, a restarted publisher, is told to the mapper as a
/// discontinuity); and a first wait that ends with no publisher ends the run with exit 69 and a sentence.
///
/// Every blocking libavformat call runs on this source's own threads, never on the cooperative pool, and is
/// cancelled through its interrupt callback on teardown (Ctrl-C) and at its deadline.
final class NetworkStreamSource: FrameSource, Sendable {
    /// What the source needs from the run.
    struct Dependencies: Sendable {
        let address: NetworkStreamAddress
        /// The longest wait for a publisher (listening) or for the publisher to answer (dialling), per wait.
        let connectTimeout: Duration
        let scheduler: any EventScheduler
        let handoff: FrameHandoff
        let counters: BridgeCounters
        /// How long past its arrival a frame may wait for room in the hand-off before it is skipped.
        let latenessTolerance: Duration
        /// How long the connection may stay silent (no byte) before it counts as lost.
        var readTimeout: Duration = .seconds(15)
        /// Sees each frame as it arrives, with its arrival time (`check`'s measurements), before the hand-off.
        var observe: (@Sendable (VideoFrame, Duration) -> Void)?
        let emit: @Sendable (BridgeEvent) -> Void
        /// The run must end (nil: normally).
        let finish: @Sendable (BridgeFailure?) -> Void
    }

    /// One publisher's connection: its reader and the interrupt that cancels its blocking calls. The reader is used
    /// by one thread at a time: the thread that opened it, then the one that reads it.
    private final class Connection: @unchecked Sendable {
        let interrupt: NetworkStreamInterrupt
        let reader: NetworkStreamReader
        let attempt: UInt64
        /// Signalled when the connection is released (its socket closed), so that the next listen can bind again.
        let released: DispatchSemaphore

        init(reader: NetworkStreamReader, interrupt: NetworkStreamInterrupt, attempt: UInt64, released: DispatchSemaphore) {
            self.reader = reader
            self.interrupt = interrupt
            self.attempt = attempt
            self.released = released
        }

        deinit { released.signal() }
    }

    private struct State: LifecycleDriven {
        var lifecycle: LifecycleDrive
        var connectAttempt: UInt64 = 0
        var connection: Connection?
        var reading = false
        /// The interrupt of the open under way, so that teardown can cancel it.
        var opening: NetworkStreamInterrupt?
        /// Signalled when the previous connection was released.
        var previousReleased: DispatchSemaphore?
        var tornDown = false
        var refusals = 0
        /// A publisher was served once (a listen that fails later may be the port's moment, not for good).
        var everOpened = false
        /// What the last publisher brought (its size follows the pictures read).
        var received: ReceivedStream?
    }

    private let state: Mutex<State>
    private let deps: Dependencies

    init(policy: LifecyclePolicy, dependencies: Dependencies) {
        state = Mutex(State(lifecycle: LifecycleDrive(policy: policy)))
        deps = dependencies
    }

    // MARK: FrameSource

    func start() { event { $0.start(now: $1) } }

    func stop() { event { $0.stopRequested(now: $1) } }

    func fail(_ failure: BridgeFailure) { event { $0.failed(failure, now: $1) } }

    func stopDelivery() {
        let (connection, opening) = state.withLock { state -> (Connection?, NetworkStreamInterrupt?) in
            state.tornDown = true
            defer { state.connection = nil }
            return (state.connection, state.opening)
        }
        opening?.stop()
        connection?.interrupt.stop()
    }

    func capturePhoto() -> Bool { false }

    var restartCounts: (stalls: Int, reconnects: Int, sessions: Int) {
        state.withLock { ($0.lifecycle.policy.stallRestarts, $0.lifecycle.policy.reconnects, $0.lifecycle.policy.sessionRestarts) }
    }

    var deviceDroppedFrames: UInt64 { 0 }
    var pipelineDrivesVirtualTime: Bool { false }
    var lastDeviceFault: String? { nil }

    /// Publishers turned away so far (a wrong RTMP stream key, a stream that could not be read).
    var refusals: Int { state.withLock { $0.refusals } }

    var receivedStream: ReceivedStream? { state.withLock { $0.received } }

    // MARK: Events and actions

    private func event(_ body: (inout LifecyclePolicy, Duration) -> [LifecyclePolicy.Action]) {
        state.lifecycleEvent(now: deps.scheduler.now, body, report: { deps.emit(.state($0, detail: nil)) }, perform: perform)
    }

    private func perform(_ action: LifecyclePolicy.Action) {
        switch action {
        case .connect: connect()
        case .closeLink: closeConnection()
        case .startSession: event { $0.sessionStarted(now: $1) }
        case .startCamera, .restartCamera: startReading()
        case .markDiscontinuity: deps.handoff.push(control: .discontinuity)
        case .schedule(let timer, let delay, let generation):
            deps.scheduler.schedule(after: delay) { [weak self] in
                self?.event { $0.timerFired(timer, generation: generation, now: $1) }
            }
        case .notice(let message): deps.emit(.notice(message))
        case .warning(let message): deps.emit(.warning(NoticeWording.sentence(message)))
        case .finish(let failure):
            if let failure { deps.emit(.error(code: failure.kind.rawValue, message: failure.message)) }
            deps.finish(failure)
        }
    }

    private func connect() {
        let (attempt, previous) = state.withLock { state -> (UInt64, DispatchSemaphore?) in
            state.connectAttempt += 1
            return (state.connectAttempt, state.previousReleased)
        }
        let thread = Thread { [weak self] in
            // The previous connection's socket must be closed before the port is bound again (UDP).
            // (Signalled again for any later wait on it: a released connection stays released.)
            if let previous, previous.wait(timeout: .now() + 5) == .success { previous.signal() }
            guard let self else { return }
            let result = self.open(attempt: attempt)
            self.opened(attempt: attempt, result: result)
        }
        thread.name = "glasses-bridge.stream-open"
        thread.start()
    }

    /// Waits for a publisher up to the connect timeout, turning away the ones that cannot be taken.
    private func open(attempt: UInt64) -> Result<Connection, BridgeFailure>? {
        let address = deps.address
        let deadline = ContinuousClock.now + deps.connectTimeout
        var lastRefusal: String?
        while true {
            let interrupt = NetworkStreamInterrupt()
            let proceed = state.withLock { state -> Bool in
                guard !state.tornDown, state.connectAttempt == attempt else { return false }
                state.opening = interrupt
                return true
            }
            guard proceed else { return nil }
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero else { return .failure(timedOut(lastRefusal: lastRefusal)) }
            do {
                let reader = try NetworkStreamReader(request: address.request, interrupt: interrupt, openTimeout: remaining)
                let released = DispatchSemaphore(value: 0)
                state.withLock { state in
                    state.previousReleased = released
                    state.everOpened = true
                }
                return .success(Connection(reader: reader, interrupt: interrupt, attempt: attempt, released: released))
            } catch {
                switch error.code {
                case .streamCancelled: return nil
                case .streamTimedOut: return .failure(timedOut(lastRefusal: lastRefusal))
                case .streamCannotListen where address.listens:
                    // Not a publisher's fault: the address itself cannot be served. At the start that ends the run;
                    // after a publisher was served, the port may be freed again (tried twice a second meanwhile).
                    guard state.withLock({ $0.everOpened }) else {
                        return .failure(BridgeFailure(.deviceUnavailable, error.message.prefix(1).uppercased() + error.message.dropFirst()
                            + ". Choose another port, or stop what listens there."))
                    }
                    lastRefusal = error.message
                    Thread.sleep(forTimeInterval: 0.5)
                default:
                    guard address.listens else {
                        // Dialling (SRT caller): the publisher may not listen yet; tried again until the timeout.
                        lastRefusal = error.reason
                        Thread.sleep(forTimeInterval: 0.25)
                        continue
                    }
                    state.withLock { $0.refusals += 1 }
                    // The reader's reasons may name the stream themselves ("udp://…: its HEVC parameter set …").
                    let reason = error.reason.hasPrefix("\(address): ") ? String(error.reason.dropFirst("\(address): ".count)) : error.reason
                    let message = error.code == .streamRefused ? error.message : "refused a publisher on \(address): \(reason)"
                    if message != lastRefusal { deps.emit(.warning(NoticeWording.sentence(message + "; listening again"))) }
                    lastRefusal = message
                    // A publisher that sends what cannot be read (garbage) is not listened to in a tight loop.
                    Thread.sleep(forTimeInterval: 0.1)
                }
            }
        }
    }

    private func timedOut(lastRefusal: String?) -> BridgeFailure {
        let seconds = LifecyclePolicy.format(deps.connectTimeout)
        let address = deps.address
        let what = address.listens
            ? "no publisher came to \(address) within the \(seconds) connect timeout"
            : "\(address) did not answer within the \(seconds) connect timeout"
        let hint: String
        switch address.scheme {
        case .rtmp: hint = "check the app's server address (rtmp://THIS-HOST:\(address.port)/\(address.rtmpApp ?? "live")) and its stream key"
        case .srt: hint = address.listens ? "check the app's SRT address (this host, port \(address.port)) and passphrase" : "check that the publisher listens there and the passphrase"
        case .udp: hint = "check that the publisher sends MPEG-TS to \(address)"
        case .rtsp: hint = address.listens ? "check that the publisher records to rtsp://THIS-HOST:\(address.port)/\(address.rtspPath ?? "")"
            : "check the app's RTSP address and path, that it serves now, and its user and password"
        }
        let refused = lastRefusal.map { " (the last attempt: \($0))" } ?? ""
        return BridgeFailure(.deviceUnavailable, "\(what)\(refused): \(hint).")
    }

    private func opened(attempt: UInt64, result: Result<Connection, BridgeFailure>?) {
        guard let result else { return }
        switch result {
        case .failure(let failure):
            let current = state.withLock { state -> Bool in
                if state.connectAttempt == attempt { state.opening = nil }
                return state.connectAttempt == attempt && !state.tornDown
            }
            if current { event { $0.connectFailed(failure.message, now: $1) } }
        case .success(let connection):
            let current = state.withLock { state -> Bool in
                guard state.connectAttempt == attempt, !state.tornDown else { return false }
                state.opening = nil
                state.connection = connection
                state.reading = false
                return true
            }
            guard current else {
                connection.interrupt.stop()
                return
            }
            let reader = connection.reader
            let received = ReceivedStream(transport: deps.address.scheme.rawValue, container: reader.container, codec: reader.codec,
                                          width: reader.width, height: reader.height, hasAudio: reader.hasAudio)
            state.withLock { $0.received = received }
            let audio = reader.hasAudio ? "; its audio is ignored" : ""
            deps.emit(.notice("publisher connected to \(deps.address): \(reader.codec) \(reader.width)x\(reader.height) over \(deps.address.scheme.rawValue.uppercased()) (\(reader.container))\(audio)"))
            event { $0.linkConnected(now: $1) }
        }
    }

    private func closeConnection() {
        let connection = state.withLock { state -> Connection? in
            defer {
                state.connection = nil
                state.reading = false
            }
            return state.connection
        }
        connection?.interrupt.stop()
    }

    /// Starts reading the current connection (once per connection) and reports the stream streaming.
    private func startReading() {
        let connection = state.withLock { state -> Connection? in
            guard let connection = state.connection, !state.reading else { return nil }
            state.reading = true
            return connection
        }
        if let connection {
            let thread = Thread { [weak self] in self?.read(connection) }
            thread.name = "glasses-bridge.stream"
            thread.start()
        }
        event { $0.streamStreaming(now: $1) }
    }

    private func isCurrent(_ connection: Connection) -> Bool {
        state.withLock { $0.connection === connection && !$0.tornDown }
    }

    /// Reads frames until the connection ends, and reports how it ended.
    private func read(_ connection: Connection) {
        let reader = connection.reader
        let wallStart = ContinuousClock.now
        var latePolicy = LateFramePolicy(tolerance: deps.latenessTolerance)
        var oversized = 0
        var size: (width: Int, height: Int)?
        while isCurrent(connection) {
            let frame: VideoFrame?
            do {
                frame = try reader.nextFrame(readTimeout: deps.readTimeout)
            } catch {
                if error.code != .streamCancelled { lost(connection, error.reason) }
                return
            }
            guard var frame else {
                lost(connection, "the publisher ended the stream")
                return
            }
            if reader.oversizedPackets > oversized {
                oversized = reader.oversizedPackets
                deps.emit(.notice("skipped a video packet of \(deps.address) larger than \(NetworkStreamReader.maximumPacketBytes >> 20) MiB"))
            }
            let newSize = reader.pictureSize
            if let size, size != newSize {
                // DAT lowers the resolution on its own under load; the decoder and converter follow the new size.
                deps.emit(.notice("the picture size of \(deps.address) changed from \(size.width)x\(size.height) to \(newSize.width)x\(newSize.height)"))
                state.withLock { $0.received?.width = newSize.width; $0.received?.height = newSize.height }
            }
            size = newSize
            let now = deps.scheduler.now
            let current = state.withLock { state -> Bool in
                guard state.connection === connection, !state.tornDown else { return false }
                state.lifecycle.policy.frameReceived(now: now)
                return true
            }
            guard current else { return }
            if reader.lastFrameStartsNewTimeline {
                // The publisher restarted or its clock jumped: the mapper rebases on the host time that passed.
                deps.handoff.push(control: .discontinuity)
            }
            if let captured = reader.lastFrameCaptureWallUs {
                frame.timing = Self.timing(captureWallUs: captured, receivedAt: now)
            }
            deps.observe?(frame, now)
            let dependence = LateFramePolicy.Dependence(of: frame)
            let due = ContinuousClock.now - wallStart
            var action = latePolicy.frameDue(dependence, due: due, room: deps.handoff.room)
            if case .waitForRoom(let until) = action {
                let gotRoom = deps.handoff.waitForRoom(until: wallStart + until)
                action = latePolicy.waitEnded(dependence, gotRoom: gotRoom)
            }
            switch action {
            case .push, .waitForRoom:
                deps.handoff.push(frame, hostUs: now.wholeMicroseconds)
            case .skip(let reason):
                deps.counters.update {
                    $0.recordReceived(atUs: now.wholeMicroseconds)
                    $0.recordDropped(reason)
                }
            }
        }
    }

    /// A frame's timing on the host clock from the capture time its publisher stamped on its wall clock
    /// (``CaptureTimeSEI``): the frame was captured as long before it arrived as the wall clocks say. The stream has
    /// no send time, so the "link" part of the latency is capture → arrival. Nil when the two clocks disagree so that
    /// the frame would come from the future or from more than a minute ago.
    static func timing(captureWallUs: Int64, receivedAt now: Duration, wallNowUs: Int64 = Int64(Date().timeIntervalSince1970 * 1_000_000)) -> FrameTiming? {
        let (lead, overflow) = wallNowUs.subtractingReportingOverflow(captureWallUs)
        guard !overflow, lead >= 0, lead <= LatencyTracker.maximumPlausibleUs else { return nil }
        let receivedUs = now.wholeMicroseconds
        return FrameTiming(captureUs: receivedUs - lead, sentUs: receivedUs - lead, receivedUs: receivedUs)
    }

    /// The connection ended on its own: the policy hears a lost link (a listener listens again).
    private func lost(_ connection: Connection, _ reason: String) {
        guard isCurrent(connection) else { return }
        event { $0.linkLost(reason, now: $1) }
    }
}
