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
                                                  encoderPsychovisual: virtualTime, motionClockOffset: scenario.glassesOptions.motionClockOffset))
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
