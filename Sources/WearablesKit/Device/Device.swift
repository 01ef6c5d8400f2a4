import Foundation
import Synchronization

/// What every object of one ``WearablesInstance`` shares: its configuration and its ordered effect queue.
struct InstanceContext: Sendable {
    let configuration: WearablesConfiguration
    let effects: EffectQueue

    var scheduler: any EventScheduler { configuration.scheduler }
}

/// A pair of glasses known to a ``WearablesInstance``: DAT's `Device`.
///
/// The same `Device` object stands for the glasses across reconnects: when their link drops, ``linkState`` turns
/// `.disconnected`; when a new link from glasses with the same identifier is attached, it turns `.connected` again.
public final class Device: Sendable {
    /// The glasses' stable identifier.
    public let identifier: DeviceIdentifier

    struct Core {
        var info: DeviceInfo
        var state: DeviceState
        var connection: LinkConnection?
        var session: DeviceSession?
    }

    private let core: Mutex<Core>
    /// The last stream generation handed out (0: none yet); see ``nextStreamGeneration()``.
    private let lastStreamGeneration = Mutex<UInt32>(0)
    private let context: InstanceContext
    private let stateBroadcaster: Broadcaster<DeviceState>
    private let linkBroadcaster: Broadcaster<LinkState>
    private let compatibilityBroadcaster: Broadcaster<Compatibility>

    init(info: DeviceInfo, context: InstanceContext) {
        self.identifier = info.identifier
        self.context = context
        var state = DeviceState()
        state.linkState = .disconnected
        state.compatibility = Device.compatibility(of: info)
        self.core = Mutex(Core(info: info, state: state, connection: nil, session: nil))
        self.stateBroadcaster = Broadcaster(effects: context.effects)
        self.linkBroadcaster = Broadcaster(effects: context.effects)
        self.compatibilityBroadcaster = Broadcaster(effects: context.effects)
    }

    // MARK: Public surface

    /// The glasses' name as they last introduced themselves.
    public var name: String { core.withLock { $0.info.name } }
    /// The glasses' UUID.
    public var deviceUUID: UUID { core.withLock { $0.info.uuid } }
    /// What the glasses said about themselves in their last `hello` (a Linux addition).
    public var info: DeviceInfo { core.withLock { $0.info } }
    /// The name, or the identifier when the name is empty.
    public func nameOrId() -> String {
        let name = name
        return name.isEmpty ? identifier : name
    }
    /// The latest state snapshot.
    public var state: DeviceState { core.withLock { $0.state } }
    /// Whether the host has a link to the glasses.
    public var linkState: LinkState { state.linkState }
    /// Battery level in percent, if known.
    public var batteryLevel: Int? { state.batteryLevel }
    /// Charging state.
    public var chargingState: ChargingState { state.chargingState }
    /// Worn or not.
    public var donState: DonState { state.donState }
    /// Folded or not.
    public var hingeState: HingeState { state.hingeState }
    /// Thermal level.
    public var thermalLevel: ThermalLevel { state.thermalLevel }
    /// The kind of glasses.
    public func deviceType() -> DeviceType { info.deviceType }
    /// Whether the glasses and this software can work together.
    public func compatibility() -> Compatibility { state.compatibility }
    /// Whether the glasses have a display (none of the streaming glasses modelled here do).
    public func supportsDisplay() -> Bool { info.deviceType == .metaRayBanDisplay }

    /// Calls `listener` with the current state at once and with every change.
    public func addDeviceStateListener(_ listener: @escaping @Sendable (DeviceState) -> Void) -> any AnyListenerToken {
        let token = core.withLock { core in stateBroadcaster.listen(initial: core.state, listener) }
        context.effects.drain()
        return token
    }

    /// Calls `listener` with the current link state at once and with every change.
    public func addLinkStateListener(_ listener: @escaping @Sendable (LinkState) -> Void) -> any AnyListenerToken {
        let token = core.withLock { core in linkBroadcaster.listen(initial: core.state.linkState, listener) }
        context.effects.drain()
        return token
    }

    /// Calls `listener` with the current compatibility at once and with every change.
    public func addCompatibilityListener(_ listener: @escaping @Sendable (Compatibility) -> Void) -> any AnyListenerToken {
        let token = core.withLock { core in compatibilityBroadcaster.listen(initial: core.state.compatibility, listener) }
        context.effects.drain()
        return token
    }

    /// The current state first, then every change (a Linux convenience; buffers the newest 16 states).
    public func deviceStateStream() -> AsyncStream<DeviceState> {
        let stream = core.withLock { core in
            stateBroadcaster.makeStream(bufferingPolicy: .bufferingNewest(16), initial: core.state)
        }
        context.effects.drain()
        return stream
    }

    // MARK: Internal: link binding (called by WearablesInstance)

    static func compatibility(of info: DeviceInfo) -> Compatibility {
        if info.protocolVersion == linkProtocolVersion { return .compatible }
        return info.protocolVersion > linkProtocolVersion ? .sdkUpdateRequired : .deviceUpdateRequired
    }

    /// Whether the glasses are connected and compatible.
    var isEligible: Bool {
        core.withLock { $0.connection != nil && $0.state.compatibility == .compatible }
    }

    var isConnected: Bool { core.withLock { $0.connection != nil } }

    /// Binds a new link after its `hello`; returns the link it replaces (to close) and the session to tell.
    func bind(_ connection: LinkConnection, info: DeviceInfo) -> (replaced: LinkConnection?, session: DeviceSession?) {
        core.withLock { core in
            let replaced = core.connection
            core.connection = connection
            core.info = info
            var state = core.state
            state.linkState = .connected
            state.compatibility = Device.compatibility(of: info)
            publish(&core, state)
            return (replaced === connection ? nil : replaced, core.session)
        }
    }

    /// Unbinds `connection` if it is the current link; returns the session to tell about the loss.
    func unbind(_ connection: LinkConnection) -> (wasCurrent: Bool, session: DeviceSession?) {
        core.withLock { core in
            guard core.connection === connection else { return (false, nil) }
            core.connection = nil
            var state = core.state
            state.linkState = .disconnected
            publish(&core, state)
            return (true, core.session)
        }
    }

    /// Applies a state report from the glasses (the host owns `linkState` and `compatibility`); returns the old
    /// and new state and the session to tell.
    func apply(reported: DeviceState) -> (old: DeviceState, new: DeviceState, session: DeviceSession?) {
        core.withLock { core in
            let old = core.state
            var state = reported
            state.linkState = old.linkState
            state.compatibility = old.compatibility
            publish(&core, state)
            return (old, state, core.session)
        }
    }

    private func publish(_ core: inout Core, _ state: DeviceState) {
        let old = core.state
        core.state = state
        if state != old { stateBroadcaster.publish(state) }
        if state.linkState != old.linkState { linkBroadcaster.publish(state.linkState) }
        if state.compatibility != old.compatibility { compatibilityBroadcaster.publish(state.compatibility) }
    }

    /// The session currently bound to the glasses.
    var session: DeviceSession? { core.withLock { $0.session } }

    /// Binds `session` unless another session that has not stopped holds the glasses.
    func claim(_ session: DeviceSession) -> Bool {
        core.withLock { core in
            if let current = core.session, current !== session { return false }
            core.session = session
            return true
        }
    }

    /// Releases the glasses if `session` holds them.
    func release(_ session: DeviceSession) {
        core.withLock { core in
            if core.session === session { core.session = nil }
        }
    }

    /// A stream generation not handed out before for these glasses (1, 2, …, wrapping past `UInt32.max` to 1), for a
    /// stream's next `startStream`. One counter for every stream of the glasses, so that a new camera's stream
    /// never takes a late answer to an earlier camera's start or stop for its own.
    func nextStreamGeneration() -> UInt32 {
        lastStreamGeneration.withLock { last in
            last = StreamGeneration.next(after: last)
            return last
        }
    }

    /// Sends `message` over the current link, in effect order; dropped when no link is up.
    func send(_ message: HostMessage) {
        let connection = core.withLock { $0.connection }
        guard let connection else { return }
        context.effects.enqueue { connection.link.send(message) }
    }
}

/// One attached link and, after its `hello`, the glasses it leads to.
///
/// The device is held weakly: the device holds its current connection (`Device.bind`) and the WearablesInstance
/// owns the device, so a strong reference here would tie device and connection into a cycle that outlives the
/// instance whenever a link is never closed.
final class LinkConnection: Sendable {
    let link: any DeviceLink
    private let boundDevice = Mutex<WeakReference<Device>>(WeakReference(nil))

    init(link: any DeviceLink) {
        self.link = link
    }

    var device: Device? {
        get { boundDevice.withLock { $0.object } }
        set { boundDevice.withLock { $0 = WeakReference(newValue) } }
    }
}
