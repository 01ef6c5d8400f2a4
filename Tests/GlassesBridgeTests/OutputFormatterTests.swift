import Foundation
import Testing
import SmartSpectraInput
@testable import GlassesBridge

@Suite("Output formatters")
struct OutputFormatterTests {
    private func parse(_ line: String) throws -> [String: Any] {
        let object = try JSONSerialization.jsonObject(with: Data(line.utf8))
        return try #require(object as? [String: Any])
    }

    private func sampleSummary(simulated: Bool) -> BridgeSummary {
        var summary = BridgeSummary()
        summary.vitals = VitalsSnapshot(pulseRate: 71.94, breathingRate: nil, hrvRmssd: 40.25)
        if simulated { summary.truth = VitalsSnapshot(pulseRate: 72, breathingRate: 15, hrvRmssd: 38) }
        var accounting = FrameAccounting()
        for _ in 0..<10 { accounting.recordReceived() }
        for _ in 0..<7 { accounting.recordSubmitted() }
        accounting.recordRejected(code: "frameConversionFailed")
        accounting.recordDropped(.late)
        accounting.recordDropped(.duplicateTimestamp)
        summary.stats.accounting = accounting
        summary.durationSeconds = 12.5
        return summary
    }

    @Test func jsonEscapesAndNumbers() {
        let value = JSONValue.object([
            ("s", .string("a\"b\\c\nd\u{1}")), ("i", .int(-3)), ("d", .double(1.5)), ("whole", .double(2)),
            ("nan", .double(.nan)), ("n", .null), ("a", .array([.bool(true), .raw("{\"x\":1}")])),
        ])
        #expect(value.serialized == #"{"s":"a\"b\\c\nd\u0001","i":-3,"d":1.5,"whole":2,"nan":null,"n":null,"a":[true,{"x":1}]}"#)
    }

    @Test func summaryHasTheRequiredFields() throws {
        var formatter = NDJSONEventFormatter()
        let line = formatter.format(.summary(sampleSummary(simulated: true)), at: 12.5)
        #expect(line.hasSuffix("\n"))
        #expect(line.dropLast().contains("\n") == false)
        let object = try parse(line)
        #expect(object["type"] as? String == "summary")
        #expect(object["pulseRate"] as? Double == 71.9)
        #expect(object["breathingRate"] is NSNull)
        #expect(object["hrvRmssd"] as? Double == 40.3 || object["hrvRmssd"] as? Double == 40.2)
        #expect(object["framesReceived"] as? Int == 10)
        #expect(object["framesSubmitted"] as? Int == 7)
        #expect(object["framesRejected"] as? Int == 1)
        #expect(object["framesDropped"] as? Int == 2)
        #expect(object["framesInFlight"] as? Int == 0)
        let truth = try #require(object["truth"] as? [String: Any])
        #expect(truth["pulseRate"] as? Double == 72)
        #expect(truth["breathingRate"] as? Double == 15)
        #expect(truth["hrvRmssd"] as? Double == 38)
        let reasons = try #require(object["droppedByReason"] as? [String: Int])
        #expect(reasons == ["late": 1, "duplicateTimestamp": 1])
    }

    @Test("a stats line in real time names the frames still in flight; the identity holds with them")
    func statsNameTheFramesInFlight() throws {
        var stats = BridgeStats()
        for _ in 0..<12 { stats.accounting.recordReceived() }
        for _ in 0..<8 { stats.accounting.recordSubmitted() }
        stats.accounting.recordDropped(.late)
        #expect(stats.accounting.inFlight == 3 && !stats.accounting.isBalanced)
        var formatter = NDJSONEventFormatter()
        let object = try parse(formatter.format(.stats(stats, vitals: VitalsSnapshot(), truth: nil), at: 3))
        let received = try #require(object["framesReceived"] as? Int), inFlight = try #require(object["framesInFlight"] as? Int)
        #expect(inFlight == 3)
        #expect(received == (object["framesSubmitted"] as? Int ?? -1) + (object["framesRejected"] as? Int ?? -1)
                    + (object["framesDropped"] as? Int ?? -1) + inFlight)
        // Settled beyond what arrived is an accounting error: nothing is in flight, and the account does not balance.
        var broken = FrameAccounting()
        broken.recordSubmitted()
        #expect(broken.inFlight == 0 && !broken.isBalanced)
    }

    @Test func summaryWithoutSimulatorHasNoTruth() throws {
        var formatter = NDJSONEventFormatter()
        let object = try parse(formatter.format(.summary(sampleSummary(simulated: false)), at: 1))
        #expect(object["truth"] == nil)
    }

    @Test func everyEventIsOneJSONLine() throws {
        var formatter = NDJSONEventFormatter()
        let events: [BridgeEvent] = [
            .state(.streaming, detail: "24 fps"), .notice("custom input restarted"),
            .error(code: "thermal", message: "too hot"), .validation(ValidationStatus(code: .faceNotCentered)),
            .metrics(Metrics(), json: #"{"cardio":{}}"#),
            .stats(BridgeStats(), vitals: VitalsSnapshot(), truth: nil),
        ]
        let types = try events.map { try parse(formatter.format($0, at: 1))["type"] as? String }
        #expect(types == ["state", "notice", "error", "validation", "metrics", "stats"])
        let metrics = try parse(formatter.format(events[4], at: 2))
        #expect((metrics["metrics"] as? [String: Any])?["cardio"] != nil)
        let validation = try parse(formatter.format(events[3], at: 2))
        // `code` is a string in every event kind; the number is beside it.
        #expect(validation["code"] as? String == ValidationCode(rawValue: 3)?.description)
        #expect(validation["number"] as? Int == 3)
    }

    @Test func trackerKeepsLastStableValues() {
        var tracker = VitalsTracker()
        var metrics = Metrics()
        metrics.cardio.pulseRate = [
            MeasurementWithConfidence(value: 70, stable: true, confidence: 80, timestamp: 1_000_000),
            MeasurementWithConfidence(value: 90, stable: false, confidence: 10, timestamp: 2_000_000),
        ]
        metrics.breathing.rate = [MeasurementWithConfidence(value: 14, stable: false, confidence: 20, timestamp: 1_500_000)]
        let rows = tracker.ingest(metrics)
        #expect(rows.map(\.metric) == ["pulseRate", "breathingRate", "pulseRate"])
        #expect(tracker.latest.pulseRate == 90)
        #expect(tracker.lastStable.pulseRate == 70)
        #expect(tracker.latest.breathingRate == 14)
        #expect(tracker.lastStable.breathingRate == nil)
        // An empty payload keeps the values.
        tracker.ingest(Metrics())
        #expect(tracker.lastStable.pulseRate == 70)
    }

    @Test func csvIsTheVitalsTimeSeries() {
        var formatter = CSVEventFormatter()
        var metrics = Metrics()
        metrics.cardio.pulseRate = [MeasurementWithConfidence(value: 72.5, stable: true, confidence: 90, timestamp: 1_250_000)]
        #expect(formatter.preamble == "time_s,metric,value,confidence,stable\n")
        #expect(formatter.format(.metrics(metrics, json: "{}"), at: 1) == "1.250,pulseRate,72.500,90.0,true\n")
        #expect(formatter.format(.notice("x"), at: 1) == "")
    }

    @Test func textPlainLinesAreTimestampedAndLiveLineShowsDashesAndTruth() {
        var plain = TextEventFormatter(live: false)
        #expect(plain.format(.state(.streaming, detail: nil), at: 3.25) == "[     3.2s] streaming\n"
            || plain.format(.state(.streaming, detail: nil), at: 3.25) == "[     3.3s] streaming\n")
        let line = TextEventFormatter.statusLine(
            phase: .streaming, stats: BridgeStats(), vitals: VitalsSnapshot(pulseRate: 71.6),
            truth: VitalsSnapshot(pulseRate: 72, breathingRate: 15, hrvRmssd: nil), hint: "Center the face in the frame.",
            stability: VitalsStability(pulseRate: true)
        )
        #expect(line.contains("pulse 72 (truth 72) bpm"))
        #expect(line.contains("breathing -- (truth 15) /min"))
        #expect(line.contains("HRV -- (truth --) ms"))
        #expect(line.contains("Center the face"))
        var live = TextEventFormatter(live: true)
        let stats = live.format(.stats(BridgeStats(), vitals: VitalsSnapshot(), truth: nil), at: 1)
        #expect(stats.hasPrefix("\r\u{1B}[2K"))
        #expect(!stats.contains("\n"))
    }

    @Test func plainStatsAreThrottled() {
        var plain = TextEventFormatter(live: false)
        let event = BridgeEvent.stats(BridgeStats(), vitals: VitalsSnapshot(), truth: nil)
        let lines = (0..<11).map { plain.format(event, at: Double($0)) }.filter { !$0.isEmpty }
        #expect(lines.count == 3)
    }
}
