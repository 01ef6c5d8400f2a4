import CommandSupport
import Foundation
import GlassesLink
import GlassesSimulator

// glasses-relay's command line, parsed apart from its run (main.swift): the help, the option table and the rules
// that join options. The rules it shares with glasses-bridge and glasses-sim are CommandSupport's SharedOptionRules.

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

/// The tool's name, version and usage line.
let tool = ToolIdentity(
    name: "glasses-relay", version: "0.1.0",
    usageLine: "usage: glasses-relay --connect ADDR | --listen ADDR [options]   (see --help)"
)

/// Ends the process before anything ran (``ToolIdentity/fail(_:_:)``).
func fail(_ message: String, _ code: ExitCode = .usage) -> Never {
    tool.fail(message, code)
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

    /// What the command line asks: a run, or text to print (`--help`, `--version`).
    enum Parsed {
        case run(Options)
        case print(String)
    }

    /// The parse in progress: the options so far, or the text an option answered with.
    struct Parse: Sendable {
        var options = Options()
        var answer: String?
    }

    /// Every option, declared once, in the order `--help` lists them (OptionDeclarationTests holds the help to it).
    static let table = OptionTable<Parse>([
        .setting("--connect", argument: .value("ADDR")) { state, value in state.options.connect = try address("--connect", value ?? "") },
        .setting("--listen", argument: .value("ADDR")) { state, value in state.options.listen = try address("--listen", value ?? "") },
        .setting("--token", argument: .value("TOKEN")) { state, value in state.options.token = try SharedOptionRules.token(value ?? "") },
        .setting("--allow-remote") { state, _ in state.options.allowRemote = true },
        .setting("--pulse", argument: .value("BPM")) { state, value in
            state.options.pulse = try SharedOptionRules.number("--pulse", value ?? "", in: SubjectProfile.pulseRateRange, unit: " bpm")
        },
        .setting("--breathing", argument: .value("BRPM")) { state, value in
            state.options.breathing = try SharedOptionRules.number("--breathing", value ?? "", in: SubjectProfile.breathingRateRange, unit: " breaths/min")
        },
        .setting("--seed", argument: .value("N")) { state, value in state.options.seed = try SharedOptionRules.seed(value ?? "") },
        .setting("--motion") { state, _ in state.options.motion = true },
        .setting("--scenario", argument: .path("FILE")) { state, value in state.options.scenarioPath = value },
        .setting("--duration", argument: .value("S")) { state, value in state.options.duration = try SharedOptionRules.duration(value ?? "") },
        .setting("--quiet") { state, _ in state.options.quiet = true },
        OptionDeclaration("--version") { state, _ in
            state.answer = tool.version
            return .stop
        },
        OptionDeclaration("--help", "-h") { state, _ in
            state.answer = usage
            return .stop
        },
    ])

    private static func address(_ flag: String, _ text: String) throws(UsageError) -> LinkAddress {
        do { return try LinkAddress(parsing: text) } catch { throw UsageError("\(flag): \(error)") }
    }

    /// Parses the arguments (after the program name); a token may come from `GLASSES_TOKEN` in `environment`.
    static func parse(_ input: [String], environment: [String: String]) throws(UsageError) -> Parsed {
        var cursor = ArgumentCursor(input)
        var state = Parse()
        let stopped = try table.parse(&cursor, into: &state) { name in
            tool.unknownOption(name, known: table.longNames)
        }
        if stopped, let answer = state.answer { return .print(answer) }
        var o = state.options
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
