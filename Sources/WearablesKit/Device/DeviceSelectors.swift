import Synchronization

/// Picks the glasses a session runs on: DAT's `DeviceSelector`.
public protocol DeviceSelector: Sendable {
    /// The glasses picked now, or nil when none is eligible.
    var activeDevice: DeviceIdentifier? { get }
    /// The pick now, then every change; yields nil while no glasses are eligible.
    func activeDeviceStream() -> AnyAsyncSequence<DeviceIdentifier?>
}

/// Decides whether glasses are eligible for an ``AutoDeviceSelector``.
public typealias DeviceFilter = @Sendable (Device) -> Bool

/// Always picks the same glasses: DAT's `SpecificDeviceSelector`.
public final class SpecificDeviceSelector: DeviceSelector {
    private let device: DeviceIdentifier

    /// Picks the glasses with this identifier.
    public init(device: DeviceIdentifier) {
        self.device = device
    }

    /// The identifier given at creation.
    public var activeDevice: DeviceIdentifier? { device }

    /// Yields the identifier once, then finishes.
    public func activeDeviceStream() -> AnyAsyncSequence<DeviceIdentifier?> {
        let (stream, continuation) = AsyncStream.makeStream(of: DeviceIdentifier?.self, bufferingPolicy: .bufferingNewest(1))
        continuation.yield(device)
        continuation.finish()
        return AnyAsyncSequence(stream)
    }
}

/// Picks the first known glasses (in order of appearance) that are connected, compatible and pass the filter:
/// DAT's `AutoDeviceSelector`. It follows connects, disconnects and state changes as they happen.
public final class AutoDeviceSelector: DeviceSelector {
    private struct Core {
        var deviceTokens: [DeviceIdentifier: any AnyListenerToken] = [:]
        var devicesToken: (any AnyListenerToken)?
        var current: DeviceIdentifier?
    }

    private let wearables: any WearablesInterface
    private let filter: DeviceFilter?
    private let core = Mutex(Core())
    private let effects = EffectQueue()
    private let broadcaster: Broadcaster<DeviceIdentifier?>

    /// Selects among the glasses of `wearables`, optionally only those `filter` accepts.
    public init(wearables: any WearablesInterface, filter: DeviceFilter? = nil) {
        self.wearables = wearables
        self.filter = filter
        self.broadcaster = Broadcaster(effects: effects)
        let token = wearables.addDevicesListener { [weak self] identifiers in self?.devicesChanged(identifiers) }
        core.withLock { $0.devicesToken = token }
        reevaluate()
    }

    /// The first eligible glasses, or nil.
    public var activeDevice: DeviceIdentifier? { computeActive() }

    /// The current pick first (nil when none is eligible), then every change; keeps the newest 8 picks.
    public func activeDeviceStream() -> AnyAsyncSequence<DeviceIdentifier?> {
        let stream = core.withLock { core in
            broadcaster.makeStream(bufferingPolicy: .bufferingNewest(8), initial: .some(core.current))
        }
        effects.drain()
        return AnyAsyncSequence(stream)
    }

    private func computeActive() -> DeviceIdentifier? {
        for identifier in wearables.devices {
            guard let device = wearables.deviceForIdentifier(identifier) else { continue }
            let state = device.state
            guard state.linkState == .connected, state.compatibility == .compatible else { continue }
            if let filter, !filter(device) { continue }
            return identifier
        }
        return nil
    }

    private func devicesChanged(_ identifiers: [DeviceIdentifier]) {
        let new = core.withLock { core in identifiers.filter { core.deviceTokens[$0] == nil } }
        for identifier in new {
            guard let device = wearables.deviceForIdentifier(identifier) else { continue }
            let token = device.addDeviceStateListener { [weak self] _ in self?.reevaluate() }
            core.withLock { $0.deviceTokens[identifier] = token }
        }
        reevaluate()
    }

    private func reevaluate() {
        let active = computeActive()
        core.withLock { core in
            guard core.current != active else { return }
            core.current = active
            broadcaster.publish(active)
        }
        effects.drain()
    }
}
