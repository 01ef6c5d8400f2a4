import Foundation
import Testing
import GlassesJSON
@testable import GlassesReport

@Suite("Reading the bridge's NDJSON, truth and references")
struct RunInputTests {
    @Test("every rate sample, trace sample and stats line of a simulated run is read, with the NDJSON's values")
    func simulatedRun() throws {
        let run = try Fixture.run("simulated.ndjson")
        let objects = try Fixture.objects("simulated.ndjson")
        // An independent reading with Foundation's parser.
        var pulse: [(Double, Double, Bool)] = [], breathing: [Double] = [], hrv: [Double] = [], pulseWave = 0
        for object in objects where object["type"] as? String == "metrics" {
            let metrics = object["metrics"] as? [String: Any]
            let cardio = metrics?["cardio"] as? [String: Any]
            for sample in cardio?["pulseRate"] as? [[String: Any]] ?? [] {
                let t = Double(sample["timestamp"] as? String ?? "") ?? -1
                pulse.append((t / 1e6, sample["value"] as? Double ?? .nan, sample["stable"] as? Bool ?? false))
            }
            hrv += (cardio?["hrv"] as? [[String: Any]] ?? []).compactMap { $0["rmssd"] as? Double }
            pulseWave += (cardio?["arterialPressureTrace"] as? [[String: Any]] ?? []).filter { $0["value"] != nil }.count
            let breath = metrics?["breathing"] as? [String: Any]
            breathing += (breath?["rate"] as? [[String: Any]] ?? []).compactMap { $0["value"] as? Double }
        }
        #expect(!pulse.isEmpty && !breathing.isEmpty && !hrv.isEmpty)
        #expect(run.pulseRate.count == pulse.count)
        for (read, expected) in zip(run.pulseRate, pulse) {
            #expect(abs(read.t - expected.0) < 1e-9 && abs(read.value - expected.1) < 1e-9 && read.stable == expected.2)
        }
        #expect(run.breathingRate.count == breathing.count && run.hrvRmssd.count == hrv.count)
        for (read, expected) in zip(run.breathingRate.map(\.value) + run.hrvRmssd.map(\.value), breathing + hrv) {
            #expect(abs(read - expected) < 1e-9)
        }
        #expect(run.pulseTrace.count == pulseWave)
        let stats = objects.filter { $0["type"] as? String == "stats" }
        #expect(run.stats.count == stats.count)
        #expect(run.stats.last?.framesReceived == stats.last?["framesReceived"] as? Int)
        #expect(run.simulated && run.schemaVersion == 1 && run.summary?.reason == "duration")
        #expect(run.summary?.stats.framesReceived == 1051 && run.endTime == 70)
        let truth = try #require(ReferenceSeries.truth(of: run))
        #expect(truth.samples.count == stats.count)
        #expect(truth.samples.last?.pulseRate == (stats.last?["truth"] as? [String: Any])?["pulseRate"] as? Double)
    }

    @Test("a run compared live with a reference (--reference lsl:…) is read back with it, and the report draws it rather than the truth")
    func liveReferenceInTheRun() throws {
        let text = [
            #"{"type":"start","t":0,"schemaVersion":1,"simulated":true}"#,
            #"{"type":"stats","t":1,"framesReceived":24,"framesSubmitted":24,"pulseRate":null,"breathingRate":null,"hrvRmssd":null,"truth":{"pulseRate":72,"breathingRate":15,"hrvRmssd":30},"reference":{"pulseRate":null}}"#,
            #"{"type":"stats","t":2,"framesReceived":48,"framesSubmitted":48,"pulseRate":73,"breathingRate":null,"hrvRmssd":null,"truth":{"pulseRate":72,"breathingRate":15,"hrvRmssd":30},"reference":{"pulseRate":75.5}}"#,
            #"{"type":"summary","t":3,"framesReceived":60,"framesSubmitted":60,"pulseRate":73,"breathingRate":null,"hrvRmssd":null,"reference":{"source":"lsl:strap (live)","pulseRate":75.5,"readings":1,"pairs":1,"bridgePulseRate":73,"pulseMeanAbsError":2.5}}"#,
        ].joined(separator: "\n")
        let run = try RunRecord.parse(ndjson: text)
        #expect(run.stats.map(\.reference) == [VitalValues(), VitalValues(pulseRate: 75.5)])
        #expect(run.summary?.referenceSource == "lsl:strap (live)")
        let series = try #require(ReferenceSeries.liveReference(of: run))
        #expect(series.kind == .reference && series.source.hasPrefix("lsl:strap (live)"))
        #expect(series.samples.map(\.t) == [2] && series.samples.map(\.pulseRate) == [75.5])
        #expect(RunReport(run: run).reference == series)
        // A run without one: the truth, as before; a malformed reference names its line.
        let plain = try RunRecord.parse(ndjson: text.replacingOccurrences(of: #","reference":{"pulseRate":75.5}"#, with: "")
            .replacingOccurrences(of: #","reference":{"pulseRate":null}"#, with: ""))
        #expect(ReferenceSeries.liveReference(of: plain) == nil && RunReport(run: plain).reference?.kind == .truth)
        #expect(throws: ReportError.self) {
            try RunRecord.parse(ndjson: text.replacingOccurrences(of: #""reference":{"pulseRate":75.5}"#, with: #""reference":72"#))
        }
    }

    @Test("a malformed line is named by its number; unknown kinds are skipped")
    func malformed() throws {
        let good = #"{"type":"start","t":0,"schemaVersion":1,"simulated":false}"#
        let cases: [(String, Int, String)] = [
            (good + "\n{\"type\":\"state\",\"t\":1,\"state\":\"streaming\"}\n{oops\n", 3, "not JSON"),
            (good + "\n{\"type\":\"stats\",\"t\":-1,\"framesReceived\":0,\"framesSubmitted\":0}\n", 2, "'t' must be seconds"),
            (good + "\n{\"type\":\"stats\",\"t\":1,\"framesReceived\":1e999,\"framesSubmitted\":0}\n", 2, "out of range"),
            (good + "\n{\"type\":\"stats\",\"t\":1,\"framesReceived\":1.5,\"framesSubmitted\":0}\n", 2, "whole number"),
            (good + "\n\n[1,2]\n", 3, "JSON object"),
            ("{\"t\":0}\n", 1, "missing 'type'"),
            (good + "\n{\"type\":\"metrics\",\"t\":1,\"metrics\":{\"cardio\":{\"pulseRate\":[{\"value\":72,\"timestamp\":\"-5\"}]}}}\n", 2, "microseconds"),
            (good + "\n{\"type\":\"metrics\",\"t\":1,\"metrics\":{\"cardio\":{\"pulseRate\":[{\"value\":1e308,\"timestamp\":\"5\"}]}}}\n", 2,
             "is not a measurement"),
            (good + "\n" + good + "\n", 2, "a second start line: the file holds more than one run (the first starts at line 1)"),
            (good + "\n{\"type\":\"notice\",\"t\":1,\"message\":\"" + String(repeating: "x", count: RunRecord.maximumLineBytes) + "\"}\n", 2,
             "a line of 16 MiB is not a bridge event"),
        ]
        for (text, line, words) in cases {
            #expect {
                _ = try RunRecord.parse(ndjson: text, name: "run.ndjson")
            } throws: { error in
                guard let error = error as? ReportError else { return false }
                return error.code == .malformedInput && error.line == line && error.message.contains("run.ndjson:\(line):")
                    && error.message.contains(words)
            }
        }
        // A file with no line (or only blank ones) is not a run, and says so.
        for empty in ["", "\n \n"] {
            #expect {
                _ = try RunRecord.parse(ndjson: empty, name: "run.ndjson")
            } throws: { error in
                (error as? ReportError).map { $0.code == .malformedInput && $0.message.contains("run.ndjson holds no run: it is empty") } ?? false
            }
        }
        // NDJSON that is not a run (check's results) has no start line: refused, naming what it holds.
        let check = #"{"type":"checkStart","t":0,"schemaVersion":1,"plan":"p"}"# + "\n" + #"{"type":"checkBegin","t":0,"what":"vitals"}"#
        #expect {
            _ = try RunRecord.parse(ndjson: check, name: "chk.ndjson")
        } throws: { error in
            (error as? ReportError).map { $0.message.contains("chk.ndjson is not a glasses-bridge run: it has no start line (its lines are glasses-bridge check results)") } ?? false
        }
        // Windows line ends ("\r\n", one Character in Swift) are line ends.
        let crlf = try RunRecord.parse(ndjson: good + "\r\n{\"type\":\"state\",\"t\":1,\"state\":\"streaming\"}\r\n", name: "crlf")
        #expect(crlf.lineCount == 2 && crlf.states.count == 1)
        let future = try RunRecord.parse(ndjson: good + "\n{\"type\":\"somethingNew\",\"t\":3,\"x\":[1]}\n", name: "x")
        #expect(future.lineCount == 2 && future.endTime == 0)
    }

    @Test("a chest strap's CSV with wall-clock times lines up with the run; RR intervals give HRV; no overlap is an error")
    func reference() throws {
        let run = try Fixture.run("replay.ndjson")
        let reference = try Fixture.replayReference(run: run)
        #expect(reference.kind == .reference && reference.samples.count == 40)
        #expect(reference.samples.first?.t == 1 && reference.samples.first?.pulseRate == 82)
        #expect(reference.samples.first?.rrIntervals == [758])
        #expect(reference.samples.last.map { $0.hrvRmssd != nil } == true)
        // An hour off: the times do not overlap the run.
        #expect {
            _ = try ReferenceReader.parse(try Fixture.text("replay-reference.csv"), name: "ref.csv", kind: .reference,
                                          runStart: ISO8601DateFormatter().date(from: "2026-12-01T11:00:00Z"), run: 0...40)
        } throws: { ($0 as? ReportError)?.code == .noOverlap && "\($0)".contains("do not overlap the run") }
        // Times past any clock (1e200 s): the same error, with the numbers printed whole (Int would trap).
        #expect {
            _ = try ReferenceReader.parse("time,hr\n1e200,72\n2e200,73\n", name: "far.csv", kind: .reference,
                                          runStart: ISO8601DateFormatter().date(from: "2026-12-01T10:00:00Z"), run: 0...40)
        } throws: { ($0 as? ReportError)?.code == .noOverlap }
        // Wall-clock times with no start time.
        #expect {
            _ = try ReferenceReader.parse(try Fixture.text("replay-reference.csv"), name: "ref.csv", kind: .reference, runStart: nil, run: 0...40)
        } throws: { ($0 as? ReportError)?.line == 2 && "\($0)".contains("--run-start") }
    }

    @Test("reference formats: run-relative NDJSON, RR only, semicolons, Unix milliseconds; bad cells name their line")
    func referenceFormats() throws {
        let ndjson = #"{"elapsed_s": 1, "heartRate": 70, "rrIntervals": [850, 860]}"# + "\n" + #"{"elapsed_s": 2, "heartRate": 71}"#
        let a = try ReferenceReader.parse(ndjson, name: "a", kind: .reference, runStart: nil, run: 0...10)
        #expect(a.samples.map(\.pulseRate) == [70, 71] && a.samples[0].rrIntervals == [850, 860])
        let rrOnly = "time;RR\n0;1000\n1;0.5\n"
        let b = try ReferenceReader.parse(rrOnly, name: "b", kind: .reference, runStart: nil, run: 0...10)
        #expect(b.samples.map(\.pulseRate) == [60, 120])
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let c = try ReferenceReader.parse("timestamp,bpm\r\n1800000002500,65\r\n", name: "c", kind: .reference, runStart: start, run: 0...10)
        #expect(c.samples.first?.t == 2.5 && c.wallClock && c.columnsUsed == "time=timestamp, hr=bpm")
        #expect(!a.wallClock)
        // Chest-strap loggers' own names (which check --reference reads with this reader too).
        for header in ["unix_ms,heart rate (bpm)", "date,bpm", "timestamp_ms,HR (bpm)"] {
            let d = try ReferenceReader.parse("\(header)\n1800000002500,65\n", name: "d", kind: .reference, runStart: start, run: 0...10)
            #expect(d.samples.first?.t == 2.5 && d.samples.first?.pulseRate == 65, "\(header)")
        }
        #expect { _ = try ReferenceReader.parse("t,hr\n1,70\n2,seventy\n", name: "d", kind: .reference, runStart: nil, run: 0...10) }
            throws: { ($0 as? ReportError)?.line == 3 && "\($0)".contains("'seventy' is not a number") }
        #expect { _ = try ReferenceReader.parse("t,hr\n1,900\n", name: "e", kind: .reference, runStart: nil, run: 0...10) }
            throws: { "\($0)".contains("outside 20–300") }
        #expect { _ = try ReferenceReader.parse("when,hr\n1,70\n", name: "f", kind: .reference, runStart: nil, run: 0...10) }
            throws: { ($0 as? ReportError)?.code == .missingColumn }
    }

    @Test("the bridge's --truth-out file is read with the bridge's keys on the run's clock")
    func truthExport() throws {
        let run = try Fixture.run("simulated.ndjson")
        let truth = try ReferenceReader.parse(try Fixture.text("simulated-truth.csv"), name: "simulated-truth.csv", kind: .truth,
                                              runStart: nil, run: 0...run.endTime)
        #expect(truth.samples.count == 701)  // 0 to 70 s at 10 a second
        // The stats line at t=20 and the export at t=20 say the same (both: the trailing 10 s).
        let stats = try #require(run.stats.first { $0.t == 20 })
        let exported = try #require(truth.samples.first { abs($0.t - 20) < 1e-9 })
        #expect(abs((exported.pulseRate ?? 0) - (stats.truth?.pulseRate ?? -1)) <= 0.05)
        #expect(abs((exported.breathingRate ?? 0) - (stats.truth?.breathingRate ?? -1)) <= 0.05)
        // NDJSON leaves out what is not known yet: the first line has no pulse, later ones do.
        let sparse = #"{"breathing":0.59,"instantPulseRate":75.6,"t":0}"# + "\n" + #"{"pulseRate":72.5,"hrvRmssd":30,"t":0.1}"#
        let ndjson = try ReferenceReader.parse(sparse, name: "truth.ndjson", kind: .truth, runStart: nil, run: 0...1)
        #expect(ndjson.samples.map(\.pulseRate) == [nil, 72.5] && ndjson.samples.last?.hrvRmssd == 30)
    }
}
