import Foundation
import GlassesLink
import GlassesSimulator
import GlassesVideo
import Synchronization
import Testing
import WearablesKit

/// The built `glasses-sim` binary, out of process: the shared exit codes, usage errors, and signals in real time.
@Suite("glasses-sim binary (out of process)", .serialized)
struct SimulatorBinaryTests {
    @Test("usage errors exit 64 like glasses-bridge; --version and --help exit 0; a .avi --write is refused")
    func usageAndVersion() throws {
        let bad = try BinaryRunner.run(["--fps", "abc"], binary: "glasses-sim")
        #expect(bad.status == 64, "stderr: \(bad.stderr)")
        #expect(bad.stderr.contains("--fps needs a number"))
        let typo = try BinaryRunner.run(["--listne", "unix:/tmp/x"], binary: "glasses-sim")
        #expect(typo.status == 64)
        #expect(typo.stderr.contains("Did you mean '--listen'?"))
        let avi = try BinaryRunner.run(["--write", "a.avi", "--duration", "1"], binary: "glasses-sim")
        #expect(avi.status == 64)
        #expect(avi.stderr.contains(".avi"))
        #expect(!FileManager.default.fileExists(atPath: "a.avi"))
        // Options of the other mode are refused, not silently ignored (nothing written, nothing listening).
        let clip = FileManager.default.temporaryDirectory.appendingPathComponent("other-mode-\(UUID().uuidString).hevc").path
        for (arguments, fragment) in [
            (["--write", clip, "--duration", "1", "--allow-remote"], "--allow-remote applies to --listen only"),
            (["--write", clip, "--duration", "1", "--token", "T"], "--token applies to --listen only"),
            (["--listen", "tcp:127.0.0.1:0", "--codec", "raw"], "with --listen the host chooses the stream"),
            (["--listen", "tcp:127.0.0.1:0", "--resolution", "high"], "with --listen the host chooses the stream"),
        ] {
            let other = try BinaryRunner.run(arguments, binary: "glasses-sim", timeout: 30)
            #expect(other.status == 64 && other.stderr.contains(fragment), "\(arguments): \(other.stderr)")
            #expect(!FileManager.default.fileExists(atPath: clip))
        }
        let version = try BinaryRunner.run(["--version"], binary: "glasses-sim")
        #expect(version.status == 0)
        #expect(version.stdout.hasPrefix("glasses-sim "))
        let help = try BinaryRunner.run(["--help"], binary: "glasses-sim")
        #expect(help.status == 0)
        // Columns do not wrap into each other: every option line fits 118 columns and the exit codes are listed.
        #expect(help.stdout.split(separator: "\n").allSatisfy { $0.count <= 118 })
        #expect(help.stdout.contains("64 usage"))
        // "forever" is with --listen only: without it, a run needs a duration (and is refused without one).
        #expect(help.stdout.contains("with --listen,\n") && help.stdout.contains("forever when the scenario has none")
                    && help.stdout.contains("without --listen, --duration or a scenario duration"), "\(help.stdout)")
        let endless = try BinaryRunner.run(["--write", clip], binary: "glasses-sim")
        #expect(endless.status == 64 && endless.stderr.contains("without --listen, give --duration"), "\(endless.stderr)")
    }

    @Test("a --write file type that cannot hold the --codec is refused with 64 naming both, before anything is rendered")
    func writeTypeMustFitCodec() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sim-codec-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        for (file, codec, fragment) in [
            ("x.mp4", "raw", "--codec raw streams raw frames"), ("x.hevc", "raw", "--codec raw streams raw frames"),
            ("x.y4m", "hvc1", "--codec hvc1 streams HEVC"), ("x.y4m", "hevc", "--codec hevc streams HEVC"),
        ] {
            let path = directory.appendingPathComponent(file).path
            let result = try BinaryRunner.run(["--write", path, "--codec", codec, "--duration", "1"], binary: "glasses-sim")
            #expect(result.status == 64, "\(file) \(codec): \(result.stderr)")
            #expect(result.stderr.contains("--write \(path) is a file for") || result.stderr.contains("--write \(path) is a YUV4MPEG2"),
                    "\(result.stderr)")
            #expect(result.stderr.contains(fragment) && result.stderr.contains("usage: glasses-sim"), "\(result.stderr)")
            #expect(!result.stdout.contains("streaming"), "nothing is rendered: \(result.stdout)")
            #expect(!FileManager.default.fileExists(atPath: path))
        }
        let unknown = try BinaryRunner.run(["--write", directory.appendingPathComponent("x.y4m").path, "--codec", "vp9", "--duration", "1"],
                                           binary: "glasses-sim")
        #expect(unknown.status == 64 && unknown.stderr.contains("--codec must be raw or hvc1, got 'vp9'"), "\(unknown.stderr)")
        // The pairs that fit still run.
        for (file, codec) in [("ok.y4m", "raw"), ("ok.mkv", "hvc1")] {
            let path = directory.appendingPathComponent(file).path
            let result = try BinaryRunner.run(["--write", path, "--codec", codec, "--duration", "0.2", "--quiet"], binary: "glasses-sim")
            #expect(result.status == 0, "\(file) \(codec): \(result.stderr)")
            #expect(FileManager.default.fileExists(atPath: path))
        }
    }

    @Test("a non-loopback --listen needs --allow-remote and a token (--token or GLASSES_TOKEN): 64 at parse time, as glasses-relay")
    func remoteListenNeedsAllowRemoteAndToken() throws {
        for (arguments, token, fragment) in [
            (["--listen", "tcp:0.0.0.0:0"], nil, "--listen tcp:0.0.0.0:0 is not loopback: add --allow-remote and --token (or GLASSES_TOKEN)"),
            (["--listen", "tcp:0.0.0.0:0"], "T", "add --allow-remote"),
            (["--listen", "tcp:0.0.0.0:0", "--allow-remote"], nil, "--listen tcp:0.0.0.0:0 needs --token (or GLASSES_TOKEN)"),
        ] as [([String], String?, String)] {
            let runner = try BinaryRunner(arguments, binary: "glasses-sim", environment: token.map { ["GLASSES_TOKEN": $0] } ?? [:])
            let result = runner.finish(timeout: 30)
            #expect(result.status == 64, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains(fragment) && result.stderr.contains("usage: glasses-sim"), "\(arguments): \(result.stderr)")
            #expect(!result.stderr.contains("allowRemote") && !result.stdout.contains("listening on"), "\(result.stderr)")
        }
        // GLASSES_TOKEN stands in for --token: with --allow-remote the remote listener starts.
        let served = try BinaryRunner(["--listen", "tcp:0.0.0.0:0", "--allow-remote"], binary: "glasses-sim",
                                      signalWhen: "listening on", environment: ["GLASSES_TOKEN": "T"])
        #expect(served.waitForWatchedLine(timeout: 60), "glasses-sim never said it was listening: \(served.stdoutSoFar)")
        served.send(SIGTERM)
        let result = served.finish(timeout: 60)
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let help = try BinaryRunner.run(["--help"], binary: "glasses-sim")
        #expect(help.stdout.contains("GLASSES_TOKEN"))
    }

    @Test("subject options are checked in their own units; an output that cannot be written exits 73 before or as the first frame fails, not at the end")
    func subjectRangesAndOutputs() throws {
        let amplitude = try BinaryRunner.run(["--amplitude", "100", "--write", "a.y4m", "--duration", "1"], binary: "glasses-sim")
        #expect(amplitude.status == 64)
        #expect(amplitude.stderr.contains("--amplitude must be 0...5 %, got 100"), "stderr: \(amplitude.stderr)")
        let pulse = try BinaryRunner.run(["--pulse", "0", "--write", "a.y4m", "--duration", "1"], binary: "glasses-sim")
        #expect(pulse.stderr.contains("--pulse must be 25...240 bpm, got 0"), "stderr: \(pulse.stderr)")
        // A scenario is written by a person: a bad one is a usage error (64), as with glasses-bridge --sim-scenario.
        let scenario = NSTemporaryDirectory() + "sim-bad-scenario-\(getpid()).json"
        try Data("{\"subject\": {\"pulserate\": 200}}".utf8).write(to: URL(fileURLWithPath: scenario))
        defer { try? FileManager.default.removeItem(atPath: scenario) }
        for binary in ["glasses-sim", "glasses-relay"] {
            let arguments = binary == "glasses-sim" ? ["--scenario", scenario, "--write", "a.y4m", "--duration", "1"]
                : ["--scenario", scenario, "--connect", "unix:/nonexistent.sock", "--duration", "1"]
            let bad = try BinaryRunner.run(arguments, binary: binary)
            #expect(bad.status == 64 && bad.stderr.contains("unknown field 'pulserate'"), "\(binary): \(bad.stderr)")
        }
        let folder = try BinaryRunner.run(["--write", "/tmp", "--duration", "1"], binary: "glasses-sim")
        #expect(folder.status == 64)
        #expect(folder.stderr.contains("needs a file name that ends in its type"), "stderr: \(folder.stderr)")
        let missing = try BinaryRunner.run(["--truth", "/nonexistent-\(getpid())/t.csv", "--duration", "1"], binary: "glasses-sim")
        #expect(missing.status == 73)
        #expect(missing.stderr.contains("cannot write --truth"), "stderr: \(missing.stderr)")
        #expect(!missing.stdout.contains("streaming"), "nothing is rendered for a file that cannot be written")
        // /proc passes the folder check but refuses the file: the first frame's failure ends an hour's run at once.
        let refused = try BinaryRunner.run(["--write", "/proc/glasses-sim-\(getpid()).y4m", "--duration", "3600"],
                                           binary: "glasses-sim", timeout: 120)
        #expect(refused.status == 73, "stderr: \(refused.stderr)")
        #expect(refused.stdout.contains("stopping: --write failed"))
        #expect(refused.stderr.contains("cannot create /proc/glasses-sim-"))
    }

    @Test("glasses-bridge --sim-*, glasses-sim and glasses-relay take the simulated pulse and breathing in SubjectProfile's ranges, say them in their option names and state them in --help")
    func subjectRangesAgree() throws {
        let pulse = SubjectProfile.pulseRateRange, breathing = SubjectProfile.breathingRateRange
        func text(_ value: Double) -> String { SubjectProfile.format(value) }
        let clip = FileManager.default.temporaryDirectory.appendingPathComponent("ranges-\(getpid()).y4m").path
        defer { try? FileManager.default.removeItem(atPath: clip) }
        // Per command: how a run starts, and its option for each quantity.
        let commands: [(binary: String, run: [String], pulse: String, breathing: String)] = [
            ("glasses-bridge", ["--no-realtime", "--duration", "1", "--quiet"], "--sim-pulse", "--sim-breathing"),
            ("glasses-sim", ["--write", clip, "--duration", "0.2", "--quiet"], "--pulse", "--breathing"),
            ("glasses-relay", ["--connect", "unix:/nonexistent-\(getpid()).sock", "--duration", "0.5", "--quiet"], "--pulse", "--breathing"),
        ]
        for command in commands {
            for (option, range) in [(command.pulse, pulse), (command.breathing, breathing)] {
                for inside in [range.lowerBound, range.upperBound] {
                    let result = try BinaryRunner.run(command.run + [option, text(inside)], binary: command.binary, timeout: 120)
                    #expect(result.status == 0, "\(command.binary) \(option) \(text(inside)): \(result.stderr)")
                }
                for outside in [range.lowerBound - 1, range.upperBound + 1] {
                    let result = try BinaryRunner.run(command.run + [option, text(outside)], binary: command.binary, timeout: 60)
                    #expect(result.status == 64, "\(command.binary) \(option) \(text(outside)): \(result.stderr)")
                    // In the option's name and the range's bounds, never the profile's field names.
                    #expect(result.stderr.contains(option) && result.stderr.contains(text(range.lowerBound))
                                && result.stderr.contains(text(range.upperBound)), "\(command.binary): \(result.stderr)")
                    #expect(!result.stderr.contains("pulseRate") && !result.stderr.contains("breathingRate"), "\(result.stderr)")
                }
            }
            let help = try BinaryRunner.run(["--help"], binary: command.binary)
            for (option, range) in [(command.pulse, pulse), (command.breathing, breathing)] {
                let line = help.stdout.split(separator: "\n").first { $0.contains(option + " ") }
                #expect(line?.contains("\(text(range.lowerBound))-\(text(range.upperBound))") == true,
                        "\(command.binary) --help: \(line.map(String.init) ?? "no line for \(option)")")
            }
        }
    }

    @Test("a scenario with a 'garbage' event where no socket carries it, and a file that is not JSON, are refused in the user's terms by all three commands")
    func scenarioRefusalsInUserTerms() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("scenario-words-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let garbage = directory.appendingPathComponent("noise.json").path
        try Data(#"{"events": [{"at": 0.5, "do": "garbage"}]}"#.utf8).write(to: URL(fileURLWithPath: garbage))
        let notJSON = directory.appendingPathComponent("g.json").path
        try Data("garbage\n".utf8).write(to: URL(fileURLWithPath: notJSON))
        let clip = directory.appendingPathComponent("x.hevc").path
        let commands: [(binary: String, arguments: (String) -> [String], option: String)] = [
            ("glasses-sim", { ["--scenario", $0, "--write", clip, "--duration", "1"] }, "--scenario"),
            ("glasses-bridge", { ["--sim-scenario", $0, "--no-realtime", "--duration", "1", "--quiet"] }, "--sim-scenario"),
            ("glasses-relay", { ["--scenario", $0, "--connect", "unix:\(directory.path)/none.sock", "--duration", "1"] }, "--scenario"),
        ]
        for command in commands {
            let refused = try BinaryRunner.run(command.arguments(garbage), binary: command.binary, timeout: 60)
            #expect(refused.status == 64, "\(command.binary): \(refused.stderr)")
            #expect(refused.stderr.contains("\(command.option) \(garbage): event 0 ('garbage' at 0.5 s) cannot be played here")
                        && refused.stderr.contains("glasses-sim --listen"), "\(command.binary): \(refused.stderr)")
            #expect(!refused.stderr.contains("SimulatorServer") && !refused.stderr.contains("raw-byte"), "\(refused.stderr)")
            let broken = try BinaryRunner.run(command.arguments(notJSON), binary: command.binary, timeout: 60)
            #expect(broken.status == 64, "\(command.binary): \(broken.stderr)")
            #expect(broken.stderr.contains("g.json: line 1, column 1: not valid JSON"), "\(command.binary): \(broken.stderr)")
            #expect(!FileManager.default.fileExists(atPath: clip))
        }
    }

    @Test("an MP4 whose header cannot be written (a file-size limit of 0, as on a full disk) exits 73, never a crash",
          .enabled(if: ProcessInfo.processInfo.environment["TSAN_OPTIONS"] == nil
                       && ProcessInfo.processInfo.environment["ASAN_OPTIONS"] == nil,
                   "a sanitizer's runtime cannot start under a file-size limit (Scripts/test-sanitizers sets these)"),
          arguments: ["0", "2000"])
    func mp4OnAFullDisk(limit: String) throws {
        let sim = try #require(BinaryRunner.binaryURL(named: "glasses-sim"))
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("sim-full-\(getpid())-\(limit).mp4").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        // SIGXFSZ ignored (kept across exec) so the write fails with EFBIG, as ENOSPC would, instead of killing it.
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/sh")
        shell.arguments = ["-c", "trap '' XFSZ; exec prlimit --fsize=\(limit) \"$0\" --write \"$1\" --duration 1", sim.path, path]
        let output = Pipe()
        shell.standardOutput = output
        shell.standardError = output
        try shell.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        shell.waitUntilExit()
        #expect(shell.terminationReason == .exit && shell.terminationStatus == 73, "\(shell.terminationStatus): \(text)")
        // No header: the first frame fails and ends the run. A header but no room for the packets: libavformat
        // buffers them, and the failure, with FFmpeg's reason, comes when the file is finished.
        #expect(text.contains("stopping: --write failed") || limit != "0", "\(text)")
        #expect(text.contains("glasses-sim: error: cannot write"), "\(text)")
        #expect(text.contains("(file too large)") || limit == "0", "FFmpeg's reason is given: \(text)")
    }

    @Test("a bridge with the wrong token hears the glasses' refusal at once and exits 69 naming it, not a hello timeout")
    func wrongTokenIsNamedAtOnce() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sim-token-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let socket = directory.appendingPathComponent("g.sock").path
        let sim = try BinaryRunner(["--listen", "unix:\(socket)", "--token", "right"], binary: "glasses-sim", signalWhen: "listening on")
        defer { sim.send(SIGTERM); _ = sim.finish(timeout: 60) }
        #expect(sim.waitForWatchedLine(timeout: 60), "glasses-sim never said it was listening")
        for (token, what) in [("wrong", "a wrong pairing token"), (nil, "no pairing token")] {
            let arguments = ["--device", "unix:\(socket)", "--duration", "30", "--quiet"] + (token.map { ["--token", $0] } ?? [])
            let bridge = try BinaryRunner.run(arguments, timeout: 120)
            #expect(bridge.status == 69, "stderr: \(bridge.stderr)")
            #expect(bridge.stderr.contains("pairing failed: the host presented \(what)"), "stderr: \(bridge.stderr)")
            #expect(!bridge.stderr.contains("did not introduce themselves"), "stderr: \(bridge.stderr)")
            // Well before the 10 s a hello timeout would have taken (a bound on the logic, not on this machine's speed).
            let seconds = bridge.stdout.components(separatedBy: "summary after ").dropFirst().first
                .flatMap { Double($0.prefix { $0 != " " }) }
            #expect(seconds.map { $0 < 9 } == true, "ended before the hello timeout: \(bridge.stdout)")
        }
    }

    @Test("SIGINT, SIGTERM and SIGHUP in real time end glasses-sim gracefully, with its truth file written",
          arguments: [SIGINT, SIGTERM, SIGHUP])
    func signalsInRealTime(signal: Int32) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sim-signal-\(getpid())-\(signal)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let socket = directory.appendingPathComponent("g.sock").path
        let truth = directory.appendingPathComponent("truth.csv").path
        let runner = try BinaryRunner(
            ["--listen", "unix:\(socket)", "--truth", truth], binary: "glasses-sim", signalWhen: "listening on")
        #expect(runner.waitForWatchedLine(timeout: 60), "glasses-sim never said it was listening")
        runner.send(signal)
        let result = runner.finish(timeout: 60)
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(!result.stderr.contains("Illegal instruction"))
        #expect(result.stdout.contains("wrote ground truth"))
        let text = try String(contentsOfFile: truth, encoding: .utf8)
        #expect(text.hasPrefix("t"), "the truth CSV starts with its header")
    }

    // MARK: Feed and face files

    /// A fresh folder for one test's files.
    private static func folder(_ name: String) throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sim-\(name)-\(getpid())-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    /// A good 360x640 clip of `seconds` at 15 fps written by glasses-sim itself (.y4m raw, .mkv HEVC).
    private static func clip(_ path: String, seconds: String) throws {
        let made = try BinaryRunner.run(["--write", path, "--duration", seconds, "--resolution", "low", "--fps", "15", "--quiet"],
                                        binary: "glasses-sim", timeout: 120)
        try #require(made.status == 0, "making \(path): \(made.stderr)")
    }

    /// `good.y4m` cut in the middle of its second frame; its path.
    private static func truncatedY4M(in directory: URL) throws -> String {
        let good = directory.appendingPathComponent("good.y4m").path
        try clip(good, seconds: "0.4")
        let data = try Data(contentsOf: URL(fileURLWithPath: good))
        let header = try #require(data.firstIndex(of: 10)) + 1
        let cut = directory.appendingPathComponent("trunc.y4m").path
        try data.prefix(header + (6 + 345_600) + 6 + 100_000).write(to: URL(fileURLWithPath: cut))
        return cut
    }

    @Test("a feed file that fails mid-run (cut in a frame, cut in half, timestamps that stop) ends the run with 65, the reason said once, last, and what was streamed before it written",
          arguments: ["y4m", "mkv", "mkv passthrough", "stuck passthrough"])
    func feedFailingMidRunExits65(_ kind: String) throws {
        let directory = try Self.folder("feedfail")
        defer { try? FileManager.default.removeItem(at: directory) }
        let feed: String
        var arguments: [String] = []
        if kind == "y4m" {
            feed = try Self.truncatedY4M(in: directory)
            arguments = ["--write", directory.appendingPathComponent("out.y4m").path]
        } else {
            let good = directory.appendingPathComponent("good.mkv").path
            try Self.clip(good, seconds: "3")
            var data = try Data(contentsOf: URL(fileURLWithPath: good))
            if kind.hasPrefix("stuck") {
                // TimecodeScale 1 000 000 ns -> 1 ns: every time collapses to 0 and stops increasing after 32 frames.
                let element = try #require(data.range(of: Data([0x2A, 0xD7, 0xB1, 0x83, 0x0F, 0x42, 0x40])))
                data.replaceSubrange(element.lowerBound + 4 ..< element.lowerBound + 7, with: Data([0, 0, 1]))
            } else {
                data = data.prefix(data.count / 2)
            }
            feed = directory.appendingPathComponent("bad.mkv").path
            try data.write(to: URL(fileURLWithPath: feed))
            arguments = ["--write", directory.appendingPathComponent("out.mkv").path]
            if kind.hasSuffix("passthrough") { arguments += ["--passthrough", "--codec", "hvc1"] }
        }
        let result = try BinaryRunner.run(["--feed", feed, "--duration", "5"] + arguments, binary: "glasses-sim", timeout: 120)
        #expect(result.status == 65, "\(kind): \(result.status) \(result.stderr)")
        let reason = kind.hasPrefix("stuck") ? "its timestamps stop increasing" : "is truncated"
        #expect(result.stderr.components(separatedBy: reason).count == 2, "the reason once: \(result.stderr)")
        #expect(result.stderr.components(separatedBy: "glasses-sim: error:").count == 2, "\(result.stderr)")
        #expect(result.stderr.hasPrefix("glasses-sim: error: the video feed \(feed)"), "\(result.stderr)")
        #expect(!result.stdout.contains(reason), "stdout does not repeat it: \(result.stdout)")
        #expect(result.stdout.contains("stopping: the video feed failed"), "\(result.stdout)")
        let written = result.stdout.components(separatedBy: "wrote ").dropFirst().first.flatMap { Int($0.prefix { $0.isNumber }) }
        #expect((written ?? 0) >= 1, "what was streamed before is written: \(result.stdout)")
    }

    @Test("a serving glasses-sim whose feed fails mid-run tells the host (fault videoStreamingError with the reason), then ends with 65: the file would fail every later stream the same way")
    func servedFeedFailingMidRunExits65() throws {
        let directory = try Self.folder("feedserve")
        defer { try? FileManager.default.removeItem(at: directory) }
        let feed = try Self.truncatedY4M(in: directory)
        let socket = directory.appendingPathComponent("g.sock").path
        let sim = try BinaryRunner(["--listen", "unix:\(socket)", "--feed", feed], binary: "glasses-sim", signalWhen: "listening on")
        #expect(sim.waitForWatchedLine(timeout: 60), "glasses-sim never said it was listening")
        let link = try LinkConnector.connect(to: .unix(path: socket))
        let heard = Mutex<[DeviceMessage]>([])
        let closed = DispatchSemaphore(value: 0)
        link.open { event in
            switch event {
            case .message(let message): heard.withLock { $0.append(message) }
            case .closed: closed.signal()
            }
        }
        link.send(.hello(protocolVersion: linkProtocolVersion, pairingToken: nil))
        link.send(.startSession)
        link.send(.startStream(try StreamConfiguration.validated(videoCodec: .raw, resolution: .low, frameRate: 15)))
        let result = sim.finish(timeout: 60)
        #expect(closed.wait(timeout: .now() + 30) == .success, "the glasses close the link as they stop")
        link.close()
        #expect(result.status == 65, "\(result.status): \(result.stderr)")
        #expect(result.stderr.components(separatedBy: "is truncated").count == 2, "\(result.stderr)")
        let faults = heard.withLock { $0 }.compactMap { message -> (DeviceStreamFault, String?)? in
            if case .fault(let fault, let text) = message { return (fault, text) } else { return nil }
        }
        #expect(faults.count == 1 && faults.first?.0 == .videoStreamingError, "\(faults)")
        #expect(faults.first?.1?.contains("\(feed) is truncated") == true, "the host hears why: \(faults)")
        let samples = heard.withLock { $0 }.filter { if case .videoSample = $0 { true } else { false } }
        #expect(samples.count == 1, "the frame before the cut")
    }

    @Test("feed and face files that cannot be used are refused with 65 before anything is printed: a size the glasses cannot stream (no usage line), the name once, the formats only when the format is wrong, a folder, a device")
    func feedAndFaceRefusals() throws {
        let directory = try Self.folder("feedrefuse")
        defer { try? FileManager.default.removeItem(at: directory) }
        func y4m(_ name: String, width: Int, height: Int, header: String? = nil) throws -> String {
            let path = directory.appendingPathComponent(name).path
            let frame = Data(repeating: 128, count: width * height * 3 / 2)
            let text = header ?? "YUV4MPEG2 W\(width) H\(height) F15:1 Ip A1:1 C420jpeg XCOLORRANGE=LIMITED"
            try (Data("\(text)\nFRAME\n".utf8) + frame).write(to: URL(fileURLWithPath: path))
            return path
        }
        let out = directory.appendingPathComponent("x.y4m").path
        let landscape = try y4m("land.y4m", width: 640, height: 360)
        let tiny = try y4m("tiny.y4m", width: 16, height: 16)
        let portrait = try y4m("low.y4m", width: 360, height: 640)
        let zeroRate = try y4m("f0.y4m", width: 360, height: 640, header: "YUV4MPEG2 W360 H640 F0:1 C420jpeg")
        let text = directory.appendingPathComponent("notes.txt").path
        try Data("not a video\n".utf8).write(to: URL(fileURLWithPath: text))
        let cases: [([String], String)] = [
            (["--feed", landscape], "--feed \(landscape) is 640x360; the glasses stream 360x640, 504x896 or 720x1280 only"),
            (["--feed", tiny], "--feed \(tiny) is 16x16"),
            (["--feed", portrait, "--resolution", "medium"], "the video feed \(portrait) is 360x640 but the stream is 504x896"),
            (["--feed", zeroRate], "the video feed \(zeroRate): the Y4M frame rate F0:1 is out of range"),
            (["--feed", text], "the video feed \(text) is not a video file this can read"),
            (["--feed", directory.path], "the video feed \(directory.path) is a folder"),
            (["--feed", "/dev/zero"], "the video feed /dev/zero is not a regular file"),
            (["--face", directory.path], "the face image \(directory.path) is a folder"),
            (["--face", "/dev/zero"], "the face image /dev/zero is not a regular file"),
        ]
        for (arguments, fragment) in cases {
            let result = try BinaryRunner.run(arguments + ["--write", out, "--duration", "1"], binary: "glasses-sim", timeout: 60)
            #expect(result.status == 65, "\(arguments): \(result.status) \(result.stderr)")
            #expect(result.stderr.hasPrefix("glasses-sim: error: \(fragment)"), "\(arguments): \(result.stderr)")
            #expect(!result.stderr.contains("usage:"), "bad data, not usage: \(result.stderr)")
            #expect(result.stdout.isEmpty, "nothing printed around the error: \(result.stdout)")
            let file = arguments[1]
            #expect(result.stderr.components(separatedBy: file).count == 2 || arguments.contains("--resolution"),
                    "the file named once: \(result.stderr)")
            // The formats that play are said when the file's kind is the problem, and only then.
            #expect(result.stderr.contains(VideoFileFeed.formatHint) == (file == text), "\(result.stderr)")
            #expect(!result.stderr.contains("NSCocoaErrorDomain") && !result.stderr.contains("could not be completed"))
            #expect(!FileManager.default.fileExists(atPath: out))
        }
    }
}
