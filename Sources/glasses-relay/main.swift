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

/// A subject range as the help writes it: `25-240`.
func helpRange(_ range: ClosedRange<Double>) -> String {
    "\(SubjectProfile.format(range.lowerBound))-\(SubjectProfile.format(range.upperBound))"
}

let usage = """
glasses-relay: relays glasses reached through DAT (Meta's Device Access Toolkit) to glasses-bridge over the link
protocol. This is the Linux build: its DAT is WearablesKit with in-process simulated glasses, so it is the
rehearsal rig for a rack and the reference for relay authors. On a phone, the same relay core runs against Meta's
DAT SDK (Relay/iOS, docs/REAL-GLASSES.md).

Usage:
  glasses-relay --connect tcp:HOST:PORT|unix:PATH [options]   dial a bridge started with --listen
  glasses-relay --listen tcp:HOST:PORT|unix:PATH [options]    wait for a bridge started with --device ADDR

Link:
  --connect ADDR         dial a listening bridge; dial again 1 s after the link is lost
  --listen ADDR          serve one bridge at a time on ADDR (tcp:127.0.0.1:0 picks a port)
  --token TOKEN          pairing token (or GLASSES_TOKEN in the environment, which keeps it out of ps);
                         needed for a non-loopback address
  --allow-remote         with --listen: allow a non-loopback address (needs the token)
Simulated glasses behind DAT:
  --pulse BPM            mean pulse rate, \(helpRange(SubjectProfile.pulseRateRange)) (default 72)
  --breathing BRPM       mean breathing rate, \(helpRange(SubjectProfile.breathingRateRange)) (default 15)
  --seed N               seed for everything random (default 1)
  --motion               wearer head motion on
  --scenario FILE        timed events and faults for the glasses (JSON, docs/SCENARIOS.md)
Run:
  --duration S           stop after S seconds, up to 1e9 (default: until SIGINT or SIGTERM)
  --quiet                print only errors
  --version              print the version
  --help                 this text

Examples:
  glasses-bridge --listen tcp:127.0.0.1:7100 &   glasses-relay --connect tcp:127.0.0.1:7100
  glasses-relay --listen tcp:127.0.0.1:7200 &    glasses-bridge --device tcp:127.0.0.1:7200

Exit codes: 0 done (duration reached, SIGINT or SIGTERM)   64 usage or a bad scenario
            69 the address cannot be served, or the bridge refused the pairing
"""

let version = "glasses-relay 0.1.0"
let usageLine = "usage: glasses-relay --connect ADDR | --listen ADDR [options]   (see --help)"

/// Ends the process before anything ran: `message` on standard error, then the exit code.
func fail(_ message: String, _ code: ExitCode = .usage) -> Never {
    let hint = code == .usage ? "\n\(usageLine)" : ""
    ConsoleText.standardError("glasses-relay: error: \(message)\(hint)\n")
    exit(code.rawValue)
}

/// Everything the command line says.
struct Options: Sendable {
    var connect: LinkAddress?
    var listen: LinkAddress?
    var token: String?
    var allowRemote = false
    var pulse: Double?
    var breathing: Double?
    var seed: UInt64?
    var motion = false
    var scenarioPath: String?
    var duration: Double?
    var quiet = false

    static let names = [
        "--connect", "--listen", "--token", "--allow-remote", "--pulse", "--breathing", "--seed", "--motion",
        "--scenario", "--duration", "--quiet", "--version", "--help",
    ]

    enum Parsed {
        case run(Options)
        case print(String)
    }

    static func parse(_ input: [String], environment: [String: String]) throws(UsageError) -> Parsed {
        var cursor = ArgumentCursor(input)
        var o = Options()
        func number(_ flag: String, _ inline: String?) throws(UsageError) -> Double {
            let text = try cursor.value(for: flag, inline: inline)
            guard let value = DecimalArgument.parse(text) else { throw UsageError("\(flag) needs a number, got '\(text)'") }
            return value
        }
        /// A number for a subject option, in the profile's range (said in the option's own units, as glasses-sim does).
        func number(_ flag: String, _ inline: String?, in range: ClosedRange<Double>, unit: String) throws(UsageError) -> Double {
            let value = try number(flag, inline)
            guard range.contains(value) else {
                throw UsageError("\(flag) must be \(SubjectProfile.format(range.lowerBound))...\(SubjectProfile.format(range.upperBound))\(unit), got \(SubjectProfile.format(value))")
            }
            return value
        }
        func address(_ flag: String, _ inline: String?) throws(UsageError) -> LinkAddress {
            let text = try cursor.value(for: flag, inline: inline)
            do { return try LinkAddress(parsing: text) } catch { throw UsageError("\(flag): \(error)") }
        }
        while let (flag, inline) = try cursor.nextOption() {
            func flagOnly() throws(UsageError) { try cursor.noValue(for: flag, inline: inline) }
            switch flag {
            case "--help", "-h": return .print(usage)
            case "--version": return .print(version)
            case "--connect": o.connect = try address(flag, inline)
            case "--listen": o.listen = try address(flag, inline)
            case "--token":
                let token = try cursor.value(for: flag, inline: inline)
                guard !token.isEmpty else { throw UsageError("--token needs a non-empty token (the bridge refuses an empty one)") }
                o.token = token
            case "--allow-remote": try flagOnly(); o.allowRemote = true
            case "--pulse": o.pulse = try number(flag, inline, in: SubjectProfile.pulseRateRange, unit: " bpm")
            case "--breathing": o.breathing = try number(flag, inline, in: SubjectProfile.breathingRateRange, unit: " breaths/min")
            case "--seed":
                let text = try cursor.value(for: flag, inline: inline)
                guard let seed = UInt64(text) else { throw UsageError("--seed needs a whole number, got '\(text)'") }
                o.seed = seed
            case "--motion": try flagOnly(); o.motion = true
            case "--scenario": o.scenarioPath = try cursor.path(for: flag, inline: inline)
            case "--duration":
                let seconds = try number(flag, inline)
                // The limit of glasses-bridge and glasses-sim --duration.
                guard seconds > 0, seconds <= 1e9 else { throw UsageError("--duration must be a positive number of seconds up to 1e9") }
                o.duration = seconds
            case "--quiet": try flagOnly(); o.quiet = true
            default:
                throw UsageError(OptionSuggestion.unknownOptionMessage(flag, known: names, tool: "glasses-relay", command: nil))
            }
        }
        if let stray = cursor.strayPositional { throw UsageError("unexpected argument '\(stray)'") }
        if o.token == nil, let fromEnvironment = environment["GLASSES_TOKEN"], !fromEnvironment.isEmpty {
            o.token = fromEnvironment
        }
        switch (o.connect, o.listen) {
        case (nil, nil): throw UsageError("give --connect ADDR (dial a bridge) or --listen ADDR (be dialled)")
        case (.some, .some): throw UsageError("--connect and --listen cannot be combined")
        case (let address?, nil):
            if case .bluetooth = address { throw UsageError("--connect dials tcp: or unix: addresses only") }
            if o.allowRemote { throw UsageError("--allow-remote applies to --listen only: --connect dials any address given --token") }
            if !address.isLoopback, o.token?.isEmpty ?? true {
                throw UsageError("--connect \(address) is not loopback: give --token (or GLASSES_TOKEN)")
            }
        case (nil, let address?):
            if case .bluetooth = address { throw UsageError("--listen takes tcp: or unix: addresses only") }
            if !address.isLoopback {
                guard o.allowRemote else { throw UsageError("--listen \(address) is not loopback: add --allow-remote and --token") }
                guard !(o.token?.isEmpty ?? true) else { throw UsageError("--listen \(address) needs --token (or GLASSES_TOKEN)") }
            }
        }
        return .run(o)
    }
}

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
let client = RelayDATClient(wearables: wearables, clock: clock, frameAdapter: RelayFrameAdapter.read)
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
