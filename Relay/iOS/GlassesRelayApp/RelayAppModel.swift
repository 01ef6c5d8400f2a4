// NOT COMPILED HERE (see ../README.md). The shell's only glue: it builds the tested relay core (RelayDATClient,
// RelayService) over Meta's DAT and exposes what the screen shows. Every decision is the core's.
import Foundation
import GlassesLink
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
    var status = "stopped"
    var glasses = "no glasses"
    var framesSent: UInt64 = 0
    var isRunning = false

    private var client: RelayDATClient?
    private var service: RelayService?
    private var timer: Timer?

    init() {
        do {
            try MWDATCore.Wearables.configure()
        } catch {
            status = "DAT could not be configured: \(error)"
        }
    }

    /// DAT's registration callback URLs (the `metaWearablesAction` query item).
    func handle(_ url: URL) {
        Task { _ = try? await MWDATCore.Wearables.shared.handleUrl(url) }
    }

    func start() {
        guard let portNumber = UInt16(port) else {
            status = "the port must be a number from 1 to 65535"
            return
        }
        // One time line for the relay and its link, so sample times are on the clock the bridge relates to its own.
        let scheduler = DispatchEventScheduler(label: "glasses.relay")
        let clock = SchedulerRelayClock(scheduler)
        let client = RelayDATClient(wearables: MWDATCore.Wearables.shared, clock: clock, frameAdapter: RelayFrameAdapter.read)
        let options = LinkConnectionOptions(scheduler: scheduler, pairingToken: token.isEmpty ? nil : token)
        let service = RelayService(
            client: client, clock: clock, mode: .dial(.tcp(host: host, port: portNumber), options, retryDelay: .seconds(1)),
            notify: { notice in Task { @MainActor [weak self] in self?.status = "\(notice)" } })
        do {
            try service.start()
        } catch {
            status = error.message
            return
        }
        self.client = client
        self.service = service
        isRunning = true
        status = "dialling \(host):\(port)"
        timer = Timer.scheduledTimer(withTimeInterval: 1, repeats: true) { [weak self] _ in
            Task { @MainActor in self?.refresh() }
        }
    }

    func stop() {
        service?.stop()
        timer?.invalidate()
        service = nil
        client = nil
        isRunning = false
        status = "stopped"
    }

    private func refresh() {
        guard let client else { return }
        framesSent = service?.samplesDelivered ?? framesSent  // what the bridge got: frames dropped for credit left out
        if let device = client.currentDevice, let state = client.currentDeviceState {
            glasses = "\(device.name): \(state.linkState), \(state.donState), hinges \(state.hingeState)"
        } else {
            glasses = "no glasses (pair them in the Meta AI app)"
        }
    }
}
