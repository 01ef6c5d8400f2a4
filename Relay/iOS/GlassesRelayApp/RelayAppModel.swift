// Type-checked on Linux against stand-in SwiftUI, Network, CoreMedia and DAT modules (AppleSurfaceTests); never
// compiled against Apple's SDK (see ../README.md). The shell's only glue: it builds the tested relay core
// (RelayDATClient, RelayService over NetworkFrameworkTransport) over Meta's DAT and copies what the core exposes
// into what the screen shows. Every decision is the core's.
import Foundation
import GlassesLinkCore
import GlassesLinkNetwork
import GlassesRelay
import MWDATCore
import Observation
import WearablesKit  // DispatchEventScheduler, the links' scheduler (module-qualified where names meet DAT's)

@MainActor
@Observable
final class RelayAppModel {
    var host = "192.168.1.20"
    var port = "7100"
    var token = ""
    /// What the service said last (RelayService.Notice), or why it could not start.
    var status = "stopped"
    /// The first glasses DAT lists and their state (RelayDATClient.currentDevice, currentDeviceState).
    var glasses = "no glasses"
    /// The bridge this relay dials, and whether a bridge is served now (RelayService.currentServer).
    var bridge = "none"
    /// Video frames the bridge's link carried (RelayService.samplesDelivered).
    var framesSent: UInt64 = 0
    /// The last error DAT reported, in DAT's words (RelayDATClient.lastError).
    var lastError = "none"
    var isRunning = false

    /// One time line for the relay and its link, so sample times are on the clock the bridge relates to its own.
    private let scheduler = DispatchEventScheduler(label: "glasses.relay")
    private var client: RelayDATClient?
    private var service: RelayService?
    private var timer: Timer?

    init() {
        do {
            try MWDATCore.Wearables.configure()
        } catch {
            status = "DAT could not be configured: \(error)"
            return
        }
        let client = RelayDATClient(
            wearables: MWDATCore.Wearables.shared, clock: SchedulerRelayClock(scheduler),
            frameAdapter: RelayFrameAdapter.read, audioAdapter: RelayFrameAdapter.readAudio)
        client.start()
        self.client = client
        timer = Timer.scheduledTimer(withTimeInterval: 1, repeats: true) { [weak self] _ in
            Task { @MainActor in self?.refresh() }
        }
    }

    /// DAT's registration callback URLs (the `metaWearablesAction` query item).
    func handle(_ url: URL) {
        Task { _ = try? await MWDATCore.Wearables.shared.handleUrl(url) }
    }

    /// Reads DAT's device list again (after pairing or waking the glasses in the Meta AI app).
    func rescan() {
        client?.rescan()
        refresh()
    }

    func start() {
        guard let client else { return }
        guard let portNumber = UInt16(port), portNumber > 0 else {
            status = "the port must be a number from 1 to 65535"
            return
        }
        let address = LinkAddress.tcp(host: host, port: portNumber)
        let options = LinkConnectionOptions(scheduler: scheduler, pairingToken: token.isEmpty ? nil : token)
        let service = RelayService(
            client: client, clock: SchedulerRelayClock(scheduler), mode: .dial(address, options, retryDelay: .seconds(1)),
            transport: NetworkFrameworkTransport(),
            notify: { notice in Task { @MainActor [weak self] in self?.status = "\(notice)" } })
        do {
            try service.start()
        } catch {
            status = error.message
            return
        }
        self.service = service
        isRunning = true
        status = "dialling \(address)"
        refresh()
    }

    func stop() {
        service?.stop()
        service = nil
        isRunning = false
        status = "stopped"
        refresh()
    }

    private func refresh() {
        guard let client else { return }
        if let service {
            framesSent = service.samplesDelivered  // what the bridge got: frames dropped for credit left out
            bridge = "tcp:\(host):\(port), " + (service.currentServer == nil ? "not connected" : "connected")
        } else {
            bridge = "none (stopped)"
        }
        if let device = client.currentDevice, let state = client.currentDeviceState {
            glasses = "\(device.name): \(state.linkState), \(state.donState), hinges \(state.hingeState)"
        } else {
            glasses = "no glasses (pair them in the Meta AI app, then rescan)"
        }
        lastError = client.lastError?.description ?? "none"
    }
}
