import CommandSupport
import Dispatch
import Foundation
import GlassesLink
import GlassesSimulator
import GlassesVideo
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

let version = "glasses-sim 0.1.0"
let usageLine = "usage: glasses-sim --listen ADDR [options] | --write FILE --duration S [options]   (see --help)"

/// Ends the process before anything ran: `message` on standard error, then the exit code.
func fail(_ message: String, _ code: ExitCode = .usage) -> Never {
    let hint = code == .usage ? "\n\(usageLine)" : ""
    ConsoleText.standardError("glasses-sim: error: \(message)\(hint)\n")
    exit(code.rawValue)
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

    /// Every option, for "did you mean" suggestions.
    static let names = [
        "--listen", "--allow-remote", "--token", "--pulse", "--breathing", "--hrv", "--amplitude", "--noise", "--light",
        "--motion", "--face", "--feed", "--seed", "--bitrate", "--scenario", "--realtime", "--no-realtime",
        "--duration", "--write", "--publish", "--truth", "--codec", "--resolution", "--fps", "--quiet", "--version", "--help",
        "--encoder-threads", "--passthrough",
    ]

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

    /// - Parameter environment: where `GLASSES_TOKEN` is read when `--listen` is given without `--token`.
    static func parse(_ input: [String], environment: [String: String] = [:]) throws(UsageError) -> Parsed {
        var cursor = ArgumentCursor(input)
        var o = Options()
        func number(_ flag: String, _ inline: String?) throws(UsageError) -> Double {
            let text = try cursor.value(for: flag, inline: inline)
            guard let v = DecimalArgument.parse(text) else { throw UsageError("\(flag) needs a number, got '\(text)'") }
            return v
        }
        /// A number for a subject option, in the profile's range (said in the option's own units).
        func number(_ flag: String, _ inline: String?, in range: ClosedRange<Double>, unit: String) throws(UsageError) -> Double {
            let v = try number(flag, inline)
            guard range.contains(v) else {
                throw UsageError("\(flag) must be \(String(format: "%g", range.lowerBound))...\(String(format: "%g", range.upperBound))\(unit), got \(String(format: "%g", v))")
            }
            return v
        }
        while let (flag, inline) = try cursor.nextOption() {
            func flagOnly() throws(UsageError) { try cursor.noValue(for: flag, inline: inline) }
            switch flag {
            case "--help", "-h": return .print(usage)
            case "--version": return .print(version)
            case "--listen": o.listen = try cursor.value(for: flag, inline: inline)
            case "--scenario": o.scenarioPath = try cursor.path(for: flag, inline: inline)
            case "--write":
                let path = try cursor.path(for: flag, inline: inline)
                let ext = URL(fileURLWithPath: path).pathExtension.lowercased()
                guard writableExtensions.contains(ext) else {
                    let what = ext.isEmpty ? "needs a file name that ends in its type" : "cannot make a '.\(ext)' file"
                    throw UsageError(
                        "--write \(what): use .hevc/.h265 (Annex B), .mp4 or .mkv for HEVC, .y4m for raw (got '\(path)')")
                }
                o.writePath = path
            case "--publish":
                let url = try cursor.value(for: flag, inline: inline)
                let lower = url.lowercased()
                if lower.hasPrefix("rtmp://") || lower.hasPrefix("rtmps://") {
                    throw UsageError("--publish \(Options.publishLabel(url)) is not offered: RTMP (FLV in this FFmpeg) carries H.264 and the simulator encodes HEVC; publish over srt:// or udp://, or publish a clip with ffmpeg -f flv (docs/CLI.md)")
                }
                guard lower.hasPrefix("srt://") || lower.hasPrefix("udp://") else {
                    throw UsageError("--publish takes srt://HOST:PORT[?passphrase=P] or udp://127.0.0.1:PORT (got '\(Options.publishLabel(url))')")
                }
                o.publishURL = url
            case "--truth":
                let path = try cursor.path(for: flag, inline: inline)
                let lower = path.lowercased()
                guard lower.hasSuffix(".csv") || lower.hasSuffix(".ndjson") || lower.hasSuffix(".jsonl") else {
                    throw UsageError("--truth writes .csv or .ndjson (got '\(path)')")
                }
                o.truthPath = path
            case "--realtime": try flagOnly(); o.realtime = true
            case "--no-realtime": try flagOnly(); o.realtime = false
            case "--duration":
                let d = try number(flag, inline)
                guard d > 0, Duration.checkedSeconds(d) != nil, d <= 1e9 else {
                    throw UsageError("--duration must be a positive number of seconds up to 1e9")
                }
                o.duration = d
            case "--quiet": try flagOnly(); o.quiet = true
            case "--allow-remote": try flagOnly(); o.allowRemote = true
            case "--token": o.token = try cursor.value(for: flag, inline: inline)
            case "--face": o.facePath = try cursor.path(for: flag, inline: inline)
            case "--feed": o.feedPath = try cursor.path(for: flag, inline: inline)
            case "--passthrough": try flagOnly(); o.passthrough = true
            case "--codec":
                let name = try cursor.value(for: flag, inline: inline)
                guard ["raw", "hvc1", "hevc"].contains(name) else { throw UsageError("--codec must be raw or hvc1, got '\(name)'") }
                o.codecName = name
            case "--resolution": o.resolutionName = try cursor.value(for: flag, inline: inline)
            case "--fps":
                let n = try number(flag, inline)
                guard n >= 0, n <= 1000, let rate = UInt(exactly: n) else { throw UsageError("--fps must be a whole number") }
                o.fps = rate
            case "--encoder-threads":
                let text = try cursor.value(for: flag, inline: inline)
                guard let n = Int(text), (1...16).contains(n) else { throw UsageError("--encoder-threads must be a whole number 1...16, got '\(text)'") }
                o.encoderThreads = n
            case "--bitrate":
                let n = try number(flag, inline)
                guard n >= 10_000, n <= 100_000_000 else { throw UsageError("--bitrate must be 10000...100000000") }
                o.bitrate = Int(n)
            case "--pulse": o.pulse = try number(flag, inline, in: SubjectProfile.pulseRateRange, unit: " bpm")
            case "--breathing": o.breathing = try number(flag, inline, in: SubjectProfile.breathingRateRange, unit: " breaths/min")
            case "--hrv": o.hrv = try number(flag, inline, in: SubjectProfile.hrvRMSSDRange, unit: " ms")
            case "--amplitude":
                // A percentage on the command line, a fraction in the profile.
                let range = SubjectProfile.pulseAmplitudeRange
                o.amplitude = try number(flag, inline, in: range.lowerBound * 100 ... range.upperBound * 100, unit: " %") / 100
            case "--noise": o.noise = try number(flag, inline, in: SubjectProfile.sensorNoiseRange, unit: " LSB")
            case "--light": o.light = try number(flag, inline, in: SubjectProfile.lightingLevelRange, unit: "")
            case "--motion": try flagOnly(); o.motion = true
            case "--seed":
                let text = try cursor.value(for: flag, inline: inline)
                guard let s = UInt64(text) else { throw UsageError("--seed needs a non-negative integer, got '\(text)'") }
                o.seed = s
            default:
                throw UsageError(OptionSuggestion.unknownOptionMessage(flag, known: names, tool: "glasses-sim", command: nil))
            }
        }
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
let scenario: Scenario
var profile = SubjectProfile()
if let scenarioPath = options.scenarioPath {
    // A scenario is written by a person, like an option: 64, as glasses-bridge --sim-scenario and check --plan say.
    do { scenario = try Scenario(contentsOf: URL(fileURLWithPath: scenarioPath)) } catch { fail("\(error.message)", .usage) }
    profile = scenario.subject
} else {
    scenario = Scenario()
}
options.apply(to: &profile)
do { try profile.validate() } catch { fail(error.message) }
let stopAfter = options.duration ?? scenario.duration
if options.listen == nil && options.writePath == nil && options.publishURL == nil && options.truthPath == nil {
    fail("nothing to do: give --listen ADDR to serve a host, or --write/--publish/--truth to stream by itself (see --help)")
}
if options.listen == nil && stopAfter == nil { fail("without --listen, give --duration (or a scenario with a duration)") }
if options.listen == nil {
    if options.allowRemote { fail("--allow-remote applies to --listen only", .usage) }
    if options.token != nil { fail("--token applies to --listen only: the built-in host needs none", .usage) }
} else {
    // The host that dials in chooses the stream; these would be silently ignored.
    if options.codecName != nil { fail("--codec applies without --listen only: with --listen the host chooses the stream", .usage) }
    if options.resolutionName != nil {
        fail("--resolution applies without --listen only: with --listen the host chooses the stream", .usage)
    }
}
let virtualTime = !(options.realtime ?? (options.listen != nil || options.publishURL != nil))
let quiet = options.quiet

@Sendable func log(_ line: String) {
    if !quiet {
        ConsoleText.standardOutput((line + "\n"))
    }
}

// MARK: Set-up

// Every input and output is checked before anything is printed: a run refused for a bad file says only why.
let manual = ManualScheduler()
let scheduler: any EventScheduler = virtualTime ? manual : DispatchEventScheduler(label: "glasses-sim")
let glasses: SimulatedGlasses
do {
    let encoderThreads = options.encoderThreads ?? (virtualTime ? 1 : min(max(ProcessInfo.processInfo.activeProcessorCount, 1), 4))
    glasses = try SimulatedGlasses(profile: profile, scheduler: scheduler,
                                   options: .init(hevcBitrate: options.bitrate, encoderThreads: encoderThreads,
                                                  encoderPsychovisual: virtualTime))
} catch { fail(error.message) }
if options.feedPath != nil && options.facePath != nil { fail("--feed and --face cannot be combined: the file replaces the person") }
if options.feedPath != nil && options.truthPath != nil {
    fail("--truth has nothing to write with --feed: the vitals of a video file are unknown")
}
if options.passthrough && options.feedPath == nil { fail("--passthrough needs --feed: it sends a file's own samples", .usage) }
let feedFile: VideoFileFeed?
if let feedPath = options.feedPath {
    do { feedFile = try VideoFileFeed(path: feedPath, passthrough: options.passthrough) } catch { fail(error.message, .dataError) }
} else {
    feedFile = nil
}
/// The glasses stream these sizes only, and never scale a file: a feed of another size can never be streamed.
let feedResolution: StreamingResolution?
if let feedFile {
    guard let match = StreamingResolution.allCases.first(where: {
        Int($0.videoFrameSize.width) == feedFile.width && Int($0.videoFrameSize.height) == feedFile.height
    }) else {
        fail("--feed \(feedFile.path) is \(feedFile.width)x\(feedFile.height); the glasses stream 360x640, 504x896 or 720x1280 "
                 + "only, and do not scale a file", .dataError)
    }
    feedResolution = match
} else {
    feedResolution = nil
}
let faceImage: FaceImage?
if let facePath = options.facePath {
    do { faceImage = try FaceImage(ppmFile: URL(fileURLWithPath: facePath)) } catch { fail(error.message, .dataError) }
} else {
    faceImage = nil
}
/// What the built-in host asks for, without --listen.
let builtInStream: StreamConfiguration?
if options.listen == nil {
    let ext = URL(fileURLWithPath: options.writePath ?? "").pathExtension.lowercased()
    let codec: VideoCodec
    switch options.codecName {
    case nil: codec = Options.hevcExtensions.contains(ext) || options.publishURL != nil ? .hvc1 : .raw
    case "raw": codec = .raw
    default: codec = .hvc1  // parsing admitted only raw, hvc1 and hevc
    }
    let resolution: StreamingResolution
    if let name = options.resolutionName {
        guard let named = StreamingResolution(rawValue: name) else { fail("--resolution must be low, medium or high") }
        resolution = named
    } else {
        resolution = feedResolution ?? .medium
    }
    if let feedFile {
        // A file of another size than --resolution asks for: the file is what cannot be streamed.
        do { try feedFile.checkSize(width: Int(resolution.videoFrameSize.width), height: Int(resolution.videoFrameSize.height)) } catch {
            fail(error.message, .dataError)
        }
    }
    do { builtInStream = try StreamConfiguration.validated(videoCodec: codec, resolution: resolution, frameRate: options.fps) } catch {
        fail(error.description)
    }
} else {
    builtInStream = nil
}
// The files are checked before anything is rendered, and a --write that fails later ends the run at once: the
// file is what was asked for, so streaming on into nothing would only waste the time to the end.
for (flag, path) in [("--write", options.writePath), ("--truth", options.truthPath)] {
    if let path, let problem = OutputPathCheck.problem(writing: path) { fail("cannot write \(flag) \(path): \(problem)", .cannotWriteOutput) }
}

glasses.setLogHandler { log($0) }
do {
    if let feedFile { try glasses.setCameraFeed(.videoFile(feedFile)) }
    if let faceImage { try glasses.setCameraFeed(.faceImage(faceImage)) }
} catch { fail(error.message, .dataError) }

/// Why the run ends, set once by a signal, the duration timer, the virtual-time loop, a failed --write or a failed
/// feed; the main thread then finishes the files and exits. Nothing is finished on the signal or scheduler queues.
let finishRequest = Mutex<String?>(nil)
let finishRequested = DispatchSemaphore(value: 0)
@Sendable func requestFinish(_ reason: String) {
    let first = finishRequest.withLock { current -> Bool in
        guard current == nil else { return false }
        current = reason
        return true
    }
    if first { finishRequested.signal() }
}
/// A feed file that failed mid-run (truncated, undecodable, broken timestamps): the glasses have stopped the
/// stream and told the host with a videoStreamingError fault; the run ends with 65 and this message, serving or
/// not, since every later stream would fail on the same file.
let feedFailure = Mutex<SimulatorError?>(nil)
glasses.setFeedFailureHandler { error in
    feedFailure.withLock { if $0 == nil { $0 = error } }
    requestFinish("the video feed failed")
}

// Trapped before the glasses say they listen: a signal sent as soon as they do is heard.
let trap = SignalTrap { name in requestFinish(name) }
/// What the stream goes to (a file, or a URL for --publish), and how it is named in messages.
let outputTarget = options.writePath ?? options.publishURL
let outputLabel = options.writePath ?? options.publishURL.map(Options.publishLabel)
let recorder = outputTarget.map {
    StreamRecorder(path: $0, frameRate: Int(options.fps), overflow: .wait) { message in
        if options.publishURL != nil, let label = outputLabel, let url = outputTarget {
            log("glasses-sim: \(message.replacingOccurrences(of: url, with: label))")
        }
        requestFinish(options.publishURL != nil ? "--publish failed" : "--write failed")
    }
}
// Published frames carry their capture time (CaptureTimeSEI), so the bridge can measure capture -> sendFrame.
if let recorder { recorder.attach(to: glasses, stampsCaptureTimes: options.publishURL != nil) }

log("glasses-sim: \(glasses.info.name) (\(glasses.info.identifier)), pulse \(profile.pulseRate) bpm, breathing \(profile.breathingRate)/min, HRV \(profile.hrvRMSSD) ms, seed \(profile.seed), \(virtualTime ? "virtual" : "real") time")

let server: SimulatorServer?
let probeLink: (any DeviceLink)?
if let listen = options.listen {
    let address: LinkAddress
    do { address = try LinkAddress(parsing: listen) } catch { fail("\(error)") }
    do {
        let started = try SimulatorServer(glasses: glasses, address: address,
                                          options: LinkListenerOptions(allowRemote: options.allowRemote,
                                                                       pairingToken: options.token))
        server = started
        log("listening on \(started.address)")
    } catch { fail("\(error)", .deviceUnavailable) }
    probeLink = nil
} else if let configuration = builtInStream {
    // No host: a built-in one asks for a stream so the glasses have something to do.
    server = nil
    let pair = InProcessLink(scheduler: scheduler, initialCredit: 64, liveness: .disabled)
    glasses.setLinkLossAction { pair.sever() }
    glasses.attach(pair.device)
    pair.host.open { _ in }
    pair.host.send(.hello(protocolVersion: linkProtocolVersion, pairingToken: nil))
    pair.host.send(.startSession)
    pair.host.send(.startStream(configuration))
    probeLink = pair.host
    log("built-in host: streaming \(configuration.videoCodec.rawValue) \(configuration.resolution.videoFrameSize) @ \(configuration.frameRate) fps to \(outputLabel ?? "nowhere")")
} else {
    preconditionFailure("without --listen, the built-in host's stream is set above")
}
do {
    _ = try glasses.start(scenario)
} catch {
    fail(options.scenarioPath.map { "--scenario \($0): \(error.message)" } ?? error.message, .usage)
}
if !scenario.events.isEmpty { log("scenario '\(scenario.name)': \(scenario.events.count) events") }

// MARK: Finish

/// Stops serving, writes the recording and the truth, prints the statistics; returns the exit code.
func finish() -> ExitCode {
    server?.stop()
    probeLink?.close()
    var status = ExitCode.success
    if let recorder {
        do {
            try recorder.finish()
            log("\(options.publishURL != nil ? "published" : "wrote") \(recorder.written) samples to \(outputLabel ?? recorder.path)")
        } catch {
            ConsoleText.standardError("glasses-sim: error: \(error.reason.replacingOccurrences(of: recorder.path, with: outputLabel ?? ""))\n")
            status = .cannotWriteOutput
        }
    }
    if let truthPath = options.truthPath {
        let end = glasses.deviceTime
        let truth = glasses.scene.groundTruth(through: end)
        let text = truthPath.lowercased().hasSuffix(".csv")
            ? truth.csv(in: 0...max(end, 0), step: 0.1) : truth.ndjson(in: 0...max(end, 0), step: 0.1)
        do {
            try OutputFileWriter.write(Data(text.utf8), to: truthPath)
            log("wrote ground truth to \(truthPath)")
        } catch {
            ConsoleText.standardError("glasses-sim: error: cannot write \(truthPath): \(FileErrorText.reason(error))\n")
            status = .cannotWriteOutput
        }
    }
    let stats = glasses.statistics
    log("done: \(stats.samplesSent) samples sent (\(stats.keyframesSent) keyframes, \(stats.bytesSent) bytes), \(stats.samplesWithheld) withheld, \(stats.samplesDamaged) damaged, \(stats.droppedForCredit) dropped for credit, \(stats.photosDelivered) photos")
    return status
}


if virtualTime {
    // Virtual time: advance as fast as the CPU allows; with a socket host, let it breathe between steps.
    let step = Duration.milliseconds(5)
    let end = stopAfter.flatMap { Duration.checkedSeconds($0) }
    while finishRequest.withLock({ $0 == nil }) {
        if let end, manual.now >= end { break }
        manual.advance(by: step)
        if options.listen != nil { usleep(500) }
    }
} else {
    if let stopAfter, let after = Duration.checkedSeconds(stopAfter) {
        scheduler.schedule(after: after) { requestFinish("duration") }
    }
    finishRequested.wait()
}
trap.cancel()
if let reason = finishRequest.withLock({ $0 }) { log("stopping: \(reason)") }
var status = finish()
// Said last, once: what was streamed before the file failed is written, and the run is not a success.
if let failure = feedFailure.withLock({ $0 }) {
    ConsoleText.standardError("glasses-sim: error: \(failure.message)\n")
    if status == .success { status = .dataError }
}
exit(status.rawValue)
