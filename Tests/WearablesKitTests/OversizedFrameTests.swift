import Foundation
import Testing
@testable import WearablesKit

@Suite("Frames and parameter sets larger than the negotiated stream")
struct OversizedFrameTests {
    static func configuration(_ width: Int, _ height: Int) -> HEVCCodecConfiguration {
        HEVCCodecConfiguration(
            videoParameterSets: [Data([0x40, 0x01, 0x0C])], sequenceParameterSets: [SyntheticSPS.make(width: width, height: height)],
            pictureParameterSets: [Data([0x44, 0x01, 0xC0])], width: width, height: height)
    }

    @Test("the SPS reader reads synthetic sizes, cropping included")
    func reader() throws {
        let plain = try #require(HEVCPictureSize(sequenceParameterSet: SyntheticSPS.make(width: 8192, height: 4320)))
        #expect(plain.codedWidth == 8192 && plain.codedHeight == 4320 && plain.width == 8192)
        let cropped = try #require(HEVCPictureSize(sequenceParameterSet: SyntheticSPS.make(width: 512, height: 896, crop: (8, 0))))
        #expect(cropped.width == 504 && cropped.codedWidth == 512 && cropped.height == 896)
        #expect(HEVCPictureSize(sequenceParameterSet: Data([0x42, 0x01, 0x01])) == nil, "truncated")
        #expect(HEVCPictureSize(sequenceParameterSet: SyntheticSPS.make(width: 20000, height: 16)) == nil, "beyond every level")
    }

    @Test("the assembler allows the configured size and every lower one, nothing larger")
    func assemblerLimits() {
        var assembler = VideoSampleAssembler(configuration: StreamConfiguration(videoCodec: .hvc1, resolution: .medium))
        #expect(assembler.configure(Self.configuration(504, 896)) == nil)
        #expect(assembler.configure(Self.configuration(360, 640)) == nil, "bandwidth adaptation lowers the size")
        guard case .oversized(let violation) = assembler.configure(Self.configuration(8192, 4320)) else {
            Issue.record("8192x4320 accepted on a 504x896 stream")
            return
        }
        #expect(violation.source == .declaredSize && violation.allowed == StreamingResolution.medium.videoFrameSize)
        #expect(assembler.codecConfiguration == nil, "samples after a refused configuration are refused too")
        // An SPS that lies about its size behind a declared 504x896.
        var lying = Self.configuration(504, 896)
        lying.sequenceParameterSets = [SyntheticSPS.make(width: 8192, height: 4320)]
        guard case .oversized(let spsViolation) = assembler.configure(lying) else {
            Issue.record("an 8192x4320 SPS behind a 504x896 declaration was accepted")
            return
        }
        #expect(spsViolation.source == .parameterSet && spsViolation.width == 8192)
        // A coded size far beyond the crop window is refused even when the crop lands on the right size.
        lying.sequenceParameterSets = [SyntheticSPS.make(width: 8192, height: 896, crop: (8192 - 504, 0))]
        #expect(assembler.configure(lying) != nil)
        // Coding-block padding is fine.
        lying.sequenceParameterSets = [SyntheticSPS.make(width: 512, height: 896, crop: (8, 0))]
        #expect(assembler.configure(lying) == nil)
    }

    @Test("an in-band SPS inside a sample is held to the same limit")
    func inBand() {
        var assembler = VideoSampleAssembler(configuration: StreamConfiguration(videoCodec: .hvc1, resolution: .low))
        #expect(assembler.configure(Self.configuration(360, 640)) == nil)
        let sps = SyntheticSPS.make(width: 8192, height: 4320)
        var payload = Data([0, 0, UInt8(sps.count >> 8), UInt8(sps.count & 0xFF)]) + sps
        payload += Data([0, 0, 0, 3, 0x26, 0x01, 0xAF])
        let sample = VideoSample(presentationTimeUs: 5, isKeyframe: true, format: .hevc, payload: payload)
        guard case .failure(.oversized(let violation)) = assembler.frame(from: sample) else {
            Issue.record("an in-band 8192x4320 SPS passed")
            return
        }
        #expect(violation.source == .inBandParameterSet && violation.presentationTimeUs == 5)
    }

    @Test("a giant raw frame is refused before it becomes an image")
    func giantRaw() {
        let assembler = VideoSampleAssembler(configuration: StreamConfiguration(videoCodec: .raw, resolution: .medium))
        let sample = VideoSample(
            presentationTimeUs: 9, isKeyframe: true,
            format: .nv12(width: 2, height: 2_796_192, lumaBytesPerRow: 2, chromaBytesPerRow: 2),
            payload: Data(count: 2 * 2_796_192 * 3 / 2))
        guard case .failure(.oversized(let violation)) = assembler.frame(from: sample) else {
            Issue.record("a 2x2796192 frame passed on a 504x896 stream")
            return
        }
        #expect(violation.source == .rawFrame && violation.height == 2_796_192)
        #expect(violation.description.contains("2x2796192 exceeds the negotiated 504x896"))
    }

    @Test("a stream counts every violation, reports one error, and stops at the third")
    func streamStops() throws {
        let rig = try Rig()
        let (_, _, stream) = try rig.streaming(StreamConfiguration(videoCodec: .raw, resolution: .low, frameRate: 30))
        let frames = Recorder<VideoFrame>()
        let errors = Recorder<StreamError>()
        let tokens = ListenerTokenBag()
        stream.videoFramePublisher.listen(frames.callback).store(in: tokens)
        stream.errorPublisher.listen(errors.callback).store(in: tokens)
        func giant(_ pts: Int64) {
            rig.device.deliver(.videoSample(VideoSample(
                presentationTimeUs: pts, isKeyframe: true,
                format: .nv12(width: 720, height: 1280, lumaBytesPerRow: 720, chromaBytesPerRow: 720),
                payload: Data(count: 720 * 1280 * 3 / 2))))
        }
        giant(1)
        rig.device.sendRawFrame(pts: 2)
        giant(3)
        rig.run()
        #expect(frames.values.map(\.presentationTimeUs) == [2], "only the frame that fits is delivered")
        #expect(stream.sampleCounters.oversized == 2 && stream.sampleCounters.delivered == 1)
        #expect(stream.state == .streaming)
        giant(4)
        rig.run()
        #expect(stream.sampleCounters.oversized == 3)
        #expect(errors.values == [.videoStreamingError])
        #expect(stream.state == .stopped, "the third violation stops the stream")
        #expect(stream.lastConfigurationViolation?.presentationTimeUs == 4)
        #expect(rig.device.sentCount(\.isStopStream) > 0)
    }
}
