import Foundation
import GlassesLink
import GlassesVideo
import Synchronization
import Testing
import WearablesKit
@testable import GlassesSimulator

/// A flat NV12 video-range frame of one colour.
private func flatFrame(width: Int, height: Int, y: UInt8, cb: UInt8, cr: UInt8) -> RawVideoImage {
    var data = Data(repeating: y, count: width * height)
    var chroma = [UInt8](repeating: 0, count: width * height / 2)
    for i in stride(from: 0, to: chroma.count, by: 2) {
        chroma[i] = cb
        chroma[i + 1] = cr
    }
    data.append(contentsOf: chroma)
    return RawVideoImage(width: width, height: height, lumaBytesPerRow: width, chromaBytesPerRow: width, data: data)!
}

/// Writes `frames` to a fresh Y4M file and returns its path.
private func writeY4M(_ frames: [RawVideoImage]) throws -> String {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("feed-\(UUID().uuidString).y4m").path
    let writer = try Y4MWriter(path: path, frameRateNumerator: 15)
    for frame in frames { try writer.write(frame) }
    try writer.close()
    return path
}

private let colours: [(UInt8, UInt8, UInt8)] = [(40, 90, 200), (120, 160, 60), (210, 128, 128)]

@Suite("Video-file camera feed")
struct VideoFeedTests {
    @Test("a Y4M feed streams its frames exactly, in order, looping at the end; no ground truth")
    func y4mFeedLoops() throws {
        let frames = colours.map { flatFrame(width: 360, height: 640, y: $0.0, cb: $0.1, cr: $0.2) }
        let path = try writeY4M(frames)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let feed = try VideoFileFeed(path: path)
        #expect(feed.width == 360 && feed.height == 640 && !feed.isHEVC)

        let rig = try Rig()
        #expect(rig.glasses.hasGroundTruth)
        try rig.glasses.setCameraFeed(.videoFile(feed))
        #expect(!rig.glasses.hasGroundTruth)
        rig.start(config(.raw, .low, 15))
        rig.run(0.6)
        let samples = rig.probe.samples
        #expect(samples.count >= 8)
        for (index, sample) in samples.enumerated() {
            #expect(sample.format == .nv12(width: 360, height: 640, lumaBytesPerRow: 360, chromaBytesPerRow: 360))
            let expected = index % frames.count
            #expect(sample.payload == frames[expected].data, "sample \(index) should be file frame \(expected)")
        }
        // The glasses' own clock and rate, not the file's.
        let deltas = zip(samples.dropFirst(), samples).map { $0.presentationTimeUs - $1.presentationTimeUs }
        #expect(deltas.allSatisfy { abs($0 - 66_667) <= 1 })
        #expect(feed.framesDelivered == samples.count)
        #expect(feed.loopCount == (samples.count - 1) / frames.count)
        #expect(rig.probe.faults.isEmpty)
    }

    @Test("an HEVC (Annex B) feed is decoded to NV12 video range and streamed in order, looping")
    func hevcFeedLoops() throws {
        let frames = colours.map { flatFrame(width: 360, height: 640, y: $0.0, cb: $0.1, cr: $0.2) }
        let path = try Self.writeHEVC(frames, keyframes: [0])
        defer { try? FileManager.default.removeItem(atPath: path) }

        let feed = try VideoFileFeed(path: path)
        #expect(feed.isHEVC && feed.width == 360 && feed.height == 640)
        let rig = try Rig()
        try rig.glasses.setCameraFeed(.videoFile(feed))
        rig.start(config(.raw, .low, 15))
        rig.run(0.6)
        let samples = rig.probe.samples
        #expect(samples.count >= 8)
        for (index, sample) in samples.enumerated() {
            let expected = colours[index % colours.count]
            let bytes = [UInt8](sample.payload)
            #expect(bytes.count == 360 * 640 * 3 / 2)
            guard bytes.count == 360 * 640 * 3 / 2 else { continue }
            // Flat pictures survive HEVC almost exactly: check the centre pixel's luma and chroma.
            let y = Int(bytes[320 * 360 + 180])
            let chroma = 360 * 640 + 160 * 360 + 180
            let cb = Int(bytes[chroma]), cr = Int(bytes[chroma + 1])
            #expect(abs(y - Int(expected.0)) <= 3 && abs(cb - Int(expected.1)) <= 3 && abs(cr - Int(expected.2)) <= 3,
                    "sample \(index): \(y),\(cb),\(cr) should be \(expected)")
        }
        #expect(feed.loopCount >= 2)
        #expect(rig.probe.faults.isEmpty)
    }

    @Test("a file whose size is not the stream's is refused with invalidFeed while streaming")
    func mismatchWhileStreaming() throws {
        let path = try writeY4M([flatFrame(width: 360, height: 640, y: 50, cb: 100, cr: 150)])
        defer { try? FileManager.default.removeItem(atPath: path) }
        let rig = try Rig()
        rig.start(config(.raw, .medium, 15))
        rig.run(0.2)
        let before = rig.probe.samples
        #expect(!before.isEmpty)
        do {
            try rig.glasses.setCameraFeed(.videoFile(try VideoFileFeed(path: path)))
            Issue.record("a 360x640 feed was accepted for a 504x896 stream")
        } catch {
            #expect(error.code == .invalidFeed)
            #expect(error.message.contains("360x640") && error.message.contains("504x896"))
        }
        #expect(rig.glasses.hasGroundTruth)
        rig.run(0.2)
        // The rendered person keeps streaming at the configured size.
        #expect(rig.probe.samples.count > before.count)
        #expect(rig.probe.faults.isEmpty)
    }

    @Test("a stream started at another size than the file stops with videoStreamingError, sending nothing")
    func mismatchAtStreamStart() throws {
        let path = try writeY4M([flatFrame(width: 360, height: 640, y: 50, cb: 100, cr: 150)])
        defer { try? FileManager.default.removeItem(atPath: path) }
        let rig = try Rig()
        try rig.glasses.setCameraFeed(.videoFile(try VideoFileFeed(path: path)))
        rig.start(config(.raw, .medium, 15))
        rig.run(0.5)
        #expect(rig.probe.samples.isEmpty)
        #expect(rig.probe.faults == [.videoStreamingError])
    }

    @Test("unreadable and unsupported files are refused with invalidFeed")
    func badFiles() throws {
        do {
            _ = try VideoFileFeed(path: "/nonexistent/feed.y4m")
            Issue.record("a missing file opened")
        } catch {
            #expect(error.code == .invalidFeed)
            #expect(error.message.contains("cannot read"))
        }
        let text = FileManager.default.temporaryDirectory.appendingPathComponent("feed-\(UUID().uuidString).txt").path
        try Data("not a video at all\n".utf8).write(to: URL(fileURLWithPath: text))
        defer { try? FileManager.default.removeItem(atPath: text) }
        do {
            _ = try VideoFileFeed(path: text)
            Issue.record("a text file opened as a video feed")
        } catch {
            #expect(error.code == .invalidFeed)
            // The file's kind is the problem: the formats that play are said, and the file named once.
            #expect(error.message.hasPrefix("the video feed \(text) is not a video file"), "\(error.message)")
            #expect(error.message.hasSuffix(VideoFileFeed.formatHint), "\(error.message)")
            #expect(error.message.components(separatedBy: text).count == 2, "\(error.message)")
        }
    }

    @Test("a feed refusal names the file once and gives the formats only when the file's kind is the problem",
          arguments: [("F0:1", "the Y4M frame rate F0:1 is out of range", false),
                      ("C444", "Y4M colour space C444 is not supported (8-bit 4:2:0 only)", false),
                      ("Ib", "Y4M interlacing Ib is not supported", true)])
    func refusalsNameTheFileOnce(_ field: String, _ reason: String, _ hint: Bool) throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("feed-\(UUID().uuidString).y4m").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        var header = "YUV4MPEG2 W360 H640 F15:1 Ip C420jpeg"
        header = header.replacingOccurrences(of: field.hasPrefix("F") ? "F15:1" : field.hasPrefix("C") ? "C420jpeg" : "Ip", with: field)
        try (Data("\(header)\nFRAME\n".utf8) + Data(repeating: 128, count: 360 * 640 * 3 / 2)).write(to: URL(fileURLWithPath: path))
        do {
            _ = try VideoFileFeed(path: path)
            Issue.record("\(header) opened")
        } catch {
            #expect(error.code == .invalidFeed)
            #expect(error.message.hasPrefix("the video feed \(path): \(reason)"), "\(error.message)")
            #expect(error.message.components(separatedBy: path).count == 2, "named once: \(error.message)")
            #expect(error.message.contains(VideoFileFeed.formatHint) == hint, "\(error.message)")
            #expect(!error.message.contains("unsupported video feed file"))
        }
    }

    @Test("a feed that fails mid-stream (a Y4M cut in its third frame) stops the stream with videoStreamingError and reports the reason once to the feed-failure handler")
    func failureMidStreamIsReported() throws {
        let frames = colours.map { flatFrame(width: 360, height: 640, y: $0.0, cb: $0.1, cr: $0.2) }
        let whole = try writeY4M(frames)
        defer { try? FileManager.default.removeItem(atPath: whole) }
        let data = try Data(contentsOf: URL(fileURLWithPath: whole))
        let path = whole + ".cut.y4m"
        try data.prefix(data.count - 1000).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }

        let rig = try Rig()
        let reported = Mutex<[SimulatorError]>([])
        rig.glasses.setFeedFailureHandler { error in reported.withLock { $0.append(error) } }
        try rig.glasses.setCameraFeed(.videoFile(try VideoFileFeed(path: path)))
        rig.start(config(.raw, .low, 15))
        rig.run(1.0)
        #expect(rig.probe.samples.count == 2, "the two whole frames, then nothing")
        let errors = reported.withLock { $0 }
        #expect(errors.count == 1, "\(errors)")
        #expect(errors.first?.code == .invalidFeed)
        #expect(errors.first?.message.hasPrefix("the video feed \(path) is truncated: frame 3") == true, "\(errors)")
        let faults = rig.probe.messages.compactMap { message -> (DeviceStreamFault, String?)? in
            if case .fault(let fault, let text) = message { return (fault, text) } else { return nil }
        }
        #expect(faults.count == 1 && faults.first?.0 == .videoStreamingError && faults.first?.1 == errors.first?.message,
                "the host hears the same reason: \(faults)")
    }

    @Test("an H.264 file plays as a feed, but is refused for passthrough up front: it has no HEVC samples to pass")
    func h264PassthroughRefused() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("feed-\(UUID().uuidString).mp4").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let ffmpeg = Process()
        ffmpeg.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        ffmpeg.arguments = ["ffmpeg", "-hide_banner", "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i",
                            "testsrc2=size=360x640:rate=15", "-frames:v", "6", "-c:v", "libx264", "-pix_fmt", "yuv420p", path]
        try ffmpeg.run()
        ffmpeg.waitUntilExit()
        try #require(ffmpeg.terminationStatus == 0, "ffmpeg with libx264 is needed to make the H.264 file")
        let decoding = try VideoFileFeed(path: path)
        #expect(decoding.isHEVC && !decoding.passthrough)
        do {
            _ = try VideoFileFeed(path: path, passthrough: true)
            Issue.record("an H.264 file was opened for passthrough")
        } catch {
            #expect(error.code == .invalidFeed)
            #expect(error.message == "the video feed \(path) is H.264 video: only an HEVC file's samples can be passed through")
        }
    }

    /// `frames` (360x640) encoded at 15 fps to a fresh HEVC file, with keyframes forced at `keyframes`; its path.
    private static func writeHEVC(_ frames: [RawVideoImage], keyframes: Set<Int>) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("feed-\(UUID().uuidString).hevc").path
        let encoder = try HEVCEncoder(width: 360, height: 640, frameRate: 15, bitrate: 2_000_000)
        let writer = try HEVCFileWriter(path: path, codecConfiguration: encoder.codecConfiguration)
        var encoded: [EncodedHEVCSample] = []
        for (index, frame) in frames.enumerated() {
            encoded += try encoder.encode(frame, presentationTimeUs: Int64(index) * 66_667, forceKeyframe: keyframes.contains(index))
        }
        encoded += try encoder.flush()
        for sample in encoded { try writer.write(sample, codecConfiguration: encoder.codecConfiguration) }
        try writer.finish()
        return path
    }

    /// An HEVC file of `count` slowly changing frames (no scene cut, so the keyframes are the forced ones); its path.
    private static func writeHEVC(count: Int, keyframes: Set<Int>) throws -> String {
        try writeHEVC((0..<count).map { flatFrame(width: 360, height: 640, y: UInt8(60 + $0), cb: 110, cr: 140) },
                      keyframes: keyframes)
    }

    /// The file's samples as the reader gives them.
    private static func fileSamples(_ path: String) throws -> [HEVCSample] {
        let reader = try VideoFileReader(path: path)
        var samples: [HEVCSample] = []
        while let frame = try reader.nextFrame() {
            if case .hevc(let sample) = frame.content { samples.append(sample) }
        }
        return samples
    }

    @Test("a passthrough feed streams the file's own HEVC samples byte for byte, on the glasses' clock, looping")
    func passthroughStreamsTheFileSamples() throws {
        let path = try Self.writeHEVC(count: 8, keyframes: [0, 4])
        defer { try? FileManager.default.removeItem(atPath: path) }
        let file = try Self.fileSamples(path)
        #expect(file.count == 8)
        #expect(file.map(\.isKeyframe) == [true, false, false, false, true, false, false, false])

        let feed = try VideoFileFeed(path: path, passthrough: true)
        #expect(feed.passthrough)
        let rig = try Rig()
        try rig.glasses.setCameraFeed(.videoFile(feed))
        rig.start(config(.hvc1, .low, 15))
        rig.run(1.3)
        let samples = rig.probe.samples
        #expect(samples.count >= 16)
        for (index, sample) in samples.enumerated() {
            let expected = file[index % file.count]
            #expect(sample.format == .hevc)
            #expect(sample.payload == expected.data, "sample \(index) should be file sample \(index % file.count)")
            #expect(sample.isKeyframe == expected.isKeyframe)
        }
        let deltas = zip(samples.dropFirst(), samples).map { $0.presentationTimeUs - $1.presentationTimeUs }
        #expect(deltas.allSatisfy { abs($0 - 66_667) <= 1 })
        // The parameter sets go first, once: the file's own.
        let configurations = rig.probe.messages.compactMap { m -> HEVCCodecConfiguration? in
            if case .codecConfiguration(let c) = m { c } else { nil }
        }
        #expect(configurations == [file[0].codecConfiguration])
        guard let firstSample = rig.probe.messages.firstIndex(where: { if case .videoSample = $0 { true } else { false } }),
              let firstConfiguration = rig.probe.messages.firstIndex(where: { if case .codecConfiguration = $0 { true } else { false } })
        else {
            Issue.record("no sample or no codec configuration was sent")
            return
        }
        #expect(firstConfiguration < firstSample)
        #expect(feed.samplesDelivered == samples.count)
        #expect(feed.passthroughLoopCount == (samples.count - 1) / file.count)
        #expect(feed.samplesSkippedToKeyframe == 0)
        // Nothing was decoded for the stream: the decoding position is where opening the feed left it.
        #expect(feed.framesDelivered == 0)
        #expect(rig.probe.faults.isEmpty)
    }

    @Test("a passthrough feed resumes at the file's next keyframe when the host needs one, with its parameter sets")
    func passthroughResyncSkipsToKeyframe() throws {
        let path = try Self.writeHEVC(count: 8, keyframes: [0, 4])
        defer { try? FileManager.default.removeItem(atPath: path) }
        let file = try Self.fileSamples(path)
        let feed = try VideoFileFeed(path: path, passthrough: true)
        let first = try feed.nextSample(resync: true)
        #expect(first.sample == file[0] && first.sendConfiguration)
        let second = try feed.nextSample(resync: false)
        #expect(second.sample == file[1] && !second.sendConfiguration)
        // Credit was lost after sample 1: samples 2 and 3 predict from it, so the feed goes on at sample 4.
        let resumed = try feed.nextSample(resync: true)
        #expect(resumed.sample == file[4] && resumed.sendConfiguration)
        #expect(feed.samplesSkippedToKeyframe == 2)
        for index in 5..<8 { #expect(try feed.nextSample(resync: false).sample == file[index]) }
        // The loop starts again at the first keyframe; same parameter sets, so they are not sent again.
        let looped = try feed.nextSample(resync: false)
        #expect(looped.sample == file[0] && !looped.sendConfiguration)
        #expect(feed.passthroughLoopCount == 1)
        // A resync past the last keyframe wraps to the first one.
        _ = try feed.nextSample(resync: false)
        _ = try feed.nextSample(resync: false)
        _ = try feed.nextSample(resync: false)
        _ = try feed.nextSample(resync: false)
        _ = try feed.nextSample(resync: false)
        let wrapped = try feed.nextSample(resync: true)
        #expect(wrapped.sample == file[0] && wrapped.sendConfiguration)
        #expect(feed.passthroughLoopCount == 2)
    }

    @Test("the encoder's resync rule for passed-through samples: a stream start, and credit drops since the last")
    func passthroughResyncRule() {
        let encoder = FrameEncoder()
        #expect(!encoder.takeResync(linkDrops: 0))
        encoder.configurationPending()
        #expect(encoder.takeResync(linkDrops: 0))
        #expect(!encoder.takeResync(linkDrops: 0))
        #expect(encoder.takeResync(linkDrops: 3))
        #expect(!encoder.takeResync(linkDrops: 3))
    }

    @Test("passthrough is refused for a Y4M file, and a feed opened without it has no samples to pass")
    func passthroughRefusals() throws {
        let y4m = try writeY4M([flatFrame(width: 360, height: 640, y: 50, cb: 100, cr: 150)])
        defer { try? FileManager.default.removeItem(atPath: y4m) }
        do {
            _ = try VideoFileFeed(path: y4m, passthrough: true)
            Issue.record("a Y4M file was opened for passthrough")
        } catch {
            #expect(error.code == .invalidFeed)
            #expect(error.message.contains("only an HEVC file"))
        }
        let hevc = try Self.writeHEVC(count: 2, keyframes: [0])
        defer { try? FileManager.default.removeItem(atPath: hevc) }
        let decoding = try VideoFileFeed(path: hevc)
        #expect(!decoding.passthrough)
        do {
            _ = try decoding.nextSample(resync: true)
            Issue.record("a decoding feed handed out a sample")
        } catch {
            #expect(error.code == .invalidFeed)
        }
    }
}
