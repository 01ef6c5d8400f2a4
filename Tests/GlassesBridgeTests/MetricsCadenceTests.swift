import Foundation
import GlassesMedia
import GlassesSimulator
import SmartSpectraInput
import Testing

/// What the embedded backend published for one frame.
private struct FrameOutput: Sendable {
    var index: Int
    var timestampUs: Int64
    var pulseWave: [Int64] = []
    var pulseValues: [Float] = []
    var upperValues: [Float] = []
    var upper: [Int64] = []
    var lowerValues: [Float] = []
    var lower: [Int64] = []
    var pulseRates: [Int64] = []
    var breathingRates: [Int64] = []
    var hrv: [Int64] = []
}

/// Renders a simulated subject at 30 fps through the embedded backend (the default engine) and records, per frame,
/// the timestamps of every sample published.
private func run(seconds: Double, fps: Double = 30) throws -> [FrameOutput] {
    let width = 360, height = 640
    let scene = try SimulatedScene(profile: SubjectProfile(pulseRate: 72, breathingRate: 15, hrvRMSSD: 35, seed: 3))
    let requested: Set<MetricType> = [.pulseRate, .arterialPressureTrace, .breathingRate, .chestBreathing, .abdomenBreathing, .hrv]
    let processor = try EmbeddedVitalsBackend().makeProcessor(configuration: ProcessingConfiguration(requestedMetrics: requested))
    var outputs: [FrameOutput] = []
    for n in 0 ..< Int(seconds * fps) {
        let t = Double(n) / fps
        let us = Int64((t * 1_000_000).rounded())
        let buffer = PixelBuffer.makeNV12(width: width, height: height)
        buffer.withUnsafeStorage { scene.render(at: t, width: width, height: height, into: $0) }
        let metrics = processor.process(buffer, timestampUs: us).metrics
        var out = FrameOutput(index: n, timestampUs: us)
        if let metrics {
            out.pulseWave = metrics.cardio.arterialPressureTrace.map(\.timestamp)
            out.pulseValues = metrics.cardio.arterialPressureTrace.map(\.value)
            out.upperValues = metrics.breathing.upperTrace.map(\.value)
            out.upper = metrics.breathing.upperTrace.map(\.timestamp)
            out.lower = metrics.breathing.lowerTrace.map(\.timestamp)
            out.lowerValues = metrics.breathing.lowerTrace.map(\.value)
            out.pulseRates = metrics.cardio.pulseRate.map(\.timestamp)
            out.breathingRates = metrics.breathing.rate.map(\.timestamp)
            out.hrv = metrics.cardio.hrv.map(\.timestamp)
        }
        outputs.append(out)
    }
    return outputs
}

/// Runs CPU-heavy work on a thread of its own, off the cooperative pool.
private func detached<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
    }
}

/// The frequency (Hz) with the most power in `values` sampled at `rate` Hz, scanned over `range` in 0.01 Hz steps.
private func dominantFrequency(_ values: [Double], rate: Double, in range: ClosedRange<Double>) -> Double {
    let mean = values.reduce(0, +) / Double(max(values.count, 1))
    var best = (frequency: range.lowerBound, power: -1.0)
    var f = range.lowerBound
    while f <= range.upperBound {
        var re = 0.0, im = 0.0
        for (i, v) in values.enumerated() {
            let phase = 2 * Double.pi * f * Double(i) / rate
            re += (v - mean) * cos(phase)
            im += (v - mean) * sin(phase)
        }
        if re * re + im * im > best.power { best = (f, re * re + im * im) }
        f += 0.01
    }
    return best.frequency
}

@Suite("Metrics cadence of the default engine: traces per frame, rates on their interval", .serialized)
struct MetricsCadenceTests {
    @Test("pulse wave and breathing traces arrive within a few frames of the start, then with every frame, and carry the subject's rhythms")
    func tracesFollowFrames() async throws {
        let outputs = try await detached { try run(seconds: 20.5) }
        for (name, series) in [("pulse wave", \FrameOutput.pulseWave), ("upper", \FrameOutput.upper), ("lower", \FrameOutput.lower)] {
            let carrying = outputs.filter { !$0[keyPath: series].isEmpty }
            let first = try #require(carrying.first, "\(name): no sample in 12.5 s")
            #expect(first.index <= 4, "\(name): first sample with frame \(first.index), not within a few frames")
            let gaps = zip(carrying, carrying.dropFirst()).map { $1.index - $0.index }
            #expect((gaps.max() ?? 0) <= 3, "\(name): frames without a sample in between: \(gaps.max() ?? 0)")
            #expect(carrying.count >= outputs.count - 10, "\(name): \(carrying.count) of \(outputs.count) frames")
            // A sample per payload, at its frame's timestamp: bounded, no batches of old samples.
            #expect(carrying.allSatisfy { $0[keyPath: series] == [$0.timestampUs] }, "\(name)")
        }
        // The streamed pulse wave is a pulse wave: its strongest rhythm after the filters settle is the subject's.
        let wave = outputs.dropFirst(120).flatMap(\.pulseValues).map(Double.init)
        let bpm = dominantFrequency(wave, rate: 30, in: 0.7 ... 3.0) * 60
        #expect(abs(bpm - 72) <= 6, "pulse wave rhythm \(bpm) bpm, subject 72")
        // The streamed chest traces are breathing: their strongest rhythm after the filters settle (5 s) is the
        // subject's 15 breaths a minute (0.25 Hz; 15.5 s of trace resolve it to about ±0.06 Hz), and they move.
        for (name, values) in [("upper", \FrameOutput.upperValues), ("lower", \FrameOutput.lowerValues)] {
            let trace = outputs.dropFirst(150).flatMap { $0[keyPath: values] }.map(Double.init)
            let breaths = dominantFrequency(trace, rate: 30, in: 0.1 ... 0.6) * 60
            #expect(abs(breaths - 15) <= 3, "\(name) chest trace rhythm \(breaths) /min, subject 15")
            let spread = (trace.max() ?? 0) - (trace.min() ?? 0)
            #expect(spread > 0.2, "\(name) chest trace spans only \(spread) px")
        }
    }

    @Test("pulse and breathing rates come no more often than once a second, from 10 s; HRV not before 30 s")
    func ratesKeepTheirInterval() async throws {
        let outputs = try await detached { try run(seconds: 14) }
        for (name, series) in [("pulse rate", \FrameOutput.pulseRates), ("breathing rate", \FrameOutput.breathingRates)] {
            let stamps = outputs.flatMap { $0[keyPath: series] }
            let first = try #require(stamps.first, "\(name): none in 14 s")
            #expect(first >= 10_000_000, "\(name) before 10 s of data: \(first) µs")
            let spacing = zip(stamps, stamps.dropFirst()).map { $1 - $0 }
            #expect(spacing.allSatisfy { $0 >= 990_000 }, "\(name) spacing \(spacing)")
            #expect(stamps.count >= 3, "\(name): \(stamps.count) in 14 s")
        }
        #expect(outputs.allSatisfy { $0.hrv.isEmpty })
    }
}
