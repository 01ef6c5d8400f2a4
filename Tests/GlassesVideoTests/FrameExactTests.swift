import Foundation
import SmartSpectraInput
import Testing
import WearablesKit
@testable import GlassesVideo

@Suite("Frame-exact decoding against the ffmpeg CLI")
struct FrameExactTests {
    struct Clip: Sendable, CustomTestStringConvertible {
        var width: Int
        var height: Int
        var noise: Bool
        var fileExtension: String
        var preset: String
        var testDescription: String { "\(width)x\(height) \(noise ? "noise" : "testsrc2") .\(fileExtension) \(preset)" }
    }

    static let clips: [Clip] = [
        Clip(width: 360, height: 640, noise: false, fileExtension: "hevc", preset: "ultrafast"),
        Clip(width: 360, height: 640, noise: true, fileExtension: "mp4", preset: "ultrafast"),
        Clip(width: 504, height: 896, noise: false, fileExtension: "mkv", preset: "ultrafast"),
        Clip(width: 504, height: 896, noise: true, fileExtension: "hevc", preset: "fast"),
        Clip(width: 720, height: 1280, noise: false, fileExtension: "mp4", preset: "fast"),
        Clip(width: 720, height: 1280, noise: true, fileExtension: "hevc", preset: "ultrafast"),
    ]

    @Test("every decoded frame equals ffmpeg's framemd5 (yuv420p)", arguments: clips)
    func matchesFFmpeg(_ clip: Clip) throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("clip.\(clip.fileExtension)").path
        try Tool.makeClip(file, width: clip.width, height: clip.height, frames: 7, noise: clip.noise, preset: clip.preset)
        let reference = try Tool.frameMD5s(file)
        let (frames, decoder) = try decodeFile(file)
        #expect(reference.count == 7)
        #expect(frames.count == reference.count)
        #expect(frames.allSatisfy { $0.pixelBuffer.width == clip.width && $0.pixelBuffer.height == clip.height })
        #expect(try ourFrameMD5s(frames.map(\.pixelBuffer), directory: directory) == reference)
        if clip.fileExtension != "hevc" {
            // Containers carry presentation times; pictures come out in presentation order.
            #expect(frames.map(\.presentationTimeUs) == (0 ..< 7).map { index -> Int64 in
                clip.fileExtension == "mkv" ? (Int64(index) * 1000 + 15) / 30 * 1000 : (Int64(index) * 1_000_000 + 15) / 30
            })
        }
        #expect(decoder.statistics.corrupt == 0 && decoder.statistics.skippedUntilKeyframe == 0)
    }

    @Test("BGRA output is byte-identical to ffmpeg -pix_fmt bgra", arguments: [clips[1], clips[2]])
    func bgraMatchesFFmpeg(_ clip: Clip) throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("clip.\(clip.fileExtension)").path
        try Tool.makeClip(file, width: clip.width, height: clip.height, frames: 4, noise: clip.noise)
        let reference = try Tool.frameMD5s(file, pixelFormat: "bgra")
        let (frames, _) = try decodeFile(file, format: .bgra32)
        #expect(frames.first?.pixelBuffer.planes[0].bytesPerRow ?? 0 >= clip.width * 4)
        #expect(try ourFrameMD5s(frames.map(\.pixelBuffer), directory: directory) == reference)
    }

    @Test("full-range NV12 output of a video-range stream matches ffmpeg's nv12 full-range conversion")
    func fullRangeMatchesFFmpeg() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("clip.hevc").path
        try Tool.makeClip(file, width: 360, height: 640, frames: 3, noise: true)
        let (frames, _) = try decodeFile(file, format: .nv12FullRange)
        #expect(frames.count == 3)
        #expect(frames.allSatisfy { $0.pixelBuffer.format == .nv12FullRange })
        // Full range spreads luma: a video-range stream's 16…235 becomes 0…255.
        let lumaRange = frames[0].pixelBuffer.withUnsafeBytes(ofPlane: 0) { bytes in (bytes.min() ?? 0, bytes.max() ?? 0) }
        #expect(lumaRange.0 < 16 || lumaRange.1 > 235)
    }

    @Test("our encoder's output decodes frame-exactly (ours and ffmpeg agree)", arguments: ["hevc", "mp4", "mkv"])
    func ownEncoderRoundTrip(_ fileExtension: String) throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let encoder = try HEVCEncoder(width: 504, height: 896, frameRate: 30, bitrate: 1_500_000, keyframeInterval: 4)
        let file = directory.appendingPathComponent("own.\(fileExtension)").path
        let writer = try HEVCFileWriter(path: file, codecConfiguration: encoder.codecConfiguration)
        var samples: [EncodedHEVCSample] = []
        for index in 0 ..< 9 {
            samples += try encoder.encode(syntheticImage(width: 504, height: 896, index: index),
                                          presentationTimeUs: Int64(index) * 33_333)
        }
        samples += try encoder.flush()
        for sample in samples { try writer.write(sample, codecConfiguration: encoder.codecConfiguration) }
        try writer.finish()

        let check = try Tool.run("ffmpeg", ["-hide_banner", "-nostdin", "-v", "error", "-i", file, "-f", "null", "-"])
        #expect(check.status == 0 && check.errorText.isEmpty, "ffmpeg -v error said: \(check.errorText)")
        let reference = try Tool.frameMD5s(file)
        #expect(reference.count == 9)

        // Straight from the encoder's samples, no file in between.
        let decoder = try VideoFrameDecoder()
        var frames: [DecodedVideoFrame] = []
        for sample in samples {
            frames += try decoder.decode(VideoFrame(presentationTimeUs: sample.presentationTimeUs, content: .hevc(
                HEVCSample(data: sample.data, isKeyframe: sample.isKeyframe, codecConfiguration: encoder.codecConfiguration))))
        }
        frames += try decoder.flush()
        #expect(try ourFrameMD5s(frames.map(\.pixelBuffer), directory: directory) == reference)
        #expect(frames.map(\.presentationTimeUs) == samples.map(\.presentationTimeUs))

        // And through the file reader: same samples and times back.
        let reader = try VideoFileReader(path: file)
        var read: [VideoFrame] = []
        while let frame = try reader.nextFrame() { read.append(frame) }
        #expect(read.count == samples.count)
        for (frame, sample) in zip(read, samples) {
            guard case .hevc(let readSample) = frame.content else { Issue.record("not HEVC"); continue }
            #expect(readSample.data == sample.data)
            #expect(readSample.isKeyframe == sample.isKeyframe)
            #expect(readSample.codecConfiguration.sequenceParameterSets == encoder.codecConfiguration.sequenceParameterSets)
            #expect(readSample.codecConfiguration.width == 504 && readSample.codecConfiguration.height == 896)
            switch fileExtension {
            case "mp4": #expect(frame.presentationTimeUs == sample.presentationTimeUs)
            case "mkv": #expect(abs(frame.presentationTimeUs - sample.presentationTimeUs) <= 500, "Matroska keeps milliseconds")
            default: #expect(frame.presentationTimeUs == Int64(read.firstIndex(of: frame)!) * 33_333)
            }
        }
    }
}
