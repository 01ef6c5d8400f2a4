import Foundation
@testable import GlassesBridge
import Testing

/// Recordings as other tools read them: an `hvc1` MP4 whose duration includes the last frame, raw Y4M that refuses
/// a gap it cannot keep, BGRA `--video-out` refused.
@Suite("Recording fidelity", .serialized)
struct RecordingFidelityTests {
    static func temporary(_ name: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("fidelity-\(getpid())-\(name)").path
    }

    static func ffprobe(_ arguments: [String]) throws -> String? {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/ffprobe") else { return nil }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/ffprobe")
        process.arguments = arguments
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    @Test func anHvc1RecordingIsTaggedHvc1AndItsDurationIncludesTheLastFrame() throws {
        let path = Self.temporary("rec.mp4")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = try BinaryRunner.run([
            "--codec", "hvc1", "--no-realtime", "--duration", "3", "--fps", "15", "--resolution", "low",
            "--record", path, "--format", "ndjson",
        ])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        guard let probe = try Self.ffprobe([
            "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=codec_tag_string,nb_frames,duration",
            "-of", "default=noprint_wrappers=1", path,
        ]) else { return }
        var fields: [String: String] = [:]
        for line in probe.split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1).map(String.init)
            if parts.count == 2 { fields[parts[0]] = parts[1] }
        }
        #expect(fields["codec_tag_string"] == "hvc1", "\(probe)")
        let frames = try #require(fields["nb_frames"].flatMap(Double.init), "\(probe)")
        let duration = try #require(fields["duration"].flatMap(Double.init), "\(probe)")
        // n frames at 15 fps last n/15 s: the last frame's 1/15 s is included.
        #expect(abs(duration - frames / 15) < 0.002, "duration \(duration) for \(frames) frames")
    }

    @Test func aRawY4MRecordingEndsTheRunAtAPauseItCouldNotKeep() throws {
        let scenario = Self.temporary("pause.json")
        let path = Self.temporary("rec.y4m")
        defer {
            try? FileManager.default.removeItem(atPath: scenario)
            try? FileManager.default.removeItem(atPath: path)
        }
        try #"{"name":"pause","duration":10,"events":[{"at":3,"do":"tap"},{"at":6,"do":"tap"}]}"#
            .write(toFile: scenario, atomically: true, encoding: .utf8)
        let result = try BinaryRunner.run([
            "--sim-scenario", scenario, "--no-realtime", "--resolution", "low", "--fps", "15", "--record", path,
            "--format", "ndjson",
        ])
        #expect(result.status == 73, "stdout: \(result.stdout.suffix(400))")
        #expect(result.stderr.contains("no timestamps"))
        let last = try #require(result.lines.last)
        let summary = try #require(TestJSON.parse(last))
        #expect(summary["reason"]?.string == "outputFailed")
        #expect(summary["error"]?["code"]?.string == "outputFailed")
    }

    @Test func anHvc1MatroskaRecordingKeepsAPauseOnReplay() throws {
        let scenario = Self.temporary("pause2.json")
        let path = Self.temporary("rec.mkv")
        defer {
            try? FileManager.default.removeItem(atPath: scenario)
            try? FileManager.default.removeItem(atPath: path)
        }
        try #"{"name":"pause","duration":9,"events":[{"at":3,"do":"tap"},{"at":6,"do":"tap"}]}"#
            .write(toFile: scenario, atomically: true, encoding: .utf8)
        let record = try BinaryRunner.run([
            "--sim-scenario", scenario, "--no-realtime", "--resolution", "low", "--fps", "15", "--codec", "hvc1",
            "--record", path, "--format", "ndjson",
        ])
        #expect(record.status == 0, "stderr: \(record.stderr)")
        let replay = try BinaryRunner.run(["--device", "file:\(path)", "--no-realtime", "--format", "ndjson"])
        #expect(replay.status == 0, "stderr: \(replay.stderr)")
        let last = try #require(replay.lines.last)
        let summary = try #require(TestJSON.parse(last))
        // The 3 s pause is kept: about 6 s of frames span about 9 s, and custom input restarted across the gap.
        if case .number(let seconds)? = summary["durationSeconds"] {
            #expect(seconds > 8, "replay lasted \(seconds) s")
        } else if case .integer(let seconds)? = summary["durationSeconds"] {
            #expect(seconds > 8, "replay lasted \(seconds) s")
        }
        #expect(summary["inputRestarts"] != .integer(0))
    }

    @Test func theBinaryRefusesBGRAVideoOutWithAUsageError() throws {
        let path = Self.temporary("out.y4m")
        let result = try BinaryRunner.run(["--pixel-format", "bgra", "--video-out", path, "--no-realtime", "--duration", "2"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("BGRA"))
        #expect(!FileManager.default.fileExists(atPath: path))
    }
}
