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
        // The best method's wave over a wider band than the pulse's: its harmonics, and beats in the time domain.
        let wideBand = (low: c.pulseRange.lowerBound / 60, high: min(fs / 2 - 0.3, Self.wideBandTop))
        let wideWave = SignalMath.bandPass(PulseProjection.wave(analysis.best, r: trace.r, g: trace.g, b: trace.b, rate: fs,
                                                                low: wideBand.low, high: wideBand.high),
                                           sampleRate: fs, low: wideBand.low, high: wideBand.high)
        let wide = BandSpectrum(wideWave, rate: fs, low: wideBand.low, high: wideBand.high, step: Self.wideStep).normalized
        // The rate the tracker follows across windows (see PulseTracker), and the SNR of this window at it.
        let frequency = pulseTracker.update(analysis.spectrum, videoLines: videoLines.lines, wide: wide)
        let rate = frequency * 60
        let snr = analysis.spectrum.snr(at: frequency, halfWidth: Self.pulseLineHalfWidth(at: frequency))
        var confidence = Self.confidence(snr: snr)
        if duration < c.pulseWarmUp { confidence = min(confidence, VitalsStability.pulse - 1) }
        // A rate at about half or twice another rhythm that could be the pulse is stable only when the evidence
        // agrees on it (HarmonicCheck); otherwise it is given, never as stable, with the doubt.
        let (harmonic, evidence) = harmonicDoubt(analysis: analysis, wave: wideWave, rate: fs)
        // With the IMU: a rate on a line of the wearer's own rhythm is never stable either.
        let doubt = harmonic ?? (onMotionRhythm(frequency, echoLeft: echoLeft(trace, at: frequency, rate: fs)) ? .motionRhythm : nil)
        result.pulseHarmonic = evidence
        if doubt != nil { confidence = min(confidence, VitalsStability.pulse - 1) }
        result.pulseDoubt = doubt
        let us = Int64((t * 1_000_000).rounded())
        result.pulseRate.append(VitalsRateSample(value: rate, confidence: confidence, timestampUs: us))
        result.pulseMethod = analysis.best
        result.pulseWaveConfidence = confidence
        latestPulse = (rate, confidence, snr)
        pulseDoubt = doubt
        // The newest part of the wave (not emitted before).
        for (i, v) in analysis.wave.enumerated() {
            let ts = start + Double(i) / fs
            if ts > lastEmittedPulseWave, ts > t - 1.5 {
                result.pulseWave.append(VitalsTraceSample(value: v, timestampUs: Int64((ts * 1_000_000).rounded())))
                lastEmittedPulseWave = ts
            }
        }
    }

    /// The top of the wide band (Hz) whose spectrum the tracker keeps for harmonics: the third harmonic of a pulse
    /// at 90 bpm (4.5 Hz), the fastest whose double is still inside the pulse band, with 0.5 Hz of noise around it.
    static let wideBandTop = 5.0
    /// The wide spectrum's grid step, Hz.
    static let wideStep = 0.01
    /// How much weaker (dB) than the best a method may be and still count as reading the other rate of a pair.
    static let methodSplitMargin = 3.0

    /// The doubt about the rate the tracker just chose (``PulseTracker/pair``, judged by ``HarmonicCheck``), with the
    /// engine's own evidence added: the beats in `wave` (the best method's wide-band wave, sampled at `fs`) and
    /// whether a method nearly as strong as the best reads the other rate. A move by about a factor two is in doubt
    /// for ``PulseTracker/harmonicPersistence`` updates whatever the evidence, and any jump of more than the tracker's
    /// prior width (``PulseTracker/jumped``) for its first update. Returns the doubt and the evidence judged.
    func harmonicDoubt(analysis: PulseAnalysis, wave: [Double], rate fs: Double) -> (PulseDoubt?, HarmonicEvidence?) {
        let persisted = pulseTracker.sinceHarmonicMove >= PulseTracker.harmonicPersistence
        let jump: PulseDoubt? = pulseTracker.jumped ? .rateJump : nil
        guard var evidence = pulseTracker.pair else { return (persisted ? jump : .harmonicMove, nil) }
        let passed = SignalMath.bandPass(wave, sampleRate: fs, low: 0.7 * evidence.low, high: min(fs / 2 - 0.3, 1.4 * evidence.high))
        evidence.beatsAtHigh = HarmonicCheck.beatsAtHigh(passed, rate: fs, low: evidence.low, high: evidence.high)
        let other = evidence.choseLow ? evidence.high : evidence.low
        let bestSNR = analysis.methods[analysis.best]?.snr ?? 0
        evidence.methodsOther = analysis.methods.values.contains {
            $0.snr > 0 && $0.snr >= bestSNR - Self.methodSplitMargin && HarmonicCheck.near($0.rate / 60, other)
        }
        return (HarmonicCheck.doubt(evidence) ?? (persisted ? jump : .harmonicMove), evidence)
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
