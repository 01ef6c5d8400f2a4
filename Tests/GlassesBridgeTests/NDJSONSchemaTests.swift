import Foundation
@testable import GlassesBridge
@testable import GlassesCheck
import SmartSpectraInput
import Testing

/// NDJSON output against the JSON Schemas in `docs/schema/`, one per event kind.
@Suite("NDJSON schema (docs/schema)", .serialized)
struct NDJSONSchemaTests {
    static func schema(_ kind: String) throws -> TestJSON {
        let url = docsDirectory().appendingPathComponent("schema/\(kind).json")
        let text = try String(contentsOf: url, encoding: .utf8)
        return try #require(TestJSON.parse(text), "\(url.path) is not JSON")
    }

    @Test func theValidatorRejectsWhatTheSchemasForbid() throws {
        let error = try Self.schema("error")
        #expect(JSONSchemaValidator.problems(try #require(TestJSON.parse(
            #"{"type":"error","t":1.5,"code":"noFrames","message":"m"}"#)), against: error).isEmpty)
        // A numeric code (as validation had it) and an unknown member are both caught.
        let bad = try #require(TestJSON.parse(#"{"type":"error","t":1,"code":11,"message":"m","extra":true}"#))
        let problems = JSONSchemaValidator.problems(bad, against: error)
        #expect(problems.contains { $0.contains("$.code") })
        #expect(problems.contains { $0.contains("unexpected member extra") })
        #expect(!JSONSchemaValidator.problems(try #require(TestJSON.parse(#"{"type":"error","code":"x","message":"m"}"#)),
                                              against: error).isEmpty)
    }

    @Test func aSimulatedRunMatchesTheSchemaOfEveryEventKind() throws {
        let result = try BinaryRunner.run([
            "--format", "ndjson", "--no-realtime", "--duration", "6", "--resolution", "low", "--fps", "15", "--verbose",
        ])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let objects = try result.lines.map { line in try #require(TestJSON.parse(line), "not JSON: \(line)") }
        #expect(objects.first?["type"]?.string == "start")
        #expect(objects.first?["schemaVersion"] == .integer(1))
        #expect(objects.last?["type"]?.string == "summary")
        // 6 s is too short for any vital (the first pulse and breathing values come after 10 s of face), and the
        // summary says so rather than leaving bare nulls.
        #expect(objects.last?["hrvRmssd"] == .null)
        #expect(objects.last?["hrvUnavailable"]?["message"]?.string?.isEmpty == false)
        #expect(objects.last?["pulseRate"] == .null && objects.last?["pulseUnavailable"]?["code"]?.string == "notMeasured",
                "\(String(describing: objects.last?["pulseUnavailable"]))")
        #expect(objects.last?["breathingUnavailable"]?["code"]?.string == "notMeasured")
        var kinds = Set<String>()
        for (index, object) in objects.enumerated() {
            let kind = try #require(object["type"]?.string, "line \(index + 1) has no type")
            kinds.insert(kind)
            let problems = JSONSchemaValidator.problems(object, against: try Self.schema(kind))
            #expect(problems.isEmpty, "line \(index + 1) (\(kind)): \(problems)")
            if kind == "stats" { #expect(object["truth"] != nil, "a simulated stats line without truth: line \(index + 1)") }
        }
        for kind in ["start", "state", "notice", "validation", "metrics", "stats", "summary"] {
            #expect(kinds.contains(kind), "the run printed no \(kind)")
        }
    }

    @Test func aCheckRunMatchesTheSchemaOfEveryCheckEventKind() throws {
        // The built-in simulator in virtual time, a short plan with one check failing (the glasses send 10 fps on a
        // 15 fps stream), so that both verdicts and every kind of check event appear.
        let directory = FileManager.default.temporaryDirectory
        let plan = directory.appendingPathComponent("schema-plan-\(UUID().uuidString).json")
        let scenario = directory.appendingPathComponent("schema-scenario-\(UUID().uuidString).json")
        try Data(#"""
        {"name": "schema", "checks": ["link", "streams"], "streams": [{"codec": "raw", "resolution": "low", "fps": 15}],
         "durations": {"warmUp": 1, "measure": 2}}
        """#.utf8).write(to: plan)
        try Data(#"{"events": [{"at": 0, "do": "frameRate", "fps": 10}]}"#.utf8).write(to: scenario)
        defer { for url in [plan, scenario] { try? FileManager.default.removeItem(at: url) } }
        let result = try BinaryRunner.run(["check", "--plan", plan.path, "--sim-scenario", scenario.path, "--format", "ndjson"])
        #expect(result.status == 1, "stderr: \(result.stderr)")
        let objects = try result.lines.map { line in try #require(TestJSON.parse(line), "not JSON: \(line)") }
        #expect(objects.first?["type"]?.string == "checkStart" && objects.last?["type"]?.string == "checkSummary")
        var kinds = Set<String>(), verdicts = Set<String>()
        for (index, object) in objects.enumerated() {
            let kind = try #require(object["type"]?.string, "line \(index + 1) has no type")
            kinds.insert(kind)
            if let verdict = object["verdict"]?.string { verdicts.insert(verdict) }
            let problems = JSONSchemaValidator.problems(object, against: try Self.schema(kind))
            #expect(problems.isEmpty, "line \(index + 1) (\(kind)): \(problems)")
        }
        #expect(kinds == ["checkStart", "checkBegin", "check", "checkSummary"], "\(kinds)")
        #expect(verdicts.isSuperset(of: ["pass", "fail"]), "\(verdicts)")
        // The schema is strict: a verdict it does not know, or a missing message, is caught.
        let check = try Self.schema("check")
        let wrong = try #require(TestJSON.parse(
            #"{"type":"check","t":1,"group":"link","name":"hello","verdict":"maybe","measured":null,"bound":null,"value":null,"failureType":null,"seconds":0}"#))
        let problems = JSONSchemaValidator.problems(wrong, against: check)
        #expect(problems.contains { $0.contains("$.verdict") } && problems.contains { $0.contains("message") }, "\(problems)")
    }

    @Test func everyKindTheFormatterWritesMatchesItsSchema() throws {
        // Kinds a short simulated run does not print: error, warning, a failed summary.
        var summary = BridgeSummary()
        summary.failure = BridgeFailure(.noFrames, "no frame arrived")
        summary.reason = "noFrames"
        summary.truth = VitalsSnapshot()
        let events: [(String, BridgeEvent)] = [
            ("error", .error(code: "timestampGap", message: "a gap")),
            ("warning", .warning("--fps 7 gives no trustworthy pulse")),
            ("validation", .validation(.init(code: .frameRateTooLow))),
            ("state", .state(.waiting, detail: "link lost")),
            ("summary", .summary(summary)),
        ]
        var formatter = NDJSONEventFormatter(simulated: true)
        let start = try #require(TestJSON.parse(formatter.preamble))
        #expect(JSONSchemaValidator.problems(start, against: try Self.schema("start")).isEmpty)
        // In real time the start line also says when the run began on the wall clock (for references).
        let timed = NDJSONEventFormatter(simulated: false, startedAt: Date(timeIntervalSince1970: 1_800_000_000.25))
        let timedStart = try #require(TestJSON.parse(timed.preamble))
        #expect(JSONSchemaValidator.problems(timedStart, against: try Self.schema("start")).isEmpty)
        #expect(timedStart["startedAt"] == .string("2027-01-15T08:00:00.250Z"))
        for (kind, event) in events {
            let line = formatter.format(event, at: 2)
            let object = try #require(TestJSON.parse(line))
            let problems = JSONSchemaValidator.problems(object, against: try Self.schema(kind))
            #expect(problems.isEmpty, "\(kind): \(problems) in \(line)")
        }
        // One type per field: `code` is a string in error and validation alike.
        let validation = try #require(TestJSON.parse(formatter.format(.validation(.init(code: .tooDark)), at: 0)))
        #expect(validation["code"] == .string("tooDark"))
        #expect(validation["number"] == .integer(Int64(ValidationCode.tooDark.rawValue)))
    }

    @Test("a live reference: every stats line carries its rate (null while none is near), the summary its agreement, both as the schemas say")
    func aLiveReferenceIsCarriedAsTheSchemasSay() throws {
        var formatter = NDJSONEventFormatter(simulated: false)
        var agreement = ReferenceAgreement(source: "lsl:HeartRate (live)")
        agreement.note(reference: 72, pulse: 74, stable: true)
        agreement.note(reference: 70, pulse: 71, stable: false)
        var summary = BridgeSummary()
        summary.reference = agreement
        let lines = [
            ("stats", formatter.format(.stats(BridgeStats(), vitals: VitalsSnapshot(pulseRate: 74), truth: nil, reference: VitalsSnapshot(pulseRate: 72.04)), at: 1)),
            ("stats", formatter.format(.stats(BridgeStats(), vitals: VitalsSnapshot(), truth: nil, reference: VitalsSnapshot()), at: 2)),
            ("summary", formatter.format(.summary(summary), at: 3)),
        ]
        for (kind, line) in lines {
            let object = try #require(TestJSON.parse(line))
            #expect(JSONSchemaValidator.problems(object, against: try Self.schema(kind)).isEmpty, "\(kind): \(line)")
        }
        #expect(lines[0].1.contains(#""reference":{"pulseRate":72}"#), "\(lines[0].1)")
        #expect(lines[1].1.contains(#""reference":{"pulseRate":null}"#), "\(lines[1].1)")
        #expect(lines[2].1.contains(
            #""reference":{"source":"lsl:HeartRate (live)","pulseRate":71,"readings":2,"pairs":1,"bridgePulseRate":74,"pulseMeanAbsError":2}"#),
            "\(lines[2].1)")
        // Without a reference the key is absent, as before.
        let plain = formatter.format(.stats(BridgeStats(), vitals: VitalsSnapshot(), truth: nil), at: 4)
        #expect(TestJSON.parse(plain)?["reference"] == nil)
        // The schema refuses a reference that is not what the formatter writes.
        let wrong = try #require(TestJSON.parse(#"{"type":"stats","t":1,"reference":{"pulseRate":"72"}}"#))
        #expect(JSONSchemaValidator.problems(wrong, against: try Self.schema("stats")).contains { $0.contains("reference") })
    }

    @Test("the agreement pairs only stable pulses with readings, and says nothing without a pair")
    func theAgreementPairsStablePulsesWithReadings() {
        var agreement = ReferenceAgreement(source: "lsl:x")
        agreement.note(reference: nil, pulse: 70, stable: true)
        agreement.note(reference: .nan, pulse: 70, stable: true)
        #expect(agreement.readings == 0 && agreement.referenceMean == nil && agreement.meanAbsoluteError == nil)
        agreement.note(reference: 60, pulse: 90, stable: false)
        agreement.note(reference: 60, pulse: nil, stable: true)
        #expect(agreement.readings == 2 && agreement.pairs == 0 && agreement.meanAbsoluteError == nil)
        agreement.note(reference: 80, pulse: 77, stable: true)
        agreement.note(reference: 80, pulse: 85, stable: true)
        #expect(agreement.pairs == 2 && agreement.meanAbsoluteError == 4 && agreement.bridgeMean == 81)
        #expect(agreement.referenceMean == 70)
    }

    @Test func theFirstStatsLineOfASimulatedRunCarriesTruthEvenBeforeItIsKnown() throws {
        var formatter = NDJSONEventFormatter(simulated: true)
        let line = formatter.format(.stats(BridgeStats(), vitals: VitalsSnapshot(), truth: nil), at: 1)
        let object = try #require(TestJSON.parse(line))
        #expect(object["truth"] == .object(["pulseRate": .null, "breathingRate": .null, "hrvRmssd": .null]))
    }

    @Test func devicesInNDJSONListWhatTextLists() throws {
        let text = try BinaryRunner.run(["devices"])
        let ndjson = try BinaryRunner.run(["devices", "--format", "ndjson"])
        #expect(text.status == 0 && ndjson.status == 0)
        let entries = try ndjson.lines.map { try #require(TestJSON.parse($0)) }
        let schema = try Self.schema("device-entry")
        for entry in entries { #expect(JSONSchemaValidator.problems(entry, against: schema).isEmpty, "\(entry)") }
        #expect(entries.count == text.lines.filter { !$0.isEmpty }.count)
        #expect(entries.contains { $0["type"]?.string == "sockets" })
        for entry in entries { #expect(text.stdout.contains(try #require(entry["message"]?.string))) }
    }
}
