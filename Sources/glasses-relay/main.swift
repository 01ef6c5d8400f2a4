import CommandSupport
import Dispatch
import Foundation
import GlassesLink
import GlassesRelay
import GlassesRelayPOSIX
import GlassesSimulator
import Synchronization
import WearablesKit

#if canImport(Glibc)
import Glibc
#endif

let options: Options
do {
    switch try Options.parse(Array(CommandLine.arguments.dropFirst()), environment: ProcessInfo.processInfo.environment) {
    case .run(let parsed): options = parsed
    case .print(let text):
        print(text)
        exit(ExitCode.success.rawValue)
    }
} catch {
    fail(error.message)
}
let quiet = options.quiet

@Sendable func log(_ line: String) {
    if !quiet { ConsoleText.standardOutput((line + "\n")) }
}

// MARK: The DAT side: WearablesKit with simulated glasses paired in process

var profile = SubjectProfile()
let scenario: Scenario
if let path = options.scenarioPath {
    do { scenario = try Scenario(contentsOf: URL(fileURLWithPath: path)) } catch { fail(error.message, .usage) }
    profile = scenario.subject
} else {
    scenario = Scenario()
}
if let pulse = options.pulse { profile.pulseRate = pulse }
if let breathing = options.breathing { profile.breathingRate = breathing }
if let seed = options.seed { profile.seed = seed }
if options.motion { profile.headMotion = true }
do { try profile.validate() } catch { fail(error.message) }

let scheduler = DispatchEventScheduler(label: "glasses-relay")
let wearables: WearablesInstance
do {
    wearables = Wearables.makeInstance(configuration: try WearablesConfiguration(scheduler: scheduler))
} catch { fail("\(error)", .internalError) }
let kit = SimulatorKit(scheduler: scheduler)
let glasses: SimulatedGlasses
do { glasses = try kit.pairGlasses(with: wearables, profile: profile) } catch { fail(error.message) }
do { _ = try glasses.start(scenario) } catch {
    fail(options.scenarioPath.map { "--scenario \($0): \(error.message)" } ?? error.message, .usage)
}

let clock = SchedulerRelayClock(scheduler)
let client = RelayDATClient(wearables: wearables, clock: clock, frameAdapter: RelayFrameAdapter.read,
                            audioAdapter: RelayFrameAdapter.readAudio)
let mode: RelayService.Mode
if let address = options.connect {
    mode = .dial(address, LinkConnectionOptions(scheduler: scheduler, pairingToken: options.token), retryDelay: .seconds(1))
} else if let address = options.listen {
    mode = .listen(address, LinkListenerOptions(scheduler: scheduler, allowRemote: options.allowRemote,
                                                pairingToken: options.token))
} else {
    fail("give --connect or --listen")
}
let done = DispatchSemaphore(value: 0)
// Trapped before the relay says it listens or dials: a signal sent as soon as it does is heard. Only the first
// stops the relay and is logged; the trap stays until the process exits, so a later one (`timeout` sends SIGTERM
// to the relay and again to its group) neither repeats the line nor kills the relay before its closing line.
let stopping = Atomic<Bool>(false)
let trap = SignalTrap { name in
    guard !stopping.exchange(true, ordering: .acquiringAndReleasing) else { return }
    log("glasses-relay: \(name), stopping")
    done.signal()
}
let refused = Atomic<Bool>(false)
let service = RelayService(client: client, clock: clock, mode: mode, notify: { notice in
    switch notice {
    case .hostConnected(let peer): log("bridge connected (\(peer))")
    case .hostLeft(let why): log("bridge left: \(why)")
    case .dialFailed(let why): log("cannot reach the bridge: \(why); trying again in 1 s")
    case .hostRefused(let peer): log("turned away a second bridge (\(peer)): one is served already")
    case .hostClosedBeforeHello(let why):
        log(options.connect != nil ? "the bridge did not take this relay: \(why); trying again in 1 s"
                                   : "a bridge closed the link before it said hello: \(why)")
    case .refusedByHost(let why):
        ConsoleText.standardError("glasses-relay: error: the bridge refused this relay: \(why)\n")
        refused.store(true, ordering: .releasing)
        done.signal()
    }
})
do throws(LinkError) { try service.start() } catch { fail(error.message, .deviceUnavailable) }
if let address = service.listeningAddress {
    log("glasses-relay: listening on \(address) for a bridge; glasses \(glasses.info.name), pulse \(profile.pulseRate) bpm")
} else if let address = options.connect {
    log("glasses-relay: dialling \(address); glasses \(glasses.info.name), pulse \(profile.pulseRate) bpm")
}

// MARK: Status, end

let status = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "glasses-relay.status"))
status.schedule(deadline: .now() + 5, repeating: 5)
status.setEventHandler { @Sendable in
    let counters = client.counters
    let server = service.currentServer
    let dropped = server?.link.droppedVideoSamples ?? 0
    let state = glasses.isStreaming ? "streaming" : "not streaming"
    log("glasses \(state) · bridge \(server?.hostSaidHello == true ? "connected" : "not connected") · frames from DAT \(counters.framesForwarded), to the bridge \(server?.samplesDelivered ?? 0), dropped for credit \(dropped)")
}
status.resume()
if let seconds = options.duration {
    _ = done.wait(timeout: .now() + .milliseconds(Int(seconds * 1000)))
} else {
    done.wait()
}
status.cancel()
service.stop()
// Frames the bridges' links carried: those dropped for credit never reached a bridge.
log("glasses-relay: \(service.hostCounts.served) bridge connection(s), \(service.samplesDelivered) frames relayed")
trap.cancel()
exit(refused.load(ordering: .acquiring) ? ExitCode.deviceUnavailable.rawValue : ExitCode.success.rawValue)
