import SmartSpectraInput
import Testing
@testable import GlassesBridge

/// The summary says why it has no HRV value: from what the metrics showed, in a fixed order of causes.
@Suite("Why a run has no HRV")
struct HRVAbsenceTests {
    /// Pulse samples once a second over `seconds` (stable from `stableFrom`), starting at `start`, and HRV windows
    /// every 10 s from 30 s into the stretch with `hrvConfidence` (stable at `hrvStable`).
    static func feed(_ tracker: inout VitalsTracker, start: Double = 1, seconds: Int, stableFrom: Int = 0,
                     hrvConfidence: Float? = nil, hrvStable: Bool = false) {
        for i in 0 ..< seconds {
            var metrics = Metrics()
            let us = Int64((start + Double(i)) * 1e6)
            metrics.cardio.pulseRate = [MeasurementWithConfidence(value: 72, stable: i >= stableFrom, confidence: 60, timestamp: us)]
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

    @Test("not requested, and a frame rate HRV is not measured at")
    func notRequestedAndFrameRate() {
        var tracker = VitalsTracker()
        Self.feed(&tracker, seconds: 90)
        #expect(tracker.hrvAbsence(requested: false)?.code == .notRequested)
        var slow = VitalsTracker(frameRate: 7)
        Self.feed(&slow, seconds: 90, hrvConfidence: 80, hrvStable: true)
        let absence = slow.hrvAbsence(requested: true)
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
}
