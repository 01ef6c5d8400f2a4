import Foundation
import GlassesMedia
import GlassesSimulator
import GlassesVideo
import Testing
import WearablesKit
@testable import GlassesBridge

/// Simulated glasses that send a file's own HEVC samples (the streams benchmark's `passthrough` series) reach custom
/// input through the whole chain: link, session, decoder, worker.
@Suite("Glasses passing a clip's HEVC through")
struct PassthroughGlassesTests {
    @Test("every sample of a passthrough feed is decoded and submitted, looping, with nothing dropped")
    func passthroughReachesCustomInput() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("passthrough-\(UUID().uuidString).hevc").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let encoder = try HEVCEncoder(width: 360, height: 640, frameRate: 15, bitrate: 1_000_000)
        let writer = try HEVCFileWriter(path: path, codecConfiguration: encoder.codecConfiguration)
        var encoded: [EncodedHEVCSample] = []
        for index in 0..<20 {
            var data = Data(repeating: UInt8(70 + index), count: 360 * 640)
            data.append(Data(repeating: 128, count: 360 * 320))
            let image = RawVideoImage(width: 360, height: 640, lumaBytesPerRow: 360, chromaBytesPerRow: 360, data: data)!
            encoded += try encoder.encode(image, presentationTimeUs: Int64(index) * 66_667, forceKeyframe: index % 10 == 0)
        }
        encoded += try encoder.flush()
        for sample in encoded { try writer.write(sample, codecConfiguration: encoder.codecConfiguration) }
        try writer.finish()

        let run = try SimulatedRun(codec: .hvc1, frameRate: 15, resolution: .low, seconds: 4)
        let feed = try VideoFileFeed(path: path, passthrough: true)
        try run.glasses.setCameraFeed(.videoFile(feed))
        let result = await run.run()
        let accounting = result.summary.stats.accounting
        #expect(result.exitCode == .success, "\(run.events.timeline)")
        #expect(accounting.dropped == 0, "dropped: \(accounting.droppedByReason)")
        #expect(accounting.submitted >= 50, "submitted \(accounting.submitted) of about 60 in 4 s at 15 fps")
        #expect(accounting.submitted <= UInt64(feed.samplesDelivered))
        #expect(feed.passthroughLoopCount >= 2)
        #expect(feed.samplesSkippedToKeyframe == 0)
        #expect(result.summary.stats.deviceDroppedFrames == 0)
    }
}
