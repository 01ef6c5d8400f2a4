import GlassesBridge
import GlassesBridgeCommand
import GlassesLink
import Testing

/// `--listen`, `--token` (and `GLASSES_TOKEN`), `--connect-timeout`: what the command accepts and what it refuses.
@Suite("Link options: listen mode, pairing tokens, connect timeout")
struct LinkOptionParsingTests {
    func options(_ arguments: [String], environment: [String: String] = [:]) throws -> BridgeOptions {
        guard case .run(let options) = try BridgeCommand.parse(arguments, environment: environment) else {
            throw BridgeUsageError("not a run")
        }
        return options
    }

    func usageError(_ arguments: [String], environment: [String: String] = [:]) -> String? {
        do {
            _ = try BridgeCommand.parse(arguments, environment: environment)
            return nil
        } catch {
            return error.message
        }
    }

    @Test func listenMakesTheSourceAListeningAddress() throws {
        let parsed = try options(["--listen", "tcp:127.0.0.1:7100"])
        #expect(parsed.device == .listening(.tcp(host: "127.0.0.1", port: 7100)))
        #expect(parsed.effectiveConnectTimeout == .seconds(60))
        #expect(try options(["--listen", "unix:/tmp/bridge.sock"]).device == .listening(.unix(path: "/tmp/bridge.sock")))
        #expect(try options(["--device", "tcp:127.0.0.1:7200"]).effectiveConnectTimeout == .seconds(10))
        #expect(try options(["--listen", "tcp:127.0.0.1:0", "--connect-timeout", "2.5"]).effectiveConnectTimeout
                == .milliseconds(2500))
    }

    @Test("anything not loopback needs a token; GLASSES_TOKEN stands in for --token")
    func tokens() throws {
        #expect(usageError(["--listen", "tcp:0.0.0.0:7100"])?.contains("give --token TOKEN (or set GLASSES_TOKEN)") == true)
        #expect(usageError(["--device", "tcp:10.1.2.3:7000"])?.contains("give --token TOKEN") == true)
        // A Bluetooth device is not "another machine" running glasses-sim: the message says what it is.
        let bluetooth = try #require(usageError(["--device", "bt:AA:BB:CC:DD:EE:FF@1"]))
        #expect(bluetooth.contains("needs --token TOKEN") && bluetooth.contains("over Bluetooth") && !bluetooth.contains("glasses-sim"),
                "\(bluetooth)")
        // Every example the help gives parses (the Bluetooth one lacked its token).
        for line in BridgeHelp.main.split(separator: "\n") where line.trimmingCharacters(in: .whitespaces).hasPrefix("glasses-bridge --") {
            let words = line.split(separator: " ").dropFirst().map(String.init)
            #expect(usageError(words) == nil, "\(line): \(usageError(words) ?? "")")
        }
        #expect(try options(["--listen", "tcp:0.0.0.0:7100", "--token", "t1"]).token == "t1")
        let fromEnvironment = try options(["--device", "tcp:10.1.2.3:7000"], environment: ["GLASSES_TOKEN": "t2"])
        #expect(fromEnvironment.token == "t2")
        // The command line wins over the environment.
        #expect(try options(["--device", "tcp:10.1.2.3:7000", "--token", "t3"], environment: ["GLASSES_TOKEN": "t2"]).token
                == "t3")
        // Loopback and Unix sockets need none, but take one.
        #expect(try options(["--device", "tcp:127.0.0.1:7000"]).token == nil)
        #expect(try options(["--listen", "unix:/tmp/b.sock", "--token", "t4"]).token == "t4")
        // The environment's token is not picked up where no link is used.
        #expect(try options([], environment: ["GLASSES_TOKEN": "t2"]).token == nil)
    }

    @Test("contradictions and misplaced link options are usage errors", arguments: [
        (["--listen", "tcp:127.0.0.1:7100", "--device", "sim"], "two sources"),
        (["--listen", "bt:AA:BB:CC:DD:EE:FF"], "tcp:HOST:PORT or unix:PATH"),
        (["--listen", "udp:1"], "invalid --listen"),
        (["--token", "t"], "--token applies to"),
        (["--device", "file:x.mp4", "--token", "t"], "--token applies to"),
        (["--connect-timeout", "5"], "--connect-timeout applies to"),
        (["--listen", "tcp:127.0.0.1:7100", "--connect-timeout", "0"], "invalid --connect-timeout"),
        (["--listen", "tcp:127.0.0.1:7100", "--connect-timeout", "1e300"], "invalid --connect-timeout"),
        (["--listen", "tcp:127.0.0.1:7100", "--token", ""], "non-empty"),
        (["--listen", "tcp:127.0.0.1:7100", "--sim-pulse", "80"], "only applies to the built-in simulator"),
    ])
    func refusals(arguments: [String], fragment: String) {
        let message = usageError(arguments)
        #expect(message?.contains(fragment) == true, "\(arguments) -> \(message ?? "accepted")")
    }
}
