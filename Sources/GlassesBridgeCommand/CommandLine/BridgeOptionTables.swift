import CommandSupport
import Foundation
import GlassesBridge
import GlassesLink
import GlassesSimulator
import WearablesKit

/// The rules of values that several commands take, each written once.
enum OptionRules {
    /// `--reference lsl:NAME_OR_TYPE`: the live LSL stream's name or type, or nil for any other value (a file).
    static func lslReference(_ value: String) throws(BridgeUsageError) -> String? {
        guard value.hasPrefix("lsl:") else { return nil }
        guard value.count > 4 else { throw BridgeUsageError("--reference lsl: needs a stream's name or type, for example lsl:HeartRate.") }
        return String(value.dropFirst(4))
    }

    /// `--token TOKEN`: a pairing token, stream key or bearer token; never empty.
    static func token(_ value: String) throws(BridgeUsageError) -> String {
        try SharedOptionRules.token(value)
    }

    /// `--connect-timeout SECONDS`: above 0, up to a day.
    static func connectTimeout(_ value: String) throws(BridgeUsageError) -> Double {
        guard let seconds = DecimalArgument.parse(value), seconds > 0, seconds <= 86_400 else {
            throw BridgeUsageError("invalid --connect-timeout '\(value)': give seconds above 0, up to 86400, e.g. 30.")
        }
        return seconds
    }

    /// `--listen ADDRESS`: TCP or a Unix socket the relay dials (the bridge dials Bluetooth itself).
    static func listen(_ value: String) throws(BridgeUsageError) -> LinkAddress {
        let address: LinkAddress
        do {
            address = try LinkAddress(parsing: value)
        } catch {
            throw BridgeUsageError("invalid --listen '\(value)': \(error.reason); use tcp:HOST:PORT or unix:PATH.")
        }
        if case .bluetooth = address {
            throw BridgeUsageError("--listen takes tcp:HOST:PORT or unix:PATH; the bridge dials Bluetooth (--device bt:…).")
        }
        return address
    }

    /// `--serve-metrics tcp:HOST:PORT`: where Prometheus scrapes (TCP only).
    static func serveMetrics(_ value: String) throws(BridgeUsageError) -> LinkAddress {
        let address: LinkAddress
        do {
            address = try LinkAddress(parsing: value)
        } catch {
            throw BridgeUsageError("invalid --serve-metrics '\(value)': \(error.reason); use tcp:HOST:PORT, e.g. tcp:127.0.0.1:9464.")
        }
        guard case .tcp = address else {
            throw BridgeUsageError("--serve-metrics takes tcp:HOST:PORT (Prometheus scrapes over TCP), not \(address).")
        }
        return address
    }

    /// `--format` of a command that prints events but no time series (`devices`, `check`): text or ndjson.
    static func eventFormat(_ value: String, command: String) throws(BridgeUsageError) -> OutputFormat {
        guard let format = OutputFormat(rawValue: value), format != .csv else {
            throw BridgeUsageError("invalid --format '\(value)' for \(command): use text or ndjson.")
        }
        return format
    }
}

/// What `glasses-bridge [run]` has parsed so far: the options, and what the rules after parsing need to know.
struct RunParse {
    var options = BridgeOptions()
    var devicesGiven: [DeviceAddress] = []
    var listenGiven: LinkAddress?
    var simulatorOptionsGiven: [String] = []
    /// --codec, --fps and --resolution ask glasses for a stream; a file has its own.
    var streamOptionsGiven: [String] = []
    var verbosityGiven: [String] = []
    /// The command an option answers by itself (`--help`, `--version`).
    var answer: BridgeCommand?
}

/// What `glasses-bridge check` has parsed so far.
struct CheckParse {
    var options = CheckOptions()
    var deviceGiven = false
    var listen: LinkAddress?
    var answer: BridgeCommand?
}

extension BridgeCommand {
    /// Every option of `glasses-bridge [run]`, declared once, in the order `--help` lists them.
    static let runOptions = OptionTable<RunParse>([
        OptionDeclaration("--help", "-h") { state, _ in
            state.answer = .help(topic: nil)
            return .stop
        },
        OptionDeclaration("--version") { state, _ in
            state.answer = .version
            return .stop
        },
        .setting("--device", argument: .value("ADDRESS")) { state, value in
            state.devicesGiven.append(try DeviceAddress(parsing: value ?? ""))
        },
        .setting("--listen", argument: .value("ADDRESS")) { state, value in
            state.listenGiven = try OptionRules.listen(value ?? "")
        },
        .setting("--token", argument: .value("TOKEN")) { state, value in
            state.options.token = try OptionRules.token(value ?? "")
        },
        .setting("--connect-timeout", argument: .value("SECONDS")) { state, value in
            state.options.connectTimeout = try OptionRules.connectTimeout(value ?? "")
        },
        .setting("--fps", argument: .value("N")) { state, value in
            let value = value ?? ""
            guard let rate = UInt(value), StreamConfiguration.supportedFrameRates.contains(rate) else {
                throw BridgeUsageError("invalid --fps '\(value)': the glasses stream at 2, 7, 15, 24 or 30 fps.")
            }
            state.options.frameRate = rate
            state.streamOptionsGiven.append("--fps")
        },
        .setting("--resolution", argument: .value("high|medium|low")) { state, value in
            let value = value ?? ""
            guard let resolution = StreamingResolution(rawValue: value) else {
                throw BridgeUsageError("invalid --resolution '\(value)': use high (720x1280), medium (504x896) or low (360x640).")
            }
            state.options.resolution = resolution
            state.streamOptionsGiven.append("--resolution")
        },
        .setting("--codec", argument: .value("raw|hvc1")) { state, value in
            let value = value ?? ""
            guard let codec = VideoCodec(rawValue: value) else {
                throw BridgeUsageError("invalid --codec '\(value)': use raw (decoded NV12 frames) or hvc1 (compressed HEVC).")
            }
            state.options.codec = codec
            state.streamOptionsGiven.append("--codec")
        },
        .setting("--pixel-format", argument: .value("bgra|nv12")) { state, value in
            let value = value ?? ""
            guard let format = SubmitPixelFormat(rawValue: value) else {
                throw BridgeUsageError("invalid --pixel-format '\(value)': use bgra or nv12.")
            }
            state.options.pixelFormat = format
        },
        .setting("--transform", argument: .value("NAME")) { state, value in
            let value = value ?? ""
            guard let transform = TransformOption(rawValue: value.lowercased()) else {
                throw BridgeUsageError(
                    "invalid --transform '\(value)': use " + TransformOption.allCases.map(\.rawValue).joined(separator: ", ") + ".")
            }
            state.options.transform = transform
        },
        .setting("--metrics", argument: .value("LIST")) { state, value in
            state.options.metrics = try MetricSelection(parsing: value ?? "")
        },
        .setting("--duration", argument: .value("SECONDS")) { state, value in
            state.options.duration = try SharedOptionRules.duration(value ?? "")
        },
        .setting("--realtime") { state, _ in state.options.realtime = true },
        .setting("--no-realtime") { state, _ in state.options.realtime = false },
        .setting("--motion") { state, _ in state.options.motion = true },
        .setting("--sim-pulse", argument: .value("BPM")) { state, value in
            let value = value ?? ""
            let range = SubjectProfile.pulseRateRange
            guard let bpm = DecimalArgument.parse(value), range.contains(bpm) else {
                throw BridgeUsageError(
                    "invalid --sim-pulse '\(value)': give beats per minute from \(SubjectProfile.format(range.lowerBound)) to \(SubjectProfile.format(range.upperBound)).")
            }
            state.options.simulator.pulseRate = bpm
            state.simulatorOptionsGiven.append("--sim-pulse")
        },
        .setting("--sim-breathing", argument: .value("PER_MIN")) { state, value in
            let value = value ?? ""
            let range = SubjectProfile.breathingRateRange
            guard let rate = DecimalArgument.parse(value), range.contains(rate) else {
                throw BridgeUsageError(
                    "invalid --sim-breathing '\(value)': give breaths per minute from \(SubjectProfile.format(range.lowerBound)) to \(SubjectProfile.format(range.upperBound)).")
            }
            state.options.simulator.breathingRate = rate
            state.simulatorOptionsGiven.append("--sim-breathing")
        },
        .setting("--sim-seed", argument: .value("N")) { state, value in
            let value = value ?? ""
            guard let seed = UInt64(value) else {
                throw BridgeUsageError("invalid --sim-seed '\(value)': give a whole number from 0 to 2^64-1.")
            }
            state.options.simulator.seed = seed
            state.simulatorOptionsGiven.append("--sim-seed")
        },
        .setting("--sim-scenario", argument: .path("FILE")) { state, value in
            state.options.simulator.scenarioPath = value
            state.simulatorOptionsGiven.append("--sim-scenario")
        },
        .setting("--format", argument: .value("text|ndjson|csv")) { state, value in
            let value = value ?? ""
            guard let format = OutputFormat(rawValue: value) else {
                throw BridgeUsageError("invalid --format '\(value)': use text, ndjson or csv.")
            }
            state.options.format = format
        },
        .setting("--output", "-o", argument: .path("PATH")) { state, value in
            state.options.outputPath = value == "-" ? nil : value
        },
        .setting("--quiet", "-q") { state, _ in
            state.options.verbosity = .quiet
            state.verbosityGiven.append("--quiet")
        },
        .setting("--verbose", "-v") { state, _ in
            state.options.verbosity = .verbose
            state.verbosityGiven.append("--verbose")
        },
        .setting("--record", argument: .path("PATH")) { state, value in state.options.recordPath = value },
        .setting("--video-out", argument: .path("PATH.y4m")) { state, value in state.options.videoOutPath = value },
        .setting("--report", argument: .path("PATH.html")) { state, value in state.options.reportPath = value },
        .setting("--truth-out", argument: .path("FILE")) { state, value in
            let path = value ?? ""
            guard [".csv", ".ndjson"].contains(where: path.lowercased().hasSuffix) else {
                throw BridgeUsageError("--truth-out writes .csv or .ndjson (got '\(path)').")
            }
            state.options.truthOutPath = path
        },
        .setting("--serve-metrics", argument: .value("tcp:HOST:PORT")) { state, value in
            state.options.serveMetrics = try OptionRules.serveMetrics(value ?? "")
        },
        .setting("--lsl", argument: .value("NAME")) { state, value in
            state.options.lslName = try lslName(value ?? "")
        },
        .setting("--reference", argument: .value("lsl:NAME_OR_TYPE")) { state, value in
            guard let query = try OptionRules.lslReference(value ?? "") else {
                throw BridgeUsageError(
                    "--reference takes a live LSL stream here (lsl:NAME_OR_TYPE); a recorded reference is compared after the run: glasses-bridge report RUN.ndjson --reference \(value ?? "FILE") -o PAGE.html.")
            }
            state.options.referenceLSL = query
        },
    ])

    /// Every option of `glasses-bridge check`, declared once, in the order `check --help` lists them.
    static let checkOptions = OptionTable<CheckParse>([
        OptionDeclaration("--help", "-h") { state, _ in
            state.answer = .help(topic: "check")
            return .stop
        },
        .setting("--device", argument: .value("ADDRESS")) { state, value in
            state.options.device = try DeviceAddress(parsing: value ?? "")
            if case .file = state.options.device {
                throw BridgeUsageError("check runs against glasses (sim, unix:, tcp:, bt: or --listen), not a file: a recording cannot be asked for a stream.")
            }
            state.deviceGiven = true
        },
        .setting("--listen", argument: .value("ADDRESS")) { state, value in
            state.listen = try OptionRules.listen(value ?? "")
        },
        .setting("--plan", argument: .path("FILE")) { state, value in state.options.planPath = value },
        .setting("--reference", argument: .path("FILE|lsl:NAME")) { state, value in
            let value = value ?? ""
            if let query = try OptionRules.lslReference(value) {
                state.options.referenceLSL = query
            } else {
                state.options.referencePath = value
            }
        },
        .setting("--junit", argument: .path("FILE")) { state, value in state.options.junitPath = value },
        .setting("--format", argument: .value("text|ndjson")) { state, value in
            state.options.format = try OptionRules.eventFormat(value ?? "", command: "check")
        },
        .setting("--token", argument: .value("TOKEN")) { state, value in
            state.options.token = try OptionRules.token(value ?? "")
        },
        .setting("--connect-timeout", argument: .value("SECONDS")) { state, value in
            state.options.connectTimeout = try OptionRules.connectTimeout(value ?? "")
        },
        .setting("--realtime") { state, _ in state.options.realtime = true },
        .setting("--sim-scenario", argument: .path("FILE")) { state, value in state.options.simScenarioPath = value },
        .setting("--verbose", "-v") { state, _ in state.options.verbose = true },
    ])

    /// Every option of `glasses-bridge devices`.
    static let devicesOptions = OptionTable<OutputFormat>([
        OptionDeclaration("--help", "-h") { _, _ in .stop },
        .setting("--format", argument: .value("text|ndjson")) { format, value in
            format = try OptionRules.eventFormat(value ?? "", command: "devices")
        },
    ])
}
