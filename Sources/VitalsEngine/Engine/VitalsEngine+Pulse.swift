import Foundation

// Pulse: rate, method and the newest part of the wave from the last `pulseWindow` of skin colour.
extension VitalsEngine {
    /// Estimates the pulse over the last `pulseWindow` and appends its rate and the part of the wave not emitted before.
    func pulse(_ result: inout VitalsFrameResult, at t: Double, duration: Double) {
        let c = configuration
        let fs = analysisRate
        let window = Array(samples.drop { t - $0.t > c.pulseWindow })
        let start = window.first!.t
        let trace = skinTrace(window, from: start, to: t, rate: fs, fit: motionFitSamples(at: t))
        findLines(in: trace, rate: fs)
        let analysis = PulseAnalysis.analyse(r: trace.r, g: trace.g, b: trace.b, rate: fs, low: c.pulseRange.lowerBound,
                                             high: c.pulseRange.upperBound, chromaExcess: chromaExcess(of: trace),
                                             chromaMask: videoLines.mask, mask: echoMask(trace, rate: fs))
        // The rate the tracker follows across windows (see PulseTracker), and the SNR of this window at it.
        let frequency = pulseTracker.update(analysis.spectrum, videoLines: videoLines.lines)
        let rate = frequency * 60
        let snr = analysis.spectrum.snr(at: frequency, halfWidth: Self.pulseLineHalfWidth(at: frequency))
        var confidence = Self.confidence(snr: snr)
        if duration < c.pulseWarmUp { confidence = min(confidence, VitalsStability.pulse - 1) }
        let us = Int64((t * 1_000_000).rounded())
        result.pulseRate.append(VitalsRateSample(value: rate, confidence: confidence, timestampUs: us))
        result.pulseMethod = analysis.best
        result.pulseWaveConfidence = confidence
        latestPulse = (rate, confidence, snr)
        // The newest part of the wave (not emitted before).
        for (i, v) in analysis.wave.enumerated() {
            let ts = start + Double(i) / fs
            if ts > lastEmittedPulseWave, ts > t - 1.5 {
                result.pulseWave.append(VitalsTraceSample(value: v, timestampUs: Int64((ts * 1_000_000).rounded())))
                lastEmittedPulseWave = ts
            }
        }
    }

    /// How far either side of the pulse frequency `f` (Hz) its spectral line is taken to reach for the SNR: 0.1 Hz
    /// (6 bpm, the reach of a 12 s window's own resolution) up to 75 bpm, and 8 % of the rate above.
    ///
    /// A heart's rate varies by a share of itself, so its line is as wide in relative terms at any rate and wider in
    /// hertz the faster it beats: a fixed ±0.1 Hz holds a 60 bpm pulse's line but only part of a 135 bpm one, and
    /// read fast pulses' SNR low. On the real-photograph benchmark the engine's rate for pulses of 118–147 bpm was
    /// right (sample MAE 0.6–1.5 bpm) on clips where no sample ever reached the stable confidence (docs/VITALS-ENGINE.md,
    /// *A benchmark that counts what the summary gives, and a pulse line as wide as the pulse*).
    static func pulseLineHalfWidth(at f: Double) -> Double {
        0.1 * max(1, f / 1.25)
    }

    /// Maps spectral SNR (dB) to a 0–100 confidence: −6 dB → 0, 0 dB → 40 (the pulse stable threshold), 9 dB → 100.
    static func confidence(snr: Double) -> Double {
        let v = snr < 0 ? (snr + 6) / 6 * 40 : 40 + snr / 9 * 60
        return min(100, max(0, v))
    }
}
