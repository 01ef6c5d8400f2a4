import Foundation
import GlassesMedia
import Synchronization
import WearablesKit

/// The lower half of a link end: moves frames to the peer (in process, or through a socket).
///
/// Implementations never call back into the endpoint from inside ``transmit(_:)`` or ``shutdown()``; they report
/// received frames and failures with ``LinkEndpoint/wireReceived(_:)`` and ``LinkEndpoint/wireFailed(_:)``.
package protocol LinkWire: AnyObject, Sendable {
    /// What the wire's decoder met so far (nil for wires that do not decode).
    var decoderStatistics: LinkFrameDecoder.Statistics? { get }
    /// Queues a frame for the peer.
    func transmit(_ frame: LinkFrame)
    /// Stops the wire once every queued frame is out; later frames are discarded.
    func shutdown()
    /// Finished once a ``shutdown()`` has written every frame queued before it (or cut the connection after its
    /// grace); nil for a wire that hands frames over at once, or that cannot tell.
    var drain: WireDrain? { get }
}

extension LinkWire {
    package var drain: WireDrain? { nil }
}

/// Tells a process that is about to exit when a closing wire's last frames (a fault, the goodbye) are out, so that
/// exiting does not drop them from its queue.
package final class WireDrain: Sendable {
    private let done = DispatchSemaphore(value: 0)
    private let finished = Atomic<Bool>(false)

    package init() {}

    /// Called by the wire once its last queued write returned.
    package func finish() {
        guard !finished.exchange(true, ordering: .acquiringAndReleasing) else { return }
        done.signal()
    }

    /// Waits until ``finish()`` or `deadline`; true when finished.
    package func wait(until deadline: DispatchTime) -> Bool {
        guard !finished.load(ordering: .acquiring) else { return true }
        guard done.wait(timeout: deadline) == .success else { return false }
        done.signal()  // for any other waiter
        return true
    }
}

/// A wire that also carries raw bytes between frames (a socket's): the hook through which the simulator's `garbage`
/// fault reaches the peer's frame decoder.
package protocol RawByteWire: LinkWire {
    /// Queues `bytes` after the frames queued so far and before later ones; false once the wire is closing.
    func transmitRaw(_ bytes: [UInt8]) -> Bool
}

/// A link end whose wire can carry raw bytes between frames (a device end over a socket).
package protocol RawByteTransmitting: AnyObject, Sendable {
    /// Writes `bytes` onto the wire between frames; false when the link has closed or its wire carries no raw bytes.
    func transmitRaw(_ bytes: [UInt8]) -> Bool
    /// Ends the link at once, without a goodbye (as a cut connection does).
    func abort(_ error: LinkError)
}

/// Which end of a link an endpoint is.
package enum LinkRole: Sendable, Hashable {
    /// The host end (a ``DeviceLink``): receives device messages, grants video credit.
    case host
    /// The device end (a ``HostLink``): receives host messages, spends video credit.
    case device

    package var peerName: String { self == .host ? "device" : "host" }
    package var name: String { self == .host ? "host" : "device" }
}

/// What an endpoint delivers to its owner.
package enum EndpointEvent: Sendable {
    case message(LinkFrame)
    case closed(LinkError)
}

/// Settings of one link end.
package struct EndpointConfiguration: Sendable {
    package var role: LinkRole
    /// Credit the host grants when it opens (host end only).
    package var initialCredit: Int = 8
    package var liveness: LinkLiveness = .standard
    /// Device end only: the pairing token the host's hello must carry (remote TCP).
    package var requiredPairingToken: String?
    /// Host end only: the token to put into a hello that carries none.
    package var pairingTokenToPresent: String?
    /// Host end only: both ends read one clock (in-process), so sample times need no heartbeat clock exchange.
    package var sharedClock = false

    // Spelled out because the memberwise initializer is internal, and the socket layer builds configurations too.
    package init(
        role: LinkRole, initialCredit: Int = 8, liveness: LinkLiveness = .standard, requiredPairingToken: String? = nil,
        pairingTokenToPresent: String? = nil, sharedClock: Bool = false
    ) {
        self.role = role
        self.initialCredit = initialCredit
        self.liveness = liveness
        self.requiredPairingToken = requiredPairingToken
        self.pairingTokenToPresent = pairingTokenToPresent
        self.sharedClock = sharedClock
    }
}

/// The transport-independent half of a link end: delivery order, flow control, heartbeats, pairing and close.
///
/// Every transport (in-process, Unix, TCP, RFCOMM) uses this, so they all behave the same. Events are delivered
/// through `deliver` (the scheduler or a serial queue), never from inside a public call.
package final class LinkEndpoint: Sendable {
    private let configuration: EndpointConfiguration
    private let scheduler: any EventScheduler
    private let deliver: @Sendable (@escaping @Sendable () -> Void) -> Void
    private let state: Mutex<EndpointStateMachine>
    private let wireBox = Mutex<(any LinkWire)?>(nil)
    /// The drain of the wire this end shut down, kept for ``waitForWireDrain(until:)``.
    private let closedWireDrain = Mutex<WireDrain?>(nil)
    /// Host end, when gated: how many more video samples the consumer can take now (see ``gateVideoCredit(room:)``).
    ///
    /// Boxed in a class: a closure stored directly as a `Mutex`'s value is reabstracted on every `withLock`
    /// round trip (its `inout` passes through the generic storage), so each read wrapped it in two more thunks —
    /// two per delivered sample, a chain whose recursive release overflowed a worker thread's stack when the
    /// endpoint was freed after about 40 minutes of streaming.
    private let creditRoom = Mutex<CreditRoom?>(nil)
    /// The wire, kept for its statistics after the link closed.
    private let statisticsSource = Mutex<(any LinkWire)?>(nil)

    package init(
        configuration: EndpointConfiguration,
        scheduler: any EventScheduler,
        deliver: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void
    ) {
        self.configuration = configuration
        self.scheduler = scheduler
        self.deliver = deliver
        self.state = Mutex(EndpointStateMachine(configuration: configuration))
    }

    /// Attaches the wire (once, before any traffic).
    package func attach(_ wire: any LinkWire) {
        wireBox.withLock { $0 = wire }
        statisticsSource.withLock { $0 = wire }
    }

    /// Counters of this end.
    package var diagnostics: LinkDiagnostics {
        let decoder = statisticsSource.withLock { $0 }?.decoderStatistics
        return state.withLock { state in
            LinkDiagnostics(
                decoder: decoder,
                droppedVideoSamples: state.droppedVideoSamples,
                uncreditedVideoSamples: state.uncreditedVideoSamples,
                deviceReportedDrops: state.deviceReportedDrops,
                misdirectedFrames: state.misdirectedFrames,
                clock: state.clockStatistics)
        }
    }

    /// Now on this end's link clock (its scheduler), in whole microseconds.
    package var linkClockUs: Int64 { scheduler.now.wholeMicroseconds }

    private var wire: (any LinkWire)? { wireBox.withLock { $0 } }

    /// Video samples dropped for lack of credit (device end).
    package var droppedVideoSamples: UInt64 { state.withLock { $0.droppedVideoSamples } }
    /// Video samples discarded because the peer sent them without credit (host end; a misbehaving device).
    package var uncreditedVideoSamples: UInt64 { state.withLock { $0.uncreditedVideoSamples } }
    /// The device's heartbeat-reported count of credit drops (host end).
    package var deviceReportedDrops: UInt64 { state.withLock { $0.deviceReportedDrops } }
    /// Whether the link has closed (or is closing).
    package var isClosed: Bool { state.withLock { $0.isClosed } }
    /// Frames the peer sent that belong to the other direction (ignored).
    package var misdirectedFrames: UInt64 { state.withLock { $0.misdirectedFrames } }

    // MARK: Upper side

    package func open(handler: @escaping @Sendable (EndpointEvent) -> Void) {
        let now = scheduler.now
        let room = currentCreditRoom()
        let actions = state.withLock { $0.open(handler: handler, now: now, creditRoom: room) }
        perform(actions)
    }

    /// Host end: from now on, grant video credit only while `room()` (the consumer's free places) allows, and owe
    /// the rest until ``videoRoomChanged()``. A slow consumer then makes the device drop late samples at the source.
    package func gateVideoCredit(room: @escaping @Sendable () -> Int) {
        let box = CreditRoom(room)
        creditRoom.withLock { $0 = box }
    }

    /// Host end, gated: the consumer took a sample (or otherwise made room); pays owed credit the room allows.
    package func videoRoomChanged() {
        guard let room = currentCreditRoom() else { return }
        let actions = state.withLock { $0.payOwedCredit(room: room) }
        perform(actions)
    }

    /// The consumer's room now, computed outside the state lock; nil when credit is not gated.
    private func currentCreditRoom() -> Int? {
        creditRoom.withLock { $0 }?.room()
    }

    package func send(_ frame: LinkFrame) {
        let actions = state.withLock { $0.send(frame) }
        perform(actions)
    }

    package func close() {
        fail(LinkError(.closedLocally, "the \(configuration.role.name) closed the link"), notifyPeer: true)
    }

    /// After ``close()``: waits until the wire has written what was queued before it (the goodbye, a fault sent just
    /// before), or until `deadline`. Returns at once for a wire that cannot tell, or one not shut down yet.
    /// - Returns: false when the deadline passed first.
    @discardableResult
    package func waitForWireDrain(until deadline: DispatchTime) -> Bool {
        guard let drain = closedWireDrain.withLock({ $0 }) else { return true }
        return drain.wait(until: deadline)
    }

    /// Writes raw bytes onto the wire between frames; false when the link has closed or the wire carries none.
    package func transmitRaw(_ bytes: [UInt8]) -> Bool {
        guard !isClosed, let wire = wire as? any RawByteWire else { return false }
        return wire.transmitRaw(bytes)
    }

    // MARK: Lower side

    /// A frame arrived from the peer.
    package func wireReceived(_ frame: LinkFrame) {
        let now = scheduler.now
        let actions = state.withLock { $0.received(frame, now: now) }
        perform(actions)
    }

    /// The wire lost a frame of `type` (a bad body CRC, an unreadable body). A lost video sample was sent on credit
    /// the device has spent: the host end grants it again, or the device would run out after a few bit errors.
    package func wireLost(_ type: LinkMessageType) {
        guard type == .videoSample else { return }
        let room = currentCreditRoom()
        let actions = state.withLock { $0.videoSampleLost(room: room) }
        perform(actions)
    }

    /// The wire broke (end of stream, I/O error, protocol violation found by the decoder).
    package func wireFailed(_ error: LinkError) {
        fail(error, notifyPeer: error.code == .protocolViolation || error.code == .incompatible)
    }

    /// Closes the link with `error`, telling the peer why when `notifyPeer` is set.
    package func fail(_ error: LinkError, notifyPeer: Bool) {
        let actions = state.withLock { $0.fail(error, notifyPeer: notifyPeer) }
        perform(actions)
    }

    // MARK: Timers and delivery

    private func perform(_ actions: [EndpointAction]) {
        for action in actions {
            switch action {
            case .transmit(let frame):
                wire?.transmit(frame)
            case .shutdownWire:
                let wire = wireBox.withLock { box -> (any LinkWire)? in
                    defer { box = nil }
                    return box
                }
                if let drain = wire?.drain { closedWireDrain.withLock { $0 = drain } }
                wire?.shutdown()
            // Weak: the endpoint holds the scheduler (and a pending timer in its state), so a strong capture would
            // keep both alive in a cycle whenever a scheduler is dropped with work still queued. The link ends own
            // the endpoint; once they are gone, nobody is left to deliver to.
            case .scheduleDrain:
                deliver { [weak self] in self?.drain() }
            case .scheduleHeartbeat(let delay):
                let action = scheduler.schedule(after: delay) { [weak self] in self?.heartbeatDue() }
                let stale = state.withLock { $0.installHeartbeatTimer(action) }
                stale?.cancel()
            case .scheduleWatchdog(let delay):
                let action = scheduler.schedule(after: delay) { [weak self] in self?.watchdogDue() }
                let stale = state.withLock { $0.installWatchdogTimer(action) }
                stale?.cancel()
            case .cancelTimers(let timers):
                timers.forEach { $0.cancel() }
            }
        }
    }

    private func heartbeatDue() {
        let now = scheduler.now
        let actions = state.withLock { $0.heartbeatDue(now: now) }
        perform(actions)
    }

    private func watchdogDue() {
        let now = scheduler.now
        let actions = state.withLock { $0.watchdogDue(now: now) }
        perform(actions)
    }

    /// Delivers queued events one at a time, outside the lock, until the inbox is empty.
    private func drain() {
        while true {
            guard let (event, handler) = state.withLock({ $0.nextDelivery() }) else { return }
            handler(event)
            if case .message(.device(.videoSample)) = event {
                let room = currentCreditRoom()
                let actions = state.withLock { $0.videoSampleDelivered(room: room) }
                perform(actions)
            }
        }
    }
}

/// The consumer's room function, kept by reference (see `LinkEndpoint.creditRoom`).
final class CreditRoom: Sendable {
    let room: @Sendable () -> Int

    init(_ room: @escaping @Sendable () -> Int) {
        self.room = room
    }
}

/// A side effect the endpoint performs outside its lock.
package enum EndpointAction {
    case transmit(LinkFrame)
    case shutdownWire
    case scheduleDrain
    case scheduleHeartbeat(after: Duration)
    case scheduleWatchdog(after: Duration)
    case cancelTimers([ScheduledAction])
}

/// The state of one link end, as a plain value: each event returns the actions to perform.
package struct EndpointStateMachine {
    private enum Phase { case created, open, closed }

    private let configuration: EndpointConfiguration
    private var phase = Phase.created
    private var handler: (@Sendable (EndpointEvent) -> Void)?
    private var inbox: [EndpointEvent] = []
    private var inboxHead = 0
    private var drainScheduled = false
    private var closedDelivered = false
    private var closeQueued = false

    private var lastHeard: Duration = .zero
    private var heartbeatSequence: UInt32 = 0
    private var heartbeatTimer: ScheduledAction?
    private var watchdogTimer: ScheduledAction?

    /// Device end: credit left; host end: credit granted and not yet used by the device.
    private var credit = 0
    /// Gated host end: samples delivered whose credit waits for the consumer's room.
    private var owedCredit = 0
    private(set) var droppedVideoSamples: UInt64 = 0
    /// Device end: an HEVC sample was dropped for lack of credit, so samples up to the next keyframe are dropped too.
    private var awaitingKeyframeAfterDrop = false
    private(set) var uncreditedVideoSamples: UInt64 = 0
    /// Host end: the device's own count of samples dropped for lack of credit, from its latest heartbeat.
    private(set) var deviceReportedDrops: UInt64 = 0
    private(set) var misdirectedFrames: UInt64 = 0
    private var helloSeen = false
    // Latency (PROTOCOL.md 7.5): host end, the device clock's offset; device end, the host heartbeat to echo.
    private var clockSync: LinkClockSync
    private var hostBeatToEcho: (hostClockUs: Int64, receivedUs: Int64)?

    /// The most events waiting for the handler: far above any credit granted and any burst of control messages
    /// a real peer sends, far below what a flood would fill memory with.
    static let inboxLimit = 4096

    /// The most credit a device end accepts; more is a peer bug and is capped.
    private static let creditLimit = 1 << 20

    init(configuration: EndpointConfiguration) {
        self.configuration = configuration
        self.clockSync = LinkClockSync(sharedClock: configuration.sharedClock)
    }

    /// Host end: how the device's clock relates to this end's.
    var clockStatistics: LinkClockStatistics {
        configuration.role == .host ? clockSync.statistics : LinkClockStatistics()
    }

    mutating func open(
        handler: @escaping @Sendable (EndpointEvent) -> Void, now: Duration, creditRoom: Int? = nil
    ) -> [EndpointAction] {
        guard self.handler == nil, !closedDelivered else { return [] }
        self.handler = handler
        var actions: [EndpointAction] = []
        if phase == .created {
            phase = .open
            lastHeard = now
            if configuration.role == .host {
                let grant = max(0, min(configuration.initialCredit, creditRoom ?? .max))
                credit += grant
                actions.append(.transmit(.host(.frameCredit(UInt32(clamping: grant)))))
            }
            if configuration.liveness.isEnabled {
                actions.append(.scheduleHeartbeat(after: configuration.liveness.heartbeatInterval))
                actions.append(.scheduleWatchdog(after: configuration.liveness.timeout))
            }
        }
        if pendingCount > 0 { actions.append(contentsOf: requestDrain()) }
        return actions
    }

    mutating func send(_ frame: LinkFrame) -> [EndpointAction] {
        guard phase != .closed else { return [] }
        switch (configuration.role, frame) {
        case (.device, .device(.videoSample(let sample))):
            // After a dropped HEVC sample, what depends on it cannot be decoded: hold until the next keyframe
            // rather than spend credit on samples the host can only discard (PROTOCOL.md 7.2).
            if awaitingKeyframeAfterDrop, !sample.isKeyframe {
                droppedVideoSamples += 1
                return []
            }
            guard credit > 0 else {
                droppedVideoSamples += 1
                awaitingKeyframeAfterDrop = sample.format == .hevc
                return []
            }
            awaitingKeyframeAfterDrop = false
            credit -= 1
            return [.transmit(frame)]
        case (.host, .host(.hello(let version, nil))):
            if let token = configuration.pairingTokenToPresent {
                return [.transmit(.host(.hello(protocolVersion: version, pairingToken: token)))]
            }
            return [.transmit(frame)]
        case (.host, .host), (.device, .device):
            return [.transmit(frame)]
        case (_, .goodbye(let error)):
            return fail(error, notifyPeer: true)
        default:
            preconditionFailure("the \(configuration.role.name) end cannot send \(frame)")
        }
    }

    mutating func received(_ frame: LinkFrame, now: Duration) -> [EndpointAction] {
        guard phase != .closed else { return [] }
        lastHeard = now
        switch (configuration.role, frame) {
        case (_, .goodbye(let reason)):
            return fail(Self.peerClosed(reason, peer: configuration.role.peerName), notifyPeer: false)
        case (.host, .device(let message)):
            switch message {
            case .videoSample(let sample):
                guard credit > 0 else {
                    uncreditedVideoSamples += 1
                    return []
                }
                credit -= 1
                if let timing = sample.timing {
                    // Latency: received now; capture and send times mapped onto this end's clock (or left unmapped).
                    var stamped = sample
                    stamped.timing = clockSync.map(timing, receivedUs: now.wholeMicroseconds)
                    return enqueue(.message(.device(.videoSample(stamped))))
                }
            case .heartbeat(_, let dropped, let echo):
                deviceReportedDrops = dropped
                if let echo { clockSync.receive(echo, atUs: now.wholeMicroseconds) }
            case .hello(let info) where info.protocolVersion != linkProtocolVersion:
                return fail(
                    LinkError(
                        .incompatible,
                        "the device speaks link protocol \(info.protocolVersion), this host speaks \(linkProtocolVersion)"
                    ),
                    notifyPeer: true
                )
            default:
                break
            }
            return enqueue(.message(frame))
        case (.device, .host(let message)):
            switch message {
            case .frameCredit(let grant):
                credit = min(Self.creditLimit, credit + Int(grant))
                return []
            case .hello(let version, let token):
                if version != linkProtocolVersion {
                    return fail(
                        LinkError(
                            .incompatible,
                            "the host speaks link protocol \(version), this device speaks \(linkProtocolVersion)"
                        ),
                        notifyPeer: true
                    )
                }
                if let required = configuration.requiredPairingToken, !Self.tokensMatch(token, required) {
                    let what = token == nil ? "no pairing token" : "a wrong pairing token"
                    return fail(
                        LinkError(.incompatible, "pairing failed: the host presented \(what)"),
                        notifyPeer: true
                    )
                }
                helloSeen = true
            default:
                if configuration.requiredPairingToken != nil, !helloSeen {
                    return fail(
                        LinkError(.incompatible, "pairing failed: the host sent a message before its hello"),
                        notifyPeer: true
                    )
                }
            }
            if case .heartbeat(_, let hostClockUs?) = message {
                hostBeatToEcho = (hostClockUs, now.wholeMicroseconds)
            }
            return enqueue(.message(frame))
        default:
            misdirectedFrames += 1
            return []
        }
    }

    mutating func fail(_ error: LinkError, notifyPeer: Bool) -> [EndpointAction] {
        guard phase != .closed else { return [] }
        phase = .closed
        var actions: [EndpointAction] = []
        let timers = [heartbeatTimer, watchdogTimer].compactMap { $0 }
        heartbeatTimer = nil
        watchdogTimer = nil
        if !timers.isEmpty { actions.append(.cancelTimers(timers)) }
        if notifyPeer { actions.append(.transmit(.goodbye(error))) }
        actions.append(.shutdownWire)
        if error.code == .closedLocally {
            // The owner asked to stop: messages not yet delivered are dropped.
            inbox.removeAll()
            inboxHead = 0
        }
        inbox.append(.closed(error))
        closeQueued = true
        if handler != nil { actions.append(contentsOf: requestDrain()) }
        return actions
    }

    mutating func heartbeatDue(now: Duration) -> [EndpointAction] {
        heartbeatTimer = nil
        guard phase == .open else { return [] }
        heartbeatSequence &+= 1
        let nowUs = now.wholeMicroseconds
        let beat: LinkFrame
        switch configuration.role {
        case .host:
            // The host's clock rides on every heartbeat; the device echoes it (PROTOCOL.md 7.5).
            clockSync.noteSent(hostClockUs: nowUs)
            beat = .host(.heartbeat(sequence: heartbeatSequence, hostClockUs: nowUs))
        case .device:
            let echo = hostBeatToEcho.map {
                ClockEcho(echoHostClockUs: $0.hostClockUs, receivedUs: $0.receivedUs, sentUs: nowUs)
            }
            hostBeatToEcho = nil
            beat = .device(.heartbeat(sequence: heartbeatSequence, droppedFrames: droppedVideoSamples, clock: echo))
        }
        return [.transmit(beat), .scheduleHeartbeat(after: configuration.liveness.heartbeatInterval)]
    }

    mutating func watchdogDue(now: Duration) -> [EndpointAction] {
        watchdogTimer = nil
        guard phase == .open else { return [] }
        let silence = now - lastHeard
        let timeout = configuration.liveness.timeout
        if silence >= timeout {
            return fail(
                LinkError(.heartbeatTimeout, "nothing arrived from the \(configuration.role.peerName) for \(String(format: "%.1f", silence.inSeconds)) s"),
                notifyPeer: true
            )
        }
        return [.scheduleWatchdog(after: timeout - silence)]
    }

    /// Stores a newly scheduled heartbeat; returns a timer to cancel if the link closed meanwhile.
    mutating func installHeartbeatTimer(_ timer: ScheduledAction) -> ScheduledAction? {
        guard phase == .open else { return timer }
        let stale = heartbeatTimer
        heartbeatTimer = timer
        return stale
    }

    /// Stores a newly scheduled watchdog; returns a timer to cancel if the link closed meanwhile.
    mutating func installWatchdogTimer(_ timer: ScheduledAction) -> ScheduledAction? {
        guard phase == .open else { return timer }
        let stale = watchdogTimer
        watchdogTimer = timer
        return stale
    }

    /// The next event to deliver and the handler to call, or nil (and the drain ends).
    mutating func nextDelivery() -> (EndpointEvent, @Sendable (EndpointEvent) -> Void)? {
        guard let handler, !closedDelivered, inboxHead < inbox.count else {
            drainScheduled = false
            return nil
        }
        let event = inbox[inboxHead]
        inboxHead += 1
        if inboxHead == inbox.count {
            inbox.removeAll(keepingCapacity: true)
            inboxHead = 0
        }
        if case .closed = event {
            closedDelivered = true
            self.handler = nil
            inbox.removeAll()
            inboxHead = 0
        }
        return (event, handler)
    }

    /// The host handler returned from a video sample: grant one more, or, when gated by the consumer's `room`,
    /// owe it and pay what the room allows.
    mutating func videoSampleDelivered(room: Int? = nil) -> [EndpointAction] {
        guard phase == .open, configuration.role == .host else { return [] }
        guard let room else {
            credit += 1
            return [.transmit(.host(.frameCredit(1)))]
        }
        owedCredit += 1
        return payOwedCredit(room: room)
    }

    /// Host end: a video sample was lost on the wire. Sent on credit, it is paid back as a delivered one is; sent
    /// without (the device had none), it is counted like any uncredited sample.
    mutating func videoSampleLost(room: Int? = nil) -> [EndpointAction] {
        guard phase == .open, configuration.role == .host else { return [] }
        guard credit > 0 else {
            uncreditedVideoSamples += 1
            return []
        }
        credit -= 1
        return videoSampleDelivered(room: room)
    }

    /// Gated host end: grants as much owed credit as the consumer's free `room` leaves after the credit the device
    /// still holds (each of those samples will take a place when it arrives).
    mutating func payOwedCredit(room: Int) -> [EndpointAction] {
        guard phase == .open, configuration.role == .host, owedCredit > 0 else { return [] }
        let pay = min(owedCredit, max(0, room - credit))
        guard pay > 0 else { return [] }
        owedCredit -= pay
        credit += pay
        return [.transmit(.host(.frameCredit(UInt32(clamping: pay))))]
    }

    private var pendingCount: Int { inbox.count - inboxHead }

    var isClosed: Bool { phase == .closed }

    /// Device end: video samples it may still send; host end: credit granted and not yet used.
    var availableCredit: Int { credit }

    private mutating func enqueue(_ event: EndpointEvent) -> [EndpointAction] {
        guard !closeQueued else { return [] }
        if case .message = event, pendingCount >= Self.inboxLimit {
            // Video is bounded by credit; nothing else is. A peer that sends messages faster than they are handled
            // would otherwise grow this queue without end.
            return fail(
                LinkError(.protocolViolation,
                          "the \(configuration.role.peerName) sent messages faster than they could be handled (\(Self.inboxLimit) waiting)"),
                notifyPeer: true)
        }
        inbox.append(event)
        return handler == nil ? [] : requestDrain()
    }

    private mutating func requestDrain() -> [EndpointAction] {
        guard !drainScheduled else { return [] }
        drainScheduled = true
        return [.scheduleDrain]
    }

    /// What this end reports when the peer says goodbye.
    static func peerClosed(_ reason: LinkError, peer: String) -> LinkError {
        switch reason.code {
        case .incompatible, .protocolViolation:
            return LinkError(reason.code, "the \(peer) closed the link: \(reason.message)")
        case .closedLocally:
            // The peer simply closed (powered off, stopped): its own words would only repeat this.
            return LinkError(.connectionLost, "the \(peer) closed the link")
        default:
            return LinkError(.connectionLost, "the \(peer) closed the link: \(reason.message)")
        }
    }

    /// Compares tokens in time independent of where they differ.
    package static func tokensMatch(_ presented: String?, _ required: String) -> Bool {
        guard let presented else { return false }
        let a = Array(presented.utf8)
        let b = Array(required.utf8)
        var difference = UInt8(a.count == b.count ? 0 : 1)
        for index in 0..<max(a.count, b.count) {
            let x = index < a.count ? a[index] : 0
            let y = index < b.count ? b[index] : 0
            difference |= x ^ y
        }
        return difference == 0
    }
}
