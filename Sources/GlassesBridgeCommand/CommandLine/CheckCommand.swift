import CommandSupport
import Foundation
import GlassesBridge
import GlassesLink

/// What `glasses-bridge check` was asked to do.
public struct CheckOptions: Sendable, Hashable {
    /// The device: the in-process simulator (`sim`), a link address, or a listening address for a relay.
    public var device: DeviceAddress = .simulator
    /// A plan file (`--plan`); the default plan when nil.
    public var planPath: String?
    /// A reference heart-rate recording (`--reference`).
    public var referencePath: String?
    /// A live Lab Streaming Layer heart-rate stream, by name or type (`--reference lsl:NAME_OR_TYPE`).
    public var referenceLSL: String?
    /// Where to write JUnit XML (`--junit`).
    public var junitPath: String?
    /// `text` or `ndjson`.
    public var format: OutputFormat = .text
    /// The pairing token (`--token` or `GLASSES_TOKEN`).
    public var token: String?
    /// Seconds to wait for a device (`--connect-timeout`).
    public var connectTimeout: Double?
    /// The in-process simulator in real time (`--realtime`); virtual time by default.
    public var realtime = false
    /// A scenario for the in-process simulator (`--sim-scenario`): faults to check that checks fail.
    public var simScenarioPath: String?
    /// Also print every pipeline event (`--verbose`, text only).
    public var verbose = false

    /// The defaults: the in-process simulator, the default plan, text.
    public init() {}

    /// The wait for a device: ``connectTimeout``, or 60 s when listening and 10 s when dialling.
    public var effectiveConnectTimeout: Duration {
        let listening = switch device {
        case .listening: true
        case .stream(let address): address.listens
        default: false
        }
        return .milliseconds(Int64(((connectTimeout ?? (listening ? 60 : 10)) * 1000).rounded()))
    }
}

extension BridgeCommand {
    /// Every option of `check`, for suggestions.
    static let checkOptionNames = [
        "--device", "--listen", "--plan", "--reference", "--junit", "--format", "--token", "--connect-timeout", "--realtime",
        "--sim-scenario", "--verbose", "--help",
    ]

    /// Parses `glasses-bridge check …` (after the word `check`).
    static func parseCheck(_ parser: inout ArgumentCursor, environment: [String: String]) throws(BridgeUsageError) -> BridgeCommand {
        var options = CheckOptions()
        var deviceGiven = false
        var listen: LinkAddress?
        while let (name, inline) = try parser.nextOption() {
            switch name {
            case "--help", "-h": return .help(topic: "check")
            case "--device":
                options.device = try DeviceAddress(parsing: try parser.value(for: name, inline: inline))
                if case .file = options.device {
                    throw BridgeUsageError("check runs against glasses (sim, unix:, tcp:, bt: or --listen), not a file: a recording cannot be asked for a stream.")
                }
                deviceGiven = true
            case "--listen":
                let value = try parser.value(for: name, inline: inline)
                do {
                    listen = try LinkAddress(parsing: value)
                } catch {
                    throw BridgeUsageError("invalid --listen '\(value)': \(error.reason); use tcp:HOST:PORT or unix:PATH.")
                }
                if case .bluetooth = listen {
                    throw BridgeUsageError("--listen takes tcp:HOST:PORT or unix:PATH; the bridge dials Bluetooth (--device bt:…).")
                }
            case "--plan": options.planPath = try parser.path(for: name, inline: inline)
            case "--reference":
                let value = try parser.path(for: name, inline: inline)
                if value.hasPrefix("lsl:") {
                    guard value.count > 4 else { throw BridgeUsageError("--reference lsl: needs a stream's name or type, for example lsl:HeartRate.") }
                    options.referenceLSL = String(value.dropFirst(4))
                } else {
                    options.referencePath = value
                }
            case "--junit": options.junitPath = try parser.path(for: name, inline: inline)
            case "--sim-scenario": options.simScenarioPath = try parser.path(for: name, inline: inline)
            case "--format":
                let value = try parser.value(for: name, inline: inline)
                guard let format = OutputFormat(rawValue: value), format != .csv else {
                    throw BridgeUsageError("invalid --format '\(value)' for check: use text or ndjson.")
                }
                options.format = format
            case "--token":
                let value = try parser.value(for: name, inline: inline)
                guard !value.isEmpty else { throw BridgeUsageError("--token needs a non-empty token.") }
                options.token = value
            case "--connect-timeout":
                let value = try parser.value(for: name, inline: inline)
                guard let seconds = DecimalArgument.parse(value), seconds > 0, seconds <= 86_400 else {
                    throw BridgeUsageError("invalid --connect-timeout '\(value)': give seconds above 0, up to 86400, e.g. 30.")
                }
                options.connectTimeout = seconds
            case "--realtime":
                try parser.noValue(for: name, inline: inline)
                options.realtime = true
            case "--verbose", "-v":
                try parser.noValue(for: name, inline: inline)
                options.verbose = true
            default:
                throw BridgeUsageError(unknownOptionMessage(name, known: checkOptionNames, command: "check"))
            }
        }
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
