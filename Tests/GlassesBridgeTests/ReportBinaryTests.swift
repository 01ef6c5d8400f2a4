import Foundation
import Testing

/// `glasses-bridge report`, `--report` and `--truth-out`, out of process.
@Suite("glasses-bridge reports (out of process)", .serialized)
struct ReportBinaryTests {
    static func scratch(_ name: String) throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("report-binary-\(name)-\(getpid())")
        try? FileManager.default.removeItem(at: directory)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    @Test("a virtual-time run writes its report and its truth on the run's clock; report rebuilds the page from the NDJSON")
    func runWritesReportAndTruth() throws {
        let directory = try Self.scratch("run")
        defer { try? FileManager.default.removeItem(at: directory) }
        let ndjson = directory.appendingPathComponent("run.ndjson").path
        let page = directory.appendingPathComponent("run.html").path
        let truth = directory.appendingPathComponent("truth.ndjson").path
        let result = try BinaryRunner.run([
            "--no-realtime", "--duration", "20", "--resolution", "low", "--fps", "15", "--format", "ndjson", "-o", ndjson,
            "--report", page, "--truth-out", truth,
        ])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let html = try String(contentsOfFile: page, encoding: .utf8)
        #expect(html.contains("<title>Pulse</title>") && html.contains("<title>Breathing</title>"))
        #expect(html.contains("truth") && html.contains("<td>--sim-pulse</td><td>72.0</td>"))
        // The truth file speaks the bridge's keys on the bridge's clock: at t = 10 it says what the stats line at t = 10 says.
        let truthLines = try String(contentsOfFile: truth, encoding: .utf8).split(separator: "\n").map { try jsonObject(String($0)) }
        #expect(truthLines.count == 201)
        let exported = try #require(truthLines.first { ($0["t"] as? Double) == 10 })
        let stats = try String(contentsOfFile: ndjson, encoding: .utf8).split(separator: "\n").map { try jsonObject(String($0)) }
            .first { $0["type"] as? String == "stats" && ($0["t"] as? Double) == 10 }
        let statsTruth = try #require(stats?["truth"] as? [String: Any])
        for key in ["pulseRate", "breathingRate"] {
            let a = try #require(exported[key] as? Double), b = try #require(statsTruth[key] as? Double)
            #expect(abs(a - b) <= 0.051, "\(key): export \(a), stats line \(b)")
        }
        // The same page from the saved NDJSON (the settings differ: only --report knows the command line).
        let rebuilt = directory.appendingPathComponent("rebuilt.html").path
        let report = try BinaryRunner.run(["report", ndjson, "--truth", truth, "-o", rebuilt])
        #expect(report.status == 0, "stderr: \(report.stderr)")
        let again = try String(contentsOfFile: rebuilt, encoding: .utf8)
        #expect(again.contains("<title>Pulse</title>") && again.contains("<td>truth</td><td>\(truth)</td>"))
    }

    @Test("the truth in stats lines has the documented windows (--truth-out's), the summary's covers the whole run")
    func truthWindows() throws {
        let directory = try Self.scratch("truth-windows")
        defer { try? FileManager.default.removeItem(at: directory) }
        let scenario = directory.appendingPathComponent("step.json")
        let truth = directory.appendingPathComponent("truth.csv").path
        // 80 bpm for 50 s, then 100: the run's median is 80, the last 30 s average about 87.
        try Data(#"{"subject": {"pulseRate": 80}, "events": [{"at": 50, "do": "pulseRate", "bpm": 100}]}"#.utf8)
            .write(to: scenario)
        let result = try BinaryRunner.run(["--no-realtime", "--duration", "60", "--resolution", "low", "--fps", "15",
                                           "--sim-scenario", scenario.path, "--truth-out", truth, "--format", "ndjson"])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        // --truth-out: HRV over the trailing 30 s, at 10 samples a second.
        var exported: [Int: Double] = [:]
        let rows = try String(contentsOfFile: truth, encoding: .utf8).split(separator: "\n").map { $0.split(separator: ",", omittingEmptySubsequences: false) }
        let header = try #require(rows.first).map(String.init)
        let time = try #require(header.firstIndex(of: "time_s")), hrv = try #require(header.firstIndex(of: "hrvRmssd"))
        for row in rows.dropFirst() where row.count == header.count {
            if let t = Double(row[time]), let v = Double(row[hrv]), abs(t - t.rounded()) < 0.01 { exported[Int(t.rounded())] = v }
        }
        var compared = 0
        var summary: [String: Any] = [:]
        for line in result.lines {
            let object = try jsonObject(line)
            if object["type"] as? String == "summary" { summary = object }
            guard object["type"] as? String == "stats", let t = object["t"] as? Double,
                  let stamped = (object["truth"] as? [String: Any])?["hrvRmssd"] as? Double,
                  let expected = exported[Int(t.rounded())] else { continue }
            #expect(abs(stamped - expected) < 0.11, "stats truth RMSSD \(stamped) ms at \(t) s, --truth-out \(expected)")
            compared += 1
        }
        #expect(compared >= 50, "only \(compared) stats lines compared")
        let runTruth = try #require(summary["truth"] as? [String: Any])
        let truthPulse = try #require(runTruth["pulseRate"] as? Double)
        let pulse = try #require(summary["pulseRate"] as? Double)
        #expect(abs(truthPulse - 80) < 1.5 && abs(truthPulse - pulse) < 2, "summary \(pulse) bpm against truth \(truthPulse)")
    }

    @Test("report: 64 for usage, 65 for a malformed line (named) or a reference that misses the run, 73 for an unwritable page")
    func reportExitCodes() throws {
        let directory = try Self.scratch("codes")
        defer { try? FileManager.default.removeItem(at: directory) }
        let good = directory.appendingPathComponent("good.ndjson")
        try Data((#"{"type":"start","t":0,"schemaVersion":1,"simulated":false}"# + "\n").utf8).write(to: good)
        let bad = directory.appendingPathComponent("bad.ndjson")
        try Data((#"{"type":"start","t":0,"schemaVersion":1,"simulated":false}"# + "\n" + #"{"type":"stats","t":1,"framesReceived":"many"}"# + "\n").utf8).write(to: bad)
        let far = directory.appendingPathComponent("far.csv")
        try Data("t,hr\n5000,70\n5001,71\n".utf8).write(to: far)
        let out = directory.appendingPathComponent("out.html").path

        let help = try BinaryRunner.run(["report", "--help"])
        #expect(help.status == 0 && help.stdout.contains("USAGE") && help.stdout.contains("--reference FILE"))
        #expect(try BinaryRunner.run(["help", "report"]).stdout.contains("glasses-bridge report:"))
        #expect(try BinaryRunner.run(["report", good.path]).status == 64)
        #expect(try BinaryRunner.run(["report", "-o", out]).status == 64)
        #expect(try BinaryRunner.run(["report", good.path, "-o", out, "--truth", far.path, "--reference", far.path]).status == 64)
        let typo = try BinaryRunner.run(["report", good.path, "-o", out, "--refrence", far.path])
        #expect(typo.status == 64 && typo.stderr.contains("--reference"))
        let malformed = try BinaryRunner.run(["report", bad.path, "-o", out])
        #expect(malformed.status == 65 && malformed.stderr.contains("bad.ndjson:2:"), "stderr: \(malformed.stderr)")
        let missing = try BinaryRunner.run(["report", directory.appendingPathComponent("nope.ndjson").path, "-o", out])
        #expect(missing.status == 65 && missing.stderr.contains("cannot read"))
        let apart = try BinaryRunner.run(["report", good.path, "--reference", far.path, "-o", out])
        #expect(apart.status == 65 && apart.stderr.contains("do not overlap the run"), "stderr: \(apart.stderr)")
        let unwritable = try BinaryRunner.run(["report", good.path, "-o", directory.appendingPathComponent("no/such/dir.html").path])
        #expect(unwritable.status == 73 && unwritable.stderr.contains("does not exist"))
        #expect(!FileManager.default.fileExists(atPath: out))
        let fine = try BinaryRunner.run(["report", good.path, "-o", out])
        let finePage = try String(contentsOfFile: out, encoding: .utf8)
        #expect(fine.status == 0 && finePage.contains("No frames arrived"))
        // The run's own outputs are checked before it starts.
        let early = try BinaryRunner.run(["--no-realtime", "--duration", "5", "--report", directory.appendingPathComponent("x/y.html").path])
        #expect(early.status == 73 && early.stderr.contains("--report"))
        #expect(try BinaryRunner.run(["--device", "file:/tmp/x.mkv", "--truth-out", out + ".csv"]).status == 64)
        #expect(try BinaryRunner.run(["--truth-out", out]).status == 64)  // neither .csv nor .ndjson
    }

    @Test("after SIGINT the report is still written")
    func reportAfterSignal() throws {
        let directory = try Self.scratch("signal")
        defer { try? FileManager.default.removeItem(at: directory) }
        let page = directory.appendingPathComponent("run.html").path
        let runner = try BinaryRunner(["--format", "ndjson", "--resolution", "low", "--fps", "15", "--report", page]) { output in
            output.split(separator: "\n").contains { $0.contains("\"type\":\"stats\"") && !$0.contains("\"framesReceived\":0,") }
        }
        let streaming = runner.waitForWatchedLine(timeout: 120)
        runner.send(SIGINT)
        let result = runner.finish(timeout: 120)
        #expect(streaming && result.status == 0, "stderr: \(result.stderr)")
        let html = try String(contentsOfFile: page, encoding: .utf8)
        #expect(html.contains("ended: signal") && html.contains("<td>started at</td>"))
    }
}
