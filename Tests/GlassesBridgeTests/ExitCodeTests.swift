import Foundation
@testable import GlassesBridge
import GlassesSimulator
import Testing

/// Failures are loud: exit codes that mean what they say, out of process and in process.
@Suite("Exit codes mean what they say", .serialized)
struct ExitCodeTests {
    @Test("a metric the engine does not produce is refused at start, naming what it does produce")
    func unproducedMetricsAreRefused() throws {
        let result = try BinaryRunner.run(["--metrics", "face,eda", "--no-realtime", "--duration", "2"])
        #expect(result.status == 64, "stderr: \(result.stderr)")
        #expect(result.stderr.contains("glasses-bridge: error: --metrics: the embedded engine does not produce 'face', 'eda'"))
        #expect(result.stderr.contains("pulse-rate") && result.stderr.contains("usage: glasses-bridge"))
        // A usage error starts nothing: the output file is not created.
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("refused-\(UUID().uuidString).ndjson").path
        let refused = try BinaryRunner.run(["--metrics", "face", "--format", "ndjson", "-o", output, "--no-realtime", "--duration", "2"])
        #expect(refused.status == 64 && !FileManager.default.fileExists(atPath: output), "stderr: \(refused.stderr)")
        // A bundle the engine produces part of is accepted.
        let cardio = try BinaryRunner.run(["--metrics", "cardio", "--no-realtime", "--duration", "1", "--format", "ndjson"])
        #expect(cardio.status == 0, "stderr: \(cardio.stderr)")
    }

    @Test("a source that cannot be opened is the run's failure like any other: the error, the summary, the report")
    func sourceThatCannotBeOpened() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("unopened-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        // A port another socket holds, for --listen.
        let holder = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(holder) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(holder, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        try #require(bound == 0 && listen(holder, 1) == 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(holder, $0, &length) }
        }
        let port = UInt16(bigEndian: address.sin_port)
        for (device, message) in [
            (["--device", "file:" + folder.appendingPathComponent("missing.mp4").path], "no such file"),
            (["--listen", "tcp:127.0.0.1:\(port)"], "Cannot listen on tcp:127.0.0.1:\(port): Address already in use"),
        ] {
            let page = folder.appendingPathComponent("report-\(port).html").path
            try? FileManager.default.removeItem(atPath: page)
            let result = try BinaryRunner.run(device + ["--format", "ndjson", "--report", page], timeout: 60)
            #expect(result.status == 69, "\(device): \(result.stderr)")
            let types = result.stdout.split(separator: "\n").compactMap { line in
                (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["type"] as? String
            }
            #expect(types == ["start", "error", "summary"], "\(device): \(result.stdout)")
            #expect(result.stdout.contains(message) && result.stderr.contains(message), "\(device): \(result.stderr)")
            #expect(!result.stderr.contains("listen on tcp:127.0.0.1:\(port): cannot"), "said twice: \(result.stderr)")
            #expect(FileManager.default.fileExists(atPath: page), "\(device): no report")
        }
    }

    @Test("a recording without a playable frame, a pipe, a truncated header: 65, in words about the file, no hang")
    func filesThatCannotPlay() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("unplayable-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let headerOnly = folder.appendingPathComponent("header.y4m").path
        try Data("YUV4MPEG2 W360 H640 F15:1 Ip C420jpeg\n".utf8).write(to: URL(fileURLWithPath: headerOnly))
        let cutHeader = folder.appendingPathComponent("cut.y4m").path
        try Data("YUV4MPEG2 W360 H640".utf8).write(to: URL(fileURLWithPath: cutHeader))
        let fifo = folder.appendingPathComponent("pipe.y4m").path
        #expect(mkfifo(fifo, 0o600) == 0)
        for (path, words) in [(headerOnly, "\(headerOnly) holds no playable frame"), (fifo, "\(fifo) is not a regular file"),
                              (cutHeader, "\(cutHeader) is truncated")] {
            let result = try BinaryRunner.run(["--device", "file:" + path, "--no-realtime", "--duration", "5"], timeout: 60)
            #expect(result.status == 65, "\(path): \(result.stderr)")
            #expect(result.stderr.contains("glasses-bridge: " + words), "\(path): \(result.stderr)")
            #expect(!result.stderr.contains("glasses are on") && !result.stderr.contains("Cannot play \(path) is"), "\(result.stderr)")
        }
    }

    @Test("a gap in a recording's timestamps does not carry a virtual-time run past --duration")
    func durationHoldsOverAGap() throws {
        let clip = FileManager.default.temporaryDirectory.appendingPathComponent("gap-\(UUID().uuidString).mkv").path
        defer { try? FileManager.default.removeItem(atPath: clip) }
        // 3 s at 15 fps whose frames from the 20th on are 40 s later.
        let ffmpeg = Process()
        ffmpeg.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        ffmpeg.arguments = ["ffmpeg", "-hide_banner", "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i",
                            "testsrc2=size=360x640:rate=15:duration=3", "-vf", "setpts=PTS+gte(N\\,20)*40/TB", "-fps_mode", "passthrough",
                            "-c:v", "libx265", "-x265-params", "bframes=0:log-level=error", "-pix_fmt", "yuv420p", clip]
        try ffmpeg.run()
        ffmpeg.waitUntilExit()
        try #require(ffmpeg.terminationStatus == 0)
        let result = try BinaryRunner.run(["--device", "file:" + clip, "--no-realtime", "--duration", "10", "--format", "ndjson"], timeout: 120)
        let summary = try #require(result.stdout.split(separator: "\n").last.flatMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        })
        #expect(summary["type"] as? String == "summary" && summary["reason"] as? String == "duration", "\(summary)")
        #expect(summary["durationSeconds"] as? Double == 10, "\(summary)")
    }

    @Test("outputs that cannot be written exit 73 with the reason, before anything runs", arguments: [
        "--output", "--record", "--video-out",
    ])
    func unwritableOutputs(flag: String) throws {
        let path = "/nonexistent-folder-\(getpid())/out." + (flag == "--output" ? "ndjson" : "y4m")
        var arguments = ["--no-realtime", "--duration", "2", flag, path]
        if flag == "--record" { arguments += ["--codec", "raw"] }
        let result = try BinaryRunner.run(arguments)
        #expect(result.status == 73, "stderr: \(result.stderr)")
        #expect(result.stderr.contains("cannot write \(flag) \(path)"))
        #expect(result.stderr.contains("does not exist"))
    }

    @Test("glasses lost mid-run and not back by its end: exit 69 and when they were lost, the frames before kept")
    func glassesLostForGood() async throws {
        let run = try SimulatedRun(seconds: 12)
        run.at(4) { run.glasses.powerOff() }
        let result = await run.run()
        #expect(result.exitCode == .deviceUnavailable)
        #expect(result.summary.failure?.kind == .deviceLost)
        #expect(result.summary.failure?.message.hasPrefix("Lost the glasses 8 s before the run ended") == true,
                "\(String(describing: result.summary.failure))")
        #expect(result.summary.stats.accounting.received > 50 && result.summary.stats.balances)
        // The loss was a warning as it happened, not a notice only --verbose shows.
        let warnings = run.events.all.compactMap { event -> String? in
            if case .warning(let text) = event.event { return text }
            return nil
        }
        #expect(warnings.contains("Link lost: the device closed the link; reconnecting in 2 s."), "\(warnings)")
        // The same loss with the glasses back before the end is a normal run.
        let back = try SimulatedRun(seconds: 12)
        back.at(4) { back.glasses.powerOff() }
        back.at(5) { back.glasses.powerOn() }
        let fine = await back.run()
        #expect(fine.exitCode == .success && fine.summary.failure == nil && fine.summary.stats.reconnects == 1,
                "\(String(describing: fine.summary.failure))")
    }

    @Test("glasses that stop the stream with a fault of their own: the run's error gives their words, not advice")
    func theGlassesWordsForNoFrames() async throws {
        // A camera feed of 504x896 for a 360x640 stream: the glasses refuse to scale it and say so.
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("feed-\(UUID().uuidString).y4m").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        var bytes = Data("YUV4MPEG2 W504 H896 F15:1 Ip C420jpeg\nFRAME\n".utf8)
        bytes.append(Data(repeating: 128, count: 504 * 896 * 3 / 2))
        try bytes.write(to: URL(fileURLWithPath: path))
        let run = try SimulatedRun(resolution: .low, seconds: 4)
        try run.glasses.setCameraFeed(.videoFile(try VideoFileFeed(path: path)))
        let result = await run.run()
        #expect(result.summary.stats.accounting.received == 0)
        let message = try #require(result.summary.failure?.message)
        #expect(message.contains("the glasses reported a stream fault: the video feed") && message.contains("is 504x896 but the stream is 360x640"),
                "\(message)")
        #expect(!message.contains("unfolded and worn"), "\(message)")
    }

    @Test("a link lost after the glasses reported a stream fault is told with their words")
    func aLossAfterAFault() async throws {
        // A 360x640 feed cut inside its third frame: the glasses stop the stream with a fault that says so.
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("cut-\(UUID().uuidString).y4m").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        var bytes = Data("YUV4MPEG2 W360 H640 F24:1 Ip C420jpeg\n".utf8)
        for _ in 0..<2 { bytes.append(Data("FRAME\n".utf8) + Data(repeating: 128, count: 360 * 640 * 3 / 2)) }
        bytes.append(Data("FRAME\n".utf8) + Data(repeating: 128, count: 1000))
        try bytes.write(to: URL(fileURLWithPath: path))
        let run = try SimulatedRun(resolution: .low, seconds: 6)
        try run.glasses.setCameraFeed(.videoFile(try VideoFileFeed(path: path)))
        run.at(2) { run.glasses.inject(.linkLoss) }
        _ = await run.run()
        let warnings = run.events.all.compactMap { entry -> String? in
            if case .warning(let text) = entry.event { text } else { nil }
        }
        #expect(warnings.contains { $0.hasPrefix("Link lost:") && $0.contains("the glasses had reported a stream fault:") && $0.contains("truncated") },
                "\(warnings)")
    }

    @Test("a run in which no frame ever arrives is not a success")
    func noFramesIsAFailure() async throws {
        let run = try SimulatedRun(seconds: 3)
        run.glasses.powerOff()
        let result = await run.run()
        #expect(result.summary.stats.accounting.received == 0)
        #expect(result.summary.failure?.kind == .noFrames)
        #expect(result.exitCode == .deviceUnavailable)
        #expect(result.summary.failure?.message.contains("no frame arrived") == true)
        // The vitals' reasons point at the missing frames, not at a face that was never in view.
        let absences = [result.summary.pulseAbsence, result.summary.breathingAbsence, result.summary.hrvAbsence]
        #expect(absences.allSatisfy { $0?.message == "no frame reached the vitals engine, so nothing was measured" }, "\(absences)")
        #expect(absences.map { $0?.code } == [.notMeasured, .notMeasured, .noStablePulse])
        let text = TextEventFormatter.summaryText(result.summary)
        #expect(text.contains("\n  no pulse, breathing or HRV: no frame reached the vitals engine, so nothing was measured\n"), "\(text)")
        #expect(!text.contains("face in view"), "\(text)")
    }

    @Test("Ctrl-C before the first frame had time to come says so and does not blame the glasses; later it does")
    func signalBeforeTheFirstFrame() async throws {
        let early = try SimulatedRun(seconds: 20)
        early.glasses.powerOff()  // no frame comes: the stop, 0.4 s in, is what the run sees first
        early.at(0.4) { early.pipeline.requestStop(reason: "signal") }
        let stopped = await early.run()
        #expect(stopped.summary.stats.accounting.received == 0 && stopped.exitCode == .deviceUnavailable)
        let message = stopped.summary.failure?.message ?? ""
        #expect(message.hasPrefix("stopped by a signal 0.4 s in, before any frame arrived from"), "\(message)")
        #expect(!message.contains("unfolded"), "\(message)")
        // Six seconds of nothing (glasses off) and then Ctrl-C: the glasses are the likely reason again.
        let waited = try SimulatedRun(seconds: 20)
        waited.glasses.powerOff()
        waited.at(6) { waited.pipeline.requestStop(reason: "signal") }
        let late = await waited.run()
        #expect(late.summary.failure?.message.contains("check that the glasses are on, unfolded and worn") == true,
                "\(String(describing: late.summary.failure))")
    }
}
