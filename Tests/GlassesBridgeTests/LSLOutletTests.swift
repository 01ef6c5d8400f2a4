import Foundation
import Testing

/// `--lsl NAME` judged by a real consumer: pylsl (from the virtual environment Scripts/setup makes, found through
/// `GLASSES_TEST_PYTHON`) resolves the bridge's streams, pulls every sample, and the samples are compared with the
/// same run's NDJSON. Serialized: the tests share LSL's discovery on this machine (each uses its own stream names).
@Suite("Lab Streaming Layer outlet, judged by pylsl", .serialized)
struct LSLOutletTests {
    /// The Python with pylsl: `GLASSES_TEST_PYTHON`, else the venv Scripts/setup makes.
    static var python: String? {
        let environment = ProcessInfo.processInfo.environment
        let candidates = [environment["GLASSES_TEST_PYTHON"], NSHomeDirectory() + "/.cache/glasses-bridge/venv/bin/python"]
        return candidates.compactMap { $0 }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    static let consumerScript = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/lsl_consume.py").path

    static let streams = ["pulse", "breathing", "hrv", "pulse-wave", "breathing-wave", "markers"]
    /// The runs ask 15 fps at low resolution: the debug simulator then keeps its rate on a loaded 2-core CI machine
    /// (at 24 fps medium it fell to about 14 fps under load, below what the engine measures pulse at).
    static let fps = 15
    static let frame = 1.0 / Double(fps)
    static let light = ["--fps", "\(fps)", "--resolution", "low"]

    /// A process whose standard output goes to a file (a consumer's JSON can exceed a pipe's buffer).
    final class Consumer {
        let process = Process()
        let output: URL
        let errors: URL

        init(python: String, arguments: [String], environment: [String: String]) throws {
            let folder = FileManager.default.temporaryDirectory
            output = folder.appendingPathComponent("lsl-consumer-\(UUID().uuidString).json")
            errors = folder.appendingPathComponent("lsl-consumer-\(UUID().uuidString).err")
            _ = FileManager.default.createFile(atPath: output.path, contents: nil)
            _ = FileManager.default.createFile(atPath: errors.path, contents: nil)
            process.executableURL = URL(fileURLWithPath: python)
            process.arguments = arguments
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
            process.standardOutput = try FileHandle(forWritingTo: output)
            process.standardError = try FileHandle(forWritingTo: errors)
            try process.run()
        }

        /// Waits (bounded, polling) for the consumer to end; its JSON, or nil (killed at the deadline).
        func finish(timeout: Double) throws -> [String: Any]? {
            let deadline = Date().addingTimeInterval(timeout)
            while process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
            if process.isRunning {
                process.terminate()
                process.waitUntilExit()
                return nil
            }
            defer {
                try? FileManager.default.removeItem(at: output)
                try? FileManager.default.removeItem(at: errors)
            }
            let data = try Data(contentsOf: output)
            return try JSONSerialization.jsonObject(with: data) as? [String: Any]
        }

        var stderrText: String { (try? String(contentsOf: errors, encoding: .utf8)) ?? "" }
    }

    /// What the bridge's environment needs to find liblsl in the test venv: `VIRTUAL_ENV` (the locator's pylsl
    /// search), and no `GLASSES_LSL_LIBRARY` of the caller's.
    static func bridgeEnvironment(python: String) -> [String: String] {
        let venv = URL(fileURLWithPath: python).deletingLastPathComponent().deletingLastPathComponent().path
        return ["VIRTUAL_ENV": venv, "GLASSES_LSL_LIBRARY": "", "PYLSL_LIB": ""]
    }

    /// One NDJSON sample of a stream: its capture time (µs), the values LSL should carry, the event's time.
    struct Expected {
        var stream: String
        var timestampUs: Int64
        var values: [Double]
        var eventSeconds: Double
    }

    /// The samples each stream should carry, from the run's NDJSON metrics lines (protobuf JSON leaves out zeros
    /// and false).
    static func expectedSamples(_ lines: [String]) throws -> [Expected] {
        var out: [Expected] = []
        for line in lines {
            let object = try jsonObject(line)
            guard object["type"] as? String == "metrics", let t = object["t"] as? Double,
                  let metrics = object["metrics"] as? [String: Any] else { continue }
            let cardio = metrics["cardio"] as? [String: Any] ?? [:]
            let breathing = metrics["breathing"] as? [String: Any] ?? [:]
            func number(_ item: [String: Any], _ key: String) -> Double { (item[key] as? NSNumber)?.doubleValue ?? 0 }
            func time(_ item: [String: Any]) -> Int64 { Int64(item["timestamp"] as? String ?? "") ?? -1 }
            func items(_ parent: [String: Any], _ key: String) -> [[String: Any]] { parent[key] as? [[String: Any]] ?? [] }
            func rated(_ item: [String: Any], value: String = "value") -> [Double] {
                [number(item, value), number(item, "confidence"), (item["stable"] as? Bool ?? false) ? 1 : 0]
            }
            for item in items(cardio, "pulseRate") { out.append(Expected(stream: "pulse", timestampUs: time(item), values: rated(item), eventSeconds: t)) }
            for item in items(breathing, "rate") { out.append(Expected(stream: "breathing", timestampUs: time(item), values: rated(item), eventSeconds: t)) }
            for item in items(cardio, "hrv") { out.append(Expected(stream: "hrv", timestampUs: time(item), values: rated(item, value: "rmssd"), eventSeconds: t)) }
            for item in items(cardio, "arterialPressureTrace") {
                out.append(Expected(stream: "pulse-wave", timestampUs: time(item), values: [number(item, "value")], eventSeconds: t))
            }
            for item in items(breathing, "upperTrace") {
                out.append(Expected(stream: "breathing-wave", timestampUs: time(item), values: [number(item, "value")], eventSeconds: t))
            }
        }
        return out
    }

    /// One pulled sample: its LSL timestamp, values, and the consumer's clock when it was pulled.
    struct Pulled {
        var timestamp: Double
        var values: [Any]
        var receivedAt: Double
    }

    static func pulled(_ stream: [String: Any]) -> [Pulled] {
        (stream["samples"] as? [[Any]] ?? []).compactMap { row in
            guard row.count == 3, let timestamp = (row[0] as? NSNumber)?.doubleValue, let values = row[1] as? [Any],
                  let received = (row[2] as? NSNumber)?.doubleValue else { return nil }
            return Pulled(timestamp: timestamp, values: values, receivedAt: received)
        }
    }

    @Test("pylsl pulls every vital, wave and state change of the run, with the NDJSON's values at the frames' capture times")
    func streamsMatchTheNDJSON() throws {
        let python = try #require(Self.python, "no Python with pylsl: run Scripts/setup (it sets GLASSES_TEST_PYTHON)")
        let name = "gbtest-\(UUID().uuidString.prefix(8))"
        // A pause late in the run: state changes the consumer is surely connected for, after the first pulse values.
        // 28 s, not 20: in a loaded parallel suite the debug engine's first pulse value came after 20 s (twice).
        let scenario = FileManager.default.temporaryDirectory.appendingPathComponent("lsl-\(name).json")
        try Data(#"{"name":"lsl","seed":7,"duration":40,"events":[{"at":25.0,"do":"tap"},{"at":25.5,"do":"tap"}]}"#.utf8)
            .write(to: scenario)
        defer { try? FileManager.default.removeItem(at: scenario) }
        let consumer = try Consumer(
            python: python, arguments: [Self.consumerScript, name, Self.streams.joined(separator: ","), "55"], environment: [:]
        )
        let bridge = try BinaryRunner(
            ["--device", "sim", "--sim-scenario", scenario.path, "--realtime", "--duration", "28", "--format", "ndjson", "--lsl", name] + Self.light,
            environment: Self.bridgeEnvironment(python: python)
        )
        let run = bridge.finish(timeout: 60)
        #expect(run.status == 0, "stderr: \(run.stderr)")
        #expect(!run.stderr.contains("INFO"), "liblsl's log reached the bridge's standard error: \(run.stderr)")
        let result = try #require(try consumer.finish(timeout: 20), "the consumer did not end: \(consumer.stderrText)")
        let connectedAt = try #require((result["connectedAt"] as? NSNumber)?.doubleValue)
        let streams = try #require(result["streams"] as? [String: [String: Any]])

        // Metadata, as LSL's conventions ask.
        let units: [String: ([String], [String], String)] = [
            "pulse": (["PulseRate", "PulseRateConfidence", "PulseRateStable"], ["bpm", "percent", "boolean"], "HeartRate"),
            "breathing": (["BreathingRate", "BreathingRateConfidence", "BreathingRateStable"], ["breaths/min", "percent", "boolean"], "RespirationRate"),
            "hrv": (["RMSSD", "RMSSDConfidence", "RMSSDStable"], ["ms", "percent", "boolean"], "HRV"),
            "pulse-wave": (["PulseWave"], ["normalized"], "PPG"),
            "breathing-wave": (["BreathingTrace"], ["normalized"], "Respiration"),
            "markers": (["Event"], [""], "Markers"),
        ]
        for suffix in Self.streams {
            let stream = try #require(streams[suffix], "stream \(suffix) missing")
            let (labels, unitNames, type) = try #require(units[suffix])
            let channels = stream["channels"] as? [[String: String]] ?? []
            #expect(stream["type"] as? String == type, "\(suffix)")
            #expect(channels.map { $0["label"] ?? "" } == labels, "\(suffix): \(channels)")
            #expect(channels.map { $0["unit"] ?? "" } == unitNames, "\(suffix): \(channels)")
            #expect(stream["sourceID"] as? String == "glasses-bridge/\(name)/sim/\(suffix)")
            #expect(stream["manufacturer"] as? String == "GlassesBridge" && stream["deviceLabel"] as? String == "sim")
            let rate = (stream["nominalRate"] as? NSNumber)?.doubleValue
            #expect(rate == (suffix.hasSuffix("-wave") ? Double(Self.fps) : 0), "\(suffix) rate \(String(describing: rate))")
        }

        // The run's origin on the consumer's LSL clock, measured by the consumer alone: each sample is pulled a
        // little after its event's time, so the least (pulled − event time) is the origin within the pulls' delay.
        let expected = try Self.expectedSamples(run.lines)
        var origin = Double.infinity
        for suffix in Self.streams where suffix != "markers" {
            // Each pulled sample's event: the metrics line whose sample it is, found by order within the stream.
            let mine = expected.filter { $0.stream == suffix }
            let got = Self.pulled(streams[suffix] ?? [:])
            if let offset = Self.alignment(got, mine) {
                for (index, sample) in got.enumerated() { origin = min(origin, sample.receivedAt - mine[index + offset].eventSeconds) }
            }
        }
        try #require(origin.isFinite, "no sample could be matched to the NDJSON")

        // Every value of every stream, in order, at its frame's capture time (within one frame).
        for suffix in Self.streams where suffix != "markers" {
            let mine = expected.filter { $0.stream == suffix }
            let got = Self.pulled(streams[suffix] ?? [:])
            // What was sent after the consumer connected must all be there.
            let due = mine.filter { origin + $0.eventSeconds > connectedAt + 0.1 }
            #expect(got.count >= due.count, "\(suffix): \(got.count) pulled, \(due.count) sent after connecting")
            let offset = Self.alignment(got, mine)
            #expect(offset != nil || (got.isEmpty && mine.isEmpty), "\(suffix): the pulled values are not the NDJSON's")
            guard let offset else { continue }
            for (index, sample) in got.enumerated() {
                let want = mine[index + offset]
                let capture = origin + Double(want.timestampUs) / 1e6
                #expect(abs(sample.timestamp - capture) <= Self.frame,
                        "\(suffix) sample at \(want.timestampUs) µs: LSL time \(sample.timestamp), capture \(capture) on LSL's clock")
            }
            #expect(zip(got, got.dropFirst()).allSatisfy { $0.timestamp < $1.timestamp }, "\(suffix): times not increasing")
        }
        for suffix in ["pulse", "breathing", "pulse-wave", "breathing-wave"] {
            #expect(!expected.filter { $0.stream == suffix }.isEmpty, "the run gave no \(suffix) values to judge")
        }

        // Every state change and verdict after the consumer connected, in order, at its time.
        let markers = Self.pulled(streams["markers"] ?? [:])
        var wanted: [(String, Double)] = []
        for line in run.lines {
            let object = try jsonObject(line)
            guard let text = Self.marker(object), let t = object["t"] as? Double, origin + t > connectedAt + 0.05 else { continue }
            wanted.append((text, t))
        }
        #expect(wanted.map(\.0).contains("state:paused") && wanted.last?.0 == "state:finished", "\(wanted)")
        let texts = markers.compactMap { $0.values.first as? String }
        var cursor = texts.startIndex
        for (text, t) in wanted {
            guard let found = texts[cursor...].firstIndex(of: text) else {
                Issue.record("marker \(text) at \(t) s missing from \(texts)")
                continue
            }
            #expect(abs(markers[found].timestamp - (origin + t)) <= Self.frame, "marker \(text): \(markers[found].timestamp) vs \(origin + t)")
            cursor = found + 1
        }
    }

    /// The marker an NDJSON line should have given (`state:paused`, `validation:ok`), nil for other lines.
    static func marker(_ object: [String: Any]) -> String? {
        switch object["type"] as? String {
        case "state": (object["state"] as? String).map { "state:" + $0 + ((object["detail"] as? String).map { " (\($0))" } ?? "") }
        case "validation": (object["code"] as? String).map { "validation:" + $0 }
        case "error": (object["code"] as? String).map { "error:" + $0 }
        default: nil
        }
    }

    /// Where the pulled samples sit in the NDJSON's (the first `offset`: a consumer that connected late missed the
    /// first ones): the offset at which every pulled value equals the NDJSON's, as Float (the engine's precision);
    /// nil when there is none.
    static func alignment(_ got: [Pulled], _ mine: [Expected]) -> Int? {
        guard !got.isEmpty, got.count <= mine.count else { return nil }
        func same(_ sample: Pulled, _ want: Expected) -> Bool {
            let values = sample.values.compactMap { ($0 as? NSNumber)?.doubleValue }
            return values.count == want.values.count && zip(values, want.values).allSatisfy { Float($0) == Float($1) }
        }
        return (0...(mine.count - got.count)).first { offset in
            got.indices.allSatisfy { same(got[$0], mine[$0 + offset]) }
        }
    }

    @Test("several devices: a stream set each, named and sourced by the device's label, each with its own device's values")
    func streamSetPerDevice() throws {
        let python = try #require(Self.python, "no Python with pylsl: run Scripts/setup (it sets GLASSES_TEST_PYTHON)")
        let name = "gbtest-md-\(UUID().uuidString.prefix(8))"
        let consumers = try ["sim#1", "sim#2"].map { label in
            try Consumer(python: python, arguments: [Self.consumerScript, "\(name)-\(label)", "markers,pulse-wave", "40"], environment: [:])
        }
        let run = try BinaryRunner(
            ["--device", "sim", "--device", "sim", "--realtime", "--duration", "6", "--format", "ndjson", "--lsl", name] + Self.light,
            environment: Self.bridgeEnvironment(python: python)
        ).finish(timeout: 60)
        #expect(run.status == 0, "stderr: \(run.stderr)")
        for (label, consumer) in zip(["sim#1", "sim#2"], consumers) {
            let result = try #require(try consumer.finish(timeout: 20), "the consumer of \(label) did not end: \(consumer.stderrText)")
            let streams = try #require(result["streams"] as? [String: [String: Any]])
            let markers = try #require(streams["markers"])
            #expect(markers["sourceID"] as? String == "glasses-bridge/\(name)/\(label)/markers")
            #expect(markers["deviceLabel"] as? String == label)
            let texts = Self.pulled(markers).compactMap { $0.values.first as? String }
            #expect(texts.last == "state:finished", "\(label): \(texts)")
            // This device's pulse wave, not the other's (the simulators have different seeds).
            let mine = try Self.expectedSamples(run.lines.filter { (try? jsonObject($0))?["device"] as? String == label })
                .filter { $0.stream == "pulse-wave" }
            let got = Self.pulled(streams["pulse-wave"] ?? [:])
            #expect(!got.isEmpty && Self.alignment(got, mine) != nil, "\(label): \(got.count) pulled, \(mine.count) in the NDJSON")
        }
    }

    /// A pylsl heart-rate outlet playing `bpm` for 60 s as stream `name` (Fixtures/lsl_heart_rate.py), once it said
    /// it is ready (polled, at most 15 s): the chest strap of the reference tests.
    static func startStrap(python: String, name: String, bpm: Double) throws -> Consumer {
        let script = URL(fileURLWithPath: consumerScript).deletingLastPathComponent().appendingPathComponent("lsl_heart_rate.py").path
        let strap = try Consumer(python: python, arguments: [script, name, "\(bpm)", "60"], environment: [:])
        let deadline = Date().addingTimeInterval(15)
        while (try? String(contentsOf: strap.output, encoding: .utf8))?.contains("ready") != true, Date() < deadline {
            Thread.sleep(forTimeInterval: 0.05)
        }
        return strap
    }

    @Test("check --reference lsl:NAME judges the run against a live pylsl heart-rate outlet: the right rate passes, a wrong one fails",
          arguments: [(72.0, true), (110.0, false)])
    func liveReference(bpm: Double, passes: Bool) throws {
        let python = try #require(Self.python, "no Python with pylsl: run Scripts/setup (it sets GLASSES_TEST_PYTHON)")
        let name = "gbtest-strap-\(UUID().uuidString.prefix(8))"
        let plan = FileManager.default.temporaryDirectory.appendingPathComponent("lsl-plan-\(name).json")
        try Data(#"{"name":"lsl-reference","checks":["vitals"],"durations":{"vitals":30},"lifecycleStream":{"codec":"raw","resolution":"low","fps":15}}"#.utf8).write(to: plan)
        defer { try? FileManager.default.removeItem(at: plan) }
        let strap = try Self.startStrap(python: python, name: name, bpm: bpm)
        defer { strap.process.terminate() }
        let check = try BinaryRunner(
            ["check", "--device", "sim", "--realtime", "--plan", plan.path, "--reference", "lsl:\(name)", "--format", "ndjson"],
            environment: Self.bridgeEnvironment(python: python)
        )
        let output = check.finish(timeout: 90)
        let lines = try output.lines.map(jsonObject)
        let result = try #require(lines.first { $0["name"] as? String == "pulse against the reference" }, "stdout: \(output.stdout)\nstderr: \(output.stderr)")
        #expect(result["verdict"] as? String == (passes ? "pass" : "fail"), "\(result)")
        #expect(output.status == (passes ? 0 : 1), "stderr: \(output.stderr)")
        // The measured error is the distance between the engine's pulse (about 72) and the strap's rate.
        let measured = result["measured"] as? String ?? ""
        #expect(measured.contains("mean |error|") && measured.contains("bridge mean"), "\(result)")
        if let value = (result["value"] as? NSNumber)?.doubleValue {
            #expect(passes ? value <= 5 : value >= 30, "\(result)")
        }
    }

    @Test("a live run with --reference lsl:NAME carries the strap's rate beside each stats line, pairs it with the stable pulse in the summary, and the report draws it",
          arguments: [(72.0, true), (110.0, false)])
    func liveRunReference(bpm: Double, agrees: Bool) throws {
        let python = try #require(Self.python, "no Python with pylsl: run Scripts/setup (it sets GLASSES_TEST_PYTHON)")
        let name = "gbtest-runref-\(UUID().uuidString.prefix(8))"
        let strap = try Self.startStrap(python: python, name: name, bpm: bpm)
        defer { strap.process.terminate() }
        let run = try BinaryRunner(
            ["--device", "sim", "--duration", "30", "--format", "ndjson", "--reference", "lsl:\(name)"] + Self.light,
            environment: Self.bridgeEnvironment(python: python)
        ).finish(timeout: 90)
        #expect(run.status == 0, "stderr: \(run.stderr)")
        let lines = try run.lines.map(jsonObject)
        // Every stats line has the key; once the strap has been read, its rate.
        let stats = lines.filter { $0["type"] as? String == "stats" }
        #expect(!stats.isEmpty && stats.allSatisfy { $0["reference"] is [String: Any] }, "\(stats.first ?? [:])")
        let rates = stats.compactMap { (($0["reference"] as? [String: Any])?["pulseRate"] as? NSNumber)?.doubleValue }
        #expect(rates.count >= stats.count / 2 && rates.allSatisfy { abs($0 - bpm) < 0.05 }, "\(rates)")
        // The summary pairs it with the stable pulse (the simulator's is about 72 bpm).
        let summary = try #require(lines.last { $0["type"] as? String == "summary" })
        let agreement = try #require(summary["reference"] as? [String: Any], "\(summary)")
        #expect(agreement["source"] as? String == "lsl:\(name) (live)")
        #expect((agreement["readings"] as? NSNumber)?.intValue == rates.count, "\(agreement)")
        let pairs = (agreement["pairs"] as? NSNumber)?.intValue ?? 0
        let error = try #require((agreement["pulseMeanAbsError"] as? NSNumber)?.doubleValue, "no stable pulse paired: \(agreement)")
        #expect(pairs >= 1)
        #expect(agrees ? error <= 5 : error >= 30, "\(agreement)")
        // The report of the saved run draws the strap as its reference, with no file given.
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("runref-\(name)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let saved = folder.appendingPathComponent("run.ndjson"), page = folder.appendingPathComponent("run.html")
        try Data(run.stdout.utf8).write(to: saved)
        let report = try BinaryRunner(["report", saved.path, "-o", page.path]).finish(timeout: 60)
        #expect(report.status == 0, "stderr: \(report.stderr)")
        let html = try String(contentsOf: page, encoding: .utf8)
        #expect(html.contains("pulse MAE vs reference") && html.contains("lsl:\(name) (live)"), "the report does not draw the live reference")
    }

    @Test("without liblsl, --lsl fails at once with exit 69 and one line saying how to install it")
    func withoutLiblsl() throws {
        let empty = FileManager.default.temporaryDirectory.appendingPathComponent("no-liblsl-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: empty) }
        let started = Date()
        let bridge = try BinaryRunner(
            ["--device", "sim", "--duration", "30", "--format", "ndjson", "--lsl", "nolib"], environment: ["GLASSES_LSL_LIBRARY": empty.path]
        )
        let result = bridge.finish(timeout: 30)
        #expect(result.status == 69, "stderr: \(result.stderr)")
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1 && lines[0].contains("pip install pylsl") && lines[0].contains("GLASSES_LSL_LIBRARY"), "\(result.stderr)")
        #expect(result.stdout.isEmpty, "nothing runs: \(result.stdout)")
        #expect(Date().timeIntervalSince(started) < 10, "it did not fail at once")
        // --reference lsl: on a run: the same 69 and hint, said as the run's failure.
        let reference = try BinaryRunner(
            ["--device", "sim", "--duration", "30", "--format", "ndjson", "--reference", "lsl:strap"], environment: ["GLASSES_LSL_LIBRARY": empty.path]
        ).finish(timeout: 30)
        #expect(reference.status == 69 && reference.stderr.contains("--reference lsl:strap") && reference.stderr.contains("pip install pylsl"),
                "\(reference.stderr)")
    }
}
