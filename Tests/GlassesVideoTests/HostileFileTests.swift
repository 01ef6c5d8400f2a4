import Foundation
import SmartSpectraInput
import Testing
import WearablesKit
@testable import GlassesVideo

/// Reads every frame of a file, at most `limit`, and returns the frames and the error that ended the reading.
func readAll(_ path: String, limit: Int = 10_000) -> (frames: [VideoFrame], error: VideoCodecError?) {
    var frames: [VideoFrame] = []
    do {
        let reader = try VideoFileReader(path: path)
        while frames.count < limit, let frame = try reader.nextFrame() { frames.append(frame) }
        return (frames, nil)
    } catch {
        return (frames, error)
    }
}

/// An MP4 of `count` 64×64 HEVC frames at 30 fps written by ``HEVCFileWriter``.
func writeSmallMP4(_ path: String, count: Int, container: HEVCFileWriter.Container? = nil) throws {
    let (configuration, samples) = try encodeSegment(width: 64, height: 64, start: 0, count: count)
    let writer = try HEVCFileWriter(path: path, codecConfiguration: configuration, container: container)
    for sample in samples { try writer.write(sample, codecConfiguration: configuration) }
    try writer.finish()
}

/// The byte offset of the first box of `type` (its size field), searching the whole file.
func boxOffset(_ data: Data, _ type: String) -> Int? {
    guard let range = data.range(of: Data(type.utf8)) else { return nil }
    return range.lowerBound - 4 - data.startIndex
}

/// Sets a big-endian 32-bit field.
func setUInt32(_ data: inout Data, at offset: Int, _ value: UInt32) {
    for index in 0 ..< 4 { data[data.startIndex + offset + index] = UInt8(truncatingIfNeeded: value >> (24 - 8 * index)) }
}

func uint32(_ data: Data, at offset: Int) -> UInt32 {
    (0 ..< 4).reduce(UInt32(0)) { $0 << 8 | UInt32(data[data.startIndex + offset + $1]) }
}

@Suite("Hostile and damaged files")
struct HostileFileTests {
    // MARK: Y4M header limits

    @Test("Y4M frame rates that trapped or never ended are refused up front with fileLimitExceeded",
          arguments: ["F1:100000000000000", "F1:9223372036854775807", "F1:1000000000000", "F0:1", "F1:0", "F241:1",
                      "F1:2", "F2000000:1000000", "F-30:1"])
    func y4mFrameRateLimits(_ rate: String) throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("rate.y4m").path
        let frame = Data("FRAME\n".utf8) + Data(repeating: 128, count: 16 * 16 * 3 / 2)
        try (Data("YUV4MPEG2 W16 H16 \(rate) Ip C420jpeg\n".utf8) + frame + frame).write(to: URL(fileURLWithPath: path))
        let (frames, error) = readAll(path)
        #expect(frames.isEmpty)
        let valid = rate.hasPrefix("F0") || rate.hasPrefix("F1:0") || rate.hasPrefix("F-") ? [VideoCodecError.Code.fileLimitExceeded, .unsupportedFile] : [.fileLimitExceeded]
        #expect(error.map { valid.contains($0.code) } == true, "\(rate): \(String(describing: error))")
        #expect(error?.message.contains(path) == true)
        #expect(error?.message.contains("frame rate") == true || error?.code == .unsupportedFile)
    }

    @Test("Y4M frame rates within the limits play with exact timing (29.97 fps, 240 fps, 1 fps)")
    func y4mValidRates() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        for (rate, second) in [("F30000:1001", Int64(33_366)), ("F240:1", 4_166), ("F1:1", 1_000_000)] {
            let path = directory.appendingPathComponent("ok.y4m").path
            let frame = Data("FRAME\n".utf8) + Data(repeating: 128, count: 16 * 16 * 3 / 2)
            try (Data("YUV4MPEG2 W16 H16 \(rate) C420jpeg\n".utf8) + frame + frame).write(to: URL(fileURLWithPath: path))
            let (frames, error) = readAll(path)
            #expect(error == nil)
            #expect(frames.map(\.presentationTimeUs) == [0, second])
        }
    }

    @Test("Y4M picture sizes beyond the limits are refused before any frame is allocated",
          arguments: ["W16384 H16384", "W4098 H2", "W4096 H4096", "W9223372036854775807 H2", "W99999999999999999999 H2",
                      "W0 H16", "W-16 H16", "H16"])
    func y4mSizeLimits(_ size: String) throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("size.y4m").path
        try Data("YUV4MPEG2 \(size) F30:1 C420jpeg\nFRAME\n".utf8).write(to: URL(fileURLWithPath: path))
        let (frames, error) = readAll(path)
        #expect(frames.isEmpty)
        #expect(error?.code == .fileLimitExceeded || error?.code == .unsupportedFile, "\(size): \(String(describing: error))")
        #expect(error?.message.contains(path) == true)
    }

    @Test("the largest allowed Y4M picture (4096×2048) reads")
    func y4mLargestSize() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("big.y4m").path
        let frame = Data("FRAME\n".utf8) + Data(repeating: 128, count: 4096 * 2048 * 3 / 2)
        try (Data("YUV4MPEG2 W4096 H2048 F30:1 C420jpeg\n".utf8) + frame).write(to: URL(fileURLWithPath: path))
        let (frames, error) = readAll(path)
        #expect(error == nil)
        #expect(frames.count == 1)
    }

    @Test("a Y4M presentation time never traps, whatever the frame index")
    func y4mTimeArithmetic() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("t.y4m").path
        try Data("YUV4MPEG2 W16 H16 F1:1 C420jpeg\n".utf8).write(to: URL(fileURLWithPath: path))
        let reader = try Y4MReader(path: path)
        #expect(reader.presentationTimeUs(ofFrame: 3) == 3_000_000)
        #expect(reader.presentationTimeUs(ofFrame: Int.max) == .max)
        #expect(reader.presentationTimeUs(ofFrame: -1) == 0)
        #expect(Y4MHeader(width: .max, height: .max, frameRateNumerator: 1, frameRateDenominator: 1, layout: .yuv420,
                          fullRange: false).frameByteCount == .max)
    }

    @Test("a Y4M file cut inside a frame or a marker says truncated and names the file")
    func y4mTruncated() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("cut.y4m").path
        let frame = Data("FRAME\n".utf8) + Data(repeating: 128, count: 16 * 16 * 3 / 2)
        for tail in [Data(frame.prefix(100)), Data("FRA".utf8)] {
            try (Data("YUV4MPEG2 W16 H16 F30:1 C420jpeg\n".utf8) + frame + tail).write(to: URL(fileURLWithPath: path))
            let (frames, error) = readAll(path)
            #expect(frames.count == 1)
            #expect(error?.code == .truncatedFile)
            #expect(error?.message.contains("truncated") == true)
            #expect(error?.message.contains(path) == true)
        }
    }

    // MARK: Container timing

    @Test("an MP4 whose track timescale is 0 or 1 (edit list gone) ends with brokenTimestamps, not hours of stream time",
          arguments: [UInt32(0), 1])
    func mp4BrokenTimescale(_ timescale: UInt32) throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("clip.mp4").path
        try writeSmallMP4(path, count: 10)
        var data = try Data(contentsOf: URL(fileURLWithPath: path))
        let mdhd = try #require(boxOffset(data, "mdhd"))
        #expect(data[mdhd + 8] == 0, "a version 0 mdhd")
        setUInt32(&data, at: mdhd + 20, timescale)
        // Without its edit list, libavformat plays every sample: 33 333 ticks apart, which is now 33 333 s.
        let edts = try #require(boxOffset(data, "edts"))
        data.replaceSubrange(edts + 4 ..< edts + 8, with: Data("free".utf8))
        try data.write(to: URL(fileURLWithPath: path))

        let (frames, error) = readAll(path)
        #expect(error?.code == .brokenTimestamps, "\(String(describing: error)); times \(frames.map(\.presentationTimeUs))")
        #expect(error?.message.contains(path) == true)
        #expect(error?.message.contains("1/1 s") == true, "\(String(describing: error))")
        #expect(frames.count == 1)
    }

    @Test("an MP4 whose track timescale is 0 or 1 with its edit list plays a short, finite, sane stream",
          arguments: [UInt32(0), 1])
    func mp4BrokenTimescaleWithEditList(_ timescale: UInt32) throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("clip.mp4").path
        try writeSmallMP4(path, count: 10)
        var data = try Data(contentsOf: URL(fileURLWithPath: path))
        let mdhd = try #require(boxOffset(data, "mdhd"))
        setUInt32(&data, at: mdhd + 20, timescale)
        try data.write(to: URL(fileURLWithPath: path))
        let (frames, error) = readAll(path)
        #expect(error == nil || error?.code == .brokenTimestamps, "\(String(describing: error))")
        #expect(frames.count <= 10)
        for (a, b) in zip(frames, frames.dropFirst()) {
            #expect(b.presentationTimeUs - a.presentationTimeUs <= VideoFileLimits.maximumFrameGapUs)
        }
    }

    @Test("a Matroska file whose TimecodeScale is 1 ns (all times collapse to 0 µs) ends with brokenTimestamps")
    func matroskaTimestampsStuck() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("stuck.mkv").path
        try writeSmallMP4(path, count: 40)
        var data = try Data(contentsOf: URL(fileURLWithPath: path))
        // TimecodeScale (0x2AD7B1), 3 bytes: 1 000 000 ns → 1 ns.
        let element = try #require(data.range(of: Data([0x2A, 0xD7, 0xB1, 0x83, 0x0F, 0x42, 0x40])))
        data.replaceSubrange(element.lowerBound + 4 ..< element.lowerBound + 7, with: Data([0, 0, 1]))
        try data.write(to: URL(fileURLWithPath: path))

        let (frames, error) = readAll(path)
        #expect(error?.code == .brokenTimestamps, "\(String(describing: error)); \(frames.map(\.presentationTimeUs))")
        #expect(error?.message.contains("stop increasing") == true)
        #expect(frames.count <= VideoFileLimits.maximumFramesWithoutProgress)
    }

    @Test("the timestamp rule: pauses and reordering pass; jumps, reversals and stalls are refused")
    func timestampRule() throws {
        var checker = TimestampChecker()
        for (index, time) in [0, 66_666, 33_333, 100_000, 3_100_000, 3_133_333].enumerated() {
            try checker.check(Int64(time), frame: index, path: "f")
        }
        #expect(throws: VideoCodecError.self) { try checker.check(3_133_333 + VideoFileLimits.maximumFrameGapUs + 1, frame: 6, path: "f") }
        var backwards = TimestampChecker()
        try backwards.check(10_000_000, frame: 0, path: "f")
        #expect(throws: VideoCodecError.self) { try backwards.check(7_000_000, frame: 1, path: "f") }
        var stuck = TimestampChecker()
        var failure: VideoCodecError?
        for index in 0 ..< 100 where failure == nil {
            do { try stuck.check(0, frame: index, path: "f") } catch { failure = error }
        }
        #expect(failure?.code == .brokenTimestamps)
        var huge = TimestampChecker()
        #expect(throws: VideoCodecError.self) { try huge.check(.max, frame: 0, path: "f") }
        #expect(VideoFileReader.microseconds(.max, timeBaseNumerator: 1, timeBaseDenominator: 1) == nil)
        #expect(VideoFileReader.microseconds(3, timeBaseNumerator: 1, timeBaseDenominator: 1) == 3_000_000)
        #expect(VideoFileReader.microseconds(3, timeBaseNumerator: 1, timeBaseDenominator: 0) == nil)
        #expect(VideoFileReader.microseconds(.min, timeBaseNumerator: 1, timeBaseDenominator: 90_000) == nil)
    }

    @Test("a session with a 3 s pause still plays with its pause; B-frame reordering still plays")
    func legitimateTiming() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("pause.mkv").path
        let (configuration, samples) = try encodeSegment(width: 64, height: 64, start: 0, count: 6)
        let writer = try HEVCFileWriter(path: path, codecConfiguration: configuration)
        for (index, sample) in samples.enumerated() {
            try writer.write(HEVCSample(data: sample.data, isKeyframe: sample.isKeyframe, codecConfiguration: configuration),
                             presentationTimeUs: sample.presentationTimeUs + (index >= 3 ? 3_000_000 : 0))
        }
        try writer.finish()
        let (frames, error) = readAll(path)
        #expect(error == nil)
        #expect(frames.map(\.presentationTimeUs) == [0, 33_000, 67_000, 3_100_000, 3_133_000, 3_167_000])

        let bframes = directory.appendingPathComponent("bframes.mp4").path
        try Tool.makeClip(bframes, width: 64, height: 64, frames: 20, noise: false, x265Parameters: "keyint=10:bframes=3")
        let played = readAll(bframes)
        #expect(played.error == nil)
        #expect(played.frames.count == 20)
    }

    // MARK: Truncation

    @Test("a truncated Matroska or MP4 file reports truncatedFile naming the file, after the frames it holds",
          arguments: ["mkv", "mp4-faststart", "mp4"])
    func truncatedContainers(_ variant: String) throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var path = directory.appendingPathComponent("whole.\(variant.prefix(3))").path
        try writeSmallMP4(path, count: 30)
        if variant == "mp4-faststart" {
            let moved = directory.appendingPathComponent("faststart.mp4").path
            try Tool.ffmpeg(["-i", path, "-c", "copy", "-movflags", "+faststart", moved])
            path = moved
        }
        let whole = readAll(path)
        #expect(whole.error == nil, "the whole file plays cleanly: \(String(describing: whole.error))")
        #expect(whole.frames.count == 30)

        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let cut = directory.appendingPathComponent("cut-\(variant).\(variant.prefix(3))").path
        try data.prefix(data.count * 6 / 10).write(to: URL(fileURLWithPath: cut))
        let (frames, error) = readAll(cut)
        #expect(error?.code == .truncatedFile, "\(variant): \(String(describing: error)) after \(frames.count) frames")
        #expect(error?.message.contains("truncated") == true)
        #expect(error?.message.contains(cut) == true)
        #expect(frames.count < 30)
        if variant != "mp4" { #expect(frames.count > 5, "the frames before the cut still play") }
    }

    @Test("the structure check tells complete, truncated and foreign files apart")
    func structureCheck() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        for name in ["a.mkv", "a.mp4"] {
            let path = directory.appendingPathComponent(name).path
            try writeSmallMP4(path, count: 5)
            #expect(ContainerStructure.truncation(ofFileAt: path) == nil)
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            for keep in [name.hasSuffix("mkv") ? 7 : 12, 20, data.count / 2, data.count - 1] {
                let cut = directory.appendingPathComponent("cut-\(keep)-\(name)").path
                try data.prefix(keep).write(to: URL(fileURLWithPath: cut))
                #expect(ContainerStructure.truncation(ofFileAt: cut) != nil, "\(name) cut at \(keep)")
            }
        }
        // An MP4 whose recording never finished: the muxer's placeholder mdat (size 0, "to the end") and no moov.
        let mp4 = try Data(contentsOf: directory.appendingPathComponent("a.mp4"))
        let mdat = try #require(boxOffset(mp4, "mdat")), moov = try #require(boxOffset(mp4, "moov"))
        #expect(mdat < moov)
        var unfinished = Data(mp4.prefix(moov))
        setUInt32(&unfinished, at: mdat, 0)
        let unfinishedPath = directory.appendingPathComponent("unfinished.mp4").path
        try unfinished.write(to: URL(fileURLWithPath: unfinishedPath))
        #expect(ContainerStructure.truncation(ofFileAt: unfinishedPath)?.contains("moov") == true)
        let opened = readAll(unfinishedPath)
        #expect(opened.error?.code == .truncatedFile, "\(String(describing: opened.error))")
        #expect(opened.error?.message.contains("truncated") == true)

        let junk = directory.appendingPathComponent("junk.bin").path
        try Data((0 ..< 4000).map { UInt8(truncatingIfNeeded: $0 &* 31) }).write(to: URL(fileURLWithPath: junk))
        #expect(ContainerStructure.truncation(ofFileAt: junk) == nil)
    }

    // MARK: H.264 and other codecs

    @Test("H.264 files (MP4, Matroska, Annex B) play: the same pictures ffmpeg decodes, with their timing",
          arguments: ["mp4", "mkv", "h264"])
    func h264Plays(_ container: String) throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("phone.\(container)").path
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=128x96:rate=30", "-frames:v", "12", "-pix_fmt", "yuv420p",
                         "-c:v", "libx264", "-preset", "ultrafast", "-bf", "2", "-g", "6", path])
        let reader = try VideoFileReader(path: path)
        #expect(reader.codec == "h264")
        #expect(reader.width == 128 && reader.height == 96)
        let (frames, decoder) = try decodeFile(path)
        #expect(frames.count == 12)
        #expect(decoder.statistics.rawImages == 12)
        let times = frames.map(\.presentationTimeUs)
        #expect(times == times.sorted() && Set(times).count == 12, "\(times)")
        #expect(abs((times.last ?? 0) - (times.first ?? 0) - 366_667) <= 1_000, "\(times)")
        let ours = try ourFrameMD5s(frames.map(\.pixelBuffer), directory: directory)
        #expect(try Tool.frameMD5s(path) == ours)
    }

    @Test("a file of another codec is refused with the command that converts it")
    func otherCodecRefused() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("old.mp4").path
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=64x64:rate=30", "-frames:v", "3", "-c:v", "mpeg4", path])
        let (_, error) = readAll(path)
        #expect(error?.code == .unsupportedFile)
        #expect(error?.message.contains("ffmpeg -i \(path) -c:v libx265") == true, "\(String(describing: error))")
    }

    @Test("containers outside MP4, Matroska, HEVC and H.264 are refused with the conversion command")
    func otherContainerRefused() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let hevc = directory.appendingPathComponent("a.mp4").path
        try Tool.makeClip(hevc, width: 64, height: 64, frames: 3, noise: false)
        for name in ["a.ts", "a.avi"] {
            let path = directory.appendingPathComponent(name).path
            try Tool.ffmpeg(["-i", hevc, "-c", "copy", path])
            let (_, error) = readAll(path)
            #expect(error?.code == .unsupportedFile, "\(name): \(String(describing: error))")
            #expect(error?.message.contains("-c:v libx265") == true)
        }
        let playlist = directory.appendingPathComponent("list.mp4")
        try Data("#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1,\n\(hevc)\n#EXT-X-ENDLIST\n".utf8).write(to: playlist)
        #expect(readAll(playlist.path).frames.isEmpty)
    }

    // MARK: Messages

    @Test("messages carry FFmpeg's words and context, never a raw FFmpeg error number")
    func errorWords() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let junk = directory.appendingPathComponent("junk.mp4").path
        try Data((0 ..< 5000).map { UInt8(truncatingIfNeeded: $0 &* 7919) }).write(to: URL(fileURLWithPath: junk))
        let missing = directory.appendingPathComponent("missing.mkv").path
        for path in [junk, missing] {
            let (_, error) = readAll(path)
            let text = try #require(error).description
            #expect(!text.contains("-1094995529") && !text.contains("Error number"), "\(text)")
            let withoutPath = text.replacingOccurrences(of: path, with: "PATH")
            #expect(withoutPath.range(of: #"-?\d{3,}"#, options: .regularExpression) == nil, "\(text)")
            #expect(text.contains(path))
            #expect(error?.context["path"] == path)
        }
        #expect(readAll(junk).error?.message.contains("Invalid data") == true)
        #expect(readAll(missing).error?.message.contains("No such file") == true)
        #expect(FFmpegResult.text(-123_456_789) == "unexpected error")
    }

    // MARK: Writing

    @Test("the Y4M writer refuses BGRA (no RGB layout in Y4M) instead of writing it under a YUV header")
    func y4mRefusesBGRA() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(!Y4MWriter.canWrite(.bgra32))
        #expect(Y4MWriter.canWrite(.nv12VideoRange) && Y4MWriter.canWrite(.nv12FullRange))
        let path = directory.appendingPathComponent("bgra.y4m").path
        let writer = try Y4MWriter(path: path, frameRateNumerator: 30)
        let buffer = PixelBuffer.makeBGRA(width: 16, height: 16)
        #expect { try writer.write(buffer) } throws: { ($0 as? VideoCodecError)?.code == .unsupportedPixelFormat }
        try writer.close()
        // The size, not `Data(contentsOf:)`: FoundationEssentials leaks its 4 KiB read buffer on an empty file.
        #expect((try FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue == 0)
        #expect(throws: VideoCodecError.self) { try Y4MWriter(path: path, frameRateNumerator: 1_000) }
    }
}
