import Foundation
import Testing
import WearablesKit
@testable import GlassesBridge
@testable import GlassesCheck

/// The formats around `glasses-bridge check`: plan files, reference recordings, GATT 0x2A37, JUnit XML.
@Suite("Check formats")
struct CheckFormatTests {
    // MARK: Plans

    @Test("a plan file sets groups, streams, durations and tolerances; everything else keeps its default")
    func planParses() throws {
        let plan = try CheckPlan.parse(Array("""
        {
          "name": "rack-3 nightly",
          "checks": ["link", "streams"],
          "streams": [{"codec": "raw", "resolution": "low", "fps": 15}, {"codec": "hvc1"}],
          "durations": {"warmUp": 1, "measure": 4},
          "tolerances": {"frameRatePercent": 3, "latencyP99Ms": 250}
        }
        """.utf8))
        #expect(plan.name == "rack-3 nightly")
        #expect(plan.groups == [.link, .streams])
        #expect(plan.streams == [StreamConfiguration(videoCodec: .raw, resolution: .low, frameRate: 15),
                                 StreamConfiguration(videoCodec: .hvc1, resolution: .medium, frameRate: 24)])
        #expect(plan.warmUpSeconds == 1 && plan.measureSeconds == 4 && plan.vitalsSeconds == 60)
        #expect(plan.tolerances.frameRatePercent == 3 && plan.tolerances.latencyP99Ms == 250 && plan.tolerances.jitterMs == 5)
    }

    @Test("unknown keys, wrong types, bad values and syntax errors name their line and column",
          arguments: [
            ("{\n  \"name\": \"x\",\n  \"tolerence\": {}\n}", "plan: line 3, column 3: unknown key 'tolerence' in the plan"),
            ("{\"tolerances\": {\n  \"jitter\": 5}}", "line 2, column 3: unknown key 'jitter' in 'tolerances'; known keys: frameRatePercent"),
            ("{\"streams\": [{\"codec\": \"raw\",\n \"fps\": 25}]}", "line 2, column 9: 'fps' is 25.0; the glasses stream at 2, 7, 15, 24, 30"),
            ("{\"streams\": [{\"codec\": \"h264\"}]}", "line 1, column 24: unknown codec 'h264'"),
            ("{\"durations\": {\"measure\": -1}}", "line 1, column 27: 'measure' is -1.0; allowed 0.5...3600.0"),
            ("{\"checks\": [\"link\", \"vibes\"]}", "line 1, column 21: unknown check group 'vibes'"),
            ("{\"name\": 3}", "line 1, column 10: 'name' must be a string, not a number"),
            ("{\"name\": \"x\",,}", "plan: line 1, column 14: not valid JSON"),
            ("{\"checks\": []}", "line 1, column 12: 'checks' is empty"),
            ("{\"checks\": [\"streams\"], \"streams\": []}", "'streams' is empty"),
            ("{\"durations\": {\"measure\": 1e999}}", "'measure' is too large a number"),
            ("{\"tolerances\": {\"helloWithinSeconds\": 0}}", "'helloWithinSeconds' is 0.0; allowed 0.1...600.0"),
          ])
    func planErrors(text: String, expected: String) {
        #expect {
            _ = try CheckPlan.parse(Array(text.utf8))
        } throws: { error in
            guard let error = error as? CheckPlanError else { return false }
            return error.code == .invalid && error.message.contains(expected)
        }
    }

    // MARK: GATT Heart Rate Measurement (0x2A37)

    @Test("uint8 rate, no contact support, nothing else")
    func heartRateUInt8() throws {
        let m = try HeartRateMeasurement.parse([0x00, 72])
        #expect(m.heartRate == 72 && !m.isUInt16 && m.sensorContact == .notSupported && m.energyExpendedKJ == nil && m.rrIntervals1024.isEmpty)
    }

    @Test("uint16 rate, contact detected, energy and two RR intervals in 1/1024 s")
    func heartRateEverything() throws {
        // flags: uint16 (0x01) | contact detected (0x02) | supported (0x04) | energy (0x08) | RR (0x10)
        let m = try HeartRateMeasurement.parse([0x1F, 0x2C, 0x01, 0x10, 0x27, 0x00, 0x04, 0x00, 0x02])
        #expect(m.heartRate == 300 && m.isUInt16 && m.sensorContact == .detected)
        #expect(m.energyExpendedKJ == 10_000)
        #expect(m.rrIntervals1024 == [1024, 512])
        #expect(m.rrIntervalsMs == [1000, 500])
    }

    @Test("contact supported but not detected; RR flag with no intervals is empty")
    func heartRateNoContact() throws {
        let m = try HeartRateMeasurement.parse([0x14, 60])
        #expect(m.sensorContact == .notDetected && m.rrIntervals1024.isEmpty && m.heartRate == 60)
    }

    @Test("empty and truncated notifications are typed errors", arguments: [
        ([UInt8](), HeartRateMeasurementError.Code.empty, "no flags"),
        ([0x00], .truncated, "uint8 heart rate"),
        ([0x01, 0x48], .truncated, "uint16 heart rate needs 2 bytes at offset 1, 1 left"),
        ([0x08, 72, 0x10], .truncated, "energy expended needs 2 bytes at offset 2"),
        ([0x10, 72, 0x00, 0x04, 0x00], .truncated, "3 RR bytes left at offset 2"),
    ])
    func heartRateErrors(bytes: [UInt8], code: HeartRateMeasurementError.Code, fragment: String) {
        #expect {
            _ = try HeartRateMeasurement.parse(bytes)
        } throws: { error in
            guard let error = error as? HeartRateMeasurementError else { return false }
            return error.code == code && error.message.contains(fragment)
        }
    }

    // MARK: JUnit

    static func sampleReport() -> CheckReport {
        CheckReport(
            planName: "default-plan", results: [
                CheckResult(group: "stream.hvc1.medium.24", name: "frame rate", verdict: .fail, measured: "19.80 fps",
                            bound: "24 fps ± 5 %", message: "measured 19.80 fps, expected 24 fps ± 5 %", failureType: "outOfTolerance",
                            value: 19.8, seconds: 10),
                CheckResult(group: "photo", name: "capture mid-stream", verdict: .pass, message: "ok", seconds: 1.2),
                CheckResult(group: "link", name: "manual pause", verdict: .skipped, message: "not interactive"),
                CheckResult(group: "vitals", name: "pulse & <breathing> \"quoted\" 'single'\u{1}", verdict: .error,
                            message: "device gone: <EOF> & \"more\"", failureType: "deviceUnavailable", seconds: 3),
            ],
            startedAt: Date(timeIntervalSince1970: 1_796_126_400), seconds: 95.2,
            properties: [CheckProperty("device", "tcp:10.0.0.5:7000"), CheckProperty("plan", "a & b")])
    }

    @Test("JUnit XML: the shape of hil-formats.md, counts matching children, escaping")
    func junitShape() throws {
        let xml = JUnitReport.xml(Self.sampleReport(), hostname: "rack-3", systemOut: ["photo: capture mid-stream": "{\"type\":\"check\"}"])
        #expect(xml.hasPrefix("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"glasses-bridge check\" tests=\"4\" failures=\"1\" errors=\"1\" skipped=\"1\" time=\"95.200\">"))
        #expect(xml.contains("<testsuite name=\"default-plan\" tests=\"4\" failures=\"1\" errors=\"1\" skipped=\"1\" time=\"95.200\" timestamp=\"2026-12-01T12:00:00Z\" hostname=\"rack-3\">"))
        #expect(xml.contains("<properties><property name=\"device\" value=\"tcp:10.0.0.5:7000\"/><property name=\"plan\" value=\"a &amp; b\"/></properties>"))
        #expect(xml.contains("<testcase classname=\"stream.hvc1.medium.24\" name=\"frame rate\" time=\"10.000\">\n      <failure message=\"measured 19.80 fps, expected 24 fps ± 5 %\" type=\"outOfTolerance\">"))
        #expect(xml.contains("<testcase classname=\"link\" name=\"manual pause\" time=\"0.000\"><skipped message=\"not interactive\"/></testcase>"))
        #expect(xml.contains("name=\"pulse &amp; &lt;breathing&gt; &quot;quoted&quot; &apos;single&apos;\u{FFFD}\""))
        #expect(xml.contains("<system-out>{&quot;type&quot;:&quot;check&quot;}</system-out>"))
        try Self.expectCountsMatch(xml)
    }

    @Test("JUnit XML validates against the JUnit schema; the schema refuses a broken file")
    func junitValidates() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("junit-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let good = directory.appendingPathComponent("good.xml")
        try JUnitReport.write(Self.sampleReport(), to: good.path)
        let result = try Self.xmllint(good.path)
        #expect(result.status == 0, "\(result.output)")
        let broken = directory.appendingPathComponent("broken.xml")
        try Data("<testsuites><testsuite tests=\"x\"><testcase/></testsuite></testsuites>".utf8).write(to: broken)
        let refused = try Self.xmllint(broken.path)
        #expect(refused.status != 0 && refused.output.contains("fails to validate"), "\(refused.output)")
    }

    /// The schema in Fixtures.
    static var schemaPath: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/junit.xsd").path
    }

    /// `xmllint --noout --schema junit.xsd FILE`.
    static func xmllint(_ path: String) throws -> (status: Int32, output: String) {
        let candidates = ["/usr/bin/xmllint", "/usr/local/bin/xmllint"]
        let tool = try #require(candidates.first { FileManager.default.isExecutableFile(atPath: $0) },
                                "xmllint is missing: Scripts/setup installs libxml2-utils")
        return try runTool(tool, ["--noout", "--schema", schemaPath, path])
    }

    /// The counts on `testsuites` and `testsuite` equal the testcases and their failure/error/skipped children.
    static func expectCountsMatch(_ xml: String) throws {
        func occurrences(_ needle: String) -> Int { xml.components(separatedBy: needle).count - 1 }
        func attribute(_ element: String, _ name: String) throws -> Int {
            let start = try #require(xml.range(of: "<\(element) "))
            let tag = xml[start.lowerBound...].prefix { $0 != ">" }
            let value = try #require(tag.range(of: "\(name)=\""))
            return try #require(Int(tag[value.upperBound...].prefix { $0 != "\"" }))
        }
        let cases = occurrences("<testcase "), failures = occurrences("<failure "), errors = occurrences("<error "),
            skipped = occurrences("<skipped ")
        for element in ["testsuites", "testsuite"] {
            #expect(try attribute(element, "tests") == cases)
            #expect(try attribute(element, "failures") == failures)
            #expect(try attribute(element, "errors") == errors)
            #expect(try attribute(element, "skipped") == skipped)
        }
    }
}
