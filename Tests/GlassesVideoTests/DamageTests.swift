import Foundation
import SmartSpectraInput
import Testing
import WearablesKit
@testable import GlassesVideo

/// A 20-frame 360×640 stream from our encoder with a keyframe every 5 frames (0, 5, 10, 15), and its clean decode.
struct DamageFixture {
    var configuration: HEVCCodecConfiguration
    var samples: [EncodedHEVCSample]
    var cleanLuma: [Data]

    static func make() throws -> DamageFixture {
        let encoder = try HEVCEncoder(width: 360, height: 640, frameRate: 30, bitrate: 800_000, keyframeInterval: 5)
        var samples: [EncodedHEVCSample] = []
        for index in 0 ..< 20 {
            samples += try encoder.encode(syntheticImage(width: 360, height: 640, index: index),
                                          presentationTimeUs: Int64(index) * 33_333)
        }
        samples += try encoder.flush()
        var fixture = DamageFixture(configuration: encoder.codecConfiguration, samples: samples, cleanLuma: [])
        let decoder = try VideoFrameDecoder()
        fixture.cleanLuma = try samples.flatMap { try decoder.decode(fixture.frame($0)) }.map { lumaOf($0.pixelBuffer) }
        return fixture
    }

    func frame(_ sample: EncodedHEVCSample, data: Data? = nil) -> VideoFrame {
        VideoFrame(presentationTimeUs: sample.presentationTimeUs, content: .hevc(HEVCSample(
            data: data ?? sample.data, isKeyframe: sample.isKeyframe, codecConfiguration: configuration)))
    }
}

func lumaOf(_ buffer: PixelBuffer) -> Data { ChromaRepacking.i420Data(from: buffer)!.prefix(buffer.width * buffer.height) }

@Suite("Damaged streams")
struct DamageTests {
    /// Feeds the fixture with one sample damaged (or dropped) and returns the pictures' times and statistics.
    func run(_ fixture: DamageFixture, damage: (Int, EncodedHEVCSample) -> Data?) throws -> ([Int64], VideoDecoderStatistics, [DecodedVideoFrame]) {
        let decoder = try VideoFrameDecoder()
        var frames: [DecodedVideoFrame] = []
        for (index, sample) in fixture.samples.enumerated() {
            guard let data = damage(index, sample) else { continue }
            frames += try decoder.decode(fixture.frame(sample, data: data))
        }
        return (frames.map(\.presentationTimeUs), decoder.statistics, frames)
    }

    func times(_ indices: some Sequence<Int>) -> [Int64] { indices.map { Int64($0) * 33_333 } }

    func expectCleanPictures(_ fixture: DamageFixture, _ frames: [DecodedVideoFrame]) {
        for frame in frames {
            let index = Int(frame.presentationTimeUs / 33_333)
            #expect(lumaOf(frame.pixelBuffer) == fixture.cleanLuma[index], "picture \(index) differs from the clean decode")
        }
    }

    @Test("a broken NAL header: counted corrupt, skipped to the next keyframe, exact after")
    func flippedHeaderBit() throws {
        let fixture = try DamageFixture.make()
        let (times, stats, frames) = try run(fixture) { index, sample in
            guard index == 7 else { return sample.data }
            var data = sample.data
            data[data.startIndex + 4] ^= 0x80  // forbidden_zero_bit of the first NAL unit
            return data
        }
        #expect(times == self.times(Array(0 ..< 7) + Array(10 ..< 20)))
        #expect(stats.corrupt == 1)
        #expect(stats.skippedUntilKeyframe == 2)
        #expect(stats.decodedPictures == 17)
        expectCleanPictures(fixture, frames)
    }

    @Test("a truncated sample: counted corrupt, resumes at the next keyframe")
    func truncatedSample() throws {
        let fixture = try DamageFixture.make()
        let (times, stats, frames) = try run(fixture) { index, sample in
            index == 12 ? sample.data.prefix(sample.data.count / 2) : sample.data
        }
        #expect(times == self.times(Array(0 ..< 12) + Array(15 ..< 20)))
        #expect(stats.corrupt == 1 && stats.skippedUntilKeyframe == 2 && stats.decodedPictures == 17)
        expectCleanPictures(fixture, frames)
    }

    @Test("random bytes as a sample, including as a keyframe")
    func randomBytes() throws {
        let fixture = try DamageFixture.make()
        var generator = SeededGenerator(seed: 7)
        let (times, stats, frames) = try run(fixture) { index, sample in
            guard index == 3 || index == 10 else { return sample.data }
            return Data((0 ..< 3000).map { _ in UInt8.random(in: 0 ... 255, using: &generator) })
        }
        // Sample 3 breaks the GOP 0–4; sample 10 was the keyframe of 10–14, so decoding resumes at 15.
        #expect(times == self.times(Array(0 ..< 3) + Array(5 ..< 10) + Array(15 ..< 20)))
        #expect(stats.corrupt == 2)
        #expect(stats.skippedUntilKeyframe == 1 + 4)
        expectCleanPictures(fixture, frames)
    }

    @Test("a dropped keyframe: the missing reference is detected and skipped to the next keyframe")
    func droppedKeyframe() throws {
        let fixture = try DamageFixture.make()
        let (times, stats, frames) = try run(fixture) { index, sample in index == 10 ? nil : sample.data }
        #expect(times == self.times(Array(0 ..< 10) + Array(15 ..< 20)))
        #expect(stats.corrupt == 1, "sample 11 refers to the lost keyframe")
        #expect(stats.skippedUntilKeyframe == 3)
        #expect(stats.hevcSamples == 19)
        expectCleanPictures(fixture, frames)
    }

    @Test("bit flips inside slice data: no crash, every sample accounted for, clean again after the next keyframe",
          arguments: [1, 2, 3])
    func payloadBitFlips(seed: UInt64) throws {
        let fixture = try DamageFixture.make()
        var generator = SeededGenerator(seed: seed)
        let (_, stats, frames) = try run(fixture) { index, sample in
            guard index == 6 || index == 11 else { return sample.data }
            var data = sample.data
            for _ in 0 ..< 8 {
                let position = Int.random(in: 12 ..< data.count, using: &generator)
                data[data.startIndex + position] ^= UInt8(1) << UInt8.random(in: 0 ..< 8, using: &generator)
            }
            return data
        }
        #expect(stats.decodedPictures + stats.skippedUntilKeyframe + stats.corrupt == fixture.samples.count)
        // The last GOP is untouched: it must come out exactly.
        let tail = frames.filter { $0.presentationTimeUs >= 15 * 33_333 }
        #expect(tail.count == 5)
        expectCleanPictures(fixture, tail)
        expectCleanPictures(fixture, frames.filter { $0.presentationTimeUs < 6 * 33_333 })
    }

    @Test("videoStreamingError only after the stall timeout of stream time, then decoding goes on")
    func stallError() throws {
        let fixture = try DamageFixture.make()
        let decoder = try VideoFrameDecoder(options: VideoDecoderOptions(stallTimeoutUs: 500_000))
        _ = try decoder.decode(fixture.frame(fixture.samples[0]))
        var thrownAt: [Int] = []
        // 40 non-keyframes in a row after a broken one: nothing can decode for 1.3 s of stream time.
        for step in 1 ... 40 {
            let sample = fixture.samples[1 + step % 4]
            var shifted = sample
            shifted.presentationTimeUs = Int64(step) * 33_333
            var data = sample.data
            if step == 1 { data[data.startIndex + 4] ^= 0x80 }
            do {
                let frames = try decoder.decode(fixture.frame(shifted, data: data))
                #expect(frames.isEmpty)
            } catch {
                #expect(error.code == .videoStreamingError)
                thrownAt.append(step)
            }
        }
        // Last picture at 0 µs; 500 ms passes after step 15 (533 ms), then again 533 ms later.
        #expect(thrownAt == [16, 32])
        #expect(decoder.statistics.stalls == 2)
        var keyframe = fixture.samples[5]
        keyframe.presentationTimeUs = 41 * 33_333
        #expect(try decoder.decode(fixture.frame(keyframe)).count == 1, "a keyframe ends the stall")
    }
}

/// A small deterministic generator (SplitMix64).
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
