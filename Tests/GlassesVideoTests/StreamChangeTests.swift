import Foundation
import SmartSpectraInput
import Testing
import WearablesKit
@testable import GlassesVideo

/// Encodes `count` pictures of one size with their own encoder; times continue from `start`.
func encodeSegment(width: Int, height: Int, start: Int, count: Int, keyframeInterval: Int = 30) throws -> (HEVCCodecConfiguration, [EncodedHEVCSample]) {
    let encoder = try HEVCEncoder(width: width, height: height, frameRate: 30, bitrate: 1_000_000, keyframeInterval: keyframeInterval)
    var samples: [EncodedHEVCSample] = []
    for index in start ..< start + count {
        samples += try encoder.encode(syntheticImage(width: width, height: height, index: index),
                                      presentationTimeUs: Int64(index) * 33_333)
    }
    return (encoder.codecConfiguration, samples + (try encoder.flush()))
}

func videoFrame(_ sample: EncodedHEVCSample, _ configuration: HEVCCodecConfiguration) -> VideoFrame {
    VideoFrame(presentationTimeUs: sample.presentationTimeUs, content: .hevc(HEVCSample(
        data: sample.data, isKeyframe: sample.isKeyframe, codecConfiguration: configuration)))
}

@Suite("Parameter sets, resolution and frame-rate changes")
struct StreamChangeTests {
    @Test("720×1280 → 504×896 → 720×1280 mid-stream: every picture at its size, exact")
    func resolutionChange() throws {
        let big1 = try encodeSegment(width: 720, height: 1280, start: 0, count: 4)
        let small = try encodeSegment(width: 504, height: 896, start: 4, count: 4)
        let big2 = try encodeSegment(width: 720, height: 1280, start: 8, count: 4)
        let decoder = try VideoFrameDecoder(outputFormat: .nv12VideoRange)
        var frames: [DecodedVideoFrame] = []
        for (configuration, samples) in [big1, small, big2] {
            for sample in samples { frames += try decoder.decode(videoFrame(sample, configuration)) }
        }
        #expect(frames.map(\.pixelBuffer.width) == [720, 720, 720, 720, 504, 504, 504, 504, 720, 720, 720, 720])
        #expect(frames.map(\.pixelBuffer.height) == [1280, 1280, 1280, 1280, 896, 896, 896, 896, 1280, 1280, 1280, 1280])
        #expect(frames.map(\.presentationTimeUs) == (0 ..< 12).map { Int64($0) * 33_333 })
        #expect(decoder.statistics.formatChanges == 2)
        #expect(decoder.statistics.corrupt == 0 && decoder.statistics.skippedUntilKeyframe == 0)

        // Each segment decoded on its own gives the same pictures.
        for (offset, segment) in [(0, big1), (4, small), (8, big2)] {
            let fresh = try VideoFrameDecoder()
            let reference = try segment.1.flatMap { try fresh.decode(videoFrame($0, segment.0)) }
            for (index, picture) in reference.enumerated() {
                #expect(lumaOf(picture.pixelBuffer) == lumaOf(frames[offset + index].pixelBuffer))
            }
        }
    }

    @Test("parameter sets in band only (empty configuration) decode")
    func inBandParameterSets() throws {
        let (configuration, samples) = try encodeSegment(width: 360, height: 640, start: 0, count: 6, keyframeInterval: 3)
        let empty = HEVCCodecConfiguration(videoParameterSets: [], sequenceParameterSets: [], pictureParameterSets: [], width: 0, height: 0)
        let decoder = try VideoFrameDecoder()
        var count = 0
        for sample in samples {
            var units = HEVCNALUnits.splitLengthPrefixed(sample.data)!
            if sample.isKeyframe { units = HEVCNALUnits.parameterSets(of: configuration) + units }
            let inBand = EncodedHEVCSample(presentationTimeUs: sample.presentationTimeUs, isKeyframe: sample.isKeyframe,
                                           data: HEVCNALUnits.lengthPrefixed(units))
            count += try decoder.decode(videoFrame(inBand, empty)).count
        }
        #expect(count == 6)
        #expect(decoder.statistics.corrupt == 0)
    }

    @Test("new parameter sets arriving on a non-keyframe: skipped until the next keyframe")
    func configurationChangeWithoutKeyframe() throws {
        let first = try encodeSegment(width: 360, height: 640, start: 0, count: 4, keyframeInterval: 30)
        let second = try encodeSegment(width: 504, height: 896, start: 4, count: 6, keyframeInterval: 3)
        let decoder = try VideoFrameDecoder()
        var frames: [DecodedVideoFrame] = []
        for sample in first.1 { frames += try decoder.decode(videoFrame(sample, first.0)) }
        // The second stream's keyframe (index 4) is lost: 5 and 6 carry the new configuration but cannot decode.
        for sample in second.1.dropFirst() { frames += try decoder.decode(videoFrame(sample, second.0)) }
        #expect(frames.map(\.presentationTimeUs) == [0, 1, 2, 3, 7, 8, 9].map { Int64($0) * 33_333 })
        #expect(decoder.statistics.skippedUntilKeyframe == 2)
        #expect(decoder.statistics.corrupt == 0)
    }

    @Test("frame-rate changes and missing frames pass their times through")
    func frameRateChange() throws {
        let (configuration, samples) = try encodeSegment(width: 360, height: 640, start: 0, count: 8)
        let decoder = try VideoFrameDecoder()
        // 30 fps, then 2 fps spacing (the glasses' lowest rate), with one frame never sent (a gap).
        let times: [Int64] = [0, 33_333, 66_666, 566_666, 1_066_666, 1_566_666, 2_066_666, 2_566_666]
        var out: [Int64] = []
        for (sample, time) in zip(samples, times) {
            var retimed = sample
            retimed.presentationTimeUs = time
            out += try decoder.decode(videoFrame(retimed, configuration)).map(\.presentationTimeUs)
        }
        #expect(out == times)
    }
}
