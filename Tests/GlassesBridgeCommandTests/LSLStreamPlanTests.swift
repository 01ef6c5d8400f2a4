import GlassesBridge
@testable import GlassesBridgeCommand
import GlassesLSL
import SmartSpectraInput
import Testing

/// The Lab Streaming Layer layout, clock mapping, library search and option, without liblsl.
@Suite("LSL stream plan")
struct LSLStreamPlanTests {
    static let context = LSLStreamPlan.Context(
        name: "lab", deviceLabel: "sim", multiDevice: false, frameRate: 24, configuration: [("fps", "24")], simulated: true,
        version: "glasses-bridge test"
    )

    @Test("each vital is its own stream: value, confidence and stable flag at its capture time, in time order")
    func metricsBecomeSamples() {
        var metrics = Metrics()
        var cardio = Cardio()
        cardio.pulseRate = [
            MeasurementWithConfidence(value: 72.5, stable: true, confidence: 80, timestamp: 2_000_000),
            MeasurementWithConfidence(value: 71, stable: false, confidence: 30, timestamp: 1_000_000),
        ]
        cardio.hrv = [Hrv(rmssd: 42.25, meanNn: 800, sdnn: 50, baevsky: 100, timestamp: 3_000_000, confidence: 60, stable: true)]
        cardio.arterialPressureTrace = [MeasurementWithConfidence(value: -0.5, stable: true, confidence: 50, timestamp: 41_666)]
        var breathing = Breathing()
        breathing.rate = [MeasurementWithConfidence(value: 15, stable: false, confidence: 20, timestamp: 2_500_000)]
        breathing.upperTrace = [Measurement(value: 0.25, stable: true, timestamp: 41_666)]
        metrics.cardio = cardio
        metrics.breathing = breathing
        let samples = LSLStreamPlan.samples(for: .metrics(metrics, json: "{}"), at: 9)
        typealias S = LSLStreamPlan.Sample
        #expect(samples == [
            S(stream: .pulse, runSeconds: 1, values: [71, 30, 0], marker: nil),
            S(stream: .pulse, runSeconds: 2, values: [72.5, 80, 1], marker: nil),
            S(stream: .breathing, runSeconds: 2.5, values: [15, 20, 0], marker: nil),
            S(stream: .hrv, runSeconds: 3, values: [42.25, 60, 1], marker: nil),
            S(stream: .pulseWave, runSeconds: 41_666 / 1e6, values: [-0.5], marker: nil),
            S(stream: .breathingWave, runSeconds: 41_666 / 1e6, values: [0.25], marker: nil),
        ])
    }

    @Test("state changes, verdicts and errors are markers at the event's time; other events are not streamed")
    func markers() {
        #expect(LSLStreamPlan.samples(for: .state(.paused, detail: "tap"), at: 3).map(\.marker) == ["state:paused (tap)"])
        #expect(LSLStreamPlan.samples(for: .state(.streaming, detail: nil), at: 3).first?.runSeconds == 3)
        #expect(LSLStreamPlan.samples(for: .validation(ValidationStatus(code: .ok)), at: 1).map(\.marker) == ["validation:ok"])
        #expect(LSLStreamPlan.samples(for: .error(code: "deviceLost", message: "gone"), at: 1).map(\.marker) == ["error:deviceLost"])
        #expect(LSLStreamPlan.samples(for: .notice("hello"), at: 1).isEmpty)
        #expect(LSLStreamPlan.samples(for: .summary(BridgeSummary()), at: 1).isEmpty)
    }

    @Test("descriptions follow LSL's conventions: types, units, a source id stable for the same name and device")
    func descriptions() {
        let streams = LSLStreamPlan.descriptions(Self.context)
        #expect(streams.map(\.name) == ["lab-pulse", "lab-breathing", "lab-hrv", "lab-pulse-wave", "lab-breathing-wave", "lab-markers"])
        #expect(streams.map(\.type) == ["HeartRate", "RespirationRate", "HRV", "PPG", "Respiration", "Markers"])
        #expect(streams[0].channels.map(\.unit) == ["bpm", "percent", "boolean"])
        #expect(streams[1].channels.first?.unit == "breaths/min" && streams[2].channels.first?.unit == "ms")
        #expect(streams.map(\.nominalRate) == [0, 0, 0, 24, 24, 0])
        #expect(streams.map(\.format) == [.double64, .double64, .double64, .double64, .double64, .string])
        #expect(streams[0].sourceID == "glasses-bridge/lab/sim/pulse")
        #expect(streams[0].desc.first?.name == "channels" && streams[0].desc.contains { $0.name == "acquisition" })
        var second = Self.context
        second.deviceLabel = "sim#2"
        second.multiDevice = true
        let other = LSLStreamPlan.descriptions(second)
        #expect(other[0].name == "lab-sim#2-pulse" && other[0].sourceID == "glasses-bridge/lab/sim#2/pulse")
        #expect(LSLStreamPlan.descriptions(Self.context) == streams, "the same name and device give the same streams")
    }

    @Test("the origin is the least (LSL clock − run time) seen; each stream's times only increase")
    func clockMapping() {
        var clock = LSLClockMapping()
        #expect(clock.time(of: 1, stream: .pulse) == nil, "no origin before an event")
        clock.observe(runSeconds: 0, lslNow: 1000.8)  // an event held back before the sinks opened
        clock.observe(runSeconds: 2, lslNow: 1002.0004)
        clock.observe(runSeconds: 3, lslNow: 1003.2)
        #expect(clock.origin.map { abs($0 - 1000.0004) < 1e-9 } == true)
        #expect(clock.time(of: 1.5, stream: .pulse).map { abs($0 - 1001.5004) < 1e-9 } == true)
        clock.observe(runSeconds: 4, lslNow: 1004.0001)
        // The origin moved back 0.3 ms: a time that would now fall before the stream's last is nudged past it.
        let nudged = clock.time(of: 1.5002, stream: .pulse)
        #expect(nudged.map { $0 > 1001.5004 && $0 < 1001.5005 } == true)
        #expect(clock.time(of: 1.5002, stream: .pulseWave).map { abs($0 - 1001.5003) < 1e-9 } == true, "each stream keeps its own order")
        clock.observe(runSeconds: .nan, lslNow: 0)
        #expect(clock.origin.map { abs($0 - 1000.0001) < 1e-9 } == true)
    }

    @Test("liblsl is looked for in GLASSES_LSL_LIBRARY alone when set, else PYLSL_LIB, pylsl installs, the system")
    func librarySearch() {
        let files: Set<String> = [
            "/opt/lsl/liblsl.so", "/venv/lib/python3.11/site-packages/pylsl/lib/liblsl.so.2",
            "/venv/lib/python3.11/site-packages/pylsl/lib/liblsl.so.1.18.0", "/home/me/.local/lib/python3.12/site-packages/pylsl/lib/liblsl.so",
            "/custom/liblsl.so",
        ]
        let folders: [String: [String]] = [
            "/opt/lsl": ["liblsl.so", "README"], "/venv/lib": ["python3.11"],
            "/venv/lib/python3.11/site-packages/pylsl/lib": ["liblsl.so.1.18.0", "liblsl.so.2", "__init__.py"],
            "/home/me/.local/lib": ["python3.12"], "/home/me/.local/lib/python3.12/site-packages/pylsl/lib": ["liblsl.so"],
            "/empty": [],
        ]
        func locator(_ environment: [String: String]) -> LSLLibraryLocator {
            LSLLibraryLocator(environment: environment, home: "/home/me", list: { folders[$0] ?? [] }, isFile: { files.contains($0) })
        }
        #expect(locator(["GLASSES_LSL_LIBRARY": "/opt/lsl", "VIRTUAL_ENV": "/venv"]).candidates().map(\.path) == ["/opt/lsl/liblsl.so"])
        #expect(locator(["GLASSES_LSL_LIBRARY": "/custom/liblsl.so"]).candidates().map(\.path) == ["/custom/liblsl.so"])
        #expect(locator(["GLASSES_LSL_LIBRARY": "/empty"]).candidates().isEmpty, "an empty folder named is not looked past")
        #expect(locator(["VIRTUAL_ENV": "/venv", "PYLSL_LIB": "/custom/liblsl.so"]).candidates().map(\.path) == [
            "/custom/liblsl.so",
            "/venv/lib/python3.11/site-packages/pylsl/lib/liblsl.so.2", "/venv/lib/python3.11/site-packages/pylsl/lib/liblsl.so.1.18.0",
            "/home/me/.local/lib/python3.12/site-packages/pylsl/lib/liblsl.so",
            "liblsl.so.2", "liblsl.so",
        ])
        #expect(locator([:]).candidates().last?.origin == "system")
    }

    @Test("--lsl NAME asks for the streams; it needs the live clock and a plain name")
    func option() throws {
        #expect(try options(["--lsl", "lab"]).lslName == "lab")
        #expect(try options([]).lslName == nil)
        #expect(usageError(["--lsl", "lab", "--no-realtime"])?.contains("--lsl streams on the live clock") == true)
        #expect(usageError(["--lsl", "two words"])?.contains("--lsl takes a stream name") == true)
        #expect(usageError(["--lsl"]) != nil)
    }

    @Test("--reference lsl:NAME on a run: one live device only; a file is pointed to the report")
    func referenceOption() throws {
        #expect(try options(["--reference", "lsl:HeartRate"]).referenceLSL == "HeartRate")
        #expect(try options(["--device", "tcp:127.0.0.1:7000", "--reference", "lsl:strap"]).referenceLSL == "strap")
        #expect(try options([]).referenceLSL == nil)
        #expect(usageError(["--reference", "lsl:"])?.contains("needs a stream's name or type") == true)
        #expect(usageError(["--reference", "polar.csv"])?.contains("report RUN.ndjson --reference polar.csv") == true)
        #expect(usageError(["--reference", "lsl:x", "--no-realtime"])?.contains("needs a live source") == true)
        #expect(usageError(["--reference", "lsl:x", "--device", "file:/tmp/x.hevc"])?.contains("needs a live source") == true)
        #expect(usageError(["--reference", "lsl:x", "--device", "sim", "--device", "sim"])?.contains("one device") == true)
        // check keeps both forms, through the same rule.
        guard case .check(let check) = try BridgeCommand.parse(["check", "--realtime", "--reference", "lsl:HeartRate"]) else {
            Issue.record("not a check")
            return
        }
        #expect(check.referenceLSL == "HeartRate" && check.referencePath == nil)
    }

    @Test("without liblsl the sink is a failure of exit 69 with the install hint")
    func missingLibrary() {
        var options = BridgeOptions()
        options.lslName = "lab"
        #expect(throws: BridgeFailure.self) {
            _ = try LSLSink(options: options, environment: ["GLASSES_LSL_LIBRARY": "/nonexistent-\(UInt64.random(in: 0...UInt64.max))"])
        }
        do {
            _ = try LSLSink(options: options, environment: ["GLASSES_LSL_LIBRARY": "/nonexistent"])
        } catch {
            #expect(error.exitCode == .deviceUnavailable && error.message.contains("pip install pylsl"))
        }
        options.lslName = nil
        #expect((try? LSLSink(options: options, environment: [:])) == nil)
    }
}
