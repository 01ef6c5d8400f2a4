import CommandSupport
import Foundation
import GlassesBridge
import GlassesLink
import GlassesSimulator
import WearablesKit

/// What the command line asks for: the parsed, validated command, ready to run.
package enum BridgeCommand: Sendable, Hashable {
    /// Stream from the glasses and measure vitals.
    case run(BridgeOptions)
    /// List the devices that can be reached (`glasses-bridge devices`).
    case devices(format: OutputFormat)
    /// Build an HTML report from a saved NDJSON run (`glasses-bridge report`).
    case report(ReportOptions)
    /// Print the help text (`--help`, `-h`, `help`); `topic` is `devices` or `report` for a subcommand's help.
    case help(topic: String?)
    /// Print the version (`--version`).
    case version
    /// Run a plan of conformance and accuracy checks against a device (`glasses-bridge check`).
    case check(CheckOptions)

    /// Parses the arguments after the program name.
    /// - Throws: ``BridgeUsageError`` with a message that names the bad argument and what would be accepted.
    /// - Parameter environment: where `GLASSES_TOKEN` is read when `--token` is not given.
    package static func parse(
        _ arguments: [String], environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(BridgeUsageError) -> BridgeCommand {
        var parser = ArgumentCursor(arguments)
        if let first = parser.peek, !first.hasPrefix("-") {
            switch first {
            case "devices":
                parser.advance()
                return try parseDevices(&parser)
            case "check":
                parser.advance()
                return try parseCheck(&parser, environment: environment)
            case "report":
                parser.advance()
                return try parseReport(&parser)
            case "help":
                parser.advance()
                return .help(topic: ["devices", "report", "check"].contains(parser.peek ?? "") ? parser.peek : nil)
            case "run":
                parser.advance()
            default:
                throw BridgeUsageError(
                    "unknown command '\(first)'. Commands: devices, report, check, help; with no command glasses-bridge streams and measures."
                )
            }
        }
        return try parseRun(&parser, environment: environment)
    }

    private static func parseDevices(_ parser: inout ArgumentCursor) throws(BridgeUsageError) -> BridgeCommand {
        var format = OutputFormat.text
        let stopped = try devicesOptions.parse(&parser, into: &format) { name in
            unknownOptionMessage(name, known: devicesOptions.longNames, command: "devices")
        }
        if stopped { return .help(topic: "devices") }
        if let positional = parser.strayPositional {
            throw BridgeUsageError("unexpected argument '\(positional)': devices takes only --format.")
        }
        return .devices(format: format)
    }

    private static func parseRun(
        _ parser: inout ArgumentCursor, environment: [String: String]
    ) throws(BridgeUsageError) -> BridgeCommand {
        var state = RunParse()
        if try runOptions.parse(&parser, into: &state, unknown: { unknownOptionMessage($0, known: runOptions.longNames, command: nil) }),
           let answer = state.answer {
            return answer
        }
        var options = state.options
        let devicesGiven = state.devicesGiven, listenGiven = state.listenGiven, verbosityGiven = state.verbosityGiven
        let simulatorOptionsGiven = state.simulatorOptionsGiven, streamOptionsGiven = state.streamOptionsGiven
        if let positional = parser.strayPositional {
            throw BridgeUsageError("unexpected argument '\(positional)'. Options start with --; see --help.")
        }
        if Set(verbosityGiven).count > 1 {
            throw BridgeUsageError("--quiet and --verbose contradict each other: give one.")
        }
        if !devicesGiven.isEmpty { options.devices = devicesGiven }
        if let listen = listenGiven {
            if !devicesGiven.isEmpty {
                throw BridgeUsageError(
                    "--listen and --device are two sources: give --listen ADDR to wait for a relay, or --device to dial one.")
            }
            options.device = .listening(listen)
        }
        if options.token == nil, let fromEnvironment = environment["GLASSES_TOKEN"], !fromEnvironment.isEmpty,
           options.serveMetrics != nil || options.devices.contains(where: { $0.linkAddress != nil || $0.streamAddress != nil }) {
            options.token = fromEnvironment
        }
        for (index, device) in options.devices.enumerated() {
            guard let stream = device.streamAddress else { continue }
            do throws(NetworkStreamAddressError) {
                options.devices[index] = .stream(try stream.resolvingSecret(token: options.token))
            } catch {
                throw BridgeUsageError("--device \(stream) \(error.message).")
            }
        }
        if options.motion, let other = options.devices.first(where: { $0.streamAddress != nil || $0.isFile }) {
            throw BridgeUsageError(
                "--motion asks glasses for their IMU; --device \(other) carries video only. Give glasses (sim, tcp:, unix:, bt:, --listen) or leave --motion out.")
        }
        if options.lslName != nil, !options.realtime {
            throw BridgeUsageError("--lsl streams on the live clock: drop --no-realtime.")
        }
        if options.referenceLSL != nil {
            if !options.realtime || options.devices.contains(where: \.isFile) {
                throw BridgeUsageError("--reference lsl: is read live, on the wall clock: it needs a live source (not a file, not --no-realtime).")
            }
            if options.isMultiDevice {
                throw BridgeUsageError("--reference lsl: is one person's heart rate: give it to a run of one device.")
            }
        }
        try validateDevices(options)
        if let metrics = options.serveMetrics, !metrics.isLoopback, options.token == nil {
            throw BridgeUsageError(
                "--serve-metrics \(metrics) answers other machines: give --token TOKEN (or set GLASSES_TOKEN); scrapers then send Authorization: Bearer TOKEN.")
        }
        try validateLink(options)
        try validate(options, simulatorOptionsGiven: simulatorOptionsGiven, streamOptionsGiven: streamOptionsGiven)
        return .run(options)
    }

    /// `--lsl NAME`: a name LSL can resolve (letters, digits, `-`, `_`, `.`; the device and stream are appended).
    static func lslName(_ value: String) throws(BridgeUsageError) -> String {
        let allowed = value.unicodeScalars.allSatisfy { ($0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0))) || "-_.".unicodeScalars.contains($0) }
        guard !value.isEmpty, allowed else {
            throw BridgeUsageError("--lsl takes a stream name of letters, digits, '-', '_' and '.' (got '\(value)'), for example --lsl glasses.")
        }
        return value
    }

    /// The rules of several devices: each link address once, and the outputs that keep one device's stream
    /// (`--record`, `--video-out`, `--report`, `--truth-out`) only with one device.
    private static func validateDevices(_ options: BridgeOptions) throws(BridgeUsageError) {
        guard options.isMultiDevice else { return }
        var links = Set<String>()
        for device in options.devices {
            let key = device.linkAddress?.description ?? device.streamAddress.map { "\($0.host):\($0.port)/\($0.scheme)" }
            if let key, !links.insert(key).inserted {
                if let stream = device.streamAddress {
                    throw BridgeUsageError("--device \(stream) is given twice: one port takes one publisher. Give each stream once.")
                }
                let address = device.linkAddress!
                throw BridgeUsageError(
                    "--device \(address) is given twice: one connection serves one pair of glasses. Give each device once.")
            }
        }
        let single: [(String, String?)] = [
            ("--record", options.recordPath), ("--video-out", options.videoOutPath), ("--report", options.reportPath),
            ("--truth-out", options.truthOutPath),
        ]
        if let flag = single.first(where: { $0.1 != nil })?.0 {
            throw BridgeUsageError(
                "\(flag) keeps one device's stream, and \(options.devices.count) devices were given: give one --device "
                    + "with \(flag), or run one glasses-bridge per device.")
        }
    }

    /// The rules of links: one source, a token for anything not loopback, link options only with a link.
    private static func validateLink(_ options: BridgeOptions) throws(BridgeUsageError) {
        if case .listening(let listen) = options.device {
            if !listen.isLoopback, options.token == nil {
                throw BridgeUsageError(
                    "--listen \(listen) accepts connections from other machines: give --token TOKEN (or set GLASSES_TOKEN) so only your relay can connect.")
            }
            return
        }
        let addresses = options.devices.compactMap(\.linkAddress)
        for address in addresses where !address.isLoopback && options.token == nil {
            throw address.missingTokenError
        }
        if !addresses.isEmpty || options.devices.contains(where: { $0.streamAddress != nil }) { return }
        let named = options.devices.map { "--device \($0)" }.joined(separator: ", ")
        if options.token != nil, options.serveMetrics == nil {
            throw BridgeUsageError("--token applies to --device tcp:/unix:/bt:/rtmp:/srt:, --listen and --serve-metrics, not \(named).")
        }
        if options.connectTimeout != nil {
            throw BridgeUsageError("--connect-timeout applies to --device tcp:/unix:/bt:/rtmp:/srt:/udp: and --listen, not \(named).")
        }
    }

    private static func validate(
        _ options: BridgeOptions, simulatorOptionsGiven: [String], streamOptionsGiven: [String]
    ) throws(BridgeUsageError) {
        if !options.devices.contains(where: \.isSimulator), let first = simulatorOptionsGiven.first {
            throw BridgeUsageError(
                "\(first) only applies to the built-in simulator (--device sim), not "
                    + options.devices.map { "--device \($0)" }.joined(separator: ", ") + "."
            )
        }
        if options.simulator.scenarioPath != nil, let other = simulatorOptionsGiven.first(where: { $0 != "--sim-scenario" }) {
            throw BridgeUsageError("\(other) conflicts with --sim-scenario: the scenario file sets the simulated person.")
        }
        let allFiles = options.devices.allSatisfy(\.isFile)
        if allFiles, let first = streamOptionsGiven.first {
            throw BridgeUsageError("\(first) does not apply to --device file:PATH: the file's own codec, size and frame rate are used.")
        }
        if let stream = options.devices.compactMap(\.streamAddress).first {
            if let first = streamOptionsGiven.first, options.devices.allSatisfy({ $0.streamAddress != nil }) {
                throw BridgeUsageError("\(first) does not apply to --device \(stream): the publisher chooses the codec, size and frame rate (set them in the app).")
            }
            if options.recordPath != nil {
                throw BridgeUsageError("--record keeps what glasses send over the link protocol; it does not record --device \(stream) (record on the publisher's side).")
            }
        }
        if let path = options.videoOutPath, !path.lowercased().hasSuffix(".y4m") {
            throw BridgeUsageError("--video-out writes YUV4MPEG2: give a path ending in .y4m (got '\(path)').")
        }
        if options.videoOutPath != nil, options.pixelFormat == .bgra, !BridgeSettings.videoOutCanHold(.bgra) {
            throw BridgeUsageError(
                "--video-out cannot keep BGRA frames: YUV4MPEG2 has no RGB layout, so other tools would show wrong "
                    + "colours. Submit NV12 (--pixel-format nv12) to write --video-out, or leave --video-out out."
            )
        }
        if allFiles {
            // A file's own rate is used; the table applies to what the glasses are asked for.
        } else if let refusal = FrameRateTable.refusal(frameRate: options.frameRate, metrics: options.metrics) {
            throw refusal
        }
        if let path = options.recordPath {
            if case .file = options.device {
                throw BridgeUsageError("--record keeps what glasses send; with --device file:PATH the file is the record.")
            }
            let lower = path.lowercased()
            switch options.codec {
            case .raw where !lower.hasSuffix(".y4m"):
                throw BridgeUsageError(
                    "--record with --codec raw keeps the frames as YUV4MPEG2: give a path ending in .y4m (got '\(path)')."
                )
            case .hvc1 where !(lower.hasSuffix(".mp4") || lower.hasSuffix(".mkv")):
                throw BridgeUsageError(
                    "--record with --codec hvc1 passes HEVC through into MP4 or Matroska: give a path ending in .mp4 or .mkv (got '\(path)')."
                )
            default:
                break
            }
        }
        if options.truthOutPath != nil, !options.device.isSimulator {
            throw BridgeUsageError("--truth-out exports the simulator's truth: it needs --device sim, not --device \(options.device).")
        }
        // Compared as files, not strings: `-o ./a` and `--truth-out a` (or a link to it) would write one file twice.
        let outputs = [("--output", options.outputPath), ("--record", options.recordPath), ("--video-out", options.videoOutPath),
                       ("--report", options.reportPath), ("--truth-out", options.truthOutPath)]
            .compactMap { option, path in path.map { (option: option, path: $0) } }
        if let (first, second) = OutputPathCheck.firstClash(outputs) {
            throw BridgeUsageError(
                "\(first) and \(second) name the same file; --output, --record, --video-out, --report and --truth-out must name different files.")
        }
        for device in options.devices {
            guard case .file(let input) = device else { continue }
            if let output = outputs.first(where: { OutputPathCheck.sameFile($0.path, input) }) {
                throw BridgeUsageError("\(output.option) \(output.path) is the file --device file: plays: name another file, or the recording is lost.")
            }
        }
    }

    static func unknownOptionMessage(_ name: String, known: [String], command: String?) -> String {
        OptionSuggestion.unknownOptionMessage(name, known: known, tool: "glasses-bridge", command: command)
    }
}
