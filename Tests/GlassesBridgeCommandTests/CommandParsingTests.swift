import Foundation
import Testing
import WearablesKit
import SmartSpectraInput
@testable import GlassesBridgeCommand
import GlassesBridge

@Suite("Command-line parsing (in process)")
struct CommandParsingTests {
    @Test func defaultsAreTheDocumentedOnes() throws {
        let parsed = try options([])
        #expect(parsed.device == .simulator)
        #expect(parsed.frameRate == 24)
        #expect(parsed.resolution == .medium)
        #expect(parsed.codec == .raw)
        #expect(parsed.pixelFormat == .nv12)
        #expect(parsed.transform == .none)
        #expect(parsed.metrics == .default)
        #expect(parsed.metrics.metrics.contains(.pulseRate) && parsed.metrics.metrics.contains(.breathingRate))
        #expect(parsed.duration == nil)
        #expect(parsed.realtime)
        #expect(parsed.format == .text)
        #expect(parsed.outputPath == nil)
    }

    @Test func theReadmeCommandParses() throws {
        let parsed = try options(["--fps", "24", "--resolution", "medium"])
        let configuration = try parsed.makeStreamConfiguration()
        #expect(configuration.frameRate == 24)
        #expect(configuration.resolution == .medium)
        #expect(configuration.videoCodec == .raw)
    }

    @Test func everyOptionIsRead() throws {
        let parsed = try options([
            "--device=sim", "--fps", "30", "--resolution", "low", "--codec", "hvc1", "--pixel-format", "bgra",
            "--transform", "rotate90cw", "--metrics", "cardio,eda,pulse-rate", "--duration", "12.5", "--no-realtime",
            "--sim-pulse", "81", "--sim-breathing", "12", "--sim-seed", "7",
            "--format", "ndjson", "--output", "out.ndjson", "--record", "rec.mkv",
        ])
        // --video-out is Y4M, which cannot hold BGRA (refused with it): read beside NV12.
        #expect(try options(["--video-out", "sub.y4m"]).videoOutPath == "sub.y4m")
        #expect(parsed.frameRate == 30)
        #expect(parsed.resolution == .low)
        #expect(parsed.codec == .hvc1)
        #expect(parsed.pixelFormat == .bgra)
        #expect(parsed.transform == .rotate90cw)
        #expect(parsed.metrics.names == ["cardio", "eda", "pulse-rate"])
        #expect(parsed.metrics.metrics == [.pulseRate, .arterialPressureTrace, .hrv, .edaTrace])
        #expect(parsed.duration == 12.5)
        #expect(!parsed.realtime)
        #expect(parsed.simulator.pulseRate == 81)
        #expect(parsed.simulator.breathingRate == 12)
        #expect(parsed.simulator.seed == 7)
        #expect(try options(["--sim-scenario", "s.json"]).simulator.scenarioPath == "s.json")
        #expect(parsed.format == .ndjson)
        #expect(parsed.outputPath == "out.ndjson")
        #expect(parsed.recordPath == "rec.mkv")
        
    }

    @Test(arguments: [
        ("sim", DeviceAddress.simulator),
        ("unix:/tmp/g.sock", .unix(path: "/tmp/g.sock")),
        ("tcp:127.0.0.1:7001", .tcp(host: "127.0.0.1", port: 7001)),
        ("tcp:[::1]:7001", .tcp(host: "::1", port: 7001)),
        ("bt:12:34:56:78:9a:bc", .bluetooth(address: "12:34:56:78:9A:BC", channel: nil)),
        ("bt:12:34:56:78:9A:BC@5", .bluetooth(address: "12:34:56:78:9A:BC", channel: 5)),
        ("file:rec.y4m", .file(path: "rec.y4m")),
    ])
    func deviceAddresses(text: String, expected: DeviceAddress) throws {
        #expect(try DeviceAddress(parsing: text) == expected)
        #expect(try DeviceAddress(parsing: expected.description) == expected)
    }

    @Test(arguments: [
        (["--fps", "25"], "2, 7, 15, 24 or 30"),
        (["--fps", "abc"], "invalid --fps"),
        (["--resolution", "4k"], "high (720x1280)"),
        (["--codec", "h264"], "raw (decoded NV12 frames) or hvc1"),
        (["--pixel-format", "rgba"], "bgra or nv12"),
        (["--transform", "flip"], "rotate90cw"),
        (["--metrics", "pulse,cardio"], "unknown metric 'pulse'"),
        (["--metrics", ","], "at least one"),
        (["--duration", "-3"], "positive number"),
        (["--duration", "nan"], "positive number"),
        (["--duration", "1e16"], "up to 1e9"),
        (["--duration", "0x10"], "positive number"),
        (["--connect-timeout", "0"], "above 0"),
        (["--output", "./same.ndjson", "--format", "ndjson", "--truth-out", "same.ndjson"], "--output and --truth-out name the same file"),
        (["--device", "file:played.mp4", "--report", "./played.mp4"], "--report ./played.mp4 is the file --device file: plays"),
        (["--device", "file:x.mkv", "--record", "y.mkv"], "the file is the record"),
        (["devices", "extra"], "unexpected argument 'extra'"),
        (["report", "a.ndjson", "b.ndjson", "-o", "x.html"], "reads one run, and got 2 files"),
        (["report", "a.ndjson", "-o", "./a.ndjson"], "would overwrite the run it reads"),
        (["report", "a.ndjson", "--reference", "strap.csv", "-o", "./strap.csv"], "would overwrite the --reference file"),
        (["--device", "usb:1"], "unknown scheme"),
        (["--device", "tcp:host"], "HOST:PORT"),
        (["--device", "tcp:host:0"], "1 to 65535"),
        (["--device", "bt:zz:34:56:78:9A:BC"], "Bluetooth address"),
        (["--device", "bt:12:34:56:78:9A:BC@99"], "channel"),
        (["--device", "unix:/s", "--sim-pulse", "80"], "only applies to the built-in simulator"),
        (["--device", "file:a.y4m", "--codec", "hvc1"], "file's own codec"),
        (["--device", "file:a.y4m", "--fps", "15"], "--fps does not apply to --device file:PATH"),
        (["--device", "file:a.y4m", "--resolution", "low"], "--resolution does not apply"),
        (["--sim-pulse", "500"], "25 to 240"),
        (["--video-out", "a.mp4"], ".y4m"),
        (["--record", "a.mp4"], "--codec raw"),
        (["--codec", "hvc1", "--record", "a.y4m"], ".mp4 or .mkv"),
        (["--output", "x.y4m", "--video-out", "x.y4m"], "different files"),
        (["--fsp", "24"], "Did you mean '--fps'?"),
        (["--resolution"], "needs a value"),
        (["--fps", "--resolution", "low"], "needs a value"),
        (["--no-realtime=yes"], "takes no value"),
        (["bogus"], "unknown command"),
        (["--fps", "24", "extra"], "unexpected argument 'extra'"),
        (["--format", "xml"], "text, ndjson or csv"),
        (["--sim-scenario", "s.json", "--sim-pulse", "80"], "conflicts with --sim-scenario"),
    ])
    func badInputGetsAClearUsageError(arguments: [String], fragment: String) {
        let message = usageError(arguments)
        #expect(message?.contains(fragment) == true, "\(arguments) -> \(message ?? "accepted")")
    }

    @Test func subcommandsAndHelp() throws {
        #expect(try BridgeCommand.parse(["devices"]) == .devices(format: .text))
        #expect(try BridgeCommand.parse(["devices", "--format", "ndjson"]) == .devices(format: .ndjson))
        #expect(try BridgeCommand.parse(["devices", "--help"]) == .help(topic: "devices"))
        #expect(try BridgeCommand.parse(["help", "devices"]) == .help(topic: "devices"))
        #expect(try BridgeCommand.parse(["--fps", "24", "--help"]) == .help(topic: nil))
        #expect(try BridgeCommand.parse(["-h"]) == .help(topic: nil))
        #expect(try BridgeCommand.parse(["--version"]) == .version)
        #expect(usageError(["devices", "--format", "csv"])?.contains("text or ndjson") == true)
        // A subcommand's mistake is followed by that subcommand's usage line.
        #expect(BridgeHelp.usageLine(for: ["report", "-o"]).hasPrefix("usage: glasses-bridge report RUN.ndjson"))
        #expect(BridgeHelp.usageLine(for: ["devices", "x"]).hasPrefix("usage: glasses-bridge devices"))
        #expect(BridgeHelp.usageLine(for: ["check"]).hasPrefix("usage: glasses-bridge check"))
        #expect(BridgeHelp.usageLine(for: ["--fps", "9"]) == BridgeHelp.usageLine)
    }

    @Test func helpTeachesWithExamplesAndExitCodes() {
        for needle in ["--device", "--fps", "--metrics", "EXAMPLES", "EXIT CODES", "64", "69", "70",
                       "glasses-bridge --fps 24 --resolution medium", "devices", "--no-realtime", "--video-out"] {
            #expect(BridgeHelp.main.contains(needle), "help lacks \(needle)")
        }
    }

    @Test("--help lists as measured exactly the metrics the embedded engine produces, and the others as refused")
    func helpListsTheProducedMetrics() throws {
        let lines = BridgeHelp.main.split(separator: "\n").map(String.init)
        let start = try #require(lines.firstIndex { $0.contains("bundles: breathing, cardio") })
        let others = try #require(lines.firstIndex { $0.contains("SmartSpectra's other names") })
        let words = { (range: Range<Int>) in
            Set(lines[range].joined(separator: " ").split(whereSeparator: { " ,:()".contains($0) }).map(String.init))
        }
        let listed = words(start..<others), refusedList = words(others..<others + 4)
        let produced = EmbeddedVitalsBackend().producedMetrics
        for single in MetricSelection.singles {
            #expect(listed.contains(single.name) == produced.contains(single.metric), "\(single.name) is listed wrongly")
            #expect(listed.contains(single.name) != refusedList.contains(single.name), "\(single.name) in both or neither")
        }
        for bundle in MetricSelection.bundles {
            #expect(listed.contains(bundle.name) == !produced.isDisjoint(with: bundle.metrics), "\(bundle.name) is listed wrongly")
        }
    }

    @Test func exitCodesHaveTheSysexitsValues() {
        #expect(BridgeExitCode.success.rawValue == 0)
        #expect(BridgeExitCode.usage.rawValue == 64)
        #expect(BridgeExitCode.deviceUnavailable.rawValue == 69)
        #expect(BridgeExitCode.internalError.rawValue == 70)
    }
}

@Suite("report options")
struct ReportParsingTests {
    @Test func reportSubcommandAndRunOptionsParse() throws {
        guard case .report(let options) = try BridgeCommand.parse(["report", "run.ndjson", "--reference", "strap.csv", "-o", "run.html",
                                                                   "--run-start", "2026-12-01T10:00:00Z"]) else {
            Issue.record("not a report command")
            return
        }
        #expect(options.inputPath == "run.ndjson" && options.referencePath == "strap.csv" && options.outputPath == "run.html")
        #expect(options.runStart == ISO8601DateFormatter().date(from: "2026-12-01T10:00:00Z") && options.tracesAt == nil)
        if case .report(let windowed) = try BridgeCommand.parse(["report", "r.ndjson", "-o", "r.html", "--traces-at=45"]) {
            #expect(windowed.tracesAt == 45)
        } else {
            Issue.record("--traces-at did not parse")
        }
        #expect(try BridgeCommand.parse(["help", "report"]) == .help(topic: "report"))
        #expect(try BridgeCommand.parse(["report", "--help"]) == .help(topic: "report"))
        guard case .run(let run) = try BridgeCommand.parse(["--report", "a.html", "--truth-out", "t.ndjson"]) else {
            Issue.record("not a run")
            return
        }
        #expect(run.reportPath == "a.html" && run.truthOutPath == "t.ndjson")
        for bad in [["report", "-o", "x.html"], ["report", "a.ndjson"], ["report", "a.ndjson", "-o", "a.ndjson"],
                    ["report", "a.ndjson", "-o", "x.html", "--run-start", "yesterday"], ["--truth-out", "t.txt"],
                    ["report", "a.ndjson", "-o", "x.html", "--traces-at", "-3"],
                    ["--report", "same.out", "--output", "same.out"], ["--device", "file:x.mkv", "--truth-out", "t.csv"]] {
            #expect(throws: BridgeUsageError.self, "\(bad)") { try BridgeCommand.parse(bad) }
        }
    }
}
