import Foundation
import GlassesSimulator
import GlassesVideo
import SmartSpectraInput
import Testing
import VitalsEngine
import WearablesKit

/// Seeded simulated subjects rendered frame by frame through ``EmbeddedVitalsBackend``, against ground truth.
///
/// The short check runs in every test run: 34 s of 360×640 (DAT's low resolution), enough for stable pulse and
/// breathing; so does 30 s of one dark, fast subject through HEVC at 2 Mbit/s. The long one (65 s of 504×896 with
/// HRV, about 70 s more in a debug build) runs when `VITALS_SIMULATED_TESTS=1`; `Scripts/bench-vitals` is where
/// accuracy is measured over many subjects.
///
/// Each run is tens of seconds of CPU, so it renders and measures on a thread of its own (``onOwnThread(_:)``)
/// and the test awaits it: held on the cooperative pool (two threads on a two-core machine) it would starve the
/// other suites' async work, and their bounded real-time waits on socket I/O, running beside it. The suite is
/// serialized so that the runs take one core between them, not both.
@Suite("A simulated subject through the embedded backend", .serialized)
struct SimulatedSubjectTests {
    @Test("seed 1, 360×640, 34 s: accuracy, warm-up, requested metrics only, new samples only, stable flags")
    func shortAccuracyCheck() async throws {
        try await Self.run(seed: 1, pulse: 72, breathing: 15, width: 360, height: 640, seconds: 34)
    }

    @Test("seed 42, 504×896, 65 s: pulse, breathing and RMSSD against truth",
          .enabled(if: ProcessInfo.processInfo.environment["VITALS_SIMULATED_TESTS"] == "1"))
    func longAccuracyCheck() async throws {
        try await Self.run(seed: 42, pulse: 96, breathing: 18, width: 504, height: 896, seconds: 65)
    }

    /// The subject HEVC at 2 Mbit/s was hardest on in `Scripts/bench-vitals` (seed 1015: the darkest skin of the
    /// set, skin luma 77 of 255, at 146 bpm): x265 leaves its pulse in luma only, while the decoded chroma carries
    /// the codec's 1 s refresh rhythm. Before the engine read chroma noise off the background, this subject came
    /// out at 54–58 bpm for most of the run.
    @Test("seed 1015, 504×896 through HEVC at 2 Mbit/s, 30 s: a dark, fast pulse is read from luma")
    func hevcDarkFastSubject() async throws {
        let seconds = 30.0
        let (pulses, truth) = try await onOwnThread { try Self.recordThroughHEVC(seconds: seconds) }
        let late = pulses.filter { $0.timestamp >= 15_000_000 }
        #expect(late.count >= 13)
        var errors: [Double] = []
        for p in late {
            let t = Double(p.timestamp) / 1e6
            errors.append(abs(Double(p.value) - (try #require(truth.meanPulseRate(in: (t - 12) ... t)))))
        }
        let mae = errors.reduce(0, +) / Double(max(errors.count, 1))
        // The target at 2 Mbit/s is MAE ≤ 3 bpm over all subjects; this one subject must meet it alone.
        #expect(mae <= 3, "pulse MAE \(mae) bpm; errors \(errors.map { Int($0.rounded()) })")
        #expect(errors.filter { $0 > 5 }.count <= 1, "errors \(errors.map { Int($0.rounded()) })")
    }

    /// The benchmark's subject 15 encoded by libx265 at 2 Mbit/s, decoded by libavcodec into the embedded backend:
    /// the pulse rates it reported, and the subject's ground truth.
    static func recordThroughHEVC(seconds: Double) throws -> ([MeasurementWithConfidence], GroundTruth) {
        let scene = try SceneThroughHEVC.benchmarkSubject(seed: 1015)
        let processor = try EmbeddedVitalsBackend().makeProcessor(configuration: ProcessingConfiguration(requestedMetrics: [.pulseRate]))
        var pulses: [MeasurementWithConfidence] = []
        try SceneThroughHEVC.run(scene, width: 504, height: 896, seconds: Double(Int(seconds)), bitrate: 2_000_000) { decoded, _ in
            pulses += processor.process(decoded.pixelBuffer, timestampUs: decoded.presentationTimeUs).metrics?.cardio.pulseRate ?? []
        }
        return (pulses, scene.groundTruth(through: seconds))
    }

    /// What one run through the backend produced, and the subject's ground truth.
    struct Recording: Sendable {
        var truth: GroundTruth
        var hrv: [Hrv] = []
        var pulses: [MeasurementWithConfidence] = []
        var breaths: [MeasurementWithConfidence] = []
        var chest: [SmartSpectraInput.Measurement] = []
        var validations: [ValidationCode] = []
        /// Payload contents that were not asked for (face, EDA, pressure, lower trace, HRV when not requested).
        var misplaced: [String] = []
    }

    /// Raw NV12 at 30 fps from one seeded subject through ``EmbeddedVitalsBackend``, asking for pulse rate,
    /// breathing rate, the chest trace and (when the run is long enough for it) HRV only; then the checks.
    static func run(seed: UInt64, pulse: Double, breathing: Double, width: Int, height: Int, seconds: Double) async throws {
        let wantsHRV = seconds >= 62
        let recording = try await onOwnThread {
            try record(seed: seed, pulse: pulse, breathing: breathing, width: width, height: height, seconds: seconds, wantsHRV: wantsHRV)
        }
        let (hrv, pulses, breaths, chest, validations, truth) =
            (recording.hrv, recording.pulses, recording.breaths, recording.chest, recording.validations, recording.truth)
        #expect(recording.misplaced.isEmpty, "\(recording.misplaced)")
        #expect(validations.last == .ok)
        // Only new samples: timestamps strictly increase across payloads.
        for series in [pulses.map(\.timestamp), breaths.map(\.timestamp), chest.map(\.timestamp)] {
            #expect(zip(series, series.dropFirst()).allSatisfy { $0 < $1 })
        }
        // Stable flags follow the documented thresholds.
        #expect(pulses.allSatisfy { $0.stable == ($0.confidence >= 40) })
        #expect(breaths.allSatisfy { $0.stable == ($0.confidence >= 45) })
        // Warm-up: first pulse at 10–12 s, not stable before 12 s; breathing not stable before 30 s.
        let firstPulse = try #require(pulses.first)
        #expect((10_000_000 ... 12_500_000).contains(firstPulse.timestamp))
        #expect(pulses.filter { $0.timestamp < 12_000_000 }.allSatisfy { !$0.stable })
        #expect(breaths.filter { $0.timestamp < 30_000_000 }.allSatisfy { !$0.stable })
        // Accuracy against the ground truth from 20 s on: the raw target (MAE ≤ 1.5 bpm) on this subject,
        // and no single second more than 5 bpm off.
        let late = pulses.filter { $0.timestamp >= 20_000_000 }
        #expect(late.count >= Int(seconds) - 21)
        var errors: [Double] = []
        for p in late {
            let t = Double(p.timestamp) / 1e6
            let gt = try #require(truth.meanPulseRate(in: (t - 12) ... t))
            errors.append(abs(Double(p.value) - gt))
            #expect(abs(Double(p.value) - gt) <= 5, "pulse \(p.value) vs truth \(gt) at \(t) s")
        }
        let mae = errors.reduce(0, +) / Double(max(errors.count, 1))
        #expect(mae <= 1.5, "pulse MAE \(mae) bpm over \(errors.count) samples")
        let lastBreath = try #require(breaths.last)
        let gtBreath = try #require(truth.meanBreathingRate(in: 10 ... seconds))
        #expect(abs(Double(lastBreath.value) - gtBreath) <= 1.5, "breathing \(lastBreath.value) vs \(gtBreath)")
        #expect(late.contains { $0.stable })
        guard wantsHRV else { return }
        // HRV: every 10 s from 30 s, not stable before 60 s; the last window's RMSSD within 15 ms of the truth.
        #expect(hrv.filter { $0.timestamp < 60_000_000 }.allSatisfy { !$0.stable })
        let lastHRV = try #require(hrv.last)
        let end = Double(lastHRV.timestamp) / 1e6
        let gtRMSSD = try #require(truth.rmssd(window: (end - 60) ... end))
        #expect(abs(lastHRV.rmssd - gtRMSSD) <= 15, "RMSSD \(lastHRV.rmssd) vs truth \(gtRMSSD)")
        #expect(abs(lastHRV.meanNn - 60_000 / pulse) <= 40, "mean NN \(lastHRV.meanNn)")
    }

    static func record(seed: UInt64, pulse: Double, breathing: Double, width: Int, height: Int, seconds: Double,
                       wantsHRV: Bool) throws -> Recording {
        let scene = try SimulatedScene(profile: SubjectProfile(pulseRate: pulse, breathingRate: breathing, hrvRMSSD: 35, seed: seed))
        var requested: Set<MetricType> = [.pulseRate, .breathingRate, .chestBreathing]
        if wantsHRV { requested.insert(.hrv) }
        let processor = try EmbeddedVitalsBackend().makeProcessor(configuration: ProcessingConfiguration(requestedMetrics: requested))
        let fps = 30.0
        var r = Recording(truth: scene.groundTruth(through: seconds))
        for n in 0 ..< Int(seconds * fps) {
            let t = Double(n) / fps
            let buffer = PixelBuffer.makeNV12(width: width, height: height)
            buffer.withUnsafeStorage { scene.render(at: t, width: width, height: height, into: $0) }
            let update = processor.process(buffer, timestampUs: Int64((t * 1_000_000).rounded()))
            if let v = update.validation { r.validations.append(v.code) }
            guard let m = update.metrics else { continue }
            if m.hasFace || m.hasEda { r.misplaced.append("face or EDA at \(t) s") }
            if !m.cardio.arterialPressureTrace.isEmpty || !m.breathing.lowerTrace.isEmpty { r.misplaced.append("pressure or lower trace at \(t) s") }
            if !wantsHRV, !m.cardio.hrv.isEmpty { r.misplaced.append("HRV at \(t) s") }
            r.hrv += m.cardio.hrv
            r.pulses += m.cardio.pulseRate
            r.breaths += m.breathing.rate
            r.chest += m.breathing.upperTrace
        }
        return r
    }
}

/// A failure inside work done off the test's task, reported when the test awaits it.
struct TestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Runs CPU-heavy synchronous work on a thread of its own and returns its result to the awaiting test, so the work
/// does not hold a cooperative thread that other tests' async work needs.
func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
    }
}
