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
