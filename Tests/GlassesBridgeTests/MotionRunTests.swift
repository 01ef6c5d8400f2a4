import Foundation
@testable import GlassesBridge
import GlassesSimulator
import Testing
import WearablesKit

/// `--motion`: the glasses' IMU asked for, and the summary's word on its clock against the video's.
@Suite("The glasses' IMU in a run (--motion)")
struct MotionRunTests {
    /// A scenario file: a swaying head (0.02 of the width) and the IMU's clock shifted by `offsetMs`.
    static func swayScenario(offsetMs: Int) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("sway-\(getpid())-\(offsetMs).json").path
        try #"{"name": "sway", "imuClockOffsetMs": \#(offsetMs), "subject": {"headMotion": true, "headMotionAmplitude": 0.02}}"#
            .write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test("the built-in simulator's IMU clock shifted by -90 ms is reported within one frame interval (24 fps), as the schema says; without --motion the summary has no motion")
    func reportsTheShiftedClock() throws {
        let scenario = try Self.swayScenario(offsetMs: -90)
        defer { try? FileManager.default.removeItem(atPath: scenario) }
        let result = try BinaryRunner.run(["--no-realtime", "--duration", "20", "--resolution", "low", "--motion", "--format", "ndjson",
                                           "--sim-scenario", scenario])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let line = try #require(result.lines.last)
        let summary = try jsonObject(line)
        let motion = try #require(summary["motion"] as? [String: Any], "\(summary)")
        let offset = try #require(motion["clockOffsetMs"] as? Double, "\(motion)")
        #expect(abs(offset - -90) < 1000.0 / 24, "\(motion)")
        #expect((motion["samples"] as? Int ?? 0) >= 580, "30 Hz for 20 s: \(motion)")  // from the stream's start
        #expect((motion["framesMeasured"] as? Int ?? 0) >= 300 && motion["unavailable"] is NSNull, "\(motion)")
        // The engine had the same gyroscope, on custom input's timeline, and used it.
        #expect(motion["usedByEngine"] as? Bool == true, "\(motion)")
        let engineOffset = try #require(motion["engineClockOffsetMs"] as? Double, "\(motion)")
        #expect(abs(engineOffset - -90) < 1000.0 / 24, "\(motion)")
        let perRadian = try #require(motion["pixelsPerRadian"] as? [String: Double])
        let focal = SimulatedScene.focalLengthPerWidth * 360
        #expect(abs((perRadian["across"] ?? 0) / focal - 1) < 0.15 && abs((perRadian["down"] ?? 0) / focal - 1) < 0.15, "\(perRadian)")
        let problems = JSONSchemaValidator.problems(try #require(TestJSON.parse(line)), against: try NDJSONSchemaTests.schema("summary"))
        #expect(problems.isEmpty, "\(problems)")

        let text = try BinaryRunner.run(["--no-realtime", "--duration", "20", "--resolution", "low", "--motion", "--sim-scenario", scenario])
        #expect(text.stdout.contains("motion: ") && text.stdout.contains("ms behind the video's"), "\(text.stdout)")
        #expect(text.stdout.contains("motion in the vitals: ") && text.stdout.contains("gyroscope readings, on the engine's clock offset of -"),
                "\(text.stdout)")
        let plain = try BinaryRunner.run(["--no-realtime", "--duration", "2", "--resolution", "low", "--format", "ndjson"])
        #expect(try jsonObject(try #require(plain.lines.last))["motion"] == nil)
    }

    @Test("the glasses' clocks, not custom input's timeline: glasses whose clock ran 3 s before the run, IMU 70 ms ahead, give 70 ms within a frame and the focal length")
    func onTheGlassesClocks() async throws {
        let scheduler = ManualScheduler()
        let glasses = try SimulatedGlasses(profile: SubjectProfile(headMotion: true, headMotionAmplitude: 0.02, seed: 5), scheduler: scheduler,
                                           options: SimulatedGlasses.Options(motionClockOffset: .milliseconds(70)))
        // Custom input's timeline starts at the run's start; the glasses' clock has run 3 s by then. (Not 5: the
        // sway's three sines are all near their opposite phase 5 s later, so frames placed on custom input's timeline
        // would still fit, with negative gains.)
        scheduler.advance(by: .seconds(3))
        var settings = BridgeSettings(streamConfiguration: try StreamConfiguration.validated(videoCodec: .raw, resolution: .low, frameRate: 24))
        settings.duration = .seconds(18)
        settings.motion = true
        let pipeline = BridgePipeline(settings: settings, source: .simulator(glasses), clock: .virtual(scheduler)) { _, _ in }
        let result = await pipeline.run()
        let motion = try #require(result.summary.motion)
        let offset = try #require(motion.clockOffsetSeconds, "\(motion)")
        #expect(abs(offset - 0.07) < 1.0 / 24, "\(motion)")
        // The engine's own estimate, on custom input's timeline (the glasses' 3 s taken out as the readings went on):
        // the same 70 ms.
        let engineOffset = try #require(motion.engineClockOffsetSeconds, "the engine never related the clocks: \(motion)")
        #expect(motion.engineReadings > 300, "\(motion)")
        #expect(abs(engineOffset - 0.07) < 1.0 / 24, "\(motion)")
        let focal = SimulatedScene.focalLengthPerWidth * 360
        #expect(abs((motion.pixelsPerRadianAcross ?? 0) / focal - 1) < 0.15 && abs((motion.pixelsPerRadianDown ?? 0) / focal - 1) < 0.15,
                "\(motion)")
    }

    @Test("a file or a network stream carries no IMU: --motion is refused (64), naming the device (a stream's key redacted)")
    func refusedWithoutGlasses() throws {
        for (device, shown) in [("file:/tmp/clip.mp4", "file:/tmp/clip.mp4"), ("rtmp://127.0.0.1:1935/live/k", "rtmp://127.0.0.1:1935/live/…")] {
            let result = try BinaryRunner.run(["--device", device, "--token", "k", "--motion"], timeout: 30)
            #expect(result.status == 64 && result.stderr.contains("--motion asks glasses for their IMU; --device \(shown) carries video only"),
                    "\(device): \(result.status) \(result.stderr)")
        }
    }

    @Test("an engine that measures no camera motion: the samples are counted, and the absence says why")
    func anEngineWithoutCameraMotion() async throws {
        let run = try SimulatedRun(seconds: 4) { $0.motion = true }
        let result = await run.run()
        let motion = try #require(result.summary.motion)
        #expect(motion.samples >= 100 && motion.clockOffsetSeconds == nil, "\(motion)")
        #expect(motion.absence?.contains("does not measure the camera's motion") == true, "\(motion)")
        #expect(motion.engineClockOffsetSeconds == nil && motion.engineReadings == 0, "\(motion)")
    }

    @Test("glasses without an IMU: no samples, and the summary says the glasses have none; video is untouched")
    func glassesWithoutIMU() async throws {
        let run = try SimulatedRun(seconds: 3, glassesOptions: SimulatedGlasses.Options(hasIMU: false)) { $0.motion = true }
        let result = await run.run()
        let motion = try #require(result.summary.motion)
        #expect(motion.samples == 0 && motion.absence == "the glasses have no IMU (their hello says so)", "\(motion)")
        #expect(result.summary.stats.accounting.submitted >= 60)
    }
}
