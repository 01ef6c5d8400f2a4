import Foundation
import GlassesMedia
import Testing
@testable import GlassesVideo

/// The capture time a publisher stamps into its frames (`CaptureTimeSEI`): built, escaped and read back for both
/// codecs, found among a frame's NAL units, and never read from what is not ours or is cut short.
@Suite("Capture-time SEI")
struct CaptureTimeSEITests {
    @Test("a time round-trips through an HEVC prefix SEI and an H.264 SEI, with emulation prevention where its bytes need it",
          arguments: [Int64(1_765_000_000_123_456), 0x0000_0000_0300_0001, Int64.max, 0])
    func roundTrip(time: Int64) throws {
        for codec in [CaptureTimeSEI.Codec.hevc, .h264] {
            let unit = CaptureTimeSEI.nalUnit(captureWallUs: time, codec: codec)
            #expect(CaptureTimeSEI.captureWallUs(inNALUnit: unit, codec: codec) == time)
            // No start code (0 0 1) nor the forbidden 0 0 0 and 0 0 2 may appear inside the unit: the escaping is for that.
            let bytes = [UInt8](unit)
            let startCode = zip(zip(bytes, bytes.dropFirst()), bytes.dropFirst(2)).contains { $0.0 == 0 && $0.1 == 0 && $1 <= 2 }
            #expect(!startCode, "\(bytes)")
        }
        let hevc = CaptureTimeSEI.nalUnit(captureWallUs: time, codec: .hevc)
        #expect(HEVCNALUnits.type(of: hevc) == 39)
        #expect(CaptureTimeSEI.nalUnit(captureWallUs: time, codec: .h264).first == 6)
    }

    @Test("escaping inserts 0x03 after two zero bytes before 0 to 3, and unescaping removes exactly those")
    func escaping() {
        #expect(EmulationPrevention.inserted(into: [0, 0, 1, 0, 0, 0, 0, 0, 4]) == [0, 0, 3, 1, 0, 0, 3, 0, 0, 3, 0, 4])
        #expect(EmulationPrevention.removed(from: [0, 0, 3, 1, 0, 0, 3, 0, 0, 3, 0, 4]) == [0, 0, 1, 0, 0, 0, 0, 0, 4])
    }

    @Test("other SEI (another UUID, another payload type), other NAL types and truncated or hostile units give no time")
    func refusals() {
        var foreign = CaptureTimeSEI.nalUnit(captureWallUs: 42, codec: .hevc)
        foreign[4] ^= 0xFF  // the UUID's first byte (after the header and the type and size bytes)
        #expect(CaptureTimeSEI.captureWallUs(inNALUnit: foreign, codec: .hevc) == nil)
        let ours = CaptureTimeSEI.nalUnit(captureWallUs: 42, codec: .hevc)
        #expect(CaptureTimeSEI.captureWallUs(inNALUnit: ours, codec: .h264) == nil, "an HEVC unit read as H.264")
        for length in 0 ..< ours.count - 1 {
            _ = CaptureTimeSEI.captureWallUs(inNALUnit: ours.prefix(length), codec: .hevc)  // must not trap
        }
        #expect(CaptureTimeSEI.captureWallUs(inNALUnit: ours.prefix(20), codec: .hevc) == nil)
        // A payload size far beyond the unit, and a size made of many 0xFF bytes.
        #expect(CaptureTimeSEI.captureWallUs(inNALUnit: Data([39 << 1, 1, 5, 200, 1, 2, 3]), codec: .hevc) == nil)
        #expect(CaptureTimeSEI.captureWallUs(inNALUnit: Data([39 << 1, 1, 5] + Array(repeating: 0xFF, count: 5000)), codec: .hevc) == nil)
        // A slice is not an SEI.
        #expect(CaptureTimeSEI.captureWallUs(inNALUnit: Data([1 << 1, 1] + Array(ours.dropFirst(2))), codec: .hevc) == nil)
        // A first message of another type is walked past to ours.
        let other: [UInt8] = [39 << 1, 1, 4, 3, 0xB5, 0, 1]
        let combined = Data(other + ours.dropFirst(2))
        #expect(CaptureTimeSEI.captureWallUs(inNALUnit: combined, codec: .hevc) == 42)
    }
}

/// Capture times read by `NetworkStreamReader` from a stream the way a publisher sends them: HEVC stamped by us in
/// MPEG-TS, and the same re-encoded by the ffmpeg CLI to H.264 with `-udu_sei 1` (what the RTMP route's transcode
/// does), read through libavformat's `file` protocol.
@Suite("Capture-time SEI through a stream")
struct CaptureTimeStreamTests {
    @Test("NetworkStreamReader reports each frame's stamped capture time, for HEVC and after an H.264 transcode")
    func readerReportsStampedTimes() throws {
        let folder = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let encoder = try HEVCEncoder(width: 360, height: 640, frameRate: 15)
        let hevcPath = folder.appendingPathComponent("stamped.ts").path
        let writer = try HEVCFileWriter(path: hevcPath, codecConfiguration: encoder.codecConfiguration)
        let base: Int64 = 1_765_000_000_000_000
        var stamped: [Int64] = []
        for index in 0 ..< 30 {
            let time = Int64(index) * 66_667
            for var sample in try encoder.encode(syntheticImage(width: 360, height: 640, index: index), presentationTimeUs: time) {
                let captured = base + sample.presentationTimeUs
                let unit = CaptureTimeSEI.nalUnit(captureWallUs: captured, codec: .hevc)
                var prefix = Data(count: 4)
                prefix.withUnsafeMutableBytes { $0.storeBytes(of: UInt32(unit.count).bigEndian, as: UInt32.self) }
                sample.data = prefix + unit + sample.data
                try writer.write(sample, codecConfiguration: encoder.codecConfiguration)
                stamped.append(captured)
            }
        }
        for sample in try encoder.flush() {
            try writer.write(sample, codecConfiguration: encoder.codecConfiguration)
        }
        try writer.finish()
        let h264Path = folder.appendingPathComponent("transcoded.ts").path
        try Tool.ffmpeg(["-i", hevcPath, "-c:v", "libx264", "-udu_sei", "1", "-preset", "ultrafast", "-tune", "zerolatency", "-f", "mpegts", h264Path])

        for (path, codec) in [(hevcPath, "hevc"), (h264Path, "h264")] {
            let request = NetworkStreamRequest(url: path, label: path, format: "mpegts", options: ["protocol_whitelist": "file"])
            let reader = try NetworkStreamReader(request: request, interrupt: NetworkStreamInterrupt(), openTimeout: .seconds(10))
            #expect(reader.codec == codec)
            var read: [Int64] = []
            while try reader.nextFrame(readTimeout: .seconds(10)) != nil {
                if let captured = reader.lastFrameCaptureWallUs { read.append(captured) }
            }
            #expect(read == Array(stamped.prefix(read.count)) && read.count >= 29, "\(codec): \(read.count) of \(stamped.count): \(read.prefix(3))")
        }
        // Frames without a stamp report none.
        let plain = folder.appendingPathComponent("plain.ts").path
        try Tool.ffmpeg(["-i", hevcPath, "-c:v", "libx264", "-preset", "ultrafast", "-f", "mpegts", plain])
        let reader = try NetworkStreamReader(request: NetworkStreamRequest(url: plain, label: plain, format: "mpegts", options: ["protocol_whitelist": "file"]),
                                             interrupt: NetworkStreamInterrupt(), openTimeout: .seconds(10))
        var any = false
        while try reader.nextFrame(readTimeout: .seconds(10)) != nil { any = any || reader.lastFrameCaptureWallUs != nil }
        #expect(!any, "a frame without the SEI reported a capture time")
    }
}
