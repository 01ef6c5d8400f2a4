import SmartSpectraInput
import Testing
@testable import GlassesBridge

/// The summary says what each vital rests on: how many stable values the run had, and their quartiles.
@Suite("What the summary's vitals rest on")
struct SummaryBasisTests {
    @Test("quartiles interpolate between the sorted values; no values, no basis")
    func quartiles() throws {
        #expect(VitalBasis([]) == nil)
        let one = try #require(VitalBasis([72]))
        #expect(one.stableValues == 1 && one.lowerQuartile == 72 && one.upperQuartile == 72)
        // Two stable rates that disagree (a right one and the camera's shake): the median, 75.2, is neither, and the
        // quartiles show how far apart they were.
        let two = try #require(VitalBasis([91.4, 59.0]))
        #expect(two.stableValues == 2 && abs(two.median - 75.2) < 1e-9)
        #expect(abs(two.lowerQuartile - 67.1) < 1e-9 && abs(two.upperQuartile - 83.3) < 1e-9, "\(two)")
        let five = try #require(VitalBasis([5, 1, 4, 2, 3]))
        #expect(five.lowerQuartile == 2 && five.median == 3 && five.upperQuartile == 4)
    }

    @Test("the tracker counts only stable values, per vital")
    func trackerBasis() throws {
        var tracker = VitalsTracker()
        for i in 0 ..< 20 {
            var metrics = Metrics()
            let us = Int64(Double(1 + i) * 1e6)
            // Stable from the fifth second on: 70, 71, 72 bpm in turn; before that an unstable 120.
            let value: Float = i < 4 ? 120 : Float(70 + i % 3)
            metrics.cardio.pulseRate = [MeasurementWithConfidence(value: value, stable: i >= 4, confidence: 60, timestamp: us)]
            tracker.ingest(metrics)
        }
        let basis = tracker.runBasis
        let pulse = try #require(basis.pulseRate)
        #expect(pulse.stableValues == 16)
        #expect(pulse.lowerQuartile >= 70 && pulse.upperQuartile <= 72 && pulse.lowerQuartile < pulse.upperQuartile, "\(pulse)")
        #expect(basis.breathingRate == nil && basis.hrvRmssd == nil)
        #expect(tracker.runSummary.pulseRate == 71)
    }

    @Test("the text summary prints the basis, or nothing when no vital was stable")
    func text() {
        var summary = BridgeSummary()
        #expect(!TextEventFormatter.summaryText(summary).contains("stable values"))
        summary.vitals = VitalsSnapshot(pulseRate: 75.2)
        summary.basis = VitalsBasis(pulseRate: VitalBasis([91.4, 59.0]))
        let text = TextEventFormatter.summaryText(summary)
        #expect(text.contains("medians of the run's stable values: 2 pulse (67.1–83.3 bpm); quartiles in parentheses\n"), "\(text)")
    }

    @Test("the NDJSON summary carries the basis, and matches its schema with and without it")
    func ndjson() throws {
        let schema = try NDJSONSchemaTests.schema("summary")
        var formatter = NDJSONEventFormatter(simulated: false)
        var summary = BridgeSummary()
        for basis in [VitalsBasis(), VitalsBasis(pulseRate: VitalBasis([91.4, 59.0]), hrvRmssd: VitalBasis([40]))] {
            summary.basis = basis
            let object = try #require(TestJSON.parse(formatter.format(.summary(summary), at: 40)))
            let problems = JSONSchemaValidator.problems(object, against: schema)
            #expect(problems.isEmpty, "\(problems)")
            let member = try #require(object["stableBasis"])
            if basis.pulseRate == nil {
                #expect(member["pulseRate"] == .null && member["breathingRate"] == .null && member["hrvRmssd"] == .null)
            } else {
                #expect(member["pulseRate"]?["values"] == .integer(2))
                #expect(member["pulseRate"]?["q1"] == .number(67.1) && member["pulseRate"]?["q3"] == .number(83.3),
                        "\(String(describing: member["pulseRate"]))")
                #expect(member["hrvRmssd"]?["values"] == .integer(1) && member["breathingRate"] == .null)
            }
        }
        // The schema is strict about the new member too: a count of zero or an unknown key is caught.
        let bad = try #require(TestJSON.parse(formatter.format(.summary(summary), at: 40)
            .replacingOccurrences(of: #""values":2"#, with: #""values":0,"spread":1"#)))
        let problems = JSONSchemaValidator.problems(bad, against: schema)
        #expect(problems.contains { $0.contains("values") } && problems.contains { $0.contains("spread") }, "\(problems)")
    }
}
