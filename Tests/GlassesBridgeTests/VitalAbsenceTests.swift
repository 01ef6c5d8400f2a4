import SmartSpectraInput
import Testing
@testable import GlassesBridge

/// The summary says why it has no pulse, breathing or HRV value: from what the metrics showed, in a fixed order of
/// causes.
@Suite("Why a run has no pulse, breathing or HRV")
struct VitalAbsenceTests {
    /// Pulse samples once a second over `seconds` (stable from `stableFrom`, at `confidence`), starting at `start`,
    /// and HRV windows every 10 s from 30 s into the stretch with `hrvConfidence` (stable at `hrvStable`).
    static func feed(_ tracker: inout VitalsTracker, start: Double = 1, seconds: Int, stableFrom: Int = 0, confidence: Float = 60,
                     hrvConfidence: Float? = nil, hrvStable: Bool = false) {
        for i in 0 ..< seconds {
            var metrics = Metrics()
            let us = Int64((start + Double(i)) * 1e6)
            metrics.cardio.pulseRate = [MeasurementWithConfidence(value: 72, stable: i >= stableFrom, confidence: confidence,
                                                                  timestamp: us)]
            if let hrvConfidence, i >= 30, i % 10 == 0 {
                metrics.cardio.hrv = [Hrv(rmssd: 40, meanNn: 830, sdnn: 45, baevsky: 0, timestamp: us, confidence: hrvConfidence,
                                          stable: hrvStable)]
            }
            tracker.ingest(metrics)
        }
    }

    @Test("a stable HRV value has no absence")
    func present() {
        var tracker = VitalsTracker()
        Self.feed(&tracker, seconds: 90, hrvConfidence: 80, hrvStable: true)
        #expect(tracker.runSummary.hrvRmssd == 40)
        #expect(tracker.hrvAbsence(requested: true) == nil)
    }

    /// The summary a run at `rate` fps would end with: the tracker's values and reasons, judged by the frame-rate
    /// rule as the pipeline judges its summary (the rule replaces a reason for a vital the rate cannot support).
    static func judged(_ tracker: VitalsTracker, at rate: UInt) -> BridgeSummary {
        var summary = BridgeSummary()
        summary.basis = tracker.runBasis
        summary.vitals = summary.basis.medians
        summary.pulseAbsence = tracker.pulseAbsence(requested: true)
        summary.breathingAbsence = tracker.breathingAbsence(requested: true)
        summary.hrvAbsence = tracker.hrvAbsence(requested: true)
        var gate = FrameRateGate(askedRate: rate)
        guard case .summary(let judged)? = gate.adjust(.summary(summary)) else { return summary }
        return judged
    }

    @Test("not requested, and a frame rate HRV is not measured at")
    func notRequestedAndFrameRate() {
        var tracker = VitalsTracker()
        Self.feed(&tracker, seconds: 90)
        #expect(tracker.hrvAbsence(requested: false)?.code == .notRequested)
        var slow = VitalsTracker()
        Self.feed(&slow, seconds: 90, hrvConfidence: 80, hrvStable: true)
        let absence = Self.judged(slow, at: 7).hrvAbsence
        #expect(absence?.code == .frameRate)
        #expect(absence?.message.contains("7 fps") == true, "\(String(describing: absence))")
    }

    @Test("no pulse at all, or a pulse that was never stable")
    func noStablePulse() {
        let empty = VitalsTracker()
        #expect(empty.hrvAbsence(requested: true)?.message.contains("no pulse was measured") == true)
        var tracker = VitalsTracker()
        Self.feed(&tracker, seconds: 90, stableFrom: 1000, hrvConfidence: 10)
        let absence = tracker.hrvAbsence(requested: true)
        #expect(absence?.code == .noStablePulse)
        #expect(absence?.message.contains("never stable") == true)
    }

    @Test("HRV requested alone (no pulse values in the payloads): the HRV windows tell how long the face was measured")
    func hrvWithoutPulseValues() {
        func windows(at seconds: [Int]) -> VitalsTracker {
            var tracker = VitalsTracker()
            for second in seconds {
                var metrics = Metrics()
                metrics.cardio.hrv = [Hrv(rmssd: 40, meanNn: 830, sdnn: 45, baevsky: 0, timestamp: Int64(second) * 1_000_000,
                                          confidence: 30, stable: false)]
                tracker.ingest(metrics)
            }
            return tracker
        }
        // A 45 s run: windows at 30 and 40 s, the face measured for about 40 s.
        let short = windows(at: [30, 40]).hrvAbsence(requested: true)
        #expect(short?.code == .tooShort, "\(String(describing: short))")
        #expect(short?.message.contains("about 40 s") == true, "\(String(describing: short))")
        // Windows from 30 to 90 s, none stable: unstable, and nothing said of a pulse that was not in the output.
        let long = windows(at: Array(stride(from: 30, through: 90, by: 10))).hrvAbsence(requested: true)
        #expect(long?.code == .unstable, "\(String(describing: long))")
        #expect(long?.message.contains("pulse was stable") == false, "\(String(describing: long))")
        // Windows with a break of 40 s between them: two short stretches, not one long one.
        let broken = windows(at: [30, 40, 80, 90]).hrvAbsence(requested: true)
        #expect(broken?.code == .tooShort, "\(String(describing: broken))")
    }

    @Test("stretches shorter than the HRV window, however long the run")
    func tooShort() {
        var tracker = VitalsTracker()
        // Three stretches of 40 pulse samples with 5 s gaps (the face lost and the measurement restarted): 130 s of
        // run, each stretch about 49 s of face (the first pulse comes 10 s into it), no 60 s.
        for k in 0 ..< 3 { Self.feed(&tracker, start: 1 + Double(k) * 45, seconds: 40, hrvConfidence: 20) }
        let absence = tracker.hrvAbsence(requested: true)
        #expect(absence?.code == .tooShort, "\(String(describing: absence))")
        #expect(absence?.message.contains("longest stretch measured was about 49 s") == true, "\(String(describing: absence))")
        // One stretch of 60 pulse samples is long enough: the windows then were measured and not stable.
        Self.feed(&tracker, start: 200, seconds: 60, hrvConfidence: 25)
        #expect(tracker.hrvAbsence(requested: true)?.code == .unstable)
    }

    @Test("windows measured but never stable: how many, the best confidence, and a pulse that was rarely stable")
    func unstable() {
        var tracker = VitalsTracker()
        Self.feed(&tracker, seconds: 90, stableFrom: 40, hrvConfidence: 33)
        let absence = tracker.hrvAbsence(requested: true)
        #expect(absence?.code == .unstable)
        #expect(absence?.message.contains("none of the 6 HRV windows measured was stable (best confidence 33 %)") == true,
                "\(String(describing: absence))")
        #expect(absence?.message.contains("stable in only 56 %") == true, "\(String(describing: absence))")
    }

    /// Breathing samples once a second over `seconds` (stable from `stableFrom`, at `confidence`), from `start`.
    static func feedBreathing(_ tracker: inout VitalsTracker, start: Double = 1, seconds: Int, stableFrom: Int = 0,
                              confidence: Float = 60) {
        for i in 0 ..< seconds {
            var metrics = Metrics()
            let us = Int64((start + Double(i)) * 1e6)
            metrics.breathing.rate = [MeasurementWithConfidence(value: 15, stable: i >= stableFrom, confidence: confidence,
                                                                timestamp: us)]
            tracker.ingest(metrics)
        }
    }

    @Test("a stable pulse or breathing value has no absence; each is judged on its own")
    func ratesPresent() {
        var tracker = VitalsTracker()
        Self.feed(&tracker, seconds: 20)
        #expect(tracker.pulseAbsence(requested: true) == nil)
        #expect(tracker.breathingAbsence(requested: true)?.code == .notMeasured)
        Self.feedBreathing(&tracker, seconds: 40, stableFrom: 30)
        #expect(tracker.breathingAbsence(requested: true) == nil)
    }

    @Test("the pulse or breathing not requested, and a frame rate that does not measure them")
    func ratesNotRequestedAndFrameRate() {
        let tracker = VitalsTracker()
        #expect(tracker.pulseAbsence(requested: false)?.code == .notRequested)
        #expect(tracker.breathingAbsence(requested: false)?.message.contains("--metrics breathing or breathing-rate") == true)
        var slow = VitalsTracker()
        Self.feed(&slow, seconds: 40)
        Self.feedBreathing(&slow, seconds: 40, stableFrom: 30)
        let atTwo = Self.judged(slow, at: 2)
        let pulse = atTwo.pulseAbsence, breathing = atTwo.breathingAbsence
        // Each vital gets its own reason: the pulse cannot be carried at 2 fps, breathing is only unmeasured there.
        #expect(pulse?.code == .frameRate && pulse?.message.hasPrefix("the pulse cannot be measured at 2 fps: 2 fps samples the pulse too slowly") == true,
                "\(String(describing: pulse))")
        #expect(breathing?.message == "breathing is not measured at 2 fps, so its values are never marked stable (stream at 15 fps or more)",
                "\(String(describing: breathing))")
        var seven = VitalsTracker()
        Self.feed(&seven, seconds: 40)
        let atSeven = Self.judged(seven, at: 7)
        #expect(atSeven.pulseAbsence?.message == "the pulse is not measured at 7 fps, so its values are never marked stable (stream at 15 fps or more)")
        #expect(atSeven.hrvAbsence?.message == "HRV is not measured at 7 fps: beats timed to 143 ms are too coarse for it (stream at 15 fps or more)")
    }

    @Test("no value at all, and stretches of face shorter than a stable value needs")
    func ratesNotMeasuredAndTooShort() {
        var tracker = VitalsTracker()
        #expect(tracker.pulseAbsence(requested: true)?.code == .notMeasured)
        #expect(tracker.pulseAbsence(requested: true)?.message.hasPrefix("no pulse value was measured") == true)
        // One pulse value (the first comes 10 s into the face) and 15 s of breathing values: about 10 and 25 s of face.
        Self.feed(&tracker, seconds: 1, stableFrom: 1000)
        Self.feedBreathing(&tracker, seconds: 16, stableFrom: 1000)
        let pulse = tracker.pulseAbsence(requested: true), breathing = tracker.breathingAbsence(requested: true)
        #expect(pulse?.code == .tooShort && pulse?.message.contains("needs about 12 s") == true
                    && pulse?.message.contains("longest stretch measured was about 10 s") == true, "\(String(describing: pulse))")
        #expect(breathing?.code == .tooShort && breathing?.message.contains("needs about 30 s") == true
                    && breathing?.message.contains("about 25 s") == true, "\(String(describing: breathing))")
        // Two stretches of breathing with a gap between them: the longest counts, not their sum.
        Self.feedBreathing(&tracker, start: 30, seconds: 16, stableFrom: 1000)
        #expect(tracker.breathingAbsence(requested: true)?.code == .tooShort)
    }

    @Test("values over long enough stretches, never stable: how many and the best confidence")
    func ratesUnstable() {
        var tracker = VitalsTracker()
        Self.feed(&tracker, seconds: 30, stableFrom: 1000, confidence: 35)
        Self.feed(&tracker, start: 31, seconds: 1, stableFrom: 1000, confidence: 38)
        Self.feedBreathing(&tracker, seconds: 31, stableFrom: 1000, confidence: 20)
        let pulse = tracker.pulseAbsence(requested: true), breathing = tracker.breathingAbsence(requested: true)
        #expect(pulse?.code == .unstable, "\(String(describing: pulse))")
        #expect(pulse?.message.hasPrefix("none of the 31 pulse values measured was stable (best confidence 38 %): the pulse") == true,
                "\(String(describing: pulse))")
        #expect(breathing?.code == .unstable && breathing?.message.contains("(best confidence 20 %)") == true,
                "\(String(describing: breathing))")
    }

    @Test("the text summary prints each absence but a metric not requested")
    func summaryText() {
        var summary = BridgeSummary()
        summary.pulseAbsence = VitalAbsence(code: .unstable, message: "none of the 31 pulse values measured was stable")
        summary.breathingAbsence = VitalAbsence(code: .notRequested, message: "breathing was not requested")
        summary.hrvAbsence = VitalAbsence(code: .noStablePulse, message: "the pulse was never stable")
        let text = TextEventFormatter.summaryText(summary)
        #expect(text.contains("\n  no pulse: none of the 31 pulse values measured was stable\n"), "\(text)")
        #expect(!text.contains("no breathing"), "\(text)")
        #expect(text.contains("\n  no HRV: the pulse was never stable\n"), "\(text)")
        // Two vitals without a value for the same reason share one line.
        summary.breathingAbsence = VitalAbsence(code: .unstable, message: "none of the 31 pulse values measured was stable")
        let shared = TextEventFormatter.summaryText(summary)
        #expect(shared.contains("\n  no pulse or breathing: none of the 31 pulse values measured was stable\n"), "\(shared)")
        #expect(shared.components(separatedBy: "none of the 31").count == 2, "\(shared)")
    }
}
