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
        let snr = analysis.spectrum.snr(at: frequency, halfWidth: 0.1)
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

    /// Maps spectral SNR (dB) to a 0–100 confidence: −6 dB → 0, 0 dB → 40 (the pulse stable threshold), 9 dB → 100.
    static func confidence(snr: Double) -> Double {
        let v = snr < 0 ? (snr + 6) / 6 * 40 : 40 + snr / 9 * 60
        return min(100, max(0, v))
    }
}
