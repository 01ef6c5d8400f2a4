import Foundation
import Testing
import WearablesKit
@testable import GlassesVideo

@Suite("HEVC encoder")
struct HEVCEncoderTests {
    @Test("one sample per picture, in order, keyframes on schedule, no parameter sets in samples")
    func encodesInOrder() throws {
        let encoder = try HEVCEncoder(width: 360, height: 640, frameRate: 30, bitrate: 1_000_000, keyframeInterval: 5)
        var samples: [EncodedHEVCSample] = []
        for index in 0 ..< 12 {
            let produced = try encoder.encode(
                syntheticImage(width: 360, height: 640, index: index), presentationTimeUs: Int64(index) * 33_333,
                forceKeyframe: index == 7
            )
            #expect(produced.count == 1, "zero latency: picture \(index) must come out at once")
            samples += produced
        }
        samples += try encoder.flush()
        #expect(samples.map(\.presentationTimeUs) == (0 ..< 12).map { Int64($0) * 33_333 })
        #expect(samples.filter(\.isKeyframe).map(\.presentationTimeUs) == [0, 5, 7].map { Int64($0) * 33_333 })
        for sample in samples {
            let units = try #require(HEVCNALUnits.splitLengthPrefixed(sample.data))
            #expect(!units.isEmpty)
            #expect(units.allSatisfy { !HEVCNALUnits.isParameterSet(type: HEVCNALUnits.type(of: $0)!) })
            let hasIRAP = units.contains { HEVCNALUnits.isRandomAccessPoint(type: HEVCNALUnits.type(of: $0)!) }
            #expect(hasIRAP == sample.isKeyframe)
        }
        let configuration = encoder.codecConfiguration
        #expect(configuration.videoParameterSets.count == 1)
        #expect(configuration.sequenceParameterSets.count == 1)
        #expect(configuration.pictureParameterSets.count == 1)
        #expect(configuration.width == 360 && configuration.height == 640)
    }

    @Test("the encoded stream decodes with the ffmpeg CLI without errors, on one thread and with a pool of two",
          arguments: [1, 2])
    func ffmpegAcceptsOutput(threads: Int) throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let encoder = try HEVCEncoder(width: 504, height: 896, frameRate: 15, bitrate: 500_000, threads: threads)
        var stream = HEVCNALUnits.annexB(HEVCNALUnits.parameterSets(of: encoder.codecConfiguration))
        for index in 0 ..< 6 {
            for sample in try encoder.encode(syntheticImage(width: 504, height: 896, index: index),
                                             presentationTimeUs: Int64(index) * 66_667) {
                stream.append(HEVCNALUnits.annexB(HEVCNALUnits.splitLengthPrefixed(sample.data)!))
            }
        }
        let file = directory.appendingPathComponent("out.hevc")
        try stream.write(to: file)
        let run = try Tool.run("ffmpeg", ["-hide_banner", "-nostdin", "-v", "error", "-i", file.path, "-f", "null", "-"])
        #expect(run.status == 0)
        #expect(run.errorText.isEmpty, "ffmpeg said: \(run.errorText)")
        #expect(try Tool.frameMD5s(file.path).count == 6)
    }

    @Test("bad arguments are typed errors")
    func rejectsBadArguments() {
        #expect(throws: VideoCodecError.self) { try HEVCEncoder(width: 361, height: 640, frameRate: 30) }
        #expect(throws: VideoCodecError.self) { try HEVCEncoder(width: 360, height: 640, frameRate: 0) }
        #expect(throws: VideoCodecError.self) { try HEVCEncoder(width: 360, height: 640, frameRate: 30, threads: 0) }
        #expect(throws: VideoCodecError.self) { try HEVCEncoder(width: 360, height: 640, frameRate: 30, threads: 17) }
        do {
            let encoder = try HEVCEncoder(width: 360, height: 640, frameRate: 30)
            _ = try encoder.encode(syntheticImage(width: 504, height: 896, index: 0), presentationTimeUs: 0)
            Issue.record("size mismatch accepted")
        } catch {
            #expect(error.code == .invalidArgument)
        }
    }
}
