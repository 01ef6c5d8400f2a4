import Foundation
import GlassesMedia
import GlassesVideo
import Testing

@Suite("Raw frames reach custom input without a copy")
struct ZeroCopyTests {
    @Test("a raw 420v frame decodes to a view over the received bytes; other layouts are converted copies")
    func raw420vIsAView() throws {
        let image = syntheticImage(width: 360, height: 640, index: 5)
        let frame = VideoFrame(presentationTimeUs: 7, content: .raw(image))
        let picture = try #require(try VideoFrameDecoder(outputFormat: .nv12VideoRange).decode(frame).first)
        #expect(picture.pixelBuffer.isView)
        let received = image.data.withUnsafeBytes { UInt(bitPattern: $0.baseAddress) }
        let submitted = picture.pixelBuffer.withUnsafeBytes(ofPlane: 0) { UInt(bitPattern: $0.baseAddress) }
        #expect(received == submitted, "the submitted buffer shares the received bytes")
        let chroma = picture.pixelBuffer.withUnsafeBytes(ofPlane: 1) { UInt(bitPattern: $0.baseAddress) }
        #expect(chroma == received + UInt(360 * 640))

        let bgra = try #require(try VideoFrameDecoder(outputFormat: .bgra32).decode(frame).first)
        #expect(!bgra.pixelBuffer.isView)
    }
}

@Suite("What a file says of its own length")
struct FileDurationTests {
    @Test("MP4 and Matroska report their container duration, bare HEVC does not", arguments: ["mp4", "mkv"])
    func containerDuration(ext: String) throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let annexB = directory.appendingPathComponent("clip.hevc").path
        try Tool.makeClip(annexB, width: 64, height: 64, frames: 30, noise: false)
        let container = directory.appendingPathComponent("clip.\(ext)").path
        _ = try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=64x64:rate=15", "-frames:v", "30", "-pix_fmt", "yuv420p",
                             "-c:v", "libx265", "-preset", "ultrafast", "-x265-params", "log-level=error", container])
        let seconds = try #require(try VideoFileReader(path: container).durationSeconds)
        #expect(abs(seconds - 2.0) < 0.15, "duration \(seconds)")
        #expect(try VideoFileReader(path: annexB).durationSeconds == nil)
    }
}
