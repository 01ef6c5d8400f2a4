import Foundation
@testable import GlassesBridgeCommand
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `--serve-metrics` against real consumers: a bridge run serves its metrics, `promtool check metrics` accepts
/// them, a Prometheus server started here scrapes them (with the bearer token) and answers a query for the frame
/// counter and the pulse, a request without the token is refused, hostile clients get answers instead of a hang,
/// and the alert rules in docs/prometheus pass `promtool check rules` and their unit tests.
///
/// Needs Debian's `prometheus` package (Scripts/setup installs it). Serialized: each test starts servers.
@Suite(.serialized) struct PrometheusEndpointTests {
    static let promtool = "/usr/bin/promtool"
    static let prometheus = "/usr/bin/prometheus"
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    // MARK: Helpers

    /// Starts a bridge run of the simulator serving metrics on a port the system picks; returns it with the port,
    /// read from its "serving metrics on" line.
    private func startBridge(_ extra: [String] = [], duration: Int = 60) throws -> (BinaryRunner, UInt16) {
        let bridge = try BinaryRunner(
            ["--device", "sim", "--realtime", "--duration", "\(duration)", "--resolution", "low", "--fps", "15",
             "--format", "ndjson", "--serve-metrics", "tcp:127.0.0.1:0"] + extra)
        let port = try #require(poll(timeout: 20) { () -> UInt16? in
            guard let range = bridge.stderrSoFar.range(of: "serving metrics on http://127.0.0.1:") else { return nil }
            let rest = bridge.stderrSoFar[range.upperBound...]
            return UInt16(rest.prefix { $0.isNumber })
        }, "no 'serving metrics on' line; stderr: \(bridge.stderrSoFar)")
        return (bridge, port)
    }

    /// Calls `body` every 100 ms until it returns a value or `timeout` seconds pass.
    private func poll<T>(timeout: Double, _ body: () throws -> T?) rethrows -> T? {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let value = try body() { return value }
            if Date() > deadline { return nil }
            Thread.sleep(forTimeInterval: 0.1)
        }
    }

    /// A port free right now on 127.0.0.1 (for Prometheus's own listener).
    private func freePort() throws -> UInt16 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        try #require(bound)
        return UInt16(bigEndian: address.sin_port)
    }

    /// Sends `request` to 127.0.0.1:`port` and reads until the server closes (or `timeout` seconds pass).
    private func exchange(_ request: [UInt8], port: UInt16, timeout: Double = 10) -> String {
        let connection = RawConnection(port: port, timeout: timeout)
        connection.send(request)
        return connection.readAll()
    }

    private func get(_ path: String, port: UInt16, headers: [String] = []) -> String {
        let head = (["GET \(path) HTTP/1.1", "Host: 127.0.0.1", "Connection: close"] + headers).joined(separator: "\r\n")
            + "\r\n\r\n"
        return exchange(Array(head.utf8), port: port)
    }

    private func body(of response: String) -> String {
        response.components(separatedBy: "\r\n\r\n").dropFirst().joined(separator: "\r\n\r\n")
    }

    /// A Prometheus server started for one test: scraping and evaluating rules every second, its data in a
    /// temporary folder; ``stop()`` ends it and removes the folder.
    private struct PrometheusServer {
        let process = Process()
        let directory: URL
        let webPort: UInt16

        init(scrapeConfigs: String, rules: String? = nil, webPort: UInt16) throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("prom-\(UUID().uuidString)")
            self.webPort = webPort
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            var config = "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\n"
            if let rules {
                let file = directory.appendingPathComponent("rules.yml")
                try rules.write(to: file, atomically: true, encoding: .utf8)
                config += "rule_files:\n  - \(file.path)\n"
            }
            config += "scrape_configs:\n" + scrapeConfigs + "\n"
            let configFile = directory.appendingPathComponent("prometheus.yml")
            try config.write(to: configFile, atomically: true, encoding: .utf8)
            process.executableURL = URL(fileURLWithPath: PrometheusEndpointTests.prometheus)
            process.arguments = [
                "--config.file=\(configFile.path)", "--storage.tsdb.path=\(directory.appendingPathComponent("data").path)",
                "--web.listen-address=127.0.0.1:\(webPort)", "--log.level=warn",
            ]
            let log = Pipe()
            process.standardOutput = log
            process.standardError = log
            try process.run()
        }

        func stop() {
            process.terminate()
            process.waitUntilExit()
            try? FileManager.default.removeItem(at: directory)
        }

        /// The answer to `GET path` on the server's web port.
        func get(_ path: String) -> String {
            let connection = RawConnection(port: webPort, timeout: 10)
            connection.send(Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".utf8))
            return connection.readAll()
        }

        /// The JSON `data` of an API call, or nil.
        func api(_ path: String) -> Any? {
            let response = get(path)
            let body = response.components(separatedBy: "\r\n\r\n").dropFirst().joined(separator: "\r\n\r\n")
            guard let json = try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any] else { return nil }
            return json["data"]
        }

        /// An instant query's series: labels and value.
        func query(_ expression: String) -> [(labels: [String: String], value: Double)] {
            let encoded = expression.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? expression
            guard let data = api("/api/v1/query?query=\(encoded)") as? [String: Any],
                  let result = data["result"] as? [[String: Any]] else { return [] }
            return result.compactMap { series in
                guard let labels = series["metric"] as? [String: String], let pair = series["value"] as? [Any],
                      pair.count == 2, let text = pair[1] as? String, let value = Double(text)
                else { return nil }
                return (labels, value)
            }
        }

        /// The alerts: name, state (`pending`, `firing`) and labels.
        func alerts() -> [(name: String, state: String, labels: [String: String])] {
            guard let data = api("/api/v1/alerts") as? [String: Any], let alerts = data["alerts"] as? [[String: Any]] else { return [] }
            return alerts.compactMap { alert in
                guard let labels = alert["labels"] as? [String: String], let name = labels["alertname"],
                      let state = alert["state"] as? String else { return nil }
                return (name, state, labels)
            }
        }
    }

    // MARK: Tests

    @Test func prometheusScrapesABridgeRunWithTheTokenAndARequestWithoutItIsRefused() throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.prometheus), "install Debian's prometheus (Scripts/setup)")
        let token = "rack-secret-42"
        let (bridge, port) = try startBridge(["--token", token])
        defer {
            bridge.send(SIGINT)
            _ = bridge.finish(timeout: 30)
        }

        // No token, a wrong token: 401, and no metrics in the answer.
        let refused = get("/metrics", port: port)
        #expect(refused.hasPrefix("HTTP/1.1 401 "), "\(refused)")
        #expect(!refused.contains("glasses_bridge_"))
        #expect(get("/metrics", port: port, headers: ["Authorization: Bearer wrong"]).hasPrefix("HTTP/1.1 401 "))

        // The older text format passes promtool's lint; the OpenMetrics one is what Prometheus reads below.
        let text = get("/metrics", port: port, headers: ["Authorization: Bearer \(token)", "Accept: text/plain"])
        #expect(text.hasPrefix("HTTP/1.1 200 OK\r\n"), "\(text)")
        #expect(text.contains("Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"))
        let lint = try runTool(Self.promtool, ["check", "metrics"], input: body(of: text))
        #expect(lint.status == 0, "promtool check metrics: \(lint.output)\n\(body(of: text))")
        let openMetrics = get("/metrics", port: port, headers: ["Authorization: Bearer \(token)"])
        #expect(openMetrics.contains("Content-Type: application/openmetrics-text; version=1.0.0; charset=utf-8\r\n"))
        #expect(openMetrics.hasSuffix("# EOF\n"))

        // A real Prometheus, scraping every second with the token.
        let server = try PrometheusServer(scrapeConfigs: """
              - job_name: glasses-bridge
                authorization:
                  type: Bearer
                  credentials: \(token)
                static_configs:
                  - targets: ['127.0.0.1:\(port)']
            """, webPort: try freePort())
        defer { server.stop() }
        let webPort = server.webPort
        func query(_ expression: String) -> [(labels: [String: String], value: Double)] { server.query(expression) }

        let frames = poll(timeout: 40) { () -> Double? in
            guard let value = query("glasses_bridge_frames_received_total").first?.value, value > 0 else { return nil }
            return value
        }
        #expect(frames != nil, "Prometheus never had frames; targets: \(get("/api/v1/targets", port: webPort))")
        let received = query("glasses_bridge_frames_received_total").first
        #expect(received?.labels["device"] == "sim")
        #expect(received?.labels["job"] == "glasses-bridge")
        let pulse = poll(timeout: 40) { query("glasses_bridge_pulse_beats_per_minute").first }
        #expect(pulse.map { (30...200).contains($0.value) } == true, "pulse: \(String(describing: pulse))")
        #expect(query("glasses_bridge_stream_state{state=\"streaming\"}").first?.value == 1)
        #expect(query("up{job=\"glasses-bridge\"}").first?.value == 1)
        let latency = poll(timeout: 10) { query("glasses_bridge_frame_latency_seconds_count").first }
        #expect((latency?.value ?? 0) > 0, "latency histogram: \(String(describing: latency))")
    }

    /// docs/PROMETHEUS.md's rack: one Prometheus scraping several bridges with docs/prometheus/alerts.yml. Its
    /// stalled-stream rule fires for the bridge that receives no frame (a relay that lost its glasses: listening,
    /// nothing sent) and not for the one streaming. The rules are the docs' with their `for:` waits set to 0 s
    /// (the test cannot wait two minutes; `promtool test rules` covers the waits).
    @Test func prometheusScrapesTwoBridgesAndTheDocsAlertFiresForTheStalledOneOnly() throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.prometheus), "install Debian's prometheus (Scripts/setup)")
        let (streaming, streamingPort) = try startBridge()
        defer {
            streaming.send(SIGINT)
            _ = streaming.finish(timeout: 30)
        }
        let stalled = try BinaryRunner(["--listen", "tcp:127.0.0.1:0", "--connect-timeout", "120", "--format", "ndjson",
                                        "--serve-metrics", "tcp:127.0.0.1:0"])
        defer {
            stalled.send(SIGINT)
            _ = stalled.finish(timeout: 30)
        }
        let stalledPort = try #require(poll(timeout: 20) { () -> UInt16? in
            guard let range = stalled.stderrSoFar.range(of: "serving metrics on http://127.0.0.1:") else { return nil }
            return UInt16(stalled.stderrSoFar[range.upperBound...].prefix { $0.isNumber })
        }, "stderr: \(stalled.stderrSoFar)")
        let docsRules = try String(contentsOf: Self.repository.appendingPathComponent("docs/prometheus/alerts.yml"), encoding: .utf8)
        let rules = docsRules.replacingOccurrences(of: #"for: [0-9]+m"#, with: "for: 0s", options: .regularExpression)
        #expect(rules != docsRules && rules.contains("GlassesBridgeStreamStalled"))
        let server = try PrometheusServer(scrapeConfigs: """
              - job_name: glasses-bridge
                static_configs:
                  - targets: ['127.0.0.1:\(streamingPort)', '127.0.0.1:\(stalledPort)']
            """, rules: rules, webPort: try freePort())
        defer { server.stop() }

        // Both bridges are scraped, each with its own device label.
        let devices = poll(timeout: 40) { () -> Set<String>? in
            let found = Set(server.query("glasses_bridge_frames_received_total").compactMap { $0.labels["device"] })
            return found.count == 2 ? found : nil
        }
        #expect(devices == ["sim", "listen:tcp:127.0.0.1:0"], "targets: \(server.get("/api/v1/targets"))")
        let firing = poll(timeout: 40) { () -> [[String: String]]? in
            let stalls = server.alerts().filter { $0.name == "GlassesBridgeStreamStalled" && $0.state == "firing" }
            return stalls.isEmpty ? nil : stalls.map(\.labels)
        }
        #expect(firing?.count == 1, "alerts: \(server.alerts())")
        #expect(firing?.first?["instance"] == "127.0.0.1:\(stalledPort)" && firing?.first?["device"] == "listen:tcp:127.0.0.1:0")
        // The streaming bridge is not stalled: its frames rise, and no alert names it. A rate needs two scrapes in
        // its window: on a loaded machine the alert can fire before the streaming bridge's second scrape, so the
        // rise is waited for (a CI run once queried it too early and read no rate at all).
        let rising = poll(timeout: 40) { () -> Double? in
            guard let rate = server.query("rate(glasses_bridge_frames_received_total{device=\"sim\"}[1m])").first?.value, rate > 0 else {
                return nil
            }
            return rate
        }
        #expect(rising != nil, "targets: \(server.get("/api/v1/targets"))")
        #expect(!server.alerts().contains { $0.labels["instance"] == "127.0.0.1:\(streamingPort)" })
    }

    @Test func hostileClientsGetAnAnswerAndNeverHoldUpOthers() throws {
        let (bridge, port) = try startBridge(duration: 30)
        defer {
            bridge.send(SIGINT)
            _ = bridge.finish(timeout: 30)
        }
        // Clients that connect and send nothing fill the connection cap; one more is told 503 at once.
        var silent = (0..<MetricsEndpoint.maximumConnections).map { _ in RawConnection(port: port, timeout: 15) }
        let start = Date()
        let overCap = exchange(Array("GET /metrics HTTP/1.1\r\n\r\n".utf8), port: port)
        #expect(overCap.hasPrefix("HTTP/1.1 503 "), "\(overCap)")
        // The silent ones get 408 after the request timeout, and then the endpoint serves again.
        for connection in silent {
            let answer = connection.readAll()
            #expect(answer.hasPrefix("HTTP/1.1 408 "), "\(answer)")
        }
        let waited = Date().timeIntervalSince(start)
        #expect(waited < 10, "the silent clients were cut off after \(waited) s")
        silent.removeAll()  // closes them

        let served = poll(timeout: 5) { () -> String? in
            let response = get("/metrics", port: port)
            return response.hasPrefix("HTTP/1.1 503 ") ? nil : response
        } ?? "still 503"
        #expect(served.hasPrefix("HTTP/1.1 200 OK\r\n"), "\(served)")
        #expect(served.contains("Content-Type: application/openmetrics-text; version=1.0.0; charset=utf-8\r\n"))
        #expect(served.contains("glasses_bridge_frames_received_total{device=\"sim\"} "))
        #expect(get("/", port: port).hasPrefix("HTTP/1.1 404 "))
        let post = exchange(Array("POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n".utf8), port: port)
        #expect(post.hasPrefix("HTTP/1.1 405 "), "\(post)")
        #expect(exchange(Array("\u{01}\u{02}garbage\r\n\r\n".utf8), port: port).hasPrefix("HTTP/1.1 400 "))
        // A head over 8 KiB: 431, while the client is still sending.
        let huge = "GET /metrics HTTP/1.1\r\nX-Filler: " + String(repeating: "a", count: 20_000) + "\r\n\r\n"
        let tooLarge = exchange(Array(huge.utf8), port: port)
        #expect(tooLarge.hasPrefix("HTTP/1.1 431 "), "\(tooLarge.prefix(200))")
        // And the run itself went on: frames kept arriving after all of this.
        let after = poll(timeout: 10) { () -> Bool? in
            bridge.stdoutSoFar.contains("\"type\":\"stats\"") ? true : nil
        }
        #expect(after == true)
    }

    @Test func aRunOfSeveralDevicesHasALabelSetPerDevice() throws {
        let (bridge, port) = try startBridge(["--device", "sim"], duration: 30)  // with startBridge's: sim#1, sim#2
        defer {
            bridge.send(SIGINT)
            _ = bridge.finish(timeout: 30)
        }
        func frames(_ device: String, in text: String) -> Double? {
            let prefix = "glasses_bridge_frames_received_total{device=\"\(device)\"} "
            guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix(prefix) }) else { return nil }
            return Double(line.dropFirst(prefix.count))
        }
        let text = poll(timeout: 20) { () -> String? in
            let text = body(of: get("/metrics", port: port))
            guard let first = frames("sim#1", in: text), let second = frames("sim#2", in: text), first > 0, second > 0
            else { return nil }
            return text
        }
        #expect(text != nil, "both devices' frame counters above 0: \(body(of: get("/metrics", port: port)))")
        let streaming = text.map { text in
            ["sim#1", "sim#2"].allSatisfy { text.contains("glasses_bridge_stream_state{device=\"\($0)\",state=\"streaming\"} 1\n") }
        }
        #expect(streaming == true)
    }

    @Test func anAddressInUseEndsTheRunBeforeItStartsWithExit69() throws {
        let blocker = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(blocker) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let listening = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(blocker, $0, length) == 0 && getsockname(blocker, $0, &length) == 0
            }
        }
        try #require(listening && listen(blocker, 1) == 0)
        let port = UInt16(bigEndian: address.sin_port)
        let started = Date()
        let result = try BinaryRunner.run(
            ["--device", "sim", "--duration", "30", "--format", "ndjson", "--serve-metrics", "tcp:127.0.0.1:\(port)"],
            timeout: 30)
        #expect(result.status == 69, "\(result.stderr)")
        #expect(result.stderr.contains("--serve-metrics: cannot listen on tcp:127.0.0.1:\(port): Address already in use"), "\(result.stderr)")
        #expect(!result.stdout.contains("\"type\":\"stats\""), "the run did not start")
        #expect(Date().timeIntervalSince(started) < 10)
    }

    @Test func offLoopbackNeedsATokenAndOnlyTCPIsServed() throws {
        func usage(_ arguments: [String]) -> String? {
            do {
                _ = try BridgeCommand.parse(arguments, environment: [:])
                return nil
            } catch {
                return error.message
            }
        }
        #expect(usage(["--serve-metrics", "tcp:0.0.0.0:9464"])?.contains("give --token TOKEN") == true)
        #expect(usage(["--serve-metrics", "unix:/tmp/m.sock"])?.contains("takes tcp:HOST:PORT") == true)
        #expect(usage(["--serve-metrics", "tcp:127.0.0.1"])?.contains("use tcp:HOST:PORT") == true)
        #expect(usage(["--serve-metrics", "tcp:127.0.0.1:99999"])?.contains("is not a port number") == true)
        #expect(usage(["--serve-metrics"])?.contains("--serve-metrics") == true)
        #expect(usage(["--serve-metrics", "tcp:0.0.0.0:9464", "--token", "T"]) == nil)
        #expect(usage(["--serve-metrics", "tcp:127.0.0.1:9464", "--token", "T"]) == nil)
        #expect(usage(["--token", "T"])?.contains("--token applies to") == true)
        let command = try BridgeCommand.parse(["--serve-metrics", "tcp:0.0.0.0:9464"], environment: ["GLASSES_TOKEN": "E"])
        guard case .run(let options) = command else { Issue.record("not a run"); return }
        #expect(options.token == "E")
        #expect(options.serveMetrics?.description == "tcp:0.0.0.0:9464")
    }

    @Test func theDocsRulesAndScrapeConfigPassPromtool() throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.promtool), "install Debian's prometheus (Scripts/setup)")
        let rules = Self.repository.appendingPathComponent("docs/prometheus/alerts.yml").path
        let check = try runTool(Self.promtool, ["check", "rules", rules])
        #expect(check.status == 0, "\(check.output)")
        let tests = Self.repository.appendingPathComponent("docs/prometheus/alerts-test.yml").path
        let unit = try runTool(Self.promtool, ["test", "rules", tests])
        #expect(unit.status == 0, "\(unit.output)")
        #expect(unit.output.contains("SUCCESS"), "\(unit.output)")
        // The docs' scrape configuration for several bridges, with its token file beside it.
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("prom-config-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        for name in ["prometheus.yml", "alerts.yml"] {
            try FileManager.default.copyItem(
                at: Self.repository.appendingPathComponent("docs/prometheus/\(name)"), to: directory.appendingPathComponent(name))
        }
        try "T\n".write(to: directory.appendingPathComponent("glasses-bridge.token"), atomically: true, encoding: .utf8)
        let config = try runTool(Self.promtool, ["check", "config", directory.appendingPathComponent("prometheus.yml").path])
        #expect(config.status == 0, "\(config.output)")
    }
}

/// A blocking TCP client for the tests: connects to 127.0.0.1, sends, reads until the server closes.
private final class RawConnection: Sendable {
    private let fd: Int32

    init(port: UInt16, timeout: Double) {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var limit = timeval(tv_sec: Int(timeout), tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = port.bigEndian
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
    }

    deinit { close(fd) }

    /// Sends what the server takes (it may stop reading and answer early).
    func send(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent <= 0 { return }
            offset += sent
        }
    }

    /// Everything until the server closes, a reset, or the timeout.
    func readAll() -> String {
        var data: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            data += buffer[..<count]
        }
        return String(decoding: data, as: UTF8.self)
    }
}
