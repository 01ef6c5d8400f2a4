import Foundation
import GlassesMedia
import GlassesVideo
import Testing
@testable import GlassesBridge

/// Frames from the real HEVC encoder (libx265), on the glasses' clock.
private struct HEVCFrames {
    let encoder: HEVCEncoder
    let frames: [VideoFrame]

    /// `count` frames spaced `interval` apart from `startUs`, a keyframe every `keyframeInterval`, each with a timing
    /// whose capture time is its index in µs (so a picture's timing names its frame).
    init(count: Int, startUs: Int64, interval: Int64 = 33_333, keyframeInterval: Int) throws {
        let width = FrameSubmissionCoreTests.width, height = FrameSubmissionCoreTests.height
        encoder = try HEVCEncoder(width: width, height: height, frameRate: 30, bitrate: 400_000, keyframeInterval: keyframeInterval)
        var samples: [EncodedHEVCSample] = []
        for index in 0 ..< count {
            let image = try #require(gradientPicture(width: width, height: height, index: index))
            samples += try encoder.encode(image, presentationTimeUs: startUs + Int64(index) * interval)
        }
        samples += try encoder.flush()
        let configuration = encoder.codecConfiguration
        frames = samples.map { sample in
            let index = (sample.presentationTimeUs - startUs) / interval
            return VideoFrame(
                presentationTimeUs: sample.presentationTimeUs,
                content: .hevc(HEVCSample(data: sample.data, isKeyframe: sample.isKeyframe, codecConfiguration: configuration)),
                timing: FrameSubmissionCoreTests.timing(index)
            )
        }
    }
}

/// The core that both ``GlassesFrameInput`` and the pipeline's worker run, driven with real frames: raw images and
/// samples from the real HEVC encoder through the real libavcodec decoder.
@Suite("FrameSubmissionCore: decoding, time mapping and drop classification shared by the public input and the worker")
struct FrameSubmissionCoreTests {
    static let width = 192, height = 128
    /// The glasses' clock: far from zero, as a device uptime is.
    static let deviceStartUs: Int64 = 7_200_000_000

    static func timing(_ index: Int64) -> FrameTiming {
        FrameTiming(captureUs: 1_000 + index, sentUs: 2_000 + index, receivedUs: 3_000 + index)
    }

    private static func rawFrame(at us: Int64, index: Int = 0, timing: FrameTiming? = nil) throws -> VideoFrame {
        let image = try #require(gradientPicture(width: width, height: height, index: index))
        return VideoFrame(presentationTimeUs: us, content: .raw(image), timing: timing)
    }

    private static func pictures(_ outcome: FrameSubmissionCore.FrameOutcome) -> [FrameSubmissionCore.Picture]? {
        if case .pictures(let pictures) = outcome { return pictures }
        return nil
    }

    @Test("a raw frame as sent is wrapped without the decoder, keeps its timing and maps onto the timeline")
    func rawFrameMapsAndYieldsAPicture() throws {
        var core = FrameSubmissionCore(outputFormat: .bgra32, rawFrames: .asSent, frameRate: 30)
        let timing = Self.timing(7)
        let outcome = try core.frameArrived(try Self.rawFrame(at: Self.deviceStartUs, timing: timing))
        let pictures = try #require(Self.pictures(outcome))
        #expect(pictures.count == 1)
        let picture = try #require(pictures.first)
        #expect(picture.pixelBuffer.format == .nv12VideoRange, "as the glasses sent it, whatever the output format")
        #expect(picture.pixelBuffer.width == Self.width && picture.pixelBuffer.height == Self.height)
        #expect(picture.presentationTimeUs == Self.deviceStartUs)
        #expect(picture.timing == timing)
        #expect(picture.isAccounted)
        #expect(core.picturesInDecoder == 0)
        #expect(core.decoderStatistics == VideoDecoderStatistics(), "the decoder never opened")
        #expect(core.timestamp(for: picture, receivedAtUs: nil) == .submit(timestampUs: 0, restartInputFirst: false))
        #expect(core.lastTimestampUs == 0)
    }

    @Test("a raw frame in the output format goes through the decoder (converted for BGRA) and ends at once")
    func rawFrameInOutputFormat() throws {
        let origin: Int64 = 50_000_000
        var core = FrameSubmissionCore(outputFormat: .bgra32, rawFrames: .inOutputFormat, frameRate: 30, originHostUs: origin)
        let timing = Self.timing(3)
        let outcome = try core.frameArrived(try Self.rawFrame(at: Self.deviceStartUs, timing: timing))
        let picture = try #require(Self.pictures(outcome)?.first)
        #expect(picture.pixelBuffer.format == .bgra32)
        #expect(picture.timing == timing, "the frame's timing, taken back from the bookkeeping")
        #expect(core.picturesInDecoder == 0 && core.heldTimings == 0)
        #expect(core.decoderStatistics.rawImages == 1)
        // The timeline is the run's clock: the first frame arrived 5 s after the run's start.
        #expect(core.timestamp(for: picture, receivedAtUs: origin + 5_000_000) == .submit(timestampUs: 5_000_000, restartInputFirst: false))
    }

    @Test("HEVC before the first keyframe is dropped as awaiting a keyframe; a damaged sample as decodeFailed")
    func hevcBeforeTheFirstKeyframe() throws {
        let stream = try HEVCFrames(count: 4, startUs: Self.deviceStartUs, keyframeInterval: 30)
        #expect(stream.frames.first.map { if case .hevc(let sample) = $0.content { sample.isKeyframe } else { false } } == true)
        var core = FrameSubmissionCore(outputFormat: .nv12VideoRange, rawFrames: .asSent, frameRate: 30)
        // Joining mid-stream: the P-frames before any keyframe.
        for frame in stream.frames[1...2] {
            let outcome = try core.frameArrived(frame)
            guard case .dropped(.awaitingKeyframe) = outcome else {
                Issue.record("expected awaitingKeyframe, got \(outcome)")
                continue
            }
        }
        #expect(core.picturesInDecoder == 0, "a dropped frame is no longer inside the decoder")
        #expect(core.decoderStatistics.skippedUntilKeyframe == 2)
        // A sample whose NAL framing is broken.
        let configuration = stream.encoder.codecConfiguration
        let damaged = VideoFrame(
            presentationTimeUs: Self.deviceStartUs + 200_000,
            content: .hevc(HEVCSample(data: Data([0, 0, 0, 9, 0x40]), isKeyframe: false, codecConfiguration: configuration))
        )
        let outcome = try core.frameArrived(damaged)
        guard case .dropped(.decodeFailed) = outcome else {
            Issue.record("expected decodeFailed, got \(outcome)")
            return
        }
        #expect(core.picturesInDecoder == 0)
        #expect(core.flush().lost == 0)
    }

    @Test("a duplicate device time is a drop (duplicateTimestamp), a slightly earlier one backwardTimestamp")
    func duplicateTimestampIsADrop() throws {
        var core = FrameSubmissionCore(outputFormat: .nv12VideoRange, rawFrames: .asSent, frameRate: 30)
        func decide(_ us: Int64) throws -> TimestampMapper.Decision {
            let picture = try #require(Self.pictures(try core.frameArrived(try Self.rawFrame(at: Self.deviceStartUs + us)))?.first)
            return core.timestamp(for: picture, receivedAtUs: nil)
        }
        #expect(try decide(0) == .submit(timestampUs: 0, restartInputFirst: false))
        #expect(try decide(40_000) == .submit(timestampUs: 40_000, restartInputFirst: false))
        #expect(try decide(40_000) == .drop(.duplicateTimestamp))
        #expect(try decide(10_000) == .drop(.backwardTimestamp))
        #expect(try decide(80_000) == .submit(timestampUs: 80_000, restartInputFirst: false))
        #expect(core.lastTimestampUs == 80_000)
    }

    @Test("after a discontinuity a new device clock continues the timeline by one frame interval")
    func discontinuityContinuesTheTimeline() throws {
        var core = FrameSubmissionCore(outputFormat: .nv12VideoRange, rawFrames: .asSent, frameRate: 30)
        func decide(_ us: Int64) throws -> TimestampMapper.Decision {
            let picture = try #require(Self.pictures(try core.frameArrived(try Self.rawFrame(at: us)))?.first)
            return core.timestamp(for: picture, receivedAtUs: nil)
        }
        #expect(try decide(Self.deviceStartUs) == .submit(timestampUs: 0, restartInputFirst: false))
        #expect(try decide(Self.deviceStartUs + 33_333) == .submit(timestampUs: 33_333, restartInputFirst: false))
        // A new session whose clock happens to lie 10 s ahead: without the mark it would read as a 10 s pause.
        core.markDiscontinuity()
        #expect(try decide(Self.deviceStartUs + 10_000_000) == .submit(timestampUs: 66_666, restartInputFirst: false))
        #expect(try decide(Self.deviceStartUs + 10_033_333) == .submit(timestampUs: 99_999, restartInputFirst: false))
    }

    @Test("with frame threads the decoder holds pictures back; flush yields them with their frames' timing")
    func flushYieldsHeldBackPictures() throws {
        let stream = try HEVCFrames(count: 6, startUs: Self.deviceStartUs, keyframeInterval: 30)
        var core = FrameSubmissionCore(
            outputFormat: .nv12VideoRange, decoderOptions: VideoDecoderOptions(threadCount: 4), rawFrames: .asSent,
            frameRate: 30
        )
        var heldBack = 0
        var out: [FrameSubmissionCore.Picture] = []
        for frame in stream.frames {
            switch try core.frameArrived(frame) {
            case .heldBack: heldBack += 1
            case .pictures(let pictures): out += pictures
            case .dropped(let reason): Issue.record("unexpected drop: \(reason)")
            }
        }
        #expect(heldBack > 0, "frame threading holds pictures back")
        #expect(core.picturesInDecoder == stream.frames.count - out.count)
        let flushed = core.flush()
        #expect(flushed.lost == 0)
        #expect(flushed.pictures.count == heldBack, "every held-back picture comes out")
        #expect(core.picturesInDecoder == 0)
        out += flushed.pictures
        #expect(out.map(\.presentationTimeUs) == stream.frames.map(\.presentationTimeUs), "every frame, in order")
        #expect(out.allSatisfy { $0.isAccounted })
        #expect(out.map(\.timing) == stream.frames.map(\.timing), "each picture carries its own frame's timing")
        #expect(core.heldTimings == 0)
        #expect(core.flush().pictures.isEmpty, "nothing left")
    }

    @Test("the timing bookkeeping gives a decoded picture its frame's timing and keeps at most 32")
    func timingBookkeepingIsBounded() throws {
        let stream = try HEVCFrames(count: 41, startUs: Self.deviceStartUs, keyframeInterval: 40)
        var core = FrameSubmissionCore(outputFormat: .nv12VideoRange, rawFrames: .asSent, frameRate: 30)
        // Frames 1…39 predict from a keyframe never seen: each leaves its timing behind, and only 32 are kept.
        for frame in stream.frames[1 ..< 40] {
            _ = try core.frameArrived(frame)
            #expect(core.heldTimings <= FrameSubmissionCore.timingLimit)
        }
        #expect(core.heldTimings == FrameSubmissionCore.timingLimit)
        // Frame 40 is a keyframe: its picture comes out at once with its own timing, taken from the book.
        let keyframe = stream.frames[40]
        let picture = try #require(Self.pictures(try core.frameArrived(keyframe))?.first)
        #expect(picture.presentationTimeUs == keyframe.presentationTimeUs)
        #expect(picture.timing == Self.timing(40))
        #expect(core.heldTimings == FrameSubmissionCore.timingLimit - 1, "the oldest was forgotten to make room, the keyframe's taken")
    }
}
