import Foundation
import Testing

/// `glasses-relay` and `glasses-bridge` as separate processes, in real time over loopback TCP: listen mode, tokens,
/// refusals on both ends and the exit codes that say what happened.
@Suite("glasses-relay and glasses-bridge binaries (out of process, real time)", .serialized)
struct RelayBinaryTests {
    @Test("a listening bridge that no relay dials ends with exit 69 and says what to check")
    func nobodyDialsIn() throws {
        let result = try BinaryRunner.run(["--listen", "tcp:127.0.0.1:0", "--connect-timeout", "1", "--quiet"])
        #expect(result.status == 69, "stdout \(result.stdout) stderr \(result.stderr)")
        #expect(result.stderr.range(of: #"no device connected to tcp:127\.0\.0\.1:[0-9]+ within 1 s"#, options: .regularExpression) != nil,
                "\(result.stderr)")
        #expect(result.stderr.contains("glasses-relay --connect"), "\(result.stderr)")
    }

    @Test("a relay with the wrong token is refused at once on both ends; the right one streams frames")
    func tokensOnBothEnds() throws {
        // Port 0: the bridge picks a free port and names it (a port chosen here could be taken by a parallel test).
        let bridge = try BinaryRunner(
            ["--listen", "tcp:127.0.0.1:0", "--token", "right-token", "--duration", "120", "--connect-timeout", "120",
             "--format", "ndjson"])
        let address = Self.listeningAddress(of: bridge)
        // A relay that dials before the bridge listens tries again by itself.
        let wrong = try BinaryRunner.run(
            ["--connect", address, "--token", "wrong-token", "--duration", "60"], binary: "glasses-relay", timeout: 90)
        #expect(wrong.status == 69, "stdout \(wrong.stdout) stderr \(wrong.stderr)")
        #expect(wrong.stderr.contains("the bridge refused this relay") && wrong.stderr.contains("pairing failed: the device presented a wrong pairing token"),
                "\(wrong.stderr)")
        let right = try BinaryRunner(
            ["--connect", address, "--duration", "120", "--quiet"], binary: "glasses-relay",
            environment: ["GLASSES_TOKEN": "right-token"])
        // A stats line that counts frames received: frames have flowed for a while.
        #expect(bridge.waitForOutput(timeout: 90) { text in
            text.split(separator: "\n").contains { line in
                line.contains("\"type\":\"stats\"") && line.contains("\"framesReceived\":")
                    && !line.contains("\"framesReceived\":0,")
            }
        }, "the bridge never streamed")
        bridge.send(SIGINT)
        let result = bridge.finish(timeout: 60)
        right.send(SIGTERM)
        let relayResult = right.finish(timeout: 30)
        #expect(result.status == 0, "stderr \(result.stderr)")
        #expect(relayResult.status == 0, "relay stderr \(relayResult.stderr)")
        let lines = try result.lines.map(jsonObject)
        let warnings = lines.filter { $0["type"] as? String == "warning" }.compactMap { $0["message"] as? String }
        #expect(warnings.contains { $0.contains("refused a device from 127.0.0.1:") && $0.contains("wrong pairing token") },
                "\(warnings)")
        let summary = try #require(lines.last)
        #expect(summary["type"] as? String == "summary")
        #expect((summary["framesReceived"] as? Int ?? 0) > 0, "\(summary)")
        #expect(result.stderr.contains("refused 1 connection(s): pairing 1"), "\(result.stderr)")
    }

    @Test("the relay's closing line counts the frames the bridge got (not those dropped for credit); a second relay the bridge turns away as busy is neither 'connected' nor counted")
    func countsSayWhatHappened() throws {
        let bridge = try BinaryRunner(
            ["--listen", "tcp:127.0.0.1:0", "--duration", "180", "--connect-timeout", "120", "--format", "ndjson"])
        let address = Self.listeningAddress(of: bridge)
        // Long enough to outlast the second relay's attempts on a loaded machine (it ended first at 12 s once, and
        // the second relay was then served); stopped by a signal once they are over.
        let served = try BinaryRunner(["--connect", address, "--duration", "120"], binary: "glasses-relay")
        #expect(bridge.waitForOutput(timeout: 90) { text in
            text.split(separator: "\n").contains { $0.contains("\"type\":\"stats\"") && !$0.contains("\"framesReceived\":0,") }
        }, "the bridge never streamed")
        // The bridge serves one device: it turns a second relay away as busy, and that relay dials again.
        let turnedAway = try BinaryRunner.run(["--connect", address, "--duration", "3", "--seed", "2"], binary: "glasses-relay",
                                              timeout: 90)
        #expect(turnedAway.status == 0, "\(turnedAway.stderr)")
        #expect(!turnedAway.stdout.contains("bridge connected"), "\(turnedAway.stdout)")
        #expect(turnedAway.stdout.contains("the bridge did not take this relay") && turnedAway.stdout.contains("busy"),
                "\(turnedAway.stdout)")
        #expect(turnedAway.stdout.contains("glasses-relay: 0 bridge connection(s), 0 frames relayed"), "\(turnedAway.stdout)")
        served.send(SIGTERM)
        let relay = served.finish(timeout: 90)
        bridge.send(SIGINT)
        let result = bridge.finish(timeout: 60)
        // The bridge lost its glasses when the relay stopped (69); its summary still counts what it received.
        #expect(relay.status == 0, "relay \(relay.stderr)")
        let summary = try #require(try result.lines.map(jsonObject).last { $0["type"] as? String == "summary" })
        let received = try #require(summary["framesReceived"] as? Int)
        let closing = relay.stdout.split(separator: "\n").last { $0.hasPrefix("glasses-relay: 1 bridge connection(s), ") }
        let relayed = closing.flatMap { Int($0.split(separator: " ")[4]) }
        // Equal but for a frame the relay handed to its socket as it stopped; the frames dropped for credit (a few
        // every run while the bridge starts) are not in it.
        #expect(relayed.map { $0 >= received && $0 <= received + 1 } == true,
                "relay: \(closing.map(String.init) ?? relay.stdout); bridge received \(received)")
    }

    @Test("glasses-relay stops on its first signal with one line, and a second one (timeout(1) sends SIGTERM twice) neither repeats it nor cuts the closing line; --duration takes 1e9 like glasses-bridge")
    func oneStopLine() throws {
        for attempt in 1...5 {
            let relay = try BinaryRunner(["--listen", "tcp:127.0.0.1:0", "--duration", "1e9"], binary: "glasses-relay",
                                         signalWhen: "listening on")
            #expect(relay.waitForWatchedLine(timeout: 60), "attempt \(attempt): \(relay.stdoutSoFar)")
            // Held stopped, the signals are all pending when it resumes: they arrive together, as they would from
            // timeout(1), which signals the relay and then its process group.
            relay.send(SIGSTOP)
            for signal in [SIGTERM, SIGINT, SIGHUP] { relay.send(signal) }
            relay.send(SIGCONT)
            let result = relay.finish(timeout: 60)
            #expect(result.status == 0, "attempt \(attempt): \(result.stderr)")
            let stops = result.stdout.split(separator: "\n").filter { $0.hasSuffix(", stopping") }
            #expect(stops.count == 1, "attempt \(attempt): \(result.stdout)")
            #expect(result.stdout.contains("glasses-relay: 0 bridge connection(s), 0 frames relayed"), "attempt \(attempt): \(result.stdout)")
        }
    }

    @Test("glasses-relay refuses unsafe or contradictory command lines with exit 64")
    func relayUsage() throws {
        let cases: [([String], String)] = [
            ([], "give --connect ADDR"),
            (["--connect", "tcp:10.1.2.3:7000"], "is not loopback: give --token"),
            (["--listen", "tcp:0.0.0.0:7000", "--token", "t"], "add --allow-remote"),
            (["--listen", "tcp:127.0.0.1:7000", "--connect", "tcp:127.0.0.1:7001"], "cannot be combined"),
            (["--conect", "tcp:127.0.0.1:7000"], "Did you mean '--connect'?"),
            (["--connect", "bt:AA:BB:CC:DD:EE:FF"], "tcp: or unix:"),
            (["--connect", "tcp:127.0.0.1:7000", "--token", ""], "non-empty token"),
            (["--connect", "tcp:127.0.0.1:7000", "--allow-remote"], "--allow-remote applies to --listen only"),
            (["--connect", "tcp:127.0.0.1:7000", "--duration", "2e9"], "invalid --duration '2e9': give a positive number of seconds up to 1e9"),
            (["--connect", "tcp:127.0.0.1:7000", "--pulse", "300"], "--pulse must be 25...240 bpm, got 300"),
            (["--connect", "tcp:127.0.0.1:7000", "--seed", "-1"], "--seed needs a whole number"),
        ]
        for (arguments, fragment) in cases {
            let result = try BinaryRunner.run(arguments, binary: "glasses-relay", timeout: 60)
            #expect(result.status == 64, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains(fragment), "\(arguments): \(result.stderr)")
        }
        let help = try BinaryRunner.run(["--help"], binary: "glasses-relay")
        #expect(help.status == 0)
        #expect(help.stdout.contains("--connect") && help.stdout.contains("GLASSES_TOKEN"))
    }

    /// The address a bridge started with `--listen tcp:127.0.0.1:0` says it listens on (empty, and an issue, if it never does).
    static func listeningAddress(of bridge: BinaryRunner) -> String {
        var address = ""
        #expect(bridge.waitForOutput(timeout: 90) { text in
            guard let range = text.range(of: #"listening on tcp:127\.0\.0\.1:[0-9]+"#, options: .regularExpression) else {
                return false
            }
            address = String(text[range].dropFirst("listening on ".count))
            return true
        }, "the bridge never said where it listens")
        return address
    }
}
