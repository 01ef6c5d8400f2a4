import CommandSupport
import Foundation
import GlassesLink
import GlassesSimulator

// glasses-sim's command line, parsed apart from its run (main.swift): the help, the option table and the rules that
// join options. The rules it shares with glasses-bridge and glasses-relay are CommandSupport's SharedOptionRules.

/// A subject range as the help writes it: `25-240`.
func helpRange(_ range: ClosedRange<Double>) -> String {
    "\(SubjectProfile.format(range.lowerBound))-\(SubjectProfile.format(range.upperBound))"
}

let usage = """
glasses-sim: simulated smart glasses that speak the GlassesBridge link protocol.

It renders a person with a known pulse and breathing, streams raw NV12 or HEVC frames at the resolution and frame
rate the host asks for, behaves like glasses (fold, doff, tap, battery, thermal, photo) and plays scripted events
and faults from a scenario file. Ground truth can be written next to the video.

Usage:
  glasses-sim --listen unix:PATH|tcp:HOST:PORT [options]    serve a host (e.g. glasses-bridge)
  glasses-sim --write FILE [--duration S] [options]          no host: stream to a file by itself
  glasses-sim --publish URL --duration S [options]           no host: publish HEVC in MPEG-TS over SRT or UDP, in
                                                             real time, as a phone app streaming glasses would

Serving:
  --listen ADDR          unix:/path/to/socket or tcp:127.0.0.1:PORT (port 0 picks one)
  --allow-remote         allow a non-loopback TCP address (needs --token)
  --token TOKEN          pairing token the host must present (or GLASSES_TOKEN in the environment, which keeps it
                         out of ps); needed for a non-loopback address
Subject and camera:
  --pulse BPM            mean pulse rate, \(helpRange(SubjectProfile.pulseRateRange)) (default 72)
  --breathing BRPM       mean breathing rate, \(helpRange(SubjectProfile.breathingRateRange)) (default 15)
  --hrv MS               target RMSSD in ms, \(helpRange(SubjectProfile.hrvRMSSDRange)) (default 40)
  --amplitude PERCENT    green pulse amplitude in % of skin intensity, \(helpRange(SubjectProfile.pulseAmplitudeRange.lowerBound * 100 ... SubjectProfile.pulseAmplitudeRange.upperBound * 100)) (default 0.3)
  --noise LSB            sensor noise, luma LSB, \(helpRange(SubjectProfile.sensorNoiseRange)) (default 2)
  --light LEVEL          lighting level, 1 = nominal, \(helpRange(SubjectProfile.lightingLevelRange)) (default 1)
  --motion               wearer head motion on
  --face FILE.ppm        use an image as the face
  --feed FILE            stream a video file instead of the rendered person (Y4M 4:2:0 video range, or HEVC in
                         Annex B/MP4/MKV), looping; its size must be the streamed resolution (without --listen,
                         the default --resolution is the file's); no ground truth (--truth is refused)
  --passthrough          with an HEVC --feed and --codec hvc1: send the file's own samples as they are, as glasses
                         with a hardware encoder would (no decoding or x265 in the simulator; a stream start and
                         credit drops resume at the file's next keyframe)
  --seed N               seed for everything random (default 1)
  --bitrate BPS          HEVC bitrate at 504x896@30 (default 2000000)
  --encoder-threads N    libx265 worker threads, 1-16 (default: every core up to 4 in real time, where 720x1280
                         at 24 fps needs more than one core; 1 in virtual time). In real time the encoder also
                         leaves out psycho-visual tuning (a third less CPU at the same bit rate).
Time and output:
  --scenario FILE        timed events and faults (JSON, see docs/SCENARIOS.md)
  --realtime             run in real time (default when serving)
  --no-realtime          run in virtual time, as fast as the CPU allows (default without --listen)
  --duration S           stop after S seconds of simulated time (default: the scenario's duration; with --listen,
                         forever when the scenario has none; without --listen, --duration or a scenario duration
                         is required)
  --write FILE           write what is streamed: .hevc/.h265 (Annex B), .mp4, .mkv for HEVC; .y4m for raw
  --publish URL          publish what is streamed (hvc1 only) as MPEG-TS to srt://HOST:PORT?passphrase=P (SRT
                         caller, e.g. to glasses-bridge --device 'srt://…?mode=listener') or udp://127.0.0.1:PORT;
                         real time by default. RTMP is not offered: FLV carries H.264 in this FFmpeg, and the
                         simulator encodes HEVC (publish a clip with ffmpeg instead, docs/CLI.md)
  --truth FILE           write ground truth at the end: .csv or .ndjson (10 samples/s), in the bridge's
                         keys (t, pulseRate, breathingRate, hrvRmssd) on the device clock
  --codec raw|hvc1       without --listen, what the built-in host asks for: default hvc1 for a .hevc, .h265,
                         .mp4 or .mkv --write file, raw otherwise
  --resolution R         without --listen: low (360x640), medium (504x896, default) or high (720x1280)
  --fps N                without --listen: 2, 7, 15, 24 or 30 (default 30)
  --quiet                print only errors
  --version              print the version
  --help                 this text

Exit codes (the same table as glasses-bridge, see docs/CLI.md):
  0 done (duration reached, or SIGINT/SIGTERM after a clean finish)   64 usage or a bad scenario
  65 malformed feed or face file   69 the address cannot be served   70 internal error
  73 --write or --truth cannot be written
"""

/// The tool's name, version and usage line.
let tool = ToolIdentity(
    name: "glasses-sim", version: "0.1.0",
    usageLine: "usage: glasses-sim --listen ADDR [options] | --write FILE --duration S [options]   (see --help)"
)

/// Ends the process before anything ran (``ToolIdentity/fail(_:_:)``).
func fail(_ message: String, _ code: ExitCode = .usage) -> Never {
    tool.fail(message, code)
}

// MARK: Arguments

/// Everything the command line says.
struct Options: Sendable {
    var listen: String?
    var scenarioPath: String?
    var writePath: String?
    /// `--publish URL`: an `srt://` or `udp://` URL the stream goes to as MPEG-TS (it may hold a passphrase).
    var publishURL: String?
    var truthPath: String?
    var realtime: Bool?
    var duration: Double?
    var quiet = false
    var allowRemote = false
    var token: String?
    var facePath: String?
    var feedPath: String?
    var passthrough = false
    var codecName: String?
    var resolutionName: String?
    var fps: UInt = 30
    var bitrate = 2_000_000
    var encoderThreads: Int?
    var pulse: Double?, breathing: Double?, hrv: Double?, amplitude: Double?, noise: Double?, light: Double?
    var motion = false
    var seed: UInt64?

    /// File types `--write` produces for HEVC; `.y4m` is the one for raw frames.
    static let hevcExtensions = ["hevc", "h265", "265", "mp4", "mkv"]
    /// File types `--write` produces.
    static let writableExtensions = hevcExtensions + ["y4m"]

    /// A `--publish` URL as messages show it: without its query (a passphrase).
    static func publishLabel(_ url: String) -> String {
        url.split(separator: "?", maxSplits: 1).first.map(String.init) ?? url
    }

    /// What the command line asks for: options to run with, or a text to print.
    enum Parsed {
        case run(Options)
        case print(String)
    }

    /// The parse in progress: the options so far, or the text an option answered with.
    struct Parse: Sendable {
        var options = Options()
        var answer: String?
    }

    /// A subject option: a number in the profile's range, said in the option's units when outside it.
    private static func subject(
        _ name: String, _ placeholder: String, in range: ClosedRange<Double>, unit: String, scale: Double = 1,
        _ set: @escaping @Sendable (inout Options, Double) -> Void
    ) -> OptionDeclaration<Parse> {
        .setting(name, argument: .value(placeholder)) { state, value in
            let shown = range.lowerBound * scale ... range.upperBound * scale
            set(&state.options, try SharedOptionRules.number(name, value ?? "", in: shown, unit: unit) / scale)
        }
    }

    /// Every option, declared once, in the order `--help` lists them (OptionDeclarationTests holds the help to it).
    static let table = OptionTable<Parse>([
        .setting("--listen", argument: .value("ADDR")) { state, value in state.options.listen = value },
        .setting("--allow-remote") { state, _ in state.options.allowRemote = true },
        .setting("--token", argument: .value("TOKEN")) { state, value in state.options.token = try SharedOptionRules.token(value ?? "") },
        subject("--pulse", "BPM", in: SubjectProfile.pulseRateRange, unit: " bpm") { $0.pulse = $1 },
        subject("--breathing", "BRPM", in: SubjectProfile.breathingRateRange, unit: " breaths/min") { $0.breathing = $1 },
        subject("--hrv", "MS", in: SubjectProfile.hrvRMSSDRange, unit: " ms") { $0.hrv = $1 },
        // A percentage on the command line, a fraction in the profile.
        subject("--amplitude", "PERCENT", in: SubjectProfile.pulseAmplitudeRange, unit: " %", scale: 100) { $0.amplitude = $1 },
        subject("--noise", "LSB", in: SubjectProfile.sensorNoiseRange, unit: " LSB") { $0.noise = $1 },
        subject("--light", "LEVEL", in: SubjectProfile.lightingLevelRange, unit: "") { $0.light = $1 },
        .setting("--motion") { state, _ in state.options.motion = true },
        .setting("--face", argument: .path("FILE.ppm")) { state, value in state.options.facePath = value },
        .setting("--feed", argument: .path("FILE")) { state, value in state.options.feedPath = value },
        .setting("--passthrough") { state, _ in state.options.passthrough = true },
        .setting("--seed", argument: .value("N")) { state, value in state.options.seed = try SharedOptionRules.seed(value ?? "") },
        .setting("--bitrate", argument: .value("BPS")) { state, value in
            let n = try SharedOptionRules.number("--bitrate", value ?? "")
            guard n >= 10_000, n <= 100_000_000 else { throw UsageError("--bitrate must be 10000...100000000") }
            state.options.bitrate = Int(n)
        },
        .setting("--encoder-threads", argument: .value("N")) { state, value in
            let text = value ?? ""
            guard let n = Int(text), (1...16).contains(n) else { throw UsageError("--encoder-threads must be a whole number 1...16, got '\(text)'") }
            state.options.encoderThreads = n
        },
        .setting("--scenario", argument: .path("FILE")) { state, value in state.options.scenarioPath = value },
        .setting("--realtime") { state, _ in state.options.realtime = true },
        .setting("--no-realtime") { state, _ in state.options.realtime = false },
        .setting("--duration", argument: .value("S")) { state, value in state.options.duration = try SharedOptionRules.duration(value ?? "") },
        .setting("--write", argument: .path("FILE")) { state, value in
            let path = value ?? ""
            let ext = URL(fileURLWithPath: path).pathExtension.lowercased()
            guard writableExtensions.contains(ext) else {
                let what = ext.isEmpty ? "needs a file name that ends in its type" : "cannot make a '.\(ext)' file"
                throw UsageError("--write \(what): use .hevc/.h265 (Annex B), .mp4 or .mkv for HEVC, .y4m for raw (got '\(path)')")
            }
            state.options.writePath = path
        },
        .setting("--publish", argument: .value("URL")) { state, value in
            let url = value ?? ""
            let lower = url.lowercased()
            if lower.hasPrefix("rtmp://") || lower.hasPrefix("rtmps://") {
                throw UsageError("--publish \(Options.publishLabel(url)) is not offered: RTMP (FLV in this FFmpeg) carries H.264 and the simulator encodes HEVC; publish over srt:// or udp://, or publish a clip with ffmpeg -f flv (docs/CLI.md)")
            }
            guard lower.hasPrefix("srt://") || lower.hasPrefix("udp://") else {
                throw UsageError("--publish takes srt://HOST:PORT[?passphrase=P] or udp://127.0.0.1:PORT (got '\(Options.publishLabel(url))')")
            }
            state.options.publishURL = url
        },
        .setting("--truth", argument: .path("FILE")) { state, value in
            let path = value ?? ""
            let lower = path.lowercased()
            guard lower.hasSuffix(".csv") || lower.hasSuffix(".ndjson") || lower.hasSuffix(".jsonl") else {
                throw UsageError("--truth writes .csv or .ndjson (got '\(path)')")
            }
            state.options.truthPath = path
        },
        .setting("--codec", argument: .value("raw|hvc1")) { state, value in
            let name = value ?? ""
            guard ["raw", "hvc1", "hevc"].contains(name) else { throw UsageError("--codec must be raw or hvc1, got '\(name)'") }
            state.options.codecName = name
        },
        .setting("--resolution", argument: .value("R")) { state, value in state.options.resolutionName = value },
        .setting("--fps", argument: .value("N")) { state, value in
            let n = try SharedOptionRules.number("--fps", value ?? "")
            guard n >= 0, n <= 1000, let rate = UInt(exactly: n) else { throw UsageError("--fps must be a whole number") }
            state.options.fps = rate
        },
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

    /// - Parameter environment: where `GLASSES_TOKEN` is read when `--listen` is given without `--token`.
    static func parse(_ input: [String], environment: [String: String] = [:]) throws(UsageError) -> Parsed {
        var cursor = ArgumentCursor(input)
        var state = Parse()
        let stopped = try table.parse(&cursor, into: &state) { name in
            tool.unknownOption(name, known: table.longNames)
        }
        if stopped, let answer = state.answer { return .print(answer) }
        var o = state.options
        if let stray = cursor.strayPositional {
            throw UsageError("unexpected argument '\(stray)'. Options start with --; see --help.")
        }
        if let listen = o.listen {
            if o.token == nil, let fromEnvironment = environment["GLASSES_TOKEN"], !fromEnvironment.isEmpty {
                o.token = fromEnvironment
            }
            // Refused here, like glasses-relay --listen: nothing is started for an address that may not be served.
            if let address = try? LinkAddress(parsing: listen), case .tcp = address, !address.isLoopback {
                guard o.allowRemote else { throw UsageError("--listen \(listen) is not loopback: add --allow-remote and --token (or GLASSES_TOKEN)") }
                guard !(o.token?.isEmpty ?? true) else { throw UsageError("--listen \(listen) needs --token (or GLASSES_TOKEN)") }
            }
        }
        if let url = o.publishURL {
            let label = Options.publishLabel(url)
            if o.writePath != nil { throw UsageError("--publish and --write are two outputs: give one") }
            if o.listen != nil { throw UsageError("--publish \(label) streams by itself, without a host: it cannot be combined with --listen") }
            if o.codecName == "raw" { throw UsageError("--publish sends HEVC (hvc1): --codec raw cannot be published") }
        }
        // The file's type must hold what the built-in host asks for (with --listen, --codec is refused below).
        if o.listen == nil, let path = o.writePath, let codec = o.codecName {
            let isHEVCFile = hevcExtensions.contains(URL(fileURLWithPath: path).pathExtension.lowercased())
            if codec == "raw" && isHEVCFile {
                throw UsageError("--write \(path) is a file for HEVC, but --codec raw streams raw frames: write them to a .y4m file, or give --codec hvc1")
            }
            if codec != "raw" && !isHEVCFile {
                throw UsageError("--write \(path) is a YUV4MPEG2 file for raw frames, but --codec \(codec) streams HEVC: write it to a .hevc, .h265, .mp4 or .mkv file, or give --codec raw")
            }
        }
        return .run(o)
    }

    func apply(to profile: inout SubjectProfile) {
        if let pulse { profile.pulseRate = pulse }
        if let breathing { profile.breathingRate = breathing }
        if let hrv { profile.hrvRMSSD = hrv }
        if let amplitude { profile.pulseAmplitude = amplitude }
        if let noise { profile.sensorNoise = noise }
        if let light { profile.lightingLevel = light }
        if motion { profile.headMotion = true }
        if let seed { profile.seed = seed }
    }
}

