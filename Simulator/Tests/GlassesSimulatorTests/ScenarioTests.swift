import Foundation
import GlassesLink
import GlassesVideo
import Synchronization
import Testing
import WearablesKit
@testable import GlassesSimulator

@Suite("Scenarios and faults")
struct ScenarioTests {
    @Test("the JSON format parses every documented action")
    func parseAll() throws {
        let json = """
        {"name": "all", "seed": 5, "duration": 60, "subject": {"pulseRate": 80, "sensorNoise": 1},
         "events": [
          {"at": 1, "do": "tap"}, {"at": 0.5, "do": "doff"}, {"at": 2, "do": "don"}, {"at": 3, "do": "fold"},
          {"at": 4, "do": "unfold"}, {"at": 5, "do": "powerOff"}, {"at": 6, "do": "powerOn"},
          {"at": 7, "do": "battery", "level": 20}, {"at": 7, "do": "charging", "state": "charging"},
          {"at": 8, "do": "thermal", "level": "severe"}, {"at": 9, "do": "permission", "status": "denied"},
          {"at": 9, "do": "permissionRequestResult", "permission": "camera", "status": "granted"},
          {"at": 10, "do": "bandwidthCap", "bitsPerSecond": 1000000}, {"at": 10, "do": "bandwidthCap", "bitsPerSecond": null},
          {"at": 11, "do": "captureFailure"}, {"at": 12, "do": "pulseRate", "bpm": 100},
          {"at": 12, "do": "breathingRate", "brpm": 20}, {"at": 13, "do": "linkLoss"}, {"at": 14, "do": "zombie", "on": true},
          {"at": 15, "do": "dropFrames", "count": 3}, {"at": 16, "do": "dropKeyframe"}, {"at": 17, "do": "corrupt", "count": 2},
          {"at": 18, "do": "truncate"}, {"at": 19, "do": "latency", "ms": 100, "jitterMs": 20},
          {"at": 20, "do": "duplicateTimestamp"}, {"at": 21, "do": "timestampJump", "ms": -500},
          {"at": 22, "do": "frameGap", "ms": 2000}, {"at": 23, "do": "deviceFault", "fault": "peakPowerLimit", "message": "x"},
          {"at": 24, "do": "burst", "count": 20}, {"at": 25, "do": "garbage", "count": 64}
         ]}
        """
        let s = try Scenario(json: Data(json.utf8))
        #expect(s.subject.seed == 5 && s.subject.pulseRate == 80 && s.subject.sensorNoise == 1)
        #expect(s.duration == 60)
        #expect(s.events.count == 30)
        #expect(s.events.first?.action == .doff)   // sorted by time
        #expect(s.events.contains { $0.action == .fault(.timestampJump(ms: -500)) })
        #expect(s.events.contains { $0.action == .thermal(.severe) })
    }

    @Test("bad scenarios fail with a typed error naming the problem", arguments: [
        ("[]", "top level"), ("{\"events\": [{\"at\": 1, \"do\": \"explode\"}]}", "unknown action"),
        ("{\"events\": [{\"do\": \"tap\"}]}", "'at'"), ("{\"events\": [{\"at\": 1, \"do\": \"thermal\", \"level\": \"warm\"}]}", "level"),
        ("{\"subject\": {\"pulseRate\": 999}}", "pulseRate"), ("{\"bogus\": 1}", "unknown top-level"), ("{", "JSON"),
        ("{\"subject\": {\"pulserate\": 200}}", "unknown field 'pulserate' in 'subject'; known: pulseRate"),
        ("{\"imuClockOffsetMs\": 10001}", "'imuClockOffsetMs' must be milliseconds in [-10000, 10000], found 10001"),
        ("{\"imuClockOffsetMs\": \"fast\"}", "'imuClockOffsetMs' must be milliseconds"),
    ])
    func badScenario(json: String, mentions: String) {
        do {
            _ = try Scenario(json: Data(json.utf8))
            Issue.record("accepted \(json)")
        } catch {
            #expect(error.code == .invalidScenario || error.code == .invalidProfile)
            #expect(error.message.contains(mentions), "\(error.message)")
        }
    }

    @Test("imuClockOffsetMs shifts the IMU's clock of glasses made with the scenario's options; absent, it is 0")
    func imuClockOffset() throws {
        let shifted = try Scenario(json: Data(#"{"imuClockOffsetMs": -125.5}"#.utf8))
        #expect(shifted.imuClockOffset == -0.1255)
        #expect(shifted.glassesOptions.motionClockOffset == .microseconds(-125_500))
        #expect(try Scenario(json: Data("{}".utf8)).glassesOptions.motionClockOffset == .zero)
    }

    @Test("a scenario runs in virtual time and produces the documented messages in order")
    func scenarioOrder() throws {
        let rig = try Rig()
        let scenario = try Scenario(json: Data("""
        {"events": [{"at": 1, "do": "tap"}, {"at": 2, "do": "tap"}, {"at": 3, "do": "battery", "level": 4},
                    {"at": 4, "do": "thermal", "level": "critical"}]}
        """.utf8))
        rig.start(config())
        rig.glasses.run(scenario)
        rig.run(5)
        let seq = rig.probe.controlMessages.filter {
            switch $0 {
            case .session, .stream, .fault: true
            case .deviceState(let s): s.batteryLevel == 4 || s.thermalLevel == .critical
            default: false
            }
        }
        var expected: [DeviceMessage] = [.session(.started), .stream(.starting(config())), .stream(.streaming(config())),
                                          .stream(.paused), .session(.paused), .session(.resumed), .stream(.streaming(config()))]
        expected.append(.deviceState(DeviceState(batteryLevel: 4)))
        expected.append(.deviceState(DeviceState(batteryLevel: 4, thermalLevel: .critical)))
        #expect(Array(seq.prefix(expected.count)) == expected)
        #expect(seq.dropFirst(expected.count).first == .fault(.thermalHot, message: "the glasses are too hot (critical); the camera stopped"))
        #expect(seq.suffix(2) == [.stream(.stopped), .session(.ended(reason: "thermal critical"))])
    }

    @Test("drop, zombie and gap faults withhold samples; the stream still reports streaming")
    func withholding() throws {
        let rig = try Rig()
        rig.start(config())
        rig.run(1)
        let before = rig.probe.samples.count
        rig.glasses.inject(.dropFrames(count: 5))
        rig.run(1)
        #expect(rig.probe.samples.count - before == 10)   // 15 ticks, 5 dropped
        rig.glasses.inject(.zombieStream(true))
        let zombieStart = rig.probe.samples.count
        rig.run(2)
        #expect(rig.probe.samples.count == zombieStart)
        #expect(rig.glasses.isStreaming)
        #expect(rig.probe.streamEvents.last == .streaming(config()))
        rig.glasses.inject(.zombieStream(false))
        rig.run(1)
        #expect(rig.probe.samples.count > zombieStart)
        let gapStart = rig.probe.samples.count
        rig.glasses.inject(.frameGap(durationMs: 1000))
        rig.run(0.99)
        #expect(rig.probe.samples.count == gapStart)
        rig.run(0.5)
        let after = rig.probe.samples
        #expect(after.count > gapStart)
        #expect(after[gapStart].presentationTimeUs - after[gapStart - 1].presentationTimeUs >= 1_000_000)
    }

    @Test("timestamp glitches: duplicate, jump back, jump ahead")
    func timestamps() throws {
        let rig = try Rig()
        rig.start(config())
        rig.run(0.5)
        let d = rig.probe.samples.count
        rig.glasses.inject(.duplicateTimestamp)
        rig.run(0.1)
        var s = rig.probe.samples
        #expect(s[d].presentationTimeUs == s[d - 1].presentationTimeUs)
        #expect(s[d + 1].presentationTimeUs > s[d].presentationTimeUs)
        let n = s.count
        rig.glasses.inject(.timestampJump(ms: -400))
        rig.run(0.1)
        s = rig.probe.samples
        #expect(s[n].presentationTimeUs < s[n - 1].presentationTimeUs)
        let m = s.count
        rig.glasses.inject(.timestampJump(ms: 2000))
        rig.run(0.1)
        s = rig.probe.samples
        #expect(s[m].presentationTimeUs - s[m - 1].presentationTimeUs > 1_500_000)
    }

    @Test("corrupt and truncated samples; a dropped keyframe on HEVC")
    func damage() throws {
        let rig = try Rig()
        rig.start(config(.hvc1, .low, 15))
        rig.run(1.2)
        let clean = rig.probe.samples.count
        rig.glasses.inject(.truncateSamples(count: 2))
        rig.glasses.inject(.corruptSamples(count: 1))
        rig.run(0.3)
        #expect(rig.glasses.statistics.samplesDamaged == 3)
        let k0 = rig.glasses.statistics.keyframesSent
        rig.glasses.inject(.dropKeyframe)
        rig.run(1.2)   // passes one scheduled keyframe
        #expect(rig.glasses.statistics.keyframesSent == k0)
        #expect(rig.glasses.statistics.samplesWithheld == 1)
        #expect(rig.probe.samples.count > clean)
    }

    @Test("WearablesKit reports corrupt samples as videoStreamingError and device faults as stream errors")
    func corruptThroughWearables() throws {
        let scheduler = ManualScheduler()
        let host = try WearablesHost(scheduler: scheduler)
        let kit = SimulatorKit(scheduler: scheduler, liveness: .disabled)
        let glasses = try kit.pairGlasses(with: host.wearables, profile: SubjectProfile(seed: 3))
        scheduler.advance(by: .milliseconds(10))
        _ = try host.openStream(device: glasses.info.identifier, config(.raw, .low, 15)) { _ in
            scheduler.advance(by: .milliseconds(10))
        }
        scheduler.advance(by: .milliseconds(500))
        glasses.inject(.truncateSamples(count: 1))
        scheduler.advance(by: .milliseconds(200))
        #expect(host.errors.values.contains(.videoStreamingError))
        glasses.inject(.deviceFault(.peakPowerLimit, message: "simulated"))
        scheduler.advance(by: .milliseconds(100))
        #expect(host.errors.values.contains(.peakPowerLimit))
    }

    @Test("link loss: WearablesKit sees deviceNotConnected and waits for the glasses")
    func linkLoss() throws {
        let scheduler = ManualScheduler()
        let host = try WearablesHost(scheduler: scheduler)
        let kit = SimulatorKit(scheduler: scheduler, liveness: .disabled)
        let glasses = try kit.pairGlasses(with: host.wearables, profile: SubjectProfile(seed: 4))
        scheduler.advance(by: .milliseconds(10))
        _ = try host.openStream(device: glasses.info.identifier, config(.raw, .low, 15)) { _ in
            scheduler.advance(by: .milliseconds(10))
        }
        scheduler.advance(by: .milliseconds(500))
        glasses.inject(.linkLoss)
        scheduler.advance(by: .milliseconds(100))
        #expect(host.errors.values.contains(.deviceNotConnected(glasses.info.identifier)))
        #expect(host.states.values.last == .waitingForDevice)
        #expect(!glasses.isStreaming)
    }

    @Test("latency holds samples back but keeps their order; a burst overruns credit and drops are counted")
    func latencyAndCredit() throws {
        let rig = try Rig()
        rig.start(config())
        rig.run(0.5)
        rig.glasses.inject(.latency(latencyMs: 300, jitterMs: 100))
        let before = rig.probe.samples.count
        rig.run(0.25)
        #expect(rig.probe.samples.count == before)
        rig.run(1)
        let pts = rig.probe.samples.map(\.presentationTimeUs)
        #expect(pts == pts.sorted())
        #expect(rig.probe.samples.count > before)
        rig.glasses.inject(.latency(latencyMs: 0, jitterMs: 0))
        let rendered = rig.glasses.statistics.framesRendered
        rig.glasses.inject(.burst(count: 30))
        rig.run(0.2)
        #expect(rig.glasses.statistics.droppedForCredit > 0)
        // The burst's 30 samples are one exposure, rendered once: 0.2 s at 30 fps is 6 or 7 renders, not 36.
        #expect(rig.glasses.statistics.framesRendered - rendered <= 7, "\(rig.glasses.statistics)")
    }
}

@Suite("HEVC when credit runs out")
struct CreditLossTests {
    @Test("a host that runs out of credit mid-GOP gets a keyframe first when credit returns; all it got decodes")
    func keyframeAfterCreditDrops() throws {
        let scheduler = ManualScheduler()
        let glasses = try SimulatedGlasses(profile: SubjectProfile(seed: 7), scheduler: scheduler)
        let link = InProcessLink(scheduler: scheduler, initialCredit: 4, liveness: .disabled)
        let room = Mutex(4)
        let host = try #require(link.host as? any VideoCreditGating)
        host.gateVideoCredit { room.withLock { $0 } }
        glasses.attach(link.device)
        let probe = HostProbe(link: link.host)
        probe.send(.hello(protocolVersion: linkProtocolVersion, pairingToken: nil))
        probe.send(.startSession)
        probe.send(.startStream(config(.hvc1, .low, 15)))
        // 0.4 s into a one-second GOP the consumer stops taking samples; the glasses spend their credit, then drop.
        scheduler.advance(by: .milliseconds(400))
        room.withLock { $0 = 0 }
        scheduler.advance(by: .milliseconds(800))
        let dropped = glasses.statistics.droppedForCredit
        #expect(dropped >= 5)
        let receivedBeforeResume = probe.samples.count
        room.withLock { $0 = 4 }
        host.videoRoomChanged()
        scheduler.advance(by: .milliseconds(300))
        let samples = probe.samples
        try #require(samples.count > receivedBeforeResume)
        // Without the rule the next sample is a P frame whose references the host never received.
        #expect(samples[receivedBeforeResume].isKeyframe)
        #expect(glasses.statistics.droppedForCredit <= dropped + 1)

        // What arrived decodes with no damage.
        let decoder = try VideoFrameDecoder()
        var configuration: HEVCCodecConfiguration?
        var decoded = 0
        for message in probe.messages {
            switch message {
            case .codecConfiguration(let c): configuration = c
            case .videoSample(let sample):
                let c = try #require(configuration)
                let frame = VideoFrame(
                    presentationTimeUs: sample.presentationTimeUs,
                    content: .hevc(HEVCSample(data: sample.payload, isKeyframe: sample.isKeyframe, codecConfiguration: c)))
                decoded += try decoder.decode(frame).count
            default: break
            }
        }
        decoded += try decoder.flush().count
        #expect(decoder.statistics.corrupt == 0)
        #expect(decoder.statistics.skippedUntilKeyframe == 0)
        #expect(decoded == samples.count)
    }
}
