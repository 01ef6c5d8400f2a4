import Foundation
import GlassesBridge
import GlassesLink
import GlassesRelay
import GlassesRelayPOSIX
import GlassesSimulator
import Synchronization
import WearablesKit

/// End-to-end latency, capture → `sendFrame` accepted, through the relay and directly (`Scripts/bench`).
///
/// Both paths run in real time over loopback TCP, one after the other, with the same simulated glasses settings:
/// - direct: simulated glasses served by a `SimulatorServer` (what `glasses-sim --listen` is), the bridge dialling;
/// - relay: simulated glasses → the relay's own WearablesKit (its DAT) → `GlassesRelay` dialling a listening bridge
///   (`DeviceListener`, what `glasses-bridge --listen` is) with a pairing token.
/// - srt: `glasses-sim --publish` (a separate process, as a phone app is) sending HEVC in MPEG-TS over SRT to the
///   bridge listening (`--device srt://…?mode=listener`);
/// - rtmp: `glasses-sim --publish udp://…` into the ffmpeg CLI, which re-encodes to H.264 (libx264 ultrafast,
///   zerolatency) and publishes FLV over RTMP to the bridge listening (`--device rtmp://…`): the extra encode a
///   phone app makes, since FLV carries H.264 only in this FFmpeg.
/// The bridge's pipeline and its default engine do the work; latency is the pipeline's own measurement (the
/// heartbeat clock exchange relates the two ends' clocks, `docs/PROTOCOL.md` 7.5; over a stream, the capture time
/// the simulator stamps into each frame, `CaptureTimeSEI`, on this machine's one wall clock).
func runRelayLatencyBenchmark(_ arguments: [String]) {
    // Benchmarks latency [SECONDS] [high|medium|low] [FPS]
    let seconds = arguments.first.flatMap(Double.init) ?? 20
    let resolution = arguments.dropFirst().first.flatMap(StreamingResolution.init(rawValue:)) ?? .high
    let frameRate = arguments.dropFirst(2).first.flatMap(UInt.init).flatMap { StreamConfiguration.supportedFrameRates.contains($0) ? $0 : nil } ?? 30
    let configuration = StreamConfiguration(videoCodec: .hvc1, resolution: resolution, frameRate: frameRate)
    print("latency capture → sendFrame accepted, real time over loopback (\(Int(seconds)) s each, \(resolution.videoFrameSize) hvc1 at "
          + "\(frameRate) fps; over a stream the link columns are capture → arrival):")
    print("  (steady: the median of each second's p50 and the largest p99 after the first 5 s, when a stream's analysis has passed)")
    print(String(format: "%-7@ %8@ %8@ %8@ %9@ %9@ %9@ %10@ %10@ %8@ %8@", "path   " as NSString, "p50 ms" as NSString,
                 "p99 ms" as NSString, "max ms" as NSString, "link p50" as NSString, "link p99" as NSString,
                 "link max" as NSString, "steady p50" as NSString, "steady p99" as NSString, "frames" as NSString, "dropped" as NSString))
    for path in ["direct", "relay", "srt", "rtmp"] {
        do {
            let result = path == "direct" || path == "relay"
                ? try measureLatency(relay: path == "relay", configuration: configuration, seconds: seconds)
                : try measureStreamLatency(rtmp: path == "rtmp", configuration: configuration, seconds: seconds)
            let stats = result.run.summary.stats
            guard let latency = stats.latency else {
                print("\(path): no frame carried timing (\(stats.accounting.submitted) frames)")
                continue
            }
            let steady = result.intervals.dropFirst(5)
            let steadyP50 = steady.map(\.p50Ms).sorted().dropFirst(steady.count / 2).first ?? .nan
            let steadyP99 = steady.map(\.p99Ms).max() ?? .nan
            print(String(format: "%-7@ %8.1f %8.1f %8.1f %9.2f %9.2f %9.2f %10.1f %10.1f %8d %8d", path as NSString, latency.p50Ms,
                         latency.p99Ms, latency.maxMs, latency.linkP50Ms, latency.linkP99Ms, latency.linkMaxMs, steadyP50, steadyP99,
                         Int(stats.accounting.submitted), Int(stats.deviceDroppedFrames)))
        } catch {
            print("\(path): could not measure: \(error)")
        }
    }
}

/// A run's result and the latency of each stats interval that measured any, in order.
private struct LatencyRun {
    var run: BridgeRunResult
    var intervals: [LatencySummary]
}

/// Collects the latency of each stats interval.
private final class IntervalLatencies: Sendable {
    private let values = Mutex<[LatencySummary]>([])
    var all: [LatencySummary] { values.withLock { $0 } }
    func observe(_ event: BridgeEvent) {
        if case .stats(let stats, _, _, _) = event, let latency = stats.latency { values.withLock { $0.append(latency) } }
    }
}

private func measureLatency(relay: Bool, configuration: StreamConfiguration, seconds: Double) throws -> LatencyRun {
    let bridgeClock = DispatchEventScheduler(label: "bench.latency.bridge")
    var settings = BridgeSettings(streamConfiguration: configuration)
    settings.duration = .milliseconds(Int64(seconds * 1000))
    var stopSource: @Sendable () -> Void = {}
    let source: BridgeSource
    if relay {
        let token = "bench-\(UInt32.random(in: 0...UInt32.max))"
        let listener = try DeviceListener.listen(
            on: .tcp(host: "127.0.0.1", port: 0), options: LinkListenerOptions(scheduler: bridgeClock, pairingToken: token))
        let relayClock = DispatchEventScheduler(label: "bench.latency.relay")
        let wearables = Wearables.makeInstance(configuration: try WearablesConfiguration(scheduler: relayClock))
        // The kit holds the glasses and their link: kept alive for the run (stopSource below captures it).
        let kit = SimulatorKit(scheduler: relayClock)
        let glasses = try kit.pairGlasses(with: wearables, profile: SubjectProfile(seed: 3))
        let clock = SchedulerRelayClock(relayClock)
        let client = RelayDATClient(wearables: wearables, clock: clock, frameAdapter: RelayFrameAdapter.read)
        let service = RelayService(
            client: client, clock: clock,
            mode: .dial(listener.address, LinkConnectionOptions(scheduler: relayClock, pairingToken: token),
                        retryDelay: .milliseconds(200)))
        try service.start()
        stopSource = {
            service.stop()
            listener.stop()
            withExtendedLifetime((kit, glasses)) {}
        }
        source = .glasses("relay") { try listener.waitForDevice(timeout: .seconds(30)) }
    } else {
        let simClock = DispatchEventScheduler(label: "bench.latency.sim")
        let glasses = try SimulatedGlasses(profile: SubjectProfile(seed: 3), scheduler: simClock)
        let server = try SimulatorServer(glasses: glasses, address: .tcp(host: "127.0.0.1", port: 0))
        stopSource = { server.stop() }
        let address = server.address
        source = .glasses("direct") {
            try LinkConnector.connect(to: address, options: LinkConnectionOptions(scheduler: bridgeClock))
        }
    }
    defer { stopSource() }
    let intervals = IntervalLatencies()
    let pipeline = BridgePipeline(settings: settings, source: source, clock: .realTime(bridgeClock)) { event, _ in intervals.observe(event) }
    guard let result = PendingRun(pipeline).wait() else { throw BenchmarkError("the pipeline returned no result") }
    return LatencyRun(run: result, intervals: intervals.all)
}

/// One stream path: the bridge listens, `glasses-sim --publish` (and for RTMP an ffmpeg transcode) publishes; the
/// publishers run longer than the measured run and are stopped after it.
private func measureStreamLatency(rtmp: Bool, configuration: StreamConfiguration, seconds: Double) throws -> LatencyRun {
    let port = UInt16.random(in: 20_000...40_000)
    let address = try NetworkStreamAddress(parsing: rtmp ? "rtmp://127.0.0.1:\(port)/live/bench" : "srt://127.0.0.1:\(port)?mode=listener")
    let bridgeClock = DispatchEventScheduler(label: "bench.latency.stream")
    var settings = BridgeSettings(streamConfiguration: configuration)
    // The stream's first frames come after the publisher's start and the stream's analysis: a few seconds more.
    settings.duration = .milliseconds(Int64((seconds + 4) * 1000))
    let intervals = IntervalLatencies()
    let pipeline = BridgePipeline(settings: settings, source: .stream(address, connectTimeout: .seconds(20)),
                                  clock: .realTime(bridgeClock)) { event, _ in intervals.observe(event) }
    let folder = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    let simulatorArguments = ["--duration", String(Int(seconds) + 15), "--resolution", configuration.resolution.rawValue,
                              "--fps", String(configuration.frameRate), "--seed", "3", "--quiet"]
    var publishers: [Process] = []
    defer {
        for process in publishers where process.isRunning { kill(process.processIdentifier, SIGKILL) }
        for process in publishers { process.waitUntilExit() }
    }
    func start(_ executable: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        publishers.append(process)
    }
    let run = PendingRun(pipeline)
    Thread.sleep(forTimeInterval: 1)  // the bridge listens (a publisher that comes first is refused, and gives up)
    if rtmp {
        let hop = port &+ 1
        try start("/usr/bin/env", ["ffmpeg", "-hide_banner", "-nostdin", "-loglevel", "error", "-fflags", "nobuffer", "-probesize", "100000",
                                   "-analyzeduration", "500000", "-i", "udp://127.0.0.1:\(hop)", "-c:v", "libx264", "-udu_sei", "1",
                                   "-preset", "ultrafast", "-tune", "zerolatency", "-g", String(configuration.frameRate),
                                   "-b:v", "3M", "-f", "flv", "rtmp://127.0.0.1:\(port)/live/bench"])
        Thread.sleep(forTimeInterval: 0.5)
        try start(folder.appendingPathComponent("glasses-sim").path, ["--publish", "udp://127.0.0.1:\(hop)"] + simulatorArguments)
    } else {
        try start(folder.appendingPathComponent("glasses-sim").path, ["--publish", "srt://127.0.0.1:\(port)"] + simulatorArguments)
    }
    guard let result = run.wait() else { throw BenchmarkError("the pipeline returned no result") }
    return LatencyRun(run: result, intervals: intervals.all)
}

private struct BenchmarkError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
