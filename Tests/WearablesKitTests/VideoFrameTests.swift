import Foundation
import Testing
@testable import WearablesKit

@Suite("Video frames")
struct VideoFrameTests {
    @Test("raw samples become NV12 images with their strides and timestamps")
    func rawFrames() throws {
        let rig = try Rig()
        let (_, _, stream) = try rig.streaming(StreamConfiguration(videoCodec: .raw, resolution: .low, frameRate: 30))
        let frames = Recorder<VideoFrame>()
        let token = stream.videoFramePublisher.listen(frames.callback)
        rig.device.sendRawFrame(pts: 1_000)
        rig.device.sendRawFrame(pts: 34_333)
        rig.run()
        #expect(frames.values.map(\.presentationTimeUs) == [1_000, 34_333])
        let image = try #require(frames.values.first?.rawImage)
        #expect(image.width == 360 && image.height == 640)
        #expect(image.lumaBytesPerRow == 376 && image.chromaBytesPerRow == 376)
        #expect(frames.values.first?.hevcSample == nil)
        #expect(stream.sampleCounters.delivered == 2)
        withExtendedLifetime(token) {}
    }

    @Test("a frame carries the sample's timing only when the link put it on the host's clock")
    func frameTiming() throws {
        let rig = try Rig()
        let (_, _, stream) = try rig.streaming(StreamConfiguration(videoCodec: .raw, resolution: .low, frameRate: 30))
        let frames = Recorder<VideoFrame>()
        let token = stream.videoFramePublisher.listen(frames.callback)
        rig.device.sendRawFrame(pts: 1, timing: SampleTiming(captureUs: 10, sentUs: 20, receivedUs: 35))
        rig.device.sendRawFrame(pts: 2, timing: SampleTiming(captureUs: 10, sentUs: 20))  // still the device's clock
        rig.device.sendRawFrame(pts: 3)
        rig.run()
        #expect(frames.values.map(\.timing) == [FrameTiming(captureUs: 10, sentUs: 20, receivedUs: 35), nil, nil])
        withExtendedLifetime(token) {}
    }

    @Test("HEVC samples carry the latest codec configuration")
    func hevcFrames() throws {
        let rig = try Rig()
        let (_, _, stream) = try rig.streaming(StreamConfiguration(videoCodec: .hvc1, resolution: .low, frameRate: 24))
        let frames = Recorder<VideoFrame>()
        let token = stream.videoFramePublisher.listen(frames.callback)
        rig.device.sendHEVCFrame(pts: 0, keyframe: true)
        rig.device.sendHEVCFrame(pts: 41_666, keyframe: false)
        rig.run()
        let samples = frames.values.compactMap(\.hevcSample)
        #expect(samples.count == 2)
        #expect(samples.map(\.isKeyframe) == [true, false])
        #expect(samples.allSatisfy { $0.codecConfiguration == TestDevice.codecConfiguration })
        #expect(frames.values.allSatisfy { $0.isCompressed })
        withExtendedLifetime(token) {}
    }

    @Test("malformed samples are counted and reported once per streaming period, never delivered")
    func malformed() throws {
        let rig = try Rig()
        let (_, _, stream) = try rig.streaming(StreamConfiguration(videoCodec: .hvc1, resolution: .low, frameRate: 24))
        let frames = Recorder<VideoFrame>()
        let errors = Recorder<StreamError>()
        let tokens = ListenerTokenBag()
        stream.videoFramePublisher.listen(frames.callback).store(in: tokens)
        stream.errorPublisher.listen(errors.callback).store(in: tokens)
        rig.device.sendHEVCFrame(pts: 0, truncated: true)
        rig.device.sendRawFrame(pts: 1)  // raw sample on an hvc1 stream
        rig.device.deliver(.videoSample(VideoSample(presentationTimeUs: 2, isKeyframe: true, format: .hevc, payload: Data())))
        rig.device.sendHEVCFrame(pts: 3)
        rig.run()
        #expect(frames.values.map(\.presentationTimeUs) == [3])
        #expect(stream.sampleCounters.malformed == 3)
        #expect(errors.values == [.videoStreamingError])
        #expect(stream.lastMalformedSample?.presentationTimeUs == 2)
        let malformed: (any Error)? = stream.lastMalformedSample
        #expect(malformed?.localizedDescription == stream.lastMalformedSample?.description, "read as its reason")
    }

    @Test("HEVC before any codec configuration is malformed")
    func hevcWithoutConfiguration() throws {
        var assembler = VideoSampleAssembler(configuration: StreamConfiguration(videoCodec: .hvc1, resolution: .low))
        let sample = VideoSample(presentationTimeUs: 7, isKeyframe: true, format: .hevc, payload: Data([0, 0, 0, 2, 1, 2]))
        guard case .failure(.malformed(let problem)) = assembler.frame(from: sample) else {
            Issue.record("accepted a sample with no configuration")
            return
        }
        #expect(problem.reason.contains("codec configuration"))
        #expect(assembler.configure(TestDevice.codecConfiguration) == nil)
        #expect((try? assembler.frame(from: sample).get()) != nil)
        #expect(assembler.configure(HEVCCodecConfiguration(
            videoParameterSets: [], sequenceParameterSets: [], pictureParameterSets: [], width: 0, height: 0)) != nil)
    }

    @Test("length-prefix checks", arguments: [
        ([UInt8](), false), ([0, 0, 0, 2, 1, 2], true), ([0, 0, 0, 2, 1, 2, 0, 0, 0, 3, 1, 2, 3], true),
        ([0, 0, 0, 5, 1, 2], false), ([0, 0, 0, 0], false), ([0, 0, 0, 2, 1, 2, 0, 0], false),
        ([0xFF, 0xFF, 0xFF, 0xFF, 1], false),
    ])
    func lengthPrefixes(bytes: [UInt8], valid: Bool) {
        #expect((VideoSampleAssembler.checkLengthPrefixedNALUnits(Data(bytes)) == nil) == valid)
    }

    @Test("samples outside starting/streaming are discarded and counted")
    func discarded() throws {
        let rig = try Rig()
        let (_, _, stream) = try rig.streaming(StreamConfiguration(videoCodec: .raw, resolution: .low, frameRate: 30))
        rig.device.deliver(.stream(.paused))
        rig.device.sendRawFrame(pts: 5)
        rig.run()
        #expect(stream.sampleCounters.discarded == 1)
        #expect(stream.sampleCounters.delivered == 0)
    }

    @Test("the async frame stream delivers frames and keeps only the newest when the consumer lags")
    func frameStream() async throws {
        let rig = try Rig()
        let (_, camera, stream) = try rig.streaming(StreamConfiguration(videoCodec: .raw, resolution: .low, frameRate: 30))
        let frames = stream.videoFrameStream(bufferingNewest: 2)
        for pts in 0..<5 { rig.device.sendRawFrame(pts: Int64(pts)) }
        rig.run()
        camera.stop()
        rig.run()
        var seen: [Int64] = []
        for await frame in frames { seen.append(frame.presentationTimeUs) }
        #expect(seen == [3, 4])
    }
}
