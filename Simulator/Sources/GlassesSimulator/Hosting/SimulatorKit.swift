import Foundation
import GlassesLink
import Synchronization
import WearablesKit

/// Pairs simulated glasses with a WearablesKit instance in memory: the Linux, deterministic counterpart of Meta's
/// `MockDeviceKit`.
///
/// ```swift
/// let scheduler = ManualScheduler()
/// let wearables = Wearables.makeInstance(configuration: try WearablesConfiguration(scheduler: scheduler))
/// let kit = SimulatorKit(scheduler: scheduler)
/// let glasses = try kit.pairGlasses(with: wearables, profile: SubjectProfile(pulseRate: 80, seed: 1))
/// scheduler.advance(by: .milliseconds(10))      // hello arrives; the device is known
/// glasses.fold()                                 // and so on: tap, doff, setThermalLevel, inject(.zombieStream(true))
/// ```
public final class SimulatorKit: Sendable {
    private struct Pairing {
        let glasses: SimulatedGlasses
        var link: InProcessLink
        let wearables: any WearablesInterface
    }

    /// The scheduler every paired device and link runs on.
    public let scheduler: any EventScheduler
    private let liveness: LinkLiveness
    private let initialCredit: Int
    private let pairings = Mutex<[Pairing]>([])

    /// Creates a kit.
    /// - Parameters:
    ///   - scheduler: virtual (``ManualScheduler``) or real time; use the same one as the Wearables instance.
    ///   - liveness: heartbeats on the in-process links (`.disabled` lets a test drain the scheduler).
    ///   - initialCredit: video samples in flight before the host grants more.
    public init(scheduler: any EventScheduler, liveness: LinkLiveness = .standard, initialCredit: Int = 8) {
        self.scheduler = scheduler
        self.liveness = liveness
        self.initialCredit = initialCredit
    }

    /// Creates glasses and connects them to `wearables` through a new in-process link.
    /// - Throws: ``SimulatorError`` for an invalid profile.
    @discardableResult
    public func pairGlasses(with wearables: any WearablesInterface, name: String = "Simulated Glasses",
                            identifier: DeviceIdentifier? = nil, profile: SubjectProfile = SubjectProfile(),
                            options: SimulatedGlasses.Options = .init()) throws(SimulatorError) -> SimulatedGlasses {
        let glasses = try SimulatedGlasses(name: name, identifier: identifier, profile: profile, scheduler: scheduler,
                                           options: options)
        let link = connect(glasses, to: wearables)
        pairings.withLock { $0.append(Pairing(glasses: glasses, link: link, wearables: wearables)) }
        return glasses
    }

    /// Glasses paired so far.
    public var pairedGlasses: [SimulatedGlasses] { pairings.withLock { $0.map(\.glasses) } }

    /// Reconnects glasses to their Wearables instance over a fresh link (after a link loss or power cycle);
    /// powers them on if needed.
    public func reconnect(_ glasses: SimulatedGlasses) {
        guard let wearables = pairings.withLock({ $0.first { $0.glasses === glasses }?.wearables }) else { return }
        if !glasses.isPoweredOn { glasses.powerOn() }
        let link = connect(glasses, to: wearables)
        pairings.withLock { list in
            if let i = list.firstIndex(where: { $0.glasses === glasses }) { list[i].link = link }
        }
    }

    /// Silently stops carrying messages on the glasses' link (a dead radio): both ends time out on heartbeats.
    public func blackhole(_ glasses: SimulatedGlasses) {
        pairings.withLock { $0.first { $0.glasses === glasses }?.link }?.blackhole()
    }

    private func connect(_ glasses: SimulatedGlasses, to wearables: any WearablesInterface) -> InProcessLink {
        let link = InProcessLink(scheduler: scheduler, initialCredit: initialCredit, liveness: liveness)
        glasses.setLinkLossAction { [weak link] in link?.sever() }
        glasses.attach(link.device)
        wearables.attach(link: link.host)
        return link
    }
}
