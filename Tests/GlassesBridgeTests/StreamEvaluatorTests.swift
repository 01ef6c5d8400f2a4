import Foundation
import Testing
import WearablesKit
@testable import GlassesBridge
@testable import GlassesCheck

/// The stream checks on made-up observations: the cases the simulator cannot produce on its own (device-side
/// timestamp jitter, a late `streaming`, an oversized frame, DAT's rate adaptation) are shown failing or adapting here.
@Suite("Stream evaluator")
struct StreamEvaluatorTests {
    static let plan: CheckPlan = {
        var plan = CheckPlan()
        plan.warmUpSeconds = 1
        plan.measureSeconds = 4
        return plan
    }()

    /// `seconds` of frames at `fps` arriving on time, device times from `jitterUs(i)`, keyframes every `gop` frames.
    static func observation(fps: Double, seconds: Double = 5.2, width: Int = 360, height: Int = 640, streamingAt: Double = 0.1,
                            gop: Int = 24, jitterUs: (Int) -> Int64 = { _ in 0 }) -> StreamObservation {
        var o = StreamObservation()
        o.phases = [(.connecting, 0), (.streaming, streamingAt)]
        let count = Int(seconds * fps)
        for i in 0..<count {
            let t = streamingAt + Double(i) / fps
            o.frames.append(ObservedFrame(arrival: t, presentationTimeUs: Int64(t * 1_000_000) + jitterUs(i), width: width,
                                          height: height, isKeyframe: i % gop == 0))
        }
        o.summary.durationSeconds = seconds + streamingAt
        return o
    }

    static func result(_ name: String, in results: [CheckResult]) throws -> CheckResult {
        try #require(results.first { $0.name == name })
    }

    static let rawLow24 = StreamConfiguration(videoCodec: .raw, resolution: .low, frameRate: 24)

    @Test("a network stream's B-frames (decoding order) pass when judged in presentation order; a real step back still fails")
    func reorderedStreams() throws {
        // IBBP…: each group of four in decoding order is P, B, B, B of times t+3, t, t+1, t+2 (frame units).
        let decodingOrder: (Int) -> Int = { i in i % 4 == 0 ? i + 3 : i - 1 }
        var reordered = Self.observation(fps: 24)
        let times = reordered.frames.map(\.presentationTimeUs)
        for index in reordered.frames.indices {
            let source = min(decodingOrder(index), times.count - 1)
            reordered.frames[index].presentationTimeUs = times[source]
        }
        let asGlasses = try Self.result("monotonic timestamps", in: StreamEvaluator.evaluate(Self.rawLow24, reordered, plan: Self.plan))
        #expect(asGlasses.verdict == .fail, "glasses send no B-frames: out of order is a fault")
        let asStream = StreamEvaluator.evaluate(Self.rawLow24, reordered, plan: Self.plan, group: "stream.network", networkStream: true)
        #expect(try Self.result("monotonic timestamps", in: asStream).verdict == .pass, "\(asStream.map(\.message))")
        #expect(try Self.result("frame-interval jitter", in: asStream).verdict == .pass, "\(asStream.map(\.message))")
        #expect(asStream.allSatisfy { $0.group == "stream.network" })
        // A time 2 s back (beyond any reordering) is out of order in presentation order too.
        var stepBack = Self.observation(fps: 24)
        stepBack.frames[60].presentationTimeUs -= 2_000_000
        let judged = try Self.result("monotonic timestamps", in: StreamEvaluator.evaluate(Self.rawLow24, stepBack, plan: Self.plan, networkStream: true))
        #expect(judged.verdict == .fail)
    }

    @Test("a network stream's rate is judged over the stream time of the window's frames: a backlog that lands in the window passes, frames never sent fail; from glasses the same bunch fails")
    func networkStreamRateByStreamTime() throws {
        // The first 2 s of frames wait in buffers (a probing demuxer, SRT's latency, a busy host) and land together
        // at 1.2 s, inside the window that opens at 1.1 s: ~121 frames arrive in its 4 s.
        var bunched = Self.observation(fps: 24)
        for index in bunched.frames.indices.dropFirst() where bunched.frames[index].arrival < 2.1 {
            bunched.frames[index].arrival = 1.2 + Double(index) * 0.001
        }
        let asStream = try Self.result("frame rate", in: StreamEvaluator.evaluate(Self.rawLow24, bunched, plan: Self.plan,
                                                                                  group: "stream.network", networkStream: true))
        #expect(asStream.verdict == .pass && asStream.message.contains("of stream time"), "\(asStream.message)")
        let asGlasses = try Self.result("frame rate", in: StreamEvaluator.evaluate(Self.rawLow24, bunched, plan: Self.plan))
        #expect(asGlasses.verdict == .fail, "by arrival the bunch is a faster device: \(asGlasses.message)")
        // A publisher that sends four frames of five (19.2 fps stamped on a 24 fps clock) fails.
        var thinned = Self.observation(fps: 24)
        thinned.frames = thinned.frames.enumerated().filter { $0.offset % 5 != 4 }.map(\.element)
        let short = try Self.result("frame rate", in: StreamEvaluator.evaluate(Self.rawLow24, thinned, plan: Self.plan, networkStream: true))
        #expect(short.verdict == .fail, "\(short.message)")
    }

    @Test("a clean observation passes every check")
    func clean() {
        let results = StreamEvaluator.evaluate(Self.rawLow24, Self.observation(fps: 24), plan: Self.plan)
        #expect(results.allSatisfy { $0.verdict != .fail && $0.verdict != .error }, "\(results.map(\.message))")
    }

    @Test("a lost keyframe fails the keyframe interval, unless the device reported dropping frames for lack of credit")
    func keyframeSpanAcrossCreditDrops() throws {
        let hvc1 = StreamConfiguration(videoCodec: .hvc1, resolution: .low, frameRate: 24)
        var observation = Self.observation(fps: 24)
        // Frames 70…80 never arrive, keyframe 72 among them: 48 → 96 is a 2 s span with a hole in it.
        observation.frames.removeSubrange(70...80)
        let withheld = try Self.result("keyframe interval", in: StreamEvaluator.evaluate(hvc1, observation, plan: Self.plan))
        #expect(withheld.verdict == .fail && withheld.message.contains("longest 2.0 s"), "\(withheld.message)")

        // The same hole while the device's heartbeats counted 11 credit drops: this host's slowness, left out.
        observation.deviceDropSnapshots = [(0, 1), (0, 2), (0, 3), (11, 4), (11, 5)]
        observation.summary.stats.deviceDroppedFrames = 11
        let slowHost = try Self.result("keyframe interval", in: StreamEvaluator.evaluate(hvc1, observation, plan: Self.plan))
        #expect(slowHost.verdict == .pass, "\(slowHost.message)")
        #expect(slowHost.message.contains("longest 1.0 s") && slowHost.message.contains("1 span(s) left out"), "\(slowHost.message)")

        // Drops the device had counted before the hole began do not excuse it.
        observation.deviceDropSnapshots = [(11, 1), (11, 2), (11, 3), (11, 4), (11, 5)]
        let unrelated = try Self.result("keyframe interval", in: StreamEvaluator.evaluate(hvc1, observation, plan: Self.plan))
        #expect(unrelated.verdict == .fail, "\(unrelated.message)")
    }

    @Test("device timestamps 8 ms off their rhythm: only jitter fails, naming the p99 and the bound")
    func jitter() throws {
        let results = StreamEvaluator.evaluate(Self.rawLow24, Self.observation(fps: 24) { $0 % 4 == 0 ? 8_000 : 0 }, plan: Self.plan)
        let failing = results.filter { $0.verdict == .fail }.map(\.name)
        #expect(failing == ["frame-interval jitter"], "\(results.map(\.message))")
        let message = try Self.result("frame-interval jitter", in: results).message
        #expect(message.contains("p99 8.0 ms") && message.contains("expected ≤ 5.0 ms"), "\(message)")
    }

    @Test("streaming reached late fails only that check")
    func lateStreaming() throws {
        let results = StreamEvaluator.evaluate(Self.rawLow24, Self.observation(fps: 24, streamingAt: 9.5), plan: Self.plan)
        #expect(results.filter { $0.verdict == .fail }.map(\.name) == ["reaches streaming"])
        #expect(try Self.result("reaches streaming", in: results).message == "measured 9.5 s, expected ≤ 8.0 s")
    }

    @Test("a frame size that is no DAT resolution fails the size check")
    func wrongSize() throws {
        let results = StreamEvaluator.evaluate(Self.rawLow24, Self.observation(fps: 24, width: 320, height: 240), plan: Self.plan)
        #expect(results.filter { $0.verdict == .fail }.map(\.name) == ["frame size"])
        #expect(try Self.result("frame size", in: results).message.contains("expected 360x640 or a lower DAT resolution"))
    }

    @Test("DAT's adaptation: the rate lowered to 15 fps after the resolution reached low passes, before it fails")
    func rateAdaptation() throws {
        let high = StreamConfiguration(videoCodec: .raw, resolution: .high, frameRate: 24)
        let adapted = StreamEvaluator.evaluate(high, Self.observation(fps: 15, width: 360, height: 640), plan: Self.plan)
        let rate = try Self.result("frame rate", in: adapted)
        #expect(rate.verdict == .pass && rate.adaptation?.contains("lowered the frame rate to 15 fps") == true, "\(rate.message)")
        #expect(try Self.result("frame size", in: adapted).adaptation?.contains("low 360x640") == true)
        let early = StreamEvaluator.evaluate(high, Self.observation(fps: 15, width: 720, height: 1280), plan: Self.plan)
        let refused = try Self.result("frame rate", in: early)
        #expect(refused.verdict == .fail && refused.message.contains("only after the resolution reached low"), "\(refused.message)")
        let tooLow = StreamEvaluator.evaluate(Self.rawLow24, Self.observation(fps: 7), plan: Self.plan)
        #expect(try Self.result("frame rate", in: tooLow).verdict == .fail)
    }

    @Test("no frame at all fails every frame check and says so")
    func noFrames() {
        var empty = StreamObservation()
        empty.summary.durationSeconds = 10
        let results = StreamEvaluator.evaluate(StreamConfiguration(videoCodec: .hvc1, resolution: .low, frameRate: 24), empty, plan: Self.plan)
        let failing = Set(results.filter { $0.verdict == .fail }.map(\.name))
        #expect(failing == ["reaches streaming", "frame size", "frame rate", "monotonic timestamps", "frame-interval jitter", "continuity",
                            "keyframe interval"])
    }

    @Test("an unbalanced account, a rejected frame, garbage on the wire: each fails its own check only")
    func accountingRejectionsAndWire() throws {
        var unbalanced = Self.observation(fps: 24)
        unbalanced.summary.stats.accounting.recordReceived()
        let lost = StreamEvaluator.evaluate(Self.rawLow24, unbalanced, plan: Self.plan)
        #expect(lost.filter { $0.verdict == .fail }.map(\.name) == ["accounting identity"])
        #expect(try Self.result("accounting identity", in: lost).message.contains("received 1, submitted 0 + rejected 0 + dropped 0"))

        var rejected = Self.observation(fps: 24)
        rejected.summary.stats.accounting.recordReceived()
        rejected.summary.stats.accounting.recordRejected(code: "timestampGap")
        let refused = StreamEvaluator.evaluate(Self.rawLow24, rejected, plan: Self.plan)
        #expect(refused.filter { $0.verdict == .fail }.map(\.name) == ["no rejected frames"])
        #expect(try Self.result("no rejected frames", in: refused).message.contains("timestampGap 1"))

        var wire = Self.observation(fps: 24)
        wire.linkEncoded = true
        wire.linkDecoder.checksumFailures = 2
        let damaged = StreamEvaluator.evaluate(Self.rawLow24, wire, plan: Self.plan)
        #expect(damaged.filter { $0.verdict == .fail }.map(\.name) == ["link integrity"])
        #expect(try Self.result("link integrity", in: damaged).message.contains("2 CRC failure(s)"))
    }
}
