import GlassesBridge
import GlassesBridgeCommand
import GlassesLink
import Testing

/// `glasses-bridge check` on the command line: what parses, and every refusal naming its problem.
@Suite("check command parsing")
struct CheckParsingTests {
    func check(_ arguments: [String], environment: [String: String] = [:]) throws -> CheckOptions {
        guard case .check(let options) = try BridgeCommand.parse(["check"] + arguments, environment: environment) else {
            Issue.record("not a check command: \(arguments)")
            return CheckOptions()
        }
        return options
    }

    @Test("defaults, a device, a listening address, files and format; GLASSES_TOKEN stands in for --token")
    func parses() throws {
        let defaults = try check([])
        #expect(defaults.device == .simulator && defaults.format == .text && defaults.planPath == nil && !defaults.realtime)
        let dialled = try check(["--device", "tcp:10.0.0.5:7000", "--plan", "p.json", "--reference", "r.csv", "--junit", "j.xml",
                                 "--format", "ndjson", "--connect-timeout", "5"], environment: ["GLASSES_TOKEN": "secret"])
        #expect(dialled.device == .tcp(host: "10.0.0.5", port: 7000) && dialled.token == "secret")
        #expect(dialled.planPath == "p.json" && dialled.referencePath == "r.csv" && dialled.junitPath == "j.xml" && dialled.format == .ndjson)
        let listening = try check(["--listen", "tcp:127.0.0.1:7100"])
        #expect(listening.device == .listening(.tcp(host: "127.0.0.1", port: 7100)))
        let live = try check(["--realtime", "--reference", "lsl:HeartRate"])
        #expect(live.referenceLSL == "HeartRate" && live.referencePath == nil)
        #expect(try check(["--device", "tcp:127.0.0.1:7000", "--reference", "lsl:strap"]).referenceLSL == "strap")
        #expect(try BridgeCommand.parse(["check", "--help"]) == .help(topic: "check"))
        #expect(try BridgeCommand.parse(["help", "check"]) == .help(topic: "check"))
    }

    @Test("refusals", arguments: [
        (["--device", "file:run.mp4"], "not a file"),
        (["--device", "tcp:10.0.0.5:7000"], "give --token TOKEN"),
        (["--listen", "tcp:0.0.0.0:7100"], "give --token TOKEN"),
        (["--listen", "bt:AA:BB:CC:DD:EE:FF"], "--listen takes tcp:HOST:PORT or unix:PATH"),
        (["--device", "tcp:127.0.0.1:1", "--listen", "tcp:127.0.0.1:2"], "two sources"),
        (["--format", "csv"], "use text or ndjson"),
        (["--token", "t"], "not the built-in simulator"),
        (["--device", "tcp:127.0.0.1:1", "--realtime"], "built-in simulator only"),
        (["--plna", "x"], "Did you mean '--plan'?"),
        (["--reference", "lsl:HeartRate"], "needs --realtime"),
        (["--realtime", "--reference", "lsl:"], "needs a stream's name or type"),
        (["extra"], "unexpected argument 'extra'"),
    ])
    func refusals(arguments: [String], fragment: String) {
        #expect {
            _ = try BridgeCommand.parse(["check"] + arguments, environment: [:])
        } throws: { error in
            (error as? BridgeUsageError)?.message.contains(fragment) == true
        }
    }
}
