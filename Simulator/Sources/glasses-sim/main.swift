import Dispatch
import Foundation
import GlassesLink
import GlassesSimulator
import Synchronization
import WearablesKit

#if canImport(Glibc)
import Glibc
#endif

let usage = """
glasses-sim: simulated smart glasses that speak the GlassesBridge link protocol.

It renders a person with a known pulse and breathing, streams raw NV12 or HEVC frames at the resolution and frame
rate the host asks for, behaves like glasses (fold, doff, tap, battery, thermal, photo) and plays scripted events
and faults from a scenario file. Ground truth can be written next to the video.

Usage:
  glasses-sim --listen unix:PATH|tcp:HOST:PORT [options]    serve a host (e.g. glasses-bridge)
  glasses-sim --write FILE [--duration S] [options]          no host: stream to a file by itself

Serving:
  --listen ADDR          unix:/path/to/socket or tcp:127.0.0.1:PORT (port 0 picks one)
  --allow-remote         allow a non-loopback TCP address (needs --token)
  --token TOKEN          pairing token the host must present
Subject and camera:
  --pulse BPM            mean pulse rate (default 72)
  --breathing BRPM       mean breathing rate (default 15)
  --hrv MS               target RMSSD in ms (default 40)
  --amplitude PERCENT    green pulse amplitude in % of skin intensity (default 0.3)
  --noise LSB            sensor noise, luma LSB (default 2)
  --light LEVEL          lighting level, 1 = nominal (default 1)
  --motion               wearer head motion on
  --face FILE.ppm        use an image as the face
  --feed FILE            stream a video file instead of the rendered person (Y4M 4:2:0 video range, or HEVC in
                         Annex B/MP4/MKV), looping; its size must be the streamed resolution (without --listen,
                         the default --resolution is the file's); no ground truth (--truth is refused)
  --seed N               seed for everything random (default 1)
  --bitrate BPS          HEVC bitrate at 504x896@30 (default 2000000)
Time and output:
  --scenario FILE        timed events and faults (JSON, see docs/SCENARIOS.md)
  --realtime             run in real time (default when serving)
  --no-realtime          run in virtual time, as fast as the CPU allows (default without --listen)
  --duration S           stop after S seconds of simulated time (default: scenario duration, or forever)
  --write FILE           write what is streamed: .hevc/.h265 (Annex B), .mp4, .mkv for HEVC; .y4m for raw
  --truth FILE           write ground truth at the end: .csv or .ndjson (10 samples/s)
  --codec raw|hvc1       without --listen: what the built-in host asks for (default hvc1 with a .hevc/.mp4/.mkv
  --resolution low|medium|high                           file, raw otherwise), resolution (default medium)
  --fps N                and frame rate (default 30)
  --quiet                print only errors
  --help                 this text
"""

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("glasses-sim: \(message)\n".utf8))
    exit(2)
}

// MARK: Arguments

/// Everything the command line says.
struct Options: Sendable {
    var listen: String?
    var scenarioPath: String?
    var writePath: String?
    var truthPath: String?
    var realtime: Bool?
    var duration: Double?
    var quiet = false
    var allowRemote = false
    var token: String?
    var facePath: String?
    var feedPath: String?
    var codecName: String?
    var resolutionName: String?
    var fps: UInt = 30
    var bitrate = 2_000_000
    var pulse: Double?, breathing: Double?, hrv: Double?, amplitude: Double?, noise: Double?, light: Double?
    var motion = false
    var seed: UInt64?

    static func parse(_ input: [String]) -> Options {
        var arguments = input
        var o = Options()
        func value(_ flag: String) -> String {
            guard !arguments.isEmpty else { fail("\(flag) needs a value (see --help)") }
            return arguments.removeFirst()
        }
        func number(_ flag: String) -> Double {
            let text = value(flag)
            guard let v = Double(text), v.isFinite else { fail("\(flag) needs a number, got '\(text)'") }
            return v
        }
        while !arguments.isEmpty {
            let flag = arguments.removeFirst()
            switch flag {
            case "--help", "-h":
                print(usage)
                exit(0)
            case "--listen": o.listen = value(flag)
            case "--scenario": o.scenarioPath = value(flag)
            case "--write": o.writePath = value(flag)
            case "--truth": o.truthPath = value(flag)
            case "--realtime": o.realtime = true
            case "--no-realtime": o.realtime = false
            case "--duration":
                let d = number(flag)
                guard d > 0 else { fail("--duration must be positive") }
                o.duration = d
            case "--quiet": o.quiet = true
            case "--allow-remote": o.allowRemote = true
            case "--token": o.token = value(flag)
            case "--face": o.facePath = value(flag)
            case "--feed": o.feedPath = value(flag)
            case "--codec": o.codecName = value(flag)
            case "--resolution": o.resolutionName = value(flag)
            case "--fps":
                let n = number(flag)
                guard n >= 0, let rate = UInt(exactly: n) else { fail("--fps must be a whole number") }
                o.fps = rate
            case "--bitrate":
                let n = number(flag)
                guard n >= 10_000, n <= 100_000_000 else { fail("--bitrate must be 10000...100000000") }
                o.bitrate = Int(n)
            case "--pulse": o.pulse = number(flag)
            case "--breathing": o.breathing = number(flag)
            case "--hrv": o.hrv = number(flag)
            case "--amplitude": o.amplitude = number(flag) / 100
            case "--noise": o.noise = number(flag)
            case "--light": o.light = number(flag)
            case "--motion": o.motion = true
            case "--seed":
                let text = value(flag)
                guard let s = UInt64(text) else { fail("--seed needs a non-negative integer, got '\(text)'") }
                o.seed = s
            default:
                fail("unknown option '\(flag)' (see --help)")
            }
        }
        return o
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

let options = Options.parse(Array(CommandLine.arguments.dropFirst()))
let scenario: Scenario
var profile = SubjectProfile()
if let scenarioPath = options.scenarioPath {
    do { scenario = try Scenario(contentsOf: URL(fileURLWithPath: scenarioPath)) } catch { fail("\(error.message)") }
    profile = scenario.subject
} else {
    scenario = Scenario()
}
options.apply(to: &profile)
do { try profile.validate() } catch { fail(error.message) }
let stopAfter = options.duration ?? scenario.duration
if options.listen == nil && options.writePath == nil && options.truthPath == nil {
    fail("nothing to do: give --listen ADDR to serve a host, or --write/--truth to stream by itself (see --help)")
}
if options.listen == nil && stopAfter == nil { fail("without --listen, give --duration (or a scenario with a duration)") }
let virtualTime = !(options.realtime ?? (options.listen != nil))
let quiet = options.quiet

@Sendable func log(_ line: String) {
    if !quiet {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }
}

// MARK: Set-up

let manual = ManualScheduler()
let scheduler: any EventScheduler = virtualTime ? manual : DispatchEventScheduler(label: "glasses-sim")
let glasses: SimulatedGlasses
do {
    glasses = try SimulatedGlasses(profile: profile, scheduler: scheduler, options: .init(hevcBitrate: options.bitrate))
} catch { fail(error.message) }
glasses.setLogHandler { log($0) }
if options.feedPath != nil && options.facePath != nil { fail("--feed and --face cannot be combined: the file replaces the person") }
if options.feedPath != nil && options.truthPath != nil {
    fail("--truth has nothing to write with --feed: the vitals of a video file are unknown")
}
let feedFile: VideoFileFeed?
if let feedPath = options.feedPath {
    do {
        let file = try VideoFileFeed(path: feedPath)
        try glasses.setCameraFeed(.videoFile(file))
        feedFile = file
    } catch { fail(error.message) }
} else {
    feedFile = nil
}
if let facePath = options.facePath {
    do { try glasses.setCameraFeed(.faceImage(try FaceImage(ppmFile: URL(fileURLWithPath: facePath)))) } catch {
        fail(error.message)
    }
}
let recorder = options.writePath.map { StreamRecorder(path: $0, frameRate: Int(options.fps)) }
if let recorder { recorder.attach(to: glasses) }

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
    } catch { fail("\(error)") }
    probeLink = nil
} else {
    // No host: a built-in one asks for a stream so the glasses have something to do.
    server = nil
    let fps = options.fps
    let ext = URL(fileURLWithPath: options.writePath ?? "").pathExtension.lowercased()
    let codec: VideoCodec
    switch options.codecName {
    case nil: codec = ["hevc", "h265", "265", "mp4", "mkv", "mov"].contains(ext) ? .hvc1 : .raw
    case "raw": codec = .raw
    case "hvc1", "hevc": codec = .hvc1
    default: fail("--codec must be raw or hvc1")
    }
    let resolutionName: String
    if let name = options.resolutionName {
        resolutionName = name
    } else if let feedFile {
        guard let match = StreamingResolution.allCases.first(where: {
            Int($0.videoFrameSize.width) == feedFile.width && Int($0.videoFrameSize.height) == feedFile.height
        }) else {
            fail("--feed \(feedFile.path) is \(feedFile.width)x\(feedFile.height); the glasses stream 360x640, 504x896 or 720x1280 only")
        }
        resolutionName = match.rawValue
    } else {
        resolutionName = "medium"
    }
    guard let resolution = StreamingResolution(rawValue: resolutionName) else { fail("--resolution must be low, medium or high") }
    if let feedFile {
        do { try feedFile.checkSize(width: Int(resolution.videoFrameSize.width), height: Int(resolution.videoFrameSize.height)) } catch {
            fail(error.message)
        }
    }
    let configuration: StreamConfiguration
    do { configuration = try StreamConfiguration(videoCodec: codec, resolution: resolution, frameRate: fps) } catch {
        fail(error.description)
    }
    let pair = InProcessLink(scheduler: scheduler, initialCredit: 64, liveness: .disabled)
    glasses.setLinkLossAction { pair.sever() }
    glasses.attach(pair.device)
    pair.host.open { _ in }
    pair.host.send(.hello(protocolVersion: linkProtocolVersion, pairingToken: nil))
    pair.host.send(.startSession)
    pair.host.send(.startStream(configuration))
    probeLink = pair.host
    log("built-in host: streaming \(codec.rawValue) \(resolution.videoFrameSize) @ \(fps) fps to \(options.writePath ?? "nowhere")")
}
glasses.run(scenario)
if !scenario.events.isEmpty { log("scenario '\(scenario.name)': \(scenario.events.count) events") }

// MARK: Finish

let finished = Atomic<Bool>(false)
func finish(code: Int32) -> Never {
    if finished.exchange(true, ordering: .acquiringAndReleasing) { exit(code) }
    server?.stop()
    probeLink?.close()
    var status = code
    if let recorder {
        do {
            try recorder.finish()
            log("wrote \(recorder.samplesWritten) samples to \(recorder.path)")
        } catch {
            FileHandle.standardError.write(Data("glasses-sim: \(error.message)\n".utf8))
            status = 1
        }
    }
    if let truthPath = options.truthPath {
        let end = glasses.deviceTime
        let truth = glasses.scene.groundTruth(through: end)
        let text = truthPath.lowercased().hasSuffix(".ndjson") || truthPath.lowercased().hasSuffix(".jsonl")
            ? truth.ndjson(in: 0...max(end, 0), step: 0.1) : truth.csv(in: 0...max(end, 0), step: 0.1)
        do {
            try text.write(toFile: truthPath, atomically: true, encoding: .utf8)
            log("wrote ground truth to \(truthPath)")
        } catch {
            FileHandle.standardError.write(Data("glasses-sim: cannot write \(truthPath): \(error.localizedDescription)\n".utf8))
            status = 1
        }
    }
    let stats = glasses.statistics
    log("done: \(stats.samplesSent) samples sent (\(stats.keyframesSent) keyframes, \(stats.bytesSent) bytes), \(stats.samplesWithheld) withheld, \(stats.samplesDamaged) damaged, \(stats.droppedForCredit) dropped for credit, \(stats.photosDelivered) photos")
    exit(status)
}

signal(SIGINT, SIG_IGN)
signal(SIGTERM, SIG_IGN)
let signalQueue = DispatchQueue(label: "glasses-sim.signals")
let signalSources = [SIGINT, SIGTERM].map { sig -> any DispatchSourceSignal in
    let source = DispatchSource.makeSignalSource(signal: sig, queue: signalQueue)
    source.setEventHandler { finish(code: 0) }
    source.resume()
    return source
}

if virtualTime {
    // Virtual time: advance as fast as the CPU allows; with a socket host, let it breathe between steps.
    let step = Duration.milliseconds(5)
    let end = stopAfter.map { Duration.microseconds(Int64($0 * 1_000_000)) }
    while true {
        if let end, manual.now >= end { finish(code: 0) }
        manual.advance(by: step)
        if options.listen != nil { usleep(500) }
    }
} else {
    if let stopAfter {
        scheduler.schedule(after: .microseconds(Int64(stopAfter * 1_000_000))) { finish(code: 0) }
    }
    dispatchMain()
}
