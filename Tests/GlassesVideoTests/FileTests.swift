import Foundation
import SmartSpectraInput
import Testing
import WearablesKit
@testable import GlassesVideo

@Suite("Y4M and container files")
struct FileTests {
    @Test("NV12 (video and full range) buffers round-trip through Y4M byte for byte (BGRA is refused: HostileFileTests)")
    func y4mRoundTrip() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (configuration, samples) = try encodeSegment(width: 360, height: 640, start: 0, count: 3)
        for format in [PixelFormat.nv12VideoRange, .nv12FullRange] {
            let decoder = try VideoFrameDecoder(outputFormat: format)
            let buffers = try samples.flatMap { try decoder.decode(videoFrame($0, configuration)) }.map(\.pixelBuffer)
            let path = directory.appendingPathComponent("\(format).y4m").path
            let writer = try Y4MWriter(path: path, frameRateNumerator: 30)
            for buffer in buffers { try writer.write(buffer) }
            try writer.close()

            let reader = try Y4MReader(path: path)
            var back: [PixelBuffer] = []
            while let buffer = try reader.nextPixelBuffer() { back.append(buffer) }
            #expect(back.count == buffers.count)
            for (original, copy) in zip(buffers, back) {
                #expect(copy.format == original.format)
                #expect(ChromaRepacking.i420Data(from: copy) == ChromaRepacking.i420Data(from: original))
            }
            // Other tools read it too: ffmpeg sees the same pictures.
            let ours = try ourFrameMD5s(buffers, directory: directory)
            #expect(try Tool.frameMD5s(path) == ours)
        }
    }

    @Test("a Y4M file plays as raw device frames with the header's timing; ffmpeg-made Y4M too")
    func y4mAsDevice() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("clip.y4m").path
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=360x640:rate=15", "-frames:v", "4", "-pix_fmt", "yuv420p", path])
        let reader = try VideoFileReader(path: path)
        #expect(reader.kind == .y4m)
        var frames: [VideoFrame] = []
        while let frame = try reader.nextFrame() { frames.append(frame) }
        #expect(frames.map(\.presentationTimeUs) == [0, 66_666, 133_333, 200_000])
        let images = frames.compactMap { frame -> RawVideoImage? in
            if case .raw(let image) = frame.content { return image }
            return nil
        }
        #expect(images.count == 4)
        let raw = directory.appendingPathComponent("ours.yuv")
        try images.reduce(into: Data()) { $0.append(ChromaRepacking.i420Data(from: $1)) }.write(to: raw)
        #expect(try Tool.frameMD5s(pixelFormat: "yuv420p", rawInput: raw.path, width: 360, height: 640) == Tool.frameMD5s(path))

        // RawVideoImage → Y4MWriter → reader gives the same images.
        let copyPath = directory.appendingPathComponent("copy.y4m").path
        let writer = try Y4MWriter(path: copyPath, frameRateNumerator: 15)
        for image in images { try writer.write(image) }
        try writer.close()
        let again = try VideoFileReader(path: copyPath)
        for image in images {
            guard case .raw(let copy) = try again.nextFrame()?.content else { Issue.record("missing frame"); continue }
            #expect(copy == image)
        }
        #expect(try again.nextFrame() == nil)
    }

    @Test("container writer output is accepted by ffmpeg -v error with empty stderr, across a resolution change",
          arguments: HEVCFileWriter.Container.allCases)
    func containerWriter(_ container: HEVCFileWriter.Container) throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = try encodeSegment(width: 720, height: 1280, start: 0, count: 3)
        let second = try encodeSegment(width: 504, height: 896, start: 3, count: 3)
        let names: [HEVCFileWriter.Container: String] = [.mp4: "mp4", .matroska: "mkv", .mpegts: "ts", .annexB: "hevc"]
        let path = directory.appendingPathComponent("out.\(names[container] ?? "hevc")").path
        let writer = try HEVCFileWriter(path: path, codecConfiguration: first.0)
        #expect(writer.container == container)
        for (configuration, samples) in [first, second] {
            for sample in samples { try writer.write(sample, codecConfiguration: configuration) }
        }
        try writer.finish()
        let run = try Tool.run("ffmpeg", ["-hide_banner", "-nostdin", "-v", "error", "-i", path, "-f", "null", "-"])
        #expect(run.status == 0)
        #expect(run.errorText.isEmpty, "ffmpeg said: \(run.errorText)")
        // MPEG-TS (what glasses-sim --publish sends) is not a file container the bridge plays; ffmpeg's word is the check.
        guard container != .mpegts else { return }
        let (frames, decoder) = try decodeFile(path)
        #expect(frames.map(\.pixelBuffer.width) == [720, 720, 720, 504, 504, 504])
        #expect(decoder.statistics.corrupt == 0)
    }

    @Test("files that are not video are typed errors")
    func badFiles() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let junk = directory.appendingPathComponent("junk.mp4")
        try Data((0 ..< 5000).map { UInt8(truncatingIfNeeded: $0 &* 7919) }).write(to: junk)
        #expect(throws: VideoCodecError.self) { try VideoFileReader(path: junk.path) }
        #expect(throws: VideoCodecError.self) { try VideoFileReader(path: directory.appendingPathComponent("missing.hevc").path) }
        let badY4M = directory.appendingPathComponent("bad.y4m")
        try Data("YUV4MPEG2 W0 H10 C420jpeg\n".utf8).write(to: badY4M)
        #expect(throws: VideoCodecError.self) { try VideoFileReader(path: badY4M.path) }
        let truncated = directory.appendingPathComponent("short.y4m")
        try Data("YUV4MPEG2 W16 H16 F30:1 C420jpeg\nFRAME\n".utf8 + [UInt8](repeating: 1, count: 100)).write(to: truncated)
        let reader = try VideoFileReader(path: truncated.path)
        #expect(throws: VideoCodecError.self) { try reader.nextFrame() }
    }
}
