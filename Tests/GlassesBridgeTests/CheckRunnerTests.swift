import Foundation
import GlassesLink
import GlassesSimulator
import Synchronization
import Testing
import WearablesKit
@testable import GlassesBridge
@testable import GlassesCheck

/// `glasses-bridge check` in process, virtual time: a healthy device passes every check, and each fault or wrong
/// behaviour makes exactly the checks it should fail, with a message naming the measured value and the bound.
@Suite("Check runner (in process)")
struct CheckRunnerTests {
    static let rawLow = StreamConfiguration(videoCodec: .raw, resolution: .low, frameRate: 24)
    static let hvc1Low = StreamConfiguration(videoCodec: .hvc1, resolution: .low, frameRate: 24)

    @Test("a healthy simulator passes every group of a short plan, nothing skipped")
    func healthyPlanPasses() async throws {
        let rig = try CheckRig()
        let begun = Mutex<[String]>([])
        let report = await rig.run(CheckRig.plan(CheckGroup.allCases, streams: [Self.hvc1Low, Self.rawLow]), emit: { event in
            if case .begin(let what) = event { begun.withLock { $0.append(what) } }
        })
        #expect(report.passed, "\(report.listing)")
        // Each group under its own heading, in the order it runs (the photo on the link checks' connection).
        #expect(begun.withLock { $0 } == ["link", "photo", "stream hvc1.low.24", "stream raw.low.24", "lifecycle", "vitals"])
        #expect(report.count(.skipped) == 0, "\(report.listing)")
        #expect(report.exitCode == 0)
        let names = Set(report.results.map(\.fullName))
        for name in ["link: hello", "link: identity and capabilities", "link: protocol version", "link: heartbeat round trip",
                     "photo: capture mid-stream", "photo: photo decodes", "photo: video resumes",
                     "stream.hvc1.low.24: frame rate", "stream.hvc1.low.24: keyframe interval", "stream.hvc1.low.24: latency",
                     "stream.raw.low.24: frame-interval jitter", "stream.raw.low.24: accounting identity",
                     "lifecycle: pause and resume", "lifecycle: link loss and reconnect", "vitals: stable pulse", "vitals: stable breathing"] {
            #expect(names.contains(name), "missing \(name)")
        }
        #expect(report.result("photo: photo decodes")?.measured == "a 720×1280 JPEG")
    }

    @Test("wrong frame rate: only the frame rate fails, naming 20 fps against 24 ± 5 %")
    func wrongFrameRate() async throws {
        let rig = try CheckRig()
        rig.glasses.inject(.frameRate(fps: 20))
        let report = await rig.run(CheckRig.plan([.streams]))
        #expect(report.failing == ["stream.raw.low.24: frame rate"], "\(report.listing)")
        let message = try #require(report.result("stream.raw.low.24: frame rate")?.message)
        #expect(message.contains("20.00 fps") && message.contains("expected 24 fps ± 5.0 %"), "\(message)")
        #expect(report.exitCode == 1)
    }

    @Test("zombie stream: frame rate and continuity fail, nothing else")
    func zombieStream() async throws {
        let rig = try CheckRig()
        rig.at(2) { rig.glasses.inject(.zombieStream(true)) }
        let report = await rig.run(CheckRig.plan([.streams]))
        #expect(report.failing == ["stream.raw.low.24: frame rate", "stream.raw.low.24: continuity"], "\(report.listing)")
        let continuity = try #require(report.result("stream.raw.low.24: continuity")?.message)
        #expect(continuity.contains("longest gap") && continuity.contains("expected gap ≤ 0.5 s, ≤ 0 restarts"), "\(continuity)")
    }

    @Test("dropped keyframe: keyframe interval and decoding fail, nothing else")
    func droppedKeyframe() async throws {
        let rig = try CheckRig()
        rig.at(1.5) { rig.glasses.inject(.dropKeyframe) }
        let report = await rig.run(CheckRig.plan([.streams], streams: [Self.hvc1Low]))
        #expect(report.failing == ["stream.hvc1.low.24: keyframe interval", "stream.hvc1.low.24: decoded frames free of errors"],
                "\(report.listing)")
        let keyframes = try #require(report.result("stream.hvc1.low.24: keyframe interval")?.message)
        #expect(keyframes.contains("longest 2.0 s between keyframes") && keyframes.contains("expected ≤ 1.5 s"), "\(keyframes)")
    }

    @Test("corrupt samples: only decoding fails")
    func corruptSamples() async throws {
        let rig = try CheckRig()
        rig.at(1.5) { rig.glasses.inject(.corruptSamples(count: 3)) }
        let report = await rig.run(CheckRig.plan([.streams], streams: [Self.hvc1Low]))
        #expect(report.failing.contains("stream.hvc1.low.24: decoded frames free of errors"), "\(report.listing)")
        #expect(report.failing.isSubset(of: ["stream.hvc1.low.24: decoded frames free of errors", "stream.hvc1.low.24: keyframe interval"]),
                "\(report.listing)")
    }

    @Test("added latency: only latency fails, naming p50 against 150 ms")
    func addedLatency() async throws {
        let rig = try CheckRig()
        rig.glasses.inject(.latency(latencyMs: 400, jitterMs: 0))
        let report = await rig.run(CheckRig.plan([.streams]))
        #expect(report.failing == ["stream.raw.low.24: latency"], "\(report.listing)")
        let message = try #require(report.result("stream.raw.low.24: latency")?.message)
        #expect(message.contains("p50 400") && message.contains("expected p50 ≤ 150.0 ms"), "\(message)")
    }

    @Test("a photo that never arrives: only the capture fails; decode and resume are skipped")
    func photoNeverArrives() async throws {
        let rig = try CheckRig()
        rig.glasses.inject(.dropPhoto)
        let report = await rig.run(CheckRig.plan([.link, .photo]))
        #expect(report.failing == ["photo: capture mid-stream"], "\(report.listing)")
        let message = try #require(report.result("photo: capture mid-stream")?.message)
        #expect(message.contains("no photo arrived") && message.contains("expected a photo within 5.0 s"), "\(message)")
        #expect(report.result("photo: photo decodes")?.verdict == .skipped)
    }

    @Test("a photo that arrives damaged: only the photo decoding fails, naming the bytes that do not decode")
    func photoDoesNotDecode() async throws {
        let rig = try CheckRig()
        rig.glasses.inject(.corruptPhoto)
        let report = await rig.run(CheckRig.plan([.photo]))
        #expect(report.failing == ["photo: photo decodes"], "\(report.listing)")
        let result = try #require(report.result("photo: photo decodes"))
        #expect(result.message.contains("the photo does not decode") && result.measured?.contains("bytes that do not decode") == true,
                "\(result.message)")
        #expect(report.result("photo: capture mid-stream")?.verdict == .pass && report.result("photo: video resumes")?.verdict == .pass,
                "\(report.listing)")
    }

    @Test("video that does not come back after the photo: only the resume fails, naming the bound")
    func videoStallsAfterPhoto() async throws {
        let rig = try CheckRig()
        rig.glasses.inject(.stallAfterPhoto)
        let report = await rig.run(CheckRig.plan([.photo]))
        #expect(report.failing == ["photo: video resumes"], "\(report.listing)")
        let message = try #require(report.result("photo: video resumes")?.message)
        #expect(message.contains("no frame after the photo") && message.contains("expected a frame within 3.0 s"), "\(message)")
    }

    @Test("glasses on another link protocol: only the protocol version fails, naming both versions; nothing else runs, exit 1")
    func otherProtocolVersion() async throws {
        let scheduler = ManualScheduler()
        var options = SimulatedGlasses.Options()
        options.protocolVersion = linkProtocolVersion + 1
        let glasses = try SimulatedGlasses(profile: SubjectProfile(seed: 7), scheduler: scheduler, options: options)
        let runner = CheckRunner(plan: CheckRig.plan([.link, .streams, .photo]),
                                 target: CheckTarget(source: .simulator(glasses), clock: .virtual(scheduler)),
                                 backend: { RecordingBackend() })
        let report = await runner.run()
        #expect(report.failing == ["link: protocol version"], "\(report.listing)")
        #expect(report.results.count == 1, "\(report.listing)")
        let message = try #require(report.result("link: protocol version")?.message)
        #expect(message.contains("the device speaks link protocol \(linkProtocolVersion + 1)")
                    && message.contains("expected link protocol \(linkProtocolVersion)"), "\(message)")
        #expect(report.unreachable == nil && report.exitCode == 1)
    }

    @Test("an operator at the terminal: each lifecycle step is asked for in order and, done, judged like a driven one")
    func operatorDoesTheManualSteps() async throws {
        let rig = try CheckRig()
        let glasses = rig.glasses
        let prompts = Mutex<[String]>([])
        // The operator does what the prompt says, on the glasses, before answering (Enter).
        let control = CheckDeviceControl(ask: { prompt in
            prompts.withLock { $0.append(prompt) }
            if prompt.hasPrefix("Tap") { glasses.tap() } else if prompt.hasPrefix("Interrupt") { glasses.inject(.linkLoss) }
            return true
        })
        let report = await rig.run(CheckRig.plan([.pauseResume, .linkLoss]), control: control)
        let asked = prompts.withLock { $0 }
        #expect(asked.count == 3 && asked[0].hasPrefix("Tap the glasses once") && asked[1].hasPrefix("Tap the glasses again")
                    && asked[2].hasPrefix("Interrupt the link"), "\(asked)")
        #expect(report.result("lifecycle: pause and resume")?.verdict == .pass, "\(report.listing)")
        #expect(report.result("lifecycle: link loss and reconnect")?.verdict == .pass, "\(report.listing)")
        #expect(report.passed, "\(report.listing)")
    }

    @Test("an operator who declines (types skip): both steps are skipped, named as declined, and the run passes")
    func operatorDeclines() async throws {
        let rig = try CheckRig()
        let prompts = ManagedCount()
        let control = CheckDeviceControl(ask: { _ in _ = prompts.next(); return false })
        let report = await rig.run(CheckRig.plan([.pauseResume, .linkLoss]), control: control)
        #expect(prompts.next() == 3, "the pause and the link loss are each asked for once")
        #expect(report.result("lifecycle: pause and resume")?.message == "the operator declined the pause step", "\(report.listing)")
        #expect(report.result("lifecycle: link loss and reconnect")?.verdict == .skipped, "\(report.listing)")
        #expect(report.passed && report.count(.skipped) == 2, "\(report.listing)")
    }

    @Test("a failed capture is reported as the capture failing")
    func photoCaptureFails() async throws {
        let rig = try CheckRig()
        rig.glasses.simulateCaptureFailure()
        let report = await rig.run(CheckRig.plan([.photo]))
        #expect(report.failing == ["photo: capture mid-stream"], "\(report.listing)")
        #expect(report.result("photo: capture mid-stream")?.message.contains("the capture failed") == true)
    }

    @Test("glasses that never resume after a pause: only pause and resume fails")
    func neverResumes() async throws {
        let rig = try CheckRig()
        let glasses = rig.glasses
        let taps = ManagedCount()
        let control = CheckDeviceControl(tap: { if taps.next() == 1 { glasses.tap() } }, loseLink: { glasses.inject(.linkLoss) })
        let report = await rig.run(CheckRig.plan([.pauseResume]), control: control)
        #expect(report.failing == ["lifecycle: pause and resume"], "\(report.listing)")
        #expect(report.result("lifecycle: pause and resume")?.message.contains("no frame after the resume") == true)
    }

    @Test("glasses that never come back after a link loss: only the reconnect fails")
    func neverReconnects() async throws {
        let rig = try CheckRig()
        let glasses = rig.glasses
        let control = CheckDeviceControl(tap: { glasses.tap() }, loseLink: { glasses.powerOff() })
        let report = await rig.run(CheckRig.plan([.linkLoss]), control: control)
        #expect(report.failing == ["lifecycle: link loss and reconnect"], "\(report.listing)")
        let message = try #require(report.result("lifecycle: link loss and reconnect")?.message)
        #expect(message.contains("no frame after the loss") && message.contains("expected a reconnect and frames within 15.0 s"), "\(message)")
    }

    @Test("a device that cannot be driven and no operator: lifecycle steps are skipped, the run still passes")
    func manualStepsSkipped() async throws {
        let rig = try CheckRig()
        let report = await rig.run(CheckRig.plan([.pauseResume, .linkLoss]), control: CheckDeviceControl())
        #expect(report.count(.skipped) == 2)
        #expect(report.results.allSatisfy { $0.message.contains("manual step") })
        #expect(report.passed && report.exitCode == 0)
    }

    @Test("bandwidth adaptation: a lowered resolution is reported, not failed")
    func bandwidthAdaptation() async throws {
        let rig = try CheckRig()
        rig.glasses.setBandwidthCap(bitsPerSecond: 100_000_000)
        let report = await rig.run(CheckRig.plan([.streams], streams: [StreamConfiguration(videoCodec: .raw, resolution: .high, frameRate: 24)]))
        let size = try #require(report.result("stream.raw.high.24: frame size"))
        #expect(size.verdict == .pass, "\(report.listing)")
        #expect(size.adaptation?.contains("lowered the resolution") == true, "\(size.message)")
        #expect(report.passed, "\(report.listing)")
    }

    @Test("a repeated and a backward timestamp: only monotonic timestamps fails, naming both")
    func timestampsGoBack() async throws {
        let rig = try CheckRig()
        rig.at(1.5) { rig.glasses.inject(.duplicateTimestamp) }
        rig.at(2.5) { rig.glasses.inject(.timestampJump(ms: -300)) }
        let report = await rig.run(CheckRig.plan([.streams]))
        #expect(report.failing == ["stream.raw.low.24: monotonic timestamps"], "\(report.listing)")
        let message = try #require(report.result("stream.raw.low.24: monotonic timestamps")?.message)
        #expect(message.contains("non-increasing timestamp(s)") && message.contains("expected 0"), "\(message)")
    }

    @Test("glasses without a name or firmware version: only identity fails")
    func missingIdentity() async throws {
        let scheduler = ManualScheduler()
        var options = SimulatedGlasses.Options()
        options.firmwareVersion = ""
        let glasses = try SimulatedGlasses(name: "", profile: SubjectProfile(seed: 7), scheduler: scheduler, options: options)
        let runner = CheckRunner(plan: CheckRig.plan([.link]), target: CheckTarget(source: .simulator(glasses), clock: .virtual(scheduler)),
                                 backend: { RecordingBackend() })
        let report = await runner.run()
        #expect(report.failing == ["link: identity and capabilities"], "\(report.listing)")
        #expect(report.result("link: identity and capabilities")?.message.contains("missing: name, firmware version") == true)
    }

    @Test("a pulse far from the reference fails the reference check only; a close one passes")
    func pulseAgainstReference() async throws {
        for (bpm, shouldPass) in [(110.0, false), (71.0, true)] {
            let rig = try CheckRig()
            let reference = Self.reference(bpm: bpm, rr: nil)
            let report = await rig.run(CheckRig.plan([.vitals]), reference: reference)
            let result = try #require(report.result("vitals: pulse against the reference"), "\(report.listing)")
            #expect((result.verdict == .pass) == shouldPass, "\(result.message)")
            #expect(report.failing == (shouldPass ? [] : ["vitals: pulse against the reference"]), "\(report.listing)")
            if !shouldPass {
                #expect(result.message.contains("mean |error| 40.0 bpm") && result.message.contains("expected mean |error| ≤ 5.0 bpm"), "\(result.message)")
            }
            #expect(report.result("vitals: RMSSD against the reference")?.verdict == .skipped)
        }
    }

    @Test("an engine that never settles: stable pulse and stable breathing fail, naming 'never stable' and the bound")
    func vitalsNeverStable() async throws {
        let rig = try CheckRig()
        var plan = CheckRig.plan([.vitals])
        plan.vitalsSeconds = 8
        let report = await rig.run(plan, backend: { var engine = RecordingBackend(); engine.stable = false; return engine })
        #expect(report.failing == ["vitals: stable pulse", "vitals: stable breathing"], "\(report.listing)")
        let message = try #require(report.result("vitals: stable pulse")?.message)
        #expect(message.contains("measured no stable value") && message.contains("expected one within 4.0 s"), "\(message)")
    }

    @Test("an RMSSD far from the reference's RR intervals fails only the RMSSD check; a close one passes")
    func rmssdAgainstReference() async throws {
        // Reference RR intervals alternating 850 and 870 ms: successive differences of 20 ms, RMSSD 20 ms.
        for (rmssd, shouldPass) in [(70.0, false), (24.0, true)] {
            let rig = try CheckRig()
            let start = CheckRig.startDate.addingTimeInterval(-5)
            let samples = (0..<60).map { i in
                ReferenceRecording.Sample(time: start.addingTimeInterval(Double(i)), heartRate: 70, rrIntervalsMs: [850, 870])
            }
            let reference = ReferenceRecording(samples: samples, columnsUsed: "time=timestamp, hr=hr, rr=rr", source: "test")
            let report = await rig.run(CheckRig.plan([.vitals]), reference: reference,
                                       backend: { var engine = RecordingBackend(); engine.rmssd = rmssd; return engine })
            let result = try #require(report.result("vitals: RMSSD against the reference"), "\(report.listing)")
            #expect((result.verdict == .pass) == shouldPass, "\(result.message)")
            #expect(report.failing == (shouldPass ? [] : ["vitals: RMSSD against the reference"]), "\(report.listing)")
            if !shouldPass {
                #expect(result.message.contains("bridge 70.0 ms, reference 20.0 ms") && result.message.contains("expected |error| ≤ 20.0 ms"),
                        "\(result.message)")
            }
        }
    }

    @Test("no stable RMSSD: skipped in a vitals run too short to hold one, failed in one long enough")
    func rmssdMissing() async throws {
        for (seconds, verdict) in [(6.0, CheckVerdict.skipped), (ReferenceComparison.rmssdEarliestSeconds, .fail)] {
            let rig = try CheckRig()
            var plan = CheckRig.plan([.vitals])
            plan.vitalsSeconds = seconds
            let reference = Self.reference(bpm: 70, rr: 850)
            let report = await rig.run(plan, reference: reference)  // the engine reports no RMSSD
            let result = try #require(report.result("vitals: RMSSD against the reference"), "\(report.listing)")
            #expect(result.verdict == verdict, "\(result.message)")
            if verdict == .skipped {
                #expect(result.message.contains("set durations.vitals to 70.0 s or more"), "\(result.message)")
            } else {
                #expect(result.message.contains("the run produced no stable RMSSD"), "\(result.message)")
            }
        }
    }

    @Test("a reference that does not overlap the run is an error that names both spans")
    func referenceWithoutOverlap() async throws {
        let rig = try CheckRig()
        let reference = Self.reference(bpm: 70, rr: nil, start: CheckRig.startDate.addingTimeInterval(-7200))
        let report = await rig.run(CheckRig.plan([.vitals]), reference: reference)
        let result = try #require(report.result("vitals: pulse against the reference"))
        #expect(result.verdict == .error && result.message.contains("do not overlap"), "\(result.message)")
        #expect(report.exitCode == 1)
    }

    @Test("a device that never says hello is unreachable: exit 69, no results")
    func unreachable() async throws {
        let scheduler = ManualScheduler()
        // The device end is kept (so the link stays open) but never answers; kept by this test, not by a global,
        // so that it and its scheduler are freed with the test (LeakSanitizer saw a global's as leaked side tables).
        let pair = InProcessLink.makePair(scheduler: scheduler, liveness: .disabled)
        let host = pair.host
        let source = BridgeSource.glasses("silent") { host }
        let runner = CheckRunner(plan: CheckRig.plan([.link, .streams]), target: CheckTarget(source: source, clock: .virtual(scheduler)),
                                 backend: { RecordingBackend() })
        let report = await runner.run()
        #expect(report.exitCode == 69)
        #expect(report.unreachable?.contains("did not introduce itself") == true)
        withExtendedLifetime(pair.device) {}
    }

    static func reference(bpm: Double, rr: Double?, start: Date = CheckRig.startDate.addingTimeInterval(-5)) -> ReferenceRecording {
        let samples = (0..<60).map { i in
            ReferenceRecording.Sample(time: start.addingTimeInterval(Double(i)), heartRate: bpm, rrIntervalsMs: rr.map { [$0] } ?? [])
        }
        return ReferenceRecording(samples: samples, columnsUsed: "time=timestamp, hr=hr", source: "test")
    }
}

/// Counts calls across threads.
final class ManagedCount: Sendable {
    private let value = Mutex(0)
    /// The call's number, from 1.
    func next() -> Int { value.withLock { $0 += 1; return $0 } }
}
