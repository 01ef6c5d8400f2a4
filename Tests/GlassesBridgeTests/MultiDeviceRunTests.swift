import Foundation
import GlassesBridge
import GlassesBridgeCommand
import GlassesSimulator
import Testing
import WearablesKit

/// Several simulated glasses in one process (`--device sim` given several times), in virtual time with the real
/// engine: each device's accounting on its own, one device faulted while the others stream on, NDJSON tagged per
/// device, and the exit code of the whole run.
@Suite("Several devices in one process (in-process simulators, virtual time)", .serialized)
struct MultiDeviceRunTests {
    /// A run of `devices` simulators for `seconds`, NDJSON into a temporary file; `fault` is called with each
    /// device's index and glasses before it starts.
    private func run(
        devices: Int, seconds: Double, configure: (Int, inout BridgeSettings) -> Void = { _, _ in },
        fastEngine: Bool = false, fault: @escaping (Int, SimulatedGlasses) -> Void
    ) async throws -> (totals: MultiDeviceTotals, lines: [TestJSON], labels: [String]) {
        var options = BridgeOptions()
        options.devices = Array(repeating: .simulator, count: devices)
        options.realtime = false
        options.duration = seconds
        options.resolution = .low
        options.frameRate = 15
        options.format = .ndjson
        let labels = options.deviceLabels
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("multi-\(UUID().uuidString).ndjson").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let sink = try OutputSink(format: .ndjson, path: path, devices: labels.map {
            OutputDevice(label: $0, source: "sim", simulated: true)
        })
        let totals = await MultiDeviceRun.run(
            options, sink: sink, simulator: fault, configure: configure,
            backend: fastEngine ? { _ in RecordingBackend() } : nil)
        sink.close()
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let lines = try text.split(separator: "\n").map { try #require(TestJSON.parse(String($0)), "not JSON: \($0)") }
        return (totals, lines, labels)
    }

    /// Runs `action` at `seconds` of the glasses' virtual time.
    private static func at(_ seconds: Double, on glasses: SimulatedGlasses, _ action: @escaping @Sendable () -> Void) {
        glasses.scheduler.schedule(after: .milliseconds(Int64(seconds * 1000)), action)
    }

    /// What every multi-device NDJSON output must satisfy: the start lists the devices, every later line names one
    /// of them and matches its kind's schema, each device has exactly one summary, and `totals` is last.
    private func checkTagging(_ lines: [TestJSON], labels: [String], sourceLocation: SourceLocation = #_sourceLocation) throws {
        let start = try #require(lines.first)
        #expect(start["type"]?.string == "start" && start["schemaVersion"] == .integer(2), sourceLocation: sourceLocation)
        #expect(start["devices"].map { devices -> [String] in
            guard case .array(let items) = devices else { return [] }
            return items.compactMap { $0["device"]?.string }
        } == labels, sourceLocation: sourceLocation)
        #expect(lines.last?["type"]?.string == "totals", sourceLocation: sourceLocation)
        var summaries: [String: Int] = [:]
        for (index, line) in lines.enumerated() {
            let kind = try #require(line["type"]?.string)
            let problems = JSONSchemaValidator.problems(line, against: try NDJSONSchemaTests.schema(kind))
            #expect(problems.isEmpty, "line \(index + 1) (\(kind)): \(problems)", sourceLocation: sourceLocation)
            guard index > 0, kind != "totals" else { continue }
            let device = line["device"]?.string
            #expect(device.map(labels.contains) == true, "line \(index + 1) (\(kind)) names no device of the run: \(device ?? "none")",
                    sourceLocation: sourceLocation)
            if kind == "summary", let device { summaries[device, default: 0] += 1 }
        }
        #expect(summaries == Dictionary(uniqueKeysWithValues: labels.map { ($0, 1) }), "summaries per device: \(summaries)",
                sourceLocation: sourceLocation)
    }

    /// The last `summary` line of `device`.
    private func summary(of device: String, in lines: [TestJSON]) throws -> TestJSON {
        try #require(lines.last { $0["type"]?.string == "summary" && $0["device"]?.string == device }, "no summary of \(device)")
    }

    @Test func twoDevicesOneStalledForGoodTheOtherStreamsOnWithAPulse() async throws {
        // sim#1 goes zombie at 2 s and never recovers: its watchdog (1 s here, 2 restarts, to keep the test short)
        // restarts the camera twice, then gives up (exit 69, repeatedStalls). sim#2 streams the whole 20 s (what
        // the engine needs for a stable pulse) and measures a pulse near its truth.
        let result = try await run(devices: 2, seconds: 20, configure: { index, settings in
            guard index == 0 else { return }
            settings.policy.watchdogTimeout = .seconds(1)
            settings.policy.maximumConsecutiveStallRestarts = 2
        }) { index, glasses in
            if index == 0 { Self.at(2, on: glasses) { glasses.inject(.zombieStream(true)) } }
        }
        try checkTagging(result.lines, labels: result.labels)
        let (stalled, healthy) = (result.totals.devices[0], result.totals.devices[1])
        for outcome in result.totals.devices {
            let accounting = outcome.summary.stats.accounting
            #expect(accounting.isBalanced, "\(outcome.device): received \(accounting.received) != submitted \(accounting.submitted) + rejected \(accounting.rejected) + dropped \(accounting.dropped)")
        }
        #expect(stalled.exitCode == .deviceUnavailable && stalled.summary.failure?.kind == .repeatedStalls,
                "sim#1: \(stalled.summary.reason)")
        #expect(stalled.summary.stats.stallRestarts == 2)
        #expect(stalled.summary.durationSeconds < 19, "sim#1 ran to the end: \(stalled.summary.durationSeconds) s")
        #expect(healthy.exitCode == .success && healthy.summary.reason == "duration", "sim#2: \(healthy.summary.reason)")
        #expect(healthy.summary.stats.stallRestarts == 0)
        // sim#1 stopped delivering at 2 s; sim#2 delivered all 20 s at 15 fps.
        #expect(stalled.summary.stats.accounting.received <= 15 * 3)
        #expect(healthy.summary.stats.accounting.received >= 15 * 19)
        let truth = try #require(healthy.summary.truth?.pulseRate)
        let pulse = try #require(healthy.summary.vitals.pulseRate, "sim#2 measured no stable pulse")
        #expect(abs(pulse - truth) <= 5, "sim#2 pulse \(pulse) vs truth \(truth)")
        #expect(result.totals.exitCode == .deviceUnavailable)
        // The NDJSON says the same, per device.
        let line = try summary(of: "sim#1", in: result.lines)
        #expect(line["reason"]?.string == "repeatedStalls" && line["stallRestarts"] == .integer(2))
        #expect(try summary(of: "sim#2", in: result.lines)["reason"]?.string == "duration")
        let totals = try #require(result.lines.last)
        #expect(totals["exitCode"] == .integer(69))
        #expect(totals["framesReceived"] == .integer(Int64(stalled.summary.stats.accounting.received
            + healthy.summary.stats.accounting.received)))
    }

    @Test func fourDevicesWithALinkLossAndAThermalStopAccountEachOnItsOwn() async throws {
        // sim#1 and sim#4 stream cleanly; sim#2 loses its link at 3 s and reconnects; sim#3 overheats at 4 s
        // and stops (exit 69). The run's exit code is 69; the others are unaffected. Accounting is the point here,
        // so each device gets its own fast recording engine (the two-device test has the real one).
        let result = try await run(devices: 4, seconds: 8, fastEngine: true) { index, glasses in
            switch index {
            case 1: Self.at(3, on: glasses) { glasses.inject(.linkLoss) }
            case 2: Self.at(4, on: glasses) { glasses.setThermalLevel(.critical) }
            default: break
            }
        }
        try checkTagging(result.lines, labels: result.labels)
        let devices = result.totals.devices
        #expect(devices.map(\.device) == ["sim#1", "sim#2", "sim#3", "sim#4"])
        for outcome in devices {
            let accounting = outcome.summary.stats.accounting
            #expect(accounting.isBalanced, "\(outcome.device) does not balance")
            #expect(accounting.received > 0, "\(outcome.device) received nothing")
        }
        let received = devices.map(\.summary.stats.accounting.received)
        #expect(devices.map(\.exitCode) == [.success, .success, .deviceUnavailable, .success])
        #expect(devices[2].summary.failure?.kind == .thermal)
        #expect(devices[1].summary.stats.reconnects >= 1 && devices[0].summary.stats.reconnects == 0)
        // The clean devices see every frame of 8 s; the link loss costs sim#2 its backoff; sim#3 stopped at 4 s.
        #expect(received[0] >= 15 * 7 && received[3] >= 15 * 7, "\(received)")
        #expect(received[1] < received[0] && received[1] >= 15 * 4, "\(received)")
        #expect(received[2] <= 15 * 5, "\(received)")
        #expect(result.totals.exitCode == .deviceUnavailable)
        #expect(result.totals.framesReceived == received.reduce(0, +))
        // Stats lines of each device carry that device's own counters: sim#3's stop at 4 s in its own lines only.
        let lastStats = Dictionary(result.lines.filter { $0["type"]?.string == "stats" }.map {
            ($0["device"]?.string ?? "", $0["framesReceived"])
        }, uniquingKeysWith: { $1 })
        #expect(lastStats["sim#3"] != lastStats["sim#1"], "sim#3's stats read like sim#1's: \(lastStats)")
    }
}
