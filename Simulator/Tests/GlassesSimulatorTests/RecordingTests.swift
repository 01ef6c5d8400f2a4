import GlassesVideo
import Foundation
import Testing
import WearablesKit
@testable import GlassesSimulator

@Suite("Recording what the glasses stream")
struct RecordingTests {
    @Test("the written file decodes with the ffmpeg CLI without an error", arguments: ["hevc", "mp4", "y4m"])
    func writtenFileDecodes(ext: String) throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("sim-rec-\(getpid())-\(ext).\(ext)").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let rig = try Rig()
        let recorder = StreamRecorder(path: path, frameRate: 15)
        recorder.attach(to: rig.glasses)
        rig.start(config(ext == "y4m" ? .raw : .hvc1, .low, 15))
        rig.run(2)
        try recorder.finish()
        #expect(recorder.written >= 29)
        #expect(try runFFmpegDecode(path) == 0)
    }
}
