import Foundation
import GlassesBridge
import GlassesLink
import GlassesRelay
import GlassesSimulator
import WearablesKit

/// End-to-end latency, capture → `sendFrame` accepted, through the relay and directly (`Scripts/bench`).
///
/// Both paths run in real time over loopback TCP, one after the other, with the same simulated glasses settings:
/// - direct: simulated glasses served by a `SimulatorServer` (what `glasses-sim --listen` is), the bridge dialling;
/// - relay: simulated glasses → the relay's own WearablesKit (its DAT) → `GlassesRelay` dialling a listening bridge
///   (`DeviceListener`, what `glasses-bridge --listen` is) with a pairing token.
/// The bridge's pipeline and its default engine do the work; latency is the pipeline's own measurement (the
/// heartbeat clock exchange relates the two ends' clocks, `docs/PROTOCOL.md` 7.5).
func runRelayLatencyBenchmark(_ arguments: [String]) {
    let seconds = arguments.first.flatMap(Double.init) ?? 20
    let configuration = StreamConfiguration(videoCodec: .hvc1, resolution: .high, frameRate: 30)
    print("latency capture → sendFrame accepted, real time over loopback TCP (\(Int(seconds)) s each, 720x1280 hvc1 at 30 fps):")
    print(String(format: "%-7@ %8@ %8@ %8@ %9@ %9@ %9@ %8@ %8@", "path   " as NSString, "p50 ms" as NSString,
                 "p99 ms" as NSString, "max ms" as NSString, "link p50" as NSString, "link p99" as NSString,
                 "link max" as NSString, "frames" as NSString, "dropped" as NSString))
    for path in ["direct", "relay"] {
        do {
            let result = try measureLatency(relay: path == "relay", configuration: configuration, seconds: seconds)
            let stats = result.summary.stats
            guard let latency = stats.latency else {
                print("\(path): no frame carried timing (\(stats.accounting.submitted) frames)")
                continue
            }
            print(String(format: "%-7@ %8.1f %8.1f %8.1f %9.2f %9.2f %9.2f %8d %8d", path as NSString, latency.p50Ms,
                         latency.p99Ms, latency.maxMs, latency.linkP50Ms, latency.linkP99Ms, latency.linkMaxMs,
                         Int(stats.accounting.submitted), Int(stats.deviceDroppedFrames)))
        } catch {
            print("\(path): could not measure: \(error)")
        }
    }
}

private func measureLatency(relay: Bool, configuration: StreamConfiguration, seconds: Double) throws -> BridgeRunResult {
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
    let pipeline = BridgePipeline(settings: settings, source: source, clock: .realTime(bridgeClock)) { _, _ in }
    let done = DispatchSemaphore(value: 0)
    let box = ResultBox()
    Task {
        box.set(await pipeline.run())
        done.signal()
    }
    done.wait()
    guard let result = box.value else { throw BenchmarkError("the pipeline returned no result") }
    return result
}

private struct BenchmarkError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
