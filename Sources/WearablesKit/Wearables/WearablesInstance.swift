import Synchronization

/// One independent set of glasses, sessions and timers: what ``Wearables/shared`` is, and what
/// ``Wearables/makeInstance(configuration:)`` makes for tests and for several pipelines in one process.
///
/// WearablesKit does no I/O: glasses appear when a ``DeviceLink`` to them is attached and they say `hello`.
/// All callbacks of one instance run in order, never concurrently, on the thread that delivered the link event,
/// fired the timer or made the call that caused them; do not block in them.
public final class WearablesInstance: WearablesInterface {
    /// The configuration this instance was made with.
    public let configuration: WearablesConfiguration

    private struct PendingPermission {
        let permission: Permission
        let isRequest: Bool
        var awaiting: Set<DeviceIdentifier>
        var denied = false
        let continuation: CheckedContinuation<Result<PermissionStatus, PermissionError>, Never>
        var timer: ScheduledAction?
    }

    private struct Core {
        var order: [DeviceIdentifier] = []
        var devices: [DeviceIdentifier: Device] = [:]
        var connections: [ObjectIdentifier: LinkConnection] = [:]
        var pending: [UInt32: PendingPermission] = [:]
        var nextRequestID: UInt32 = 1
    }

    private let core = Mutex(Core())
    private let context: InstanceContext
    private let devicesBroadcaster: Broadcaster<[DeviceIdentifier]>

    init(configuration: WearablesConfiguration) {
        self.configuration = configuration
        self.context = InstanceContext(configuration: configuration, effects: EffectQueue())
        self.devicesBroadcaster = Broadcaster(effects: context.effects)
    }

    // MARK: Devices

    /// The identifiers of every pair of glasses that introduced itself, in order of first appearance.
    public var devices: [DeviceIdentifier] { core.withLock { $0.order } }

    /// Calls `listener` with the current device list at once and after every change.
    public func addDevicesListener(_ listener: @escaping @Sendable ([DeviceIdentifier]) -> Void) -> any AnyListenerToken {
        let token = core.withLock { core in devicesBroadcaster.listen(initial: core.order, listener) }
        context.effects.drain()
        return token
    }

    /// The current device list first, then every change (keeps the newest 16 lists).
    public func devicesStream() -> AsyncStream<[DeviceIdentifier]> {
        let stream = core.withLock { core in
            devicesBroadcaster.makeStream(bufferingPolicy: .bufferingNewest(16), initial: core.order)
        }
        context.effects.drain()
        return stream
    }

    /// The known glasses with this identifier.
    public func deviceForIdentifier(_ identifier: DeviceIdentifier) -> Device? {
        core.withLock { $0.devices[identifier] }
    }

    /// How many links are attached and not yet closed.
    public var attachedLinkCount: Int { core.withLock { $0.connections.count } }

    // MARK: Sessions

    /// Creates an idle session on the glasses the selector picks.
    /// - Throws: ``DeviceSessionError/noEligibleDevice`` when it picks none (or unknown glasses),
    ///   ``DeviceSessionError/sessionAlreadyExists`` when those glasses have a session that has not stopped.
    public func createSession(deviceSelector: any DeviceSelector) throws(DeviceSessionError) -> DeviceSession {
        guard let identifier = deviceSelector.activeDevice, let device = deviceForIdentifier(identifier) else {
            throw .noEligibleDevice
        }
        if device.session != nil { throw .sessionAlreadyExists }
        return DeviceSession(device: device, context: context)
    }

    // MARK: Links

    /// Takes ownership of `link`: opens it, sends `hello`, and tracks the glasses behind it. A link that is attached
    /// already is left as it is (a link is opened once; opening it again took its events from the first attachment,
    /// which then never heard it close).
    public func attach(link: any DeviceLink, pairingToken: String?) {
        let connection = LinkConnection(link: link)
        let attachedAlready = core.withLock { core -> Bool in
            if core.connections.values.contains(where: { $0.link === link }) { return true }
            core.connections[ObjectIdentifier(connection)] = connection
            return false
        }
        guard !attachedAlready else { return }
        link.open { [weak self, weak connection] event in
            guard let self, let connection else { return }
            self.handle(event, from: connection)
        }
        link.send(.hello(protocolVersion: linkProtocolVersion, pairingToken: pairingToken))
    }

    private func handle(_ event: DeviceLinkEvent, from connection: LinkConnection) {
        switch event {
        case .message(.hello(let info)):
            greeted(info, on: connection)
        case .message(let message):
            guard let device = connection.device else { break }  // nothing counts before hello
            route(message, from: device)
        case .closed:
            closed(connection)
        }
        context.effects.drain()
    }

    private func greeted(_ info: DeviceInfo, on connection: LinkConnection) {
        guard connection.device == nil else { return }  // a repeated hello changes nothing
        let device = core.withLock { core -> Device in
            if let known = core.devices[info.identifier] { return known }
            let device = Device(info: info, context: context)
            core.devices[info.identifier] = device
            core.order.append(info.identifier)
            devicesBroadcaster.publish(core.order)
            return device
        }
        connection.device = device
        let (replaced, session) = device.bind(connection, info: info)
        if let replaced {
            context.effects.enqueue { replaced.link.close() }
        }
        session?.linkRestored()
    }

    private func route(_ message: DeviceMessage, from device: Device) {
        switch message {
        case .deviceState(let reported):
            let (old, new, session) = device.apply(reported: reported)
            session?.deviceStateChanged(from: old, to: new)
        case .session(let event):
            device.session?.handle(event)
        case .stream, .codecConfiguration, .videoSample, .photo, .fault, .audioSample:
            device.session?.routeToStream(message)
        case .permission(let permission, let status, let requestID):
            permissionAnswered(permission, status, requestID: requestID, from: device.identifier)
        case .motion, .motionSamples:
            device.session?.routeToMotion(message)
        case .photoCapability, .photoChunk:
            device.session?.routeToPhoto(message)
        case .hello, .heartbeat:
            break  // heartbeats are the transport's business
        }
    }

    private func closed(_ connection: LinkConnection) {
        core.withLock { _ = $0.connections.removeValue(forKey: ObjectIdentifier(connection)) }
        guard let device = connection.device else { return }
        let (wasCurrent, session) = device.unbind(connection)
        guard wasCurrent else { return }
        session?.linkLost()
        deviceLeft(device.identifier)
    }

    // MARK: Permissions

    /// Asks the connected glasses, silently, whether `permission` is granted; granted on any glasses counts.
    public func checkPermissionStatus(_ permission: Permission) async throws(PermissionError) -> PermissionStatus {
        try await askForPermission(permission, isRequest: false).get()
    }

    /// Asks the connected glasses to request `permission` from the wearer; granted on any glasses counts.
    public func requestPermission(_ permission: Permission) async throws(PermissionError) -> PermissionStatus {
        try await askForPermission(permission, isRequest: true).get()
    }

    private func askForPermission(_ permission: Permission, isRequest: Bool) async -> Result<PermissionStatus, PermissionError> {
        await withCheckedContinuation { continuation in
            let failure = core.withLock { core -> PermissionError? in
                if core.order.isEmpty { return .noDevice }
                let connected = core.order.compactMap { core.devices[$0] }.filter(\.isConnected)
                if connected.isEmpty { return .noDeviceWithConnection }
                if isRequest, core.pending.values.contains(where: { $0.isRequest && $0.permission == permission }) {
                    return .requestInProgress
                }
                let id = core.nextRequestID
                core.nextRequestID = core.nextRequestID == .max ? 1 : core.nextRequestID + 1
                var pending = PendingPermission(
                    permission: permission, isRequest: isRequest, awaiting: Set(connected.map(\.identifier)),
                    continuation: continuation)
                // The scheduler never runs the action inside `schedule`, so arming under the lock is safe.
                pending.timer = configuration.scheduler.schedule(after: configuration.permissionTimeout) { [weak self] in
                    self?.resolvePermission(id) { _ in .failure(.requestTimeout) }
                }
                core.pending[id] = pending
                for device in connected {
                    device.send(isRequest ? .requestPermission(permission, requestID: id) : .checkPermission(permission, requestID: id))
                }
                return nil
            }
            if let failure { continuation.resume(returning: .failure(failure)) }
            context.effects.drain()
        }
    }

    private func permissionAnswered(_ permission: Permission, _ status: PermissionStatus, requestID: UInt32, from device: DeviceIdentifier) {
        resolvePermission(requestID) { pending in
            guard pending.permission == permission, pending.awaiting.contains(device) else { return nil }
            if status == .granted { return .success(.granted) }
            pending.awaiting.remove(device)
            pending.denied = true
            return pending.awaiting.isEmpty ? .success(.denied) : nil
        }
    }

    private func deviceLeft(_ device: DeviceIdentifier) {
        let ids = core.withLock { core in core.pending.filter { $0.value.awaiting.contains(device) }.map(\.key) }
        for id in ids {
            resolvePermission(id) { pending in
                pending.awaiting.remove(device)
                guard pending.awaiting.isEmpty else { return nil }
                return pending.denied ? .success(.denied) : .failure(.connectionError)
            }
        }
    }

    /// Updates a pending permission query; resumes its caller (outside the lock) when `decide` returns a result.
    private func resolvePermission(
        _ id: UInt32, _ decide: (inout PendingPermission) -> Result<PermissionStatus, PermissionError>?
    ) {
        let finished = core.withLock { core -> (PendingPermission, Result<PermissionStatus, PermissionError>)? in
            guard var pending = core.pending[id] else { return nil }
            guard let result = decide(&pending) else {
                core.pending[id] = pending
                return nil
            }
            core.pending[id] = nil
            return (pending, result)
        }
        guard let (pending, result) = finished else { return }
        pending.timer?.cancel()
        pending.continuation.resume(returning: result)
    }
}
