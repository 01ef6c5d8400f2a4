import Foundation
import Testing

/// The built `glasses-bridge` binary, out of process: exit codes, help, NDJSON output and signals.
@Suite("glasses-bridge binary (out of process)", .serialized)
struct BinaryTests {
    @Test func helpAndUsageErrorsUseTheDocumentedExitCodes() throws {
        let help = try BinaryRunner.run(["--help"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("EXAMPLES") && help.stdout.contains("EXIT CODES"))
        let usage = try BinaryRunner.run(["--fps", "25"])
        #expect(usage.status == 64)
        #expect(usage.stderr.contains("2, 7, 15, 24 or 30"))
        #expect(usage.stdout.isEmpty)
        let devices = try BinaryRunner.run(["devices"])
        #expect(devices.status == 0)
        #expect(devices.stdout.contains("sim"))
        #expect(devices.stdout.lowercased().contains("bluetooth"))
    }

    @Test func anUnreachableDeviceExitsWith69() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("no-glasses-\(getpid()).sock").path
        let result = try BinaryRunner.run(["--device", "unix:\(path)", "--format", "ndjson"])
        #expect(result.status == 69, "stderr: \(result.stderr)")
        #expect(result.stderr.contains(path))
        let summary = try jsonObject(try #require(result.lines.last))
        #expect(summary["type"] as? String == "summary")
    }

    @Test func aVirtualTimeRunPrintsParseableNDJSONEndingWithTheSummary() throws {
        let result = try BinaryRunner.run([
            "--format", "ndjson", "--no-realtime", "--duration", "20", "--resolution", "low", "--fps", "15",
        ])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let objects = try result.lines.map(jsonObject)
        let types = objects.compactMap { $0["type"] as? String }
        #expect(types.contains("state"))
        #expect(types.contains("stats"))
        #expect(types.last == "summary")
        #expect(types.filter { $0 == "summary" }.count == 1)
        let summary = try #require(objects.last)
        for key in ["pulseRate", "breathingRate", "hrvRmssd", "framesReceived", "framesSubmitted", "framesRejected", "framesDropped"] {
            #expect(summary.keys.contains(key), "summary lacks \(key)")
        }
        let received = try #require(summary["framesReceived"] as? Int)
        let submitted = try #require(summary["framesSubmitted"] as? Int)
        let rejected = try #require(summary["framesRejected"] as? Int)
        let dropped = try #require(summary["framesDropped"] as? Int)
        #expect(received >= 15 * 19)
        #expect(received == submitted + rejected + dropped)
        let truth = try #require(summary["truth"] as? [String: Any])
        #expect(summary["reason"] as? String == "duration")
        // 20 s is long enough for the embedded engine's pulse to settle near the simulator's truth.
        let truePulse = try #require(truth["pulseRate"] as? Double)
        let pulse = try #require(summary["pulseRate"] as? Double, "no stable pulse after 20 s")
        #expect(abs(pulse - truePulse) <= 5, "pulse \(pulse) vs truth \(truePulse)")
        if let breathing = summary["breathingRate"] as? Double, let trueBreathing = truth["breathingRate"] as? Double {
            #expect(abs(breathing - trueBreathing) <= 3, "breathing \(breathing) vs truth \(trueBreathing)")
        }
        #expect(types.contains("metrics"))
    }

    @Test("measurements are stamped on the run's clock: a stream that starts 5 s into the run starts at 5 s, not 0")
    func measurementsAreOnTheRunClock() throws {
        // The glasses are off the face when the run starts and put on at 5 s: no frame before then.
        let scenario = FileManager.default.temporaryDirectory.appendingPathComponent("late-start-\(getpid()).json")
        try Data(#"{"events": [{"at": 0, "do": "doff"}, {"at": 5, "do": "don"}]}"#.utf8).write(to: scenario)
        defer { try? FileManager.default.removeItem(at: scenario) }
        let result = try BinaryRunner.run(["--no-realtime", "--duration", "20", "--resolution", "low", "--fps", "15",
                                           "--sim-scenario", scenario.path, "--format", "ndjson"])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        var firstTrace: (t: Double, timestamp: Double)?
        var firstPulse: (t: Double, timestamp: Double)?
        for line in result.lines {
            let object = try jsonObject(line)
            guard object["type"] as? String == "metrics", let t = object["t"] as? Double,
                  let metrics = object["metrics"] as? [String: Any] else { continue }
            let breathing = metrics["breathing"] as? [String: Any]
            if firstTrace == nil, let point = (breathing?["upperTrace"] as? [[String: Any]])?.first,
               let stamp = (point["timestamp"] as? String).flatMap(Double.init) {
                firstTrace = (t, stamp / 1e6)
            }
            let cardio = metrics["cardio"] as? [String: Any]
            if firstPulse == nil, let point = (cardio?["pulseRate"] as? [[String: Any]])?.first,
               let stamp = (point["timestamp"] as? String).flatMap(Double.init) {
                firstPulse = (t, stamp / 1e6)
            }
        }
        let trace = try #require(firstTrace, "no trace: \(result.stdout.prefix(2000))")
        // The first frame arrives just after 5 s, and its trace point is stamped there (it read 0.07 s before).
        #expect(trace.timestamp >= 5 && trace.timestamp <= trace.t + 0.01, "first trace point at \(trace.timestamp) s, written at \(trace.t) s")
        // The first pulse, after 10 s of face, is stamped at about 15 s, where the run's clock has it.
        let pulse = try #require(firstPulse, "no pulse: \(result.stdout.suffix(2000))")
        #expect(pulse.timestamp >= 15 && abs(pulse.timestamp - pulse.t) < 1.5, "first pulse at \(pulse.timestamp) s, written at \(pulse.t) s")
    }

    @Test func sigintEndsTheRunGracefullyWithASummaryAndExitZero() throws {
        // Signal once frames flow (a run in which nothing arrived is a failure, exit 69, not what this test is about).
        let runner = try BinaryRunner(["--format", "ndjson", "--resolution", "low", "--fps", "15"]) { output in
            output.split(separator: "\n").contains { $0.contains("\"type\":\"stats\"") && !$0.contains("\"framesReceived\":0,") }
        }
        let streaming = runner.waitForWatchedLine(timeout: 120)
        runner.send(SIGINT)
        let result = runner.finish(timeout: 120)
        #expect(streaming, "no stats line before SIGINT; stderr: \(result.stderr)")
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let summary = try jsonObject(try #require(result.lines.last))
        #expect(summary["type"] as? String == "summary")
        #expect(summary["reason"] as? String == "signal")
        let received = try #require(summary["framesReceived"] as? Int)
        let settled = try #require(summary["framesSubmitted"] as? Int) + (summary["framesRejected"] as? Int ?? -1)
            + (summary["framesDropped"] as? Int ?? -1)
        #expect(received == settled)
    }

    @Test func sigintWhileWaitingForARelayToListenEndsAtOnce() throws {
        // Nothing listens at the socket path; the bridge keeps dialling for up to 60 s. Ctrl-C must not wait that out.
        let path = NSTemporaryDirectory() + "gb-none-\(UInt32.random(in: 0 ... .max)).sock"
        let runner = try BinaryRunner(["--device", "unix:\(path)", "--connect-timeout", "60", "--format", "ndjson"],
                                      signalWhen: "\"state\":\"connecting\"")
        let connecting = runner.waitForWatchedLine(timeout: 60)
        let signalled = ContinuousClock.now
        runner.send(SIGINT)
        let result = runner.finish(timeout: 120)
        #expect(connecting, "stderr: \(result.stderr)")
        #expect(ContinuousClock.now - signalled < .seconds(20), "the run ended \(ContinuousClock.now - signalled) after SIGINT")
        // Nothing arrived: exit 69 and a line that says the run was stopped before anything did.
        #expect(result.status == 69 && result.stderr.contains("stopped by a signal")
                    && result.stderr.contains("before any frame arrived from unix:\(path)"), "stderr: \(result.stderr)")
    }
}
