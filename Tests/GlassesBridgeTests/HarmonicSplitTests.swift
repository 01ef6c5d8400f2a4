import SmartSpectraInput
import Testing
@testable import GlassesBridge

/// A summary that cannot split the difference: stable pulse values in two groups a factor two apart (a rate and its
/// harmonic) are never summarised by their median (docs/VITALS-ENGINE.md, *A summary that cannot split the
/// difference*), and HRV says the floor its beats' timing noise set.
@Suite("Half and double rates in the summary")
struct HarmonicSplitTests {
    /// A tracker fed one pulse value a second: `values` in turn, each with its stable flag.
    static func tracker(_ values: [(Float, Bool)]) -> VitalsTracker {
        var tracker = VitalsTracker()
        for (i, (value, stable)) in values.enumerated() {
            var metrics = Metrics()
            metrics.cardio.pulseRate = [MeasurementWithConfidence(value: value, stable: stable, confidence: stable ? 60 : 30,
                                                                  timestamp: Int64(Double(10 + i) * 1e6))]
            tracker.ingest(metrics)
        }
        return tracker
    }

    @Test("stable values around 57 and 115 bpm: no median between them, the value withheld with the reason")
    func splitWithheld() throws {
        // 25 s at about 115 bpm, then 30 s at about 57 (the trap: the half called stable after the right rate).
        let fast: [(Float, Bool)] = (0 ..< 25).map { (Float(114 + Double($0 % 5) * 0.6), true) }
        let slow: [(Float, Bool)] = (0 ..< 30).map { (Float(56 + Double($0 % 4) * 0.5), true) }
        let tracker = Self.tracker(fast + slow)
        let basis = try #require(tracker.runBasis.pulseRate)
        let split = try #require(basis.harmonicSplit)
        #expect(split.lowerValues == 30 && split.upperValues == 25)
        #expect(abs(split.lower - 56.75) < 0.5 && abs(split.upper - 115.2) < 0.5, "\(split)")
        // Their median lies on the slow group here; whatever it is, the summary does not give it.
        #expect(tracker.runSummary.pulseRate == nil, "\(String(describing: tracker.runSummary.pulseRate)) from \(basis)")
        let absence = try #require(tracker.pulseAbsence(requested: true))
        #expect(absence.code == .harmonicSplit)
        #expect(absence.message.contains(String(format: "30 at about %.1f bpm and 25 at about %.1f bpm", split.lower, split.upper)),
                "\(absence.message)")
        // The text and NDJSON summaries say so.
        var summary = BridgeSummary()
        summary.basis = tracker.runBasis
        summary.vitals = summary.basis.medians
        summary.pulseAbsence = absence
        let text = TextEventFormatter.summaryText(summary)
        #expect(text.contains("  pulse -- bpm"), "\(text)")
        #expect(text.contains("the pulse values split a factor two apart") && text.contains("no pulse: the stable pulse values fell"), "\(text)")
        var formatter = NDJSONEventFormatter(simulated: false)
        let object = try #require(TestJSON.parse(formatter.format(.summary(summary), at: 60)))
        let problems = JSONSchemaValidator.problems(object, against: try NDJSONSchemaTests.schema("summary"))
        #expect(problems.isEmpty, "\(problems)")
        #expect(object["pulseRate"] == .null && object["pulseUnavailable"]?["code"] == .string("harmonicSplit"))
        #expect(object["stableBasis"]?["pulseRate"]?["split"]?["upperValues"] == .integer(25))
    }

    @Test("the median of two groups is never the value, whichever holds the middle")
    func neverTheMedian() throws {
        // Equal groups put the median halfway (about 86 bpm): on neither rate.
        for (slowCount, fastCount) in [(20, 20), (21, 20), (20, 21), (10, 30), (30, 10)] {
            let slow: [(Float, Bool)] = (0 ..< slowCount).map { (Float(57 + Double($0 % 3) * 0.4), true) }
            let fast: [(Float, Bool)] = (0 ..< fastCount).map { (Float(115 + Double($0 % 3) * 0.4), true) }
            let values = slow + fast
            let tracker = Self.tracker(values)
            let median = try #require(tracker.runBasis.pulseRate?.median)
            let value = tracker.runSummary.pulseRate
            #expect(value == nil, "\(slowCount) slow, \(fastCount) fast: \(String(describing: value)) (median \(median))")
        }
    }

    @Test("a passing spell of the half (under a tenth of the values) leaves the rate held for the rest")
    func passingSpellResolved() throws {
        let held: [(Float, Bool)] = (0 ..< 40).map { (Float(115 + Double($0 % 3) * 0.4), true) }
        let values = held + [(57.5, true), (57.5, true), (57.5, true)]
        let tracker = Self.tracker(values)
        let split = try #require(tracker.runBasis.pulseRate?.harmonicSplit)
        #expect(split.resolved == split.upper)
        let value = try #require(tracker.runSummary.pulseRate)
        #expect(abs(value - 115.4) < 0.01, "\(value)")
        #expect(tracker.pulseAbsence(requested: true) == nil)
        // Two rates that are not a factor two apart keep their median, as before (the quartiles show the spread).
        let apart = Self.tracker([(Float, Bool)](repeating: (91.4, true), count: 10) + [(Float, Bool)](repeating: (59, true), count: 10))
        #expect(apart.runBasis.pulseRate?.harmonicSplit == nil)
        #expect(apart.runSummary.pulseRate.map { abs($0 - 75.2) < 0.01 } == true)
    }

    @Test("no stable value, and the values hopped between a rate and its half: the reason says so")
    func unstableSplitSaysWhy() throws {
        let values: [(Float, Bool)] = (0 ..< 30).map { i in (i % 3 == 0 ? 57.6 : 115.1, false) }
        let tracker = Self.tracker(values)
        #expect(tracker.runSummary.pulseRate == nil)
        let absence = try #require(tracker.pulseAbsence(requested: true))
        #expect(absence.code == .harmonicSplit && absence.message.contains("none of the 30 pulse values"), "\(absence)")
        // One rate throughout that never became stable keeps the plain reason.
        let plain = try #require(Self.tracker([(Float, Bool)](repeating: (115, false), count: 30)).pulseAbsence(requested: true))
        #expect(plain.code == .unstable)
    }

    @Test("HRV withheld above the floor bound says the floor; a stable HRV's summary gives it")
    func hrvFloor() throws {
        func tracker(floor: Double, stable: Bool) -> VitalsTracker {
            var tracker = VitalsTracker()
            for i in 0 ..< 80 {
                var metrics = Metrics()
                let us = Int64(Double(10 + i) * 1e6)
                metrics.cardio.pulseRate = [MeasurementWithConfidence(value: 72, stable: true, confidence: 70, timestamp: us)]
                if i >= 20, i % 10 == 0 {
                    metrics.cardio.hrv = [Hrv(rmssd: 40, meanNn: 833, sdnn: 50, baevsky: 100, timestamp: us, confidence: stable ? 70 : 40,
                                              stable: stable, rmssdFloor: floor)]
                }
                tracker.ingest(metrics)
            }
            return tracker
        }
        let withheld = tracker(floor: 23.4, stable: false)
        let absence = try #require(withheld.hrvAbsence(requested: true))
        #expect(absence.code == .timingFloor && absence.message.contains("23.4 ms") && absence.message.contains("12 ms"), "\(absence)")
        #expect(withheld.runBasis.hrvFloor == 23.4)
        let reported = tracker(floor: 6.2, stable: true)
        #expect(reported.hrvAbsence(requested: true) == nil)
        #expect(reported.runBasis.hrvFloor == 6.2)
        var summary = BridgeSummary()
        summary.basis = reported.runBasis
        #expect(TextEventFormatter.summaryText(summary).contains("HRV floor 6.2 ms"))
        var formatter = NDJSONEventFormatter(simulated: false)
        let object = try #require(TestJSON.parse(formatter.format(.summary(summary), at: 90)))
        #expect(object["stableBasis"]?["hrvFloorMs"] == .number(6.2))
        #expect(JSONSchemaValidator.problems(object, against: try NDJSONSchemaTests.schema("summary")).isEmpty)
    }
}
