import Foundation
import GlassesVideo
import Testing
import WearablesKit
@testable import GlassesBridge

/// `--record`, `--video-out` and `--device file:` through the pipeline.
@Suite("Recording and replay", .serialized)
struct RecordReplayTests {
    @Test func hevcIsRecordedSubmittedFramesAreWrittenAndTheRecordingReplays() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("gb-record-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let record = directory.appendingPathComponent("glasses.mkv").path
        let submitted = directory.appendingPathComponent("submitted.y4m").path

        let run = try SimulatedRun(codec: .hvc1, seconds: 3) { settings in
            settings.recordPath = record
            settings.videoOutPath = submitted
        }
        let first = await run.run()
        let accounting = first.summary.stats.accounting
        #expect(first.exitCode == .success)
        #expect(accounting.isBalanced)
        #expect(accounting.submitted > 0)

        // --video-out holds exactly the submitted frames.
        let reader = try Y4MReader(path: submitted)
        var frames: UInt64 = 0
        while try reader.nextFramePayload() != nil { frames += 1 }
        #expect(frames == accounting.submitted)

        // The recording replays as a device would send it: every received frame is there.
        let events = EventLog()
        var settings = BridgeSettings(streamConfiguration: try StreamConfiguration.validated(videoCodec: .hvc1, resolution: .low, frameRate: 24))
        settings.duration = nil
        let replay = BridgePipeline(
            settings: settings, source: .file(record), clock: .virtual(ManualScheduler()), backend: RecordingBackend()
        ) { event, time in events.append(event, time) }
        let second = await replay.run()
        let replayed = second.summary.stats.accounting
        #expect(second.exitCode == .success, "\(String(describing: second.summary.failure))")
        #expect(second.summary.reason == "endOfFile")
        #expect(replayed.isBalanced)
        #expect(replayed.received == accounting.received)
        #expect(replayed.submitted == replayed.received)
    }
}
