import CommandSupport
import Foundation
import GlassesBridge
import GlassesLink

/// What `glasses-bridge check` was asked to do.
package struct CheckOptions: Sendable, Hashable {
    /// The device: the in-process simulator (`sim`), a link address, or a listening address for a relay.
    package var device: DeviceAddress = .simulator
    /// A plan file (`--plan`); the default plan when nil.
    package var planPath: String?
    /// A reference heart-rate recording (`--reference`).
    package var referencePath: String?
    /// A live Lab Streaming Layer heart-rate stream, by name or type (`--reference lsl:NAME_OR_TYPE`).
    package var referenceLSL: String?
    /// Where to write JUnit XML (`--junit`).
    package var junitPath: String?
    /// `text` or `ndjson`.
    package var format: OutputFormat = .text
    /// The pairing token (`--token` or `GLASSES_TOKEN`).
    package var token: String?
    /// Seconds to wait for a device (`--connect-timeout`).
    package var connectTimeout: Double?
    /// The in-process simulator in real time (`--realtime`); virtual time by default.
    package var realtime = false
    /// A scenario for the in-process simulator (`--sim-scenario`): faults to check that checks fail.
    package var simScenarioPath: String?
    /// Also print every pipeline event (`--verbose`, text only).
    package var verbose = false

    /// The defaults: the in-process simulator, the default plan, text.
    package init() {}

    /// The wait for a device: ``connectTimeout``, or 60 s when listening and 10 s when dialling.
    package var effectiveConnectTimeout: Duration {
        let listening = switch device {
        case .listening: true
        case .stream(let address): address.listens
        default: false
        }
        return .milliseconds(Int64(((connectTimeout ?? (listening ? 60 : 10)) * 1000).rounded()))
    }
}

extension BridgeCommand {
    /// Parses `glasses-bridge check …` (after the word `check`).
    static func parseCheck(_ parser: inout ArgumentCursor, environment: [String: String]) throws(BridgeUsageError) -> BridgeCommand {
        var state = CheckParse()
        if try checkOptions.parse(&parser, into: &state, unknown: { unknownOptionMessage($0, known: checkOptions.longNames, command: "check") }),
           let answer = state.answer {
            return answer
        }
        var options = state.options
        let deviceGiven = state.deviceGiven, listen = state.listen
        if let positional = parser.strayPositional {
            throw BridgeUsageError("unexpected argument '\(positional)' for check. Options start with --; see glasses-bridge check --help.")
        }
        if let junit = options.junitPath {
            for (option, path) in [("--plan", options.planPath), ("--reference", options.referencePath), ("--sim-scenario", options.simScenarioPath)] {
                if let path, OutputPathCheck.sameFile(junit, path) {
                    throw BridgeUsageError("--junit \(junit) is the \(option) file check reads: name another file, or it is lost.")
                }
            }
        }
        if let listen {
            if deviceGiven {
                throw BridgeUsageError("--listen and --device are two sources: give --listen ADDR to wait for a relay, or --device to dial one.")
            }
            options.device = .listening(listen)
        }
        if options.token == nil, let fromEnvironment = environment["GLASSES_TOKEN"], !fromEnvironment.isEmpty,
           options.device.linkAddress != nil || options.device.streamAddress != nil
        {
            options.token = fromEnvironment
        }
        if let stream = options.device.streamAddress {
            do throws(NetworkStreamAddressError) {
                options.device = .stream(try stream.resolvingSecret(token: options.token))
            } catch {
                throw BridgeUsageError("--device \(stream) \(error.message).")
            }
        }
        switch options.device {
        case .listening(let address) where !address.isLoopback && options.token == nil:
            throw BridgeUsageError("--listen \(address) accepts connections from other machines: give --token TOKEN (or set GLASSES_TOKEN) so only your relay can connect.")
        case .link(let address) where !address.isLoopback && options.token == nil:
            throw address.missingTokenError
        case .simulator:
            if options.token != nil { throw BridgeUsageError("--token applies to --device tcp:/unix:/bt: and --listen, not the built-in simulator.") }
            if options.connectTimeout != nil {
                throw BridgeUsageError("--connect-timeout applies to --device tcp:/unix:/bt: and --listen, not the built-in simulator.")
            }
        default:
            break
        }
        if options.referenceLSL != nil, options.device.isSimulator, !options.realtime {
            throw BridgeUsageError("--reference lsl: is live: the built-in simulator needs --realtime to line up with it.")
        }
        if !options.device.isSimulator {
            if options.realtime { throw BridgeUsageError("--realtime applies to the built-in simulator only: a device always runs in real time.") }
            if options.simScenarioPath != nil { throw BridgeUsageError("--sim-scenario applies to the built-in simulator only (give glasses-sim --scenario instead).") }
        }
        return .check(options)
    }
}
