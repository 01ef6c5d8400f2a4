import Foundation

// HRV: beats detected in the pulse wave over the last `hrvWindow`.
extension VitalsEngine {
    func hrv(_ result: inout VitalsFrameResult, at t: Double, duration: Double, pulse: (rate: Double, confidence: Double, snr: Double)) {
        let c = configuration
        let fs = analysisRate
        let window = Array(samples.drop { t - $0.t > c.hrvWindow })
        guard let start = window.first?.t else { return }
        let trace = skinTrace(window, from: start, to: t, rate: fs)
        let (r, g, b) = (trace.r, trace.g, trace.b)
        // The method that is best over the whole window, band-passed around the pulse with room for its variability.
        let analysis = PulseAnalysis.analyse(r: r, g: g, b: b, rate: fs, low: c.pulseRange.lowerBound, high: c.pulseRange.upperBound,
                                             chromaExcess: trace.chromaExcess, chromaMask: videoLines.mask)
        let f0 = pulse.rate / 60
        let raw = PulseProjection.wave(analysis.best, r: r, g: g, b: b, rate: fs, low: 0.6, high: min(4, fs / 2 - 0.5))
        let wave = SignalMath.bandPass(raw, sampleRate: fs, low: max(0.5, f0 * 0.6), high: min(fs / 2 - 0.5, f0 * 1.6))
        let shape = SignalMath.bandPass(raw, sampleRate: fs, low: max(0.5, f0 * 0.5), high: min(fs / 2 - 0.5, f0 * 3))
        let (runs, accepted, timingBound) = HRVMeasures.intervals(wave: wave, shape: shape, rate: fs, expectedRate: pulse.rate)
        // Camera noise jitters the beat times; its share of the interval variation is removed: what the intervals'
        // anti-correlation shows (see timingNoise), and at least what the beats' own noise allows (see refine).
        let noise = max(HRVMeasures.timingNoise(runs: runs), Self.timingBoundFactor * timingBound)
        guard let measures = HRVMeasures.from(runs: runs, acceptedFraction: accepted, timingNoise: noise) else { return }
        let quality = min(1, max(0, (pulse.snr + 2) / 8))
        var confidence = 100 * quality * max(0, (accepted - 0.5) * 2)
        if duration < c.hrvWarmUp { confidence = min(confidence, VitalsStability.hrv - 1) }
        result.hrv.append(VitalsHRVSample(measures: measures, confidence: confidence, timestampUs: Int64((t * 1_000_000).rounded())))
    }

    /// How far the beat-timing errors exceed their Cramér–Rao bound: the bound holds for an ideal estimator in
    /// white noise; the cross-correlation on a band-passed, codec- and motion-touched wave does worse. Calibrated
    /// on the simulator (8 subjects) and the real-photograph clips: 1 (the bound alone) already halves the bias of
    /// RMSSD on small faces, 2 fits both sets best, 3–4 over-correct (docs/VITALS-ENGINE.md, *Beat-timing noise*).
    static let timingBoundFactor = 2.0
}
