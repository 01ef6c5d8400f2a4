import Foundation
import GlassesLink
import Testing
import WearablesKit
@testable import GlassesSimulator

@Suite("The garbage fault on real sockets (#12)")
struct GarbageSocketTests {
    @Test("garbage bytes reach the host's decoder between frames; it skips them and the stream goes on",
          arguments: ["unix", "tcp"])
    func garbageOnSocket(kind: String) throws {
        let deviceScheduler = ManualScheduler()
        let hostScheduler = ManualScheduler()
        let glasses = try SimulatedGlasses(profile: SubjectProfile(seed: 21), scheduler: deviceScheduler)
        let (server, host, link) = try servedOverSocket(
            glasses, kind: kind, label: "sim-g", deviceScheduler: deviceScheduler, hostScheduler: hostScheduler)
        defer { server.stop() }
        _ = try host.openStream(device: glasses.info.identifier, config(.raw, .low, 15)) { session in
            _ = waitFor("session") { session.state == .started }
        }
        #expect(waitFor("stream request") { glasses.isStreaming })
        func frames(_ ticks: Int) {
            for _ in 0..<ticks {
                let n = host.frames.values.count
                deviceScheduler.advance(by: .milliseconds(67))
                _ = waitFor("frame") { host.frames.values.count > n }
            }
        }
        frames(5)
        let decoder = { (link as? any LinkDiagnosticsReporting)?.diagnostics.decoder }
        #expect(decoder()?.garbageBytesSkipped == 0)
        let before = host.frames.values.count
        glasses.inject(.garbageBytes(count: 300))
        frames(2)
        glasses.inject(.garbageBytes(count: 100))
        frames(5)
        #expect(waitFor("garbage counted") { decoder()?.garbageBytesSkipped == 400 }, "\(String(describing: decoder()))")
        #expect((decoder()?.resynchronisations ?? 0) >= 2)
        #expect(decoder()?.checksumFailures == 0)  // between frames: no frame was damaged
        #expect(host.frames.values.count >= before + 6)
        #expect(host.errors.values.isEmpty)
        #expect(glasses.statistics.failedEvents == 0)
        #expect(glasses.statistics.garbageBytesWritten == 400)
    }

    @Test("a garbage fault that cannot be injected is an error, not a log line")
    func garbageWithoutWriter() throws {
        let rig = try Rig()
        rig.start(config())
        #expect(throws: SimulatorError.self) { try rig.glasses.tryInject(.garbageBytes(count: 8)) }
        do {
            try rig.glasses.tryInject(.garbageBytes(count: 8))
        } catch {
            #expect(error.code == .faultUnavailable)
            // In a user's terms: what the fault needs and which command gives it, no type names.
            #expect(error.message.contains("glasses-sim --listen") && !error.message.contains("SimulatorServer"), "\(error.message)")
        }
        let failures = Collected<SimulatorError>()
        rig.glasses.setFailureHandler { failures.append($0) }
        rig.glasses.inject(.garbageBytes(count: 8))
        #expect(failures.values.map(\.code) == [.faultUnavailable])
        let scenario = Scenario(events: [ScenarioEvent(at: 0.5, action: .fault(.garbageBytes(count: 4)))])
        #expect(throws: SimulatorError.self) { try rig.glasses.start(scenario) }
        rig.glasses.run(scenario)
        rig.run(1)
        #expect(failures.values.count == 2)
        #expect(rig.glasses.statistics.failedEvents == 2)
    }
}
