import Foundation
import SmartSpectraInput
import Testing
import WearablesKit
@testable import GlassesVideo

@Suite("Pixel buffer pool and raw frames")
struct PoolAndRawTests {
    @Test("no allocations after warm-up when frames are dropped promptly")
    func steadyStateReuse() throws {
        let (configuration, samples) = try encodeSegment(width: 360, height: 640, start: 0, count: 30, keyframeInterval: 10)
        for format in [PixelFormat.nv12VideoRange, .bgra32] {
            let decoder = try VideoFrameDecoder(outputFormat: format)
            var afterWarmUp = 0
            for (index, sample) in samples.enumerated() {
                let frames = try decoder.decode(videoFrame(sample, configuration))
                #expect(frames.count == 1)
                if index == 2 { afterWarmUp = decoder.pool.statistics.allocations }
            }
            let statistics = decoder.pool.statistics
            #expect(statistics.allocations == afterWarmUp, "\(format): allocations grew after warm-up")
            #expect(statistics.allocations <= 2)
            #expect(statistics.reuses >= 28)
            #expect(statistics.outstanding == 0)
        }
    }

    @Test("a held buffer is never reused or overwritten; it returns when released")
    func heldBufferIsKept() throws {
        let (configuration, samples) = try encodeSegment(width: 360, height: 640, start: 0, count: 12)
        let decoder = try VideoFrameDecoder()
        var held: PixelBuffer? = try decoder.decode(videoFrame(samples[0], configuration)).first?.pixelBuffer
        let snapshot = ChromaRepacking.i420Data(from: held!)
        let heldAddress = held!.withUnsafeStorage { UInt(bitPattern: $0.baseAddress) }
        for sample in samples.dropFirst() {
            let frame = try #require(try decoder.decode(videoFrame(sample, configuration)).first)
            let address = frame.pixelBuffer.withUnsafeStorage { UInt(bitPattern: $0.baseAddress) }
            #expect(address != heldAddress)
        }
        #expect(ChromaRepacking.i420Data(from: held!) == snapshot, "held picture was overwritten")
        #expect(decoder.pool.statistics.outstanding == 1)
        held = nil
        #expect(decoder.pool.statistics.outstanding == 0)
        #expect(decoder.pool.statistics.idle >= 1)
    }

    @Test("buffers of an old size are freed, not reused, after a resolution change")
    func resizeDropsOldStorage() {
        let pool = PixelBufferPool(maximumIdleBuffers: 4)
        var small: PixelBuffer? = pool.makeNV12(width: 64, height: 64, fullRange: false)
        var big: PixelBuffer? = pool.makeNV12(width: 128, height: 128, fullRange: false)
        #expect(small != nil && big != nil)
        small = nil
        #expect(pool.statistics.idle == 0, "old-size storage must be freed")
        big = nil
        #expect(pool.statistics.idle == 1)
        let again = pool.makeNV12(width: 128, height: 128, fullRange: false)
        #expect(again.width == 128)
        #expect(pool.statistics.allocations == 2 && pool.statistics.reuses == 1 && pool.statistics.outstanding == 1)
    }

    @Test("raw NV12: 420v is an exact copy, 420f and BGRA match ffmpeg's conversion of the same bytes")
    func rawFrames() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // Padded source rows, as a device may send them.
        let tight = syntheticImage(width: 360, height: 640, index: 3)
        var padded = Data()
        for row in 0 ..< 640 { padded.append(tight.data[row * 360 ..< row * 360 + 360]); padded.append(Data(repeating: 0xEE, count: 24)) }
        for row in 0 ..< 320 {
            let start = 360 * 640 + row * 360
            padded.append(tight.data[start ..< start + 360]); padded.append(Data(repeating: 0xEE, count: 24))
        }
        let image = try #require(RawVideoImage(width: 360, height: 640, lumaBytesPerRow: 384, chromaBytesPerRow: 384, data: padded))
        let frame = VideoFrame(presentationTimeUs: 42, content: .raw(image))

        let nv12 = try #require(try VideoFrameDecoder(outputFormat: .nv12VideoRange).decode(frame).first)
        #expect(nv12.presentationTimeUs == 42)
        #expect(ChromaRepacking.i420Data(from: nv12.pixelBuffer) == ChromaRepacking.i420Data(from: tight))

        let rawFile = directory.appendingPathComponent("in.nv12")
        try tight.data.write(to: rawFile)
        let bgra = try #require(try VideoFrameDecoder(outputFormat: .bgra32).decode(frame).first)
        let bgraReference = try Tool.ffmpeg(["-f", "rawvideo", "-pix_fmt", "nv12", "-s", "360x640", "-i", rawFile.path,
                                             "-f", "rawvideo", "-pix_fmt", "bgra", "-"])
        #expect(tightBGRA(bgra.pixelBuffer) == bgraReference)
    }

    @Test("an unsupported output format is a typed error")
    func unsupportedFormat() throws {
        #expect(throws: VideoCodecError.self) { try VideoFrameDecoder(outputFormat: .rgba32) }
        let decoder = try VideoFrameDecoder()
        decoder.outputFormat = .yuv420Planar
        do {
            _ = try decoder.decode(VideoFrame(presentationTimeUs: 0, content: .raw(syntheticImage(width: 16, height: 16, index: 0))))
            Issue.record("accepted an unsupported format")
        } catch {
            #expect(error.code == .unsupportedPixelFormat)
        }
    }
}
