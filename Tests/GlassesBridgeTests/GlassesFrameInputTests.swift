import Foundation
import GlassesMedia
import GlassesVideo
import SmartSpectraInput
import Synchronization
import Testing
import WearablesKit
import GlassesBridge

/// What the engine saw of one frame.
private struct SeenFrame: Sendable, Hashable {
    let timestampUs: Int64
    let format: PixelFormat
    let width: Int
    let height: Int
    let luma: [UInt8]
}

/// A backend that records every frame custom input hands it (timestamp, layout and luma bytes).
private final class FrameRecorder: ProcessingBackend {
    let name = "frame recorder"
    let producedMetrics: Set<MetricType> = []
    private let seen = Mutex<[SeenFrame]>([])

    var frames: [SeenFrame] { seen.withLock { $0 } }

    func makeProcessor(configuration: ProcessingConfiguration) throws -> any FrameProcessor { Processor(recorder: self) }

    fileprivate func record(_ frame: SeenFrame) { seen.withLock { $0.append(frame) } }

    private final class Processor: FrameProcessor {
        let recorder: FrameRecorder
        init(recorder: FrameRecorder) { self.recorder = recorder }

        func process(_ frame: PixelBuffer, timestampUs: Int64) -> ProcessingUpdate {
            let luma = frame.withUnsafeBytes(ofPlane: 0) { Array($0) }
            recorder.record(SeenFrame(timestampUs: timestampUs, format: frame.format, width: frame.width, height: frame.height, luma: luma))
            return ProcessingUpdate()
        }

        func finish() -> ProcessingUpdate { ProcessingUpdate() }
    }
}

private struct FrameInputRig {
    let recorder = FrameRecorder()
    let sdk: SmartSpectraSDK
    let input: GlassesFrameInput

    init() throws {
        sdk = SmartSpectraSDK(config: SmartSpectraConfig(logLevel: .none), backend: recorder, frameQueueCapacity: 256)
        input = GlassesFrameInput(customInput: try sdk.useCustomInput())
    }
}

@Suite("GlassesFrameInput: glasses frames into custom input (the Linux sendFrame(CMSampleBuffer))")
struct GlassesFrameInputTests {
    static let width = 360, height = 640
    /// The glasses' clock: far from zero, as a device uptime is.
    static let deviceStartUs: Int64 = 7_200_000_000

    @Test("raw and hvc1 frames from a real HEVC encoder reach the engine, in order, on one increasing timeline")
    func rawAndHEVCReachTheEngine() async throws {
        let rig = try FrameInputRig()
        try await rig.sdk.start()
        let interval: Int64 = 33_333
        var sent: [RawVideoImage] = []

        // Raw NV12, as `.raw` streams deliver it.
        for index in 0 ..< 8 {
            let image = try #require(gradientPicture(width: Self.width, height: Self.height, index: index))
            sent.append(image)
            let frame = VideoFrame(presentationTimeUs: Self.deviceStartUs + Int64(index) * interval, content: .raw(image))
            let results = try rig.input.send(frame)
            #expect(results == [.accepted], "raw frame \(index)")
        }
        // Then hvc1 on the same device clock (DAT switches raw to hvc1 when the phone locks), keyframe every 4.
        let encoder = try HEVCEncoder(width: Self.width, height: Self.height, frameRate: 30, bitrate: 800_000, keyframeInterval: 4)
        var hevcAccepted = 0
        for index in 8 ..< 20 {
            let image = try #require(gradientPicture(width: Self.width, height: Self.height, index: index))
            let samples = try encoder.encode(image, presentationTimeUs: Self.deviceStartUs + Int64(index) * interval)
            for sample in samples {
                let frame = VideoFrame(presentationTimeUs: sample.presentationTimeUs, content: .hevc(HEVCSample(
                    data: sample.data, isKeyframe: sample.isKeyframe, codecConfiguration: encoder.codecConfiguration)))
                let results = try rig.input.send(frame)
                let allAccepted = results.allSatisfy { $0.isAccepted }
                #expect(allAccepted, "hvc1 frame \(index): \(results)")
                hevcAccepted += results.count
            }
        }
        #expect(hevcAccepted == 12, "every HEVC sample decodes to one picture at once")
        #expect(try rig.input.flush().isEmpty)
        #expect(rig.input.decoderStatistics.decodedPictures == 12)
        try await rig.sdk.stop()

        let frames = rig.recorder.frames
        #expect(frames.count == 20)
        let timestamps = frames.map(\.timestampUs)
        #expect(timestamps.first == 0, "the device clock is mapped onto a timeline that starts at 0")
        #expect(zip(timestamps, timestamps.dropFirst()).allSatisfy { $0 < $1 }, "strictly increasing: \(timestamps)")
        #expect(timestamps == (0 ..< 20).map { Int64($0) * interval }, "spacing kept from the device clock")
        #expect(frames.allSatisfy { $0.format == .nv12VideoRange && $0.width == Self.width && $0.height == Self.height })
        // Raw pixels arrive exactly as the glasses sent them.
        for (frame, image) in zip(frames.prefix(8), sent) {
            #expect(frame.luma == Array(image.data.prefix(Self.width * Self.height)))
        }
        // Decoded pictures look like what was encoded (lossy: compare means).
        let decodedMean = frames[8...].map { Double($0.luma.reduce(0) { $0 + Int($1) }) / Double($0.luma.count) }
        #expect(decodedMean.allSatisfy { (95 ... 135).contains($0) }, "\(decodedMean)")
        #expect(rig.input.lastTimestampUs == 19 * interval)
    }

    @Test("duplicate and backward device times are rejected as nonMonotonicTimestamp and never submitted")
    func duplicatesAndBackwardTimes() async throws {
        let rig = try FrameInputRig()
        try await rig.sdk.start()
        let image = try #require(gradientPicture(width: Self.width, height: Self.height, index: 0))
        func send(_ us: Int64) throws -> [FrameSubmissionResult] {
            try rig.input.send(VideoFrame(presentationTimeUs: Self.deviceStartUs + us, content: .raw(image)))
        }
        #expect(try send(0) == [.accepted])
        #expect(try send(40_000) == [.accepted])
        let duplicate = try send(40_000)
        #expect(duplicate.count == 1 && duplicate.first?.error?.code == .nonMonotonicTimestamp)
        let backward = try send(10_000)
        #expect(backward.first?.error?.code == .nonMonotonicTimestamp)
        #expect(backward.first?.error?.localizedDescription.contains("not submitted") == true)
        #expect(try send(80_000) == [.accepted])
        try await rig.sdk.stop()
        #expect(rig.recorder.frames.map(\.timestampUs) == [0, 40_000, 80_000])
    }

    @Test("a new session's restarted device clock continues the timeline; a pause over 2 s reaches the SDK as a gap")
    func deviceClockRestartAndPause() async throws {
        let rig = try FrameInputRig()
        try await rig.sdk.start()
        let image = try #require(gradientPicture(width: Self.width, height: Self.height, index: 0))
        func send(_ us: Int64, receivedAt host: Int64? = nil) throws -> [FrameSubmissionResult] {
            try rig.input.send(VideoFrame(presentationTimeUs: us, content: .raw(image)), receivedAtUs: host)
        }
        #expect(try send(Self.deviceStartUs) == [.accepted])
        #expect(try send(Self.deviceStartUs + 33_333) == [.accepted])
        // The glasses reconnect with a fresh clock (new session).
        try rig.input.markDiscontinuity()
        #expect(try send(500) == [.accepted])
        #expect(try send(33_833) == [.accepted])
        // A real pause of 3 s on the device clock: SmartSpectra's rule holds (stop and start after a gap).
        let gap = try send(3_033_833)
        #expect(gap.first?.error?.code == .timestampGap)
        try await rig.sdk.stop()
        try await rig.sdk.start()
        #expect(try send(3_067_166) == [.accepted], "the next frame begins the new run")
        try await rig.sdk.stop()
        let timestamps = rig.recorder.frames.map(\.timestampUs)
        #expect(timestamps.count == 5)
        #expect(Array(timestamps.prefix(4)) == [0, 33_333, 66_666, 99_999], "rebased by one frame interval")
    }

    @Test("before start() every frame is rejected with invalidState; hvc1 waits for a keyframe")
    func beforeStartAndBeforeKeyframe() async throws {
        let rig = try FrameInputRig()
        let image = try #require(gradientPicture(width: Self.width, height: Self.height, index: 0))
        let early = try rig.input.send(VideoFrame(presentationTimeUs: Self.deviceStartUs, content: .raw(image)))
        #expect(early.first?.error?.code == .invalidState)

        try await rig.sdk.start()
        let encoder = try HEVCEncoder(width: Self.width, height: Self.height, frameRate: 30, bitrate: 800_000, keyframeInterval: 30)
        var samples: [EncodedHEVCSample] = []
        for index in 0 ..< 3 {
            let source = try #require(gradientPicture(width: Self.width, height: Self.height, index: index))
            samples += try encoder.encode(source, presentationTimeUs: Self.deviceStartUs + 100_000 + Int64(index) * 33_333)
        }
        func frame(_ sample: EncodedHEVCSample) -> VideoFrame {
            VideoFrame(presentationTimeUs: sample.presentationTimeUs, content: .hevc(HEVCSample(
                data: sample.data, isKeyframe: sample.isKeyframe, codecConfiguration: encoder.codecConfiguration)))
        }
        // Joining mid-stream: the P-frame before any keyframe yields nothing, then the keyframe decodes.
        #expect(try rig.input.send(frame(samples[1])).isEmpty)
        #expect(rig.input.decoderStatistics.skippedUntilKeyframe == 1)
        try await rig.sdk.stop()
        #expect(rig.recorder.frames.isEmpty)
    }

    @Test("errors read as their message")
    func errorText() {
        let error: any Error = GlassesFrameInputError(code: .concurrentUse, message: "one at a time", presentationTimeUs: nil)
        #expect(error.localizedDescription == "one at a time")
        #expect("\(error)" == "concurrentUse: one at a time")
    }
}
