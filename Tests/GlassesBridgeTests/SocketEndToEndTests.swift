import Foundation
import GlassesLink
import GlassesSimulator
import Testing
import WearablesKit
@testable import GlassesBridge
import GlassesBridgeCommand

/// The pipeline against a simulator served on a Unix socket, in virtual time.
@Suite("Pipeline end to end over a Unix socket (virtual time)", .serialized)
struct SocketEndToEndTests {
    /// A simulator listening on a socket, a relay that can splice garbage in, and a pipeline connected through it.
    struct SocketRun {
        let scheduler = ManualScheduler()
        let glasses: SimulatedGlasses
        let listener: LinkListener
        let relay: GarbageRelay
        let settler = LinkSettler()
        let events = EventLog()
        let backend = RecordingBackend()
        let pipeline: BridgePipeline

        init(seconds: Double) throws {
            let directory = FileManager.default.temporaryDirectory.path
            let devicePath = "\(directory)/gb-sim-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).sock"
            let relayPath = devicePath + ".relay"
            glasses = try SimulatedGlasses(profile: SubjectProfile(seed: 3), scheduler: scheduler)
            let glasses = self.glasses
            let settler = self.settler
            let scheduler = self.scheduler
            listener = try LinkListener.listen(
                on: .unix(path: devicePath), options: LinkListenerOptions(scheduler: scheduler)
            ) { hostLink in
                let counted = CountingHostLink(hostLink)
                settler.setDevice(counted)
                glasses.attach(counted)
            }
            relay = try GarbageRelay(path: relayPath, upstream: devicePath)
            var settings = BridgeSettings(streamConfiguration: try StreamConfiguration.validated(
                videoCodec: .raw, resolution: .low, frameRate: 15
            ))
            settings.duration = .milliseconds(Int64(seconds * 1000))
            settings.virtualTimeSettle = { settler.settle() }
            let source = BridgeSource.glasses("unix:\(relayPath)") {
                let link = try LinkConnector.connect(
                    to: .unix(path: relayPath), options: LinkConnectionOptions(scheduler: scheduler)
                )
                let counted = CountingDeviceLink(link)
                settler.setHost(counted)
                return counted
            }
            let events = self.events
            pipeline = BridgePipeline(
                settings: settings, source: source, clock: .virtual(scheduler), backend: backend
            ) { event, time in events.append(event, time) }
        }

        func at(_ seconds: Double, _ action: @escaping @Sendable () -> Void) {
            scheduler.schedule(after: .milliseconds(Int64(seconds * 1000)), action)
        }

        func stop() {
            relay.stop()
            listener.stop()
        }
    }

    @Test func aRunOverAUnixSocketSubmitsEveryFrame() async throws {
        let run = try SocketRun(seconds: 5)
        defer { run.stop() }
        let result = await run.pipeline.run()
        let accounting = result.summary.stats.accounting
        #expect(result.exitCode == .success, "\(String(describing: result.summary.failure))")
        #expect(accounting.isBalanced)
        #expect(accounting.received >= 4 * 15, "phases \(run.events.phases), notices \(run.events.notices)")
        #expect(accounting.rejectedByCode.isEmpty)
        #expect(result.summary.vitals.pulseRate == 70)
        // Over a socket the clocks are related by heartbeat exchange (the first completes after about 2 s):
        // frames before it are not measured, those after are. In virtual time the host does no work in time, so all
        // of it is the link's part: the virtual time that passed while the bytes were on the socket (the next tick).
        let latency = try #require(result.summary.stats.latency)
        #expect(latency.samples > 0 && latency.samples < accounting.submitted, "\(latency), \(accounting)")
        #expect(latency.p50Ms == latency.linkP50Ms && latency.maxMs == latency.linkMaxMs, "\(latency)")
        #expect(latency.maxMs <= 2 * 1000 / 15.0, "\(latency)")
    }

    @Test func garbageBytesOnTheLinkAreSkippedAndTheStreamGoesOn() async throws {
        let run = try SocketRun(seconds: 8)
        defer { run.stop() }
        let relay = run.relay
        run.at(2) { relay.injectGarbage(count: 300) }
        run.at(3) { relay.injectGarbage(count: 5) }
        run.at(4) { relay.injectGarbage(count: 2_000) }
        let result = await run.pipeline.run()
        let accounting = result.summary.stats.accounting
        #expect(result.exitCode == .success, "\(String(describing: result.summary.failure))")
        #expect(accounting.isBalanced)
        #expect(accounting.rejectedByCode["timestampGap"] == nil)
        #expect(run.events.submitted(by: 7.5) > run.events.submitted(by: 4.5),
                "no frames after the garbage: dropped \(accounting.droppedByReason), rejected \(accounting.rejectedByCode), phases \(run.events.phases), notices \(run.events.notices)")
    }
}
