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
                                             chromaExcess: chromaExcess(of: trace), chromaMask: videoLines.mask)
        let f0 = pulse.rate / 60
        let wideBand = (low: 0.6, high: min(4, fs / 2 - 0.5))
        let shapeBand = (low: max(0.5, f0 * 0.5), high: min(fs / 2 - 0.5, f0 * 3))
        let raw = PulseProjection.wave(analysis.best, r: r, g: g, b: b, rate: fs, low: wideBand.low, high: wideBand.high)
        let wave = SignalMath.bandPass(raw, sampleRate: fs, low: max(0.5, f0 * 0.6), high: min(fs / 2 - 0.5, f0 * 1.6))
        let shape = SignalMath.bandPass(raw, sampleRate: fs, low: shapeBand.low, high: shapeBand.high)
        let beats = HRVMeasures.beats(wave: wave, shape: shape, shapeBandShare: (shapeBand.high - shapeBand.low) / (fs / 2),
                                      rate: fs, expectedRate: pulse.rate)
        let (runs, accepted) = HRVMeasures.intervals(beats: beats.times, rate: fs, expectedRate: pulse.rate)
        // Camera noise jitters the beat times; its share of the interval variation is removed (see beatTimingNoise).
        var split = 0.0
        if let parts = splitShapes(window, from: start, to: t, method: analysis.best, wide: wideBand, band: shapeBand) {
            split = HRVMeasures.splitTimingNoise(beats: beats.times, first: parts.forehead, second: parts.cheeks,
                                                 firstShare: parts.foreheadShare, rate: fs, expectedRate: pulse.rate)
        }
        let lag = HRVMeasures.timingNoise(runs: runs)
        let noise = Self.beatTimingNoise(intervals: lag, split: split, bound: beats.timingBound)
        guard let measures = HRVMeasures.from(runs: runs, acceptedFraction: accepted, timingNoise: noise) else { return }
        let quality = min(1, max(0, (pulse.snr + 2) / 8))
        var confidence = 100 * quality * max(0, (accepted - 0.5) * 2)
        if duration < c.hrvWarmUp { confidence = min(confidence, VitalsStability.hrv - 1) }
        // When the noise removed is nearly all of the intervals' variation, what is left is a small difference of
        // two large, uncertain numbers: the value is given, never as stable.
        if let uncorrected = HRVMeasures.from(runs: runs), Self.isMostlyTimingNoise(rmssd: uncorrected.rmssd, timingNoise: noise) {
            confidence = min(confidence, VitalsStability.hrv - 1)
        }
        // The least error any correction of this noise leaves (HRVMeasures.rmssdFloor): above the bound the value
        // is given, never as stable. Nor is HRV timed at a pulse rate in doubt (a half or double rate).
        if !(measures.rmssdFloor <= Self.rmssdFloorBound) || pulseDoubt != nil {
            confidence = min(confidence, VitalsStability.hrv - 1)
        }
        result.hrv.append(VitalsHRVSample(measures: measures, confidence: confidence, timestampUs: Int64((t * 1_000_000).rounded())))
    }

    /// The pulse wave's beat shape (the `band` of `method`'s wave over `wide`, as for the whole skin) taken from
    /// the forehead alone and from the cheeks alone (see ``SkinParts``), with the forehead's mean share of the
    /// pixels; nil when a sample of the window lacks the regions.
    private func splitShapes(_ window: [Sample], from start: Double, to end: Double, method: PulseMethod,
                             wide: (low: Double, high: Double), band: (low: Double, high: Double))
        -> (forehead: [Double], cheeks: [Double], foreheadShare: Double)? {
        let parts = window.compactMap(\.parts)
        guard parts.count == window.count, !parts.isEmpty, parts.allSatisfy({ $0.colours.count >= 2 }) else { return nil }
        let fs = analysisRate
        func shape(_ colour: (SkinParts) -> RGB) -> [Double] {
            let part = zip(window, parts).map { sample, regions in
                var s = sample
                s.rgb = colour(regions)
                return s
            }
            let trace = skinTrace(part, from: start, to: end, rate: fs)
            let raw = PulseProjection.wave(method, r: trace.r, g: trace.g, b: trace.b, rate: fs, low: wide.low, high: wide.high)
            return SignalMath.bandPass(raw, sampleRate: fs, low: band.low, high: band.high)
        }
        let cheeks = shape { regions in
            // The cheeks' pixel-weighted mean colour.
            var sum = RGB(r: 0, g: 0, b: 0), weight = 0.0
            for (colour, share) in zip(regions.colours.dropFirst(), regions.shares.dropFirst()) {
                sum.r += colour.r * share; sum.g += colour.g * share; sum.b += colour.b * share
                weight += share
            }
            return weight > 0 ? RGB(r: sum.r / weight, g: sum.g / weight, b: sum.b / weight) : sum
        }
        return (shape { $0.colours[0] }, cheeks, SignalMath.mean(parts.map { $0.shares[0] }))
    }

    /// The variance (ms²) of the beat-timing errors to remove from the intervals, from three estimates (each ms²):
    /// what the intervals' anti-correlation shows (`intervals`, ``HRVMeasures/timingNoise(runs:)``), what the
    /// forehead and the cheeks disagree on (`split`, ``HRVMeasures/splitTimingNoise(beats:first:second:firstShare:rate:expectedRate:)``)
    /// and the beats' own Cramér–Rao `bound` (``HRVMeasures/refine(_:on:period:bandShare:)``, times ``timingBoundFactor``).
    ///
    /// The largest of them, with the split trusted up to ``splitTrust`` times the standard deviation the other two
    /// allow: the split sees noise the intervals' rhythm hides, but a region with less pulse than the other (a brow
    /// in shadow, hair over the forehead) times its beats worse than its share of the pixels says, and then the split
    /// reads more noise than the whole skin's beats carry (docs/VITALS-ENGINE.md, *HRV after HEVC*).
    static func beatTimingNoise(intervals: Double, split: Double, bound: Double) -> Double {
        let others = max(intervals, timingBoundFactor * bound, 0)
        return max(others, min(split, splitTrust * splitTrust * others))
    }

    /// How many times the standard deviation of the other estimates the split's may reach (see ``beatTimingNoise(intervals:split:bound:)``).
    static let splitTrust = 2.0

    /// Whether the timing noise removed (ms²) is at least ``noiseShareLimit`` of the uncorrected RMSSD² (6σ² of
    /// RMSSD²), which leaves too small a remainder to call stable.
    static func isMostlyTimingNoise(rmssd: Double, timingNoise: Double) -> Bool {
        6 * max(0, timingNoise) >= noiseShareLimit * rmssd * rmssd
    }

    /// The share of the uncorrected RMSSD² that the timing noise may take before an HRV value is never stable.
    static let noiseShareLimit = 0.9

    /// The largest floor under the RMSSD error (ms, ``HRVMeasures/rmssdFloor``: what the beats' timing noise leaves
    /// any correction) at which an HRV value may be stable. The HRV target is an RMSSD error of 12 ms: a
    /// window whose beats alone force a larger mean error cannot meet it, however well the noise is corrected
    /// (docs/VITALS-ENGINE.md, *HRV where the beats allow it*).
    package static let rmssdFloorBound = 12.0

    /// The share of the beats' Cramér–Rao bound (``HRVMeasures/refine(_:on:period:bandShare:)``) taken as timing
    /// noise. On white noise the cross-correlation times beats within a quarter of the bound in variance
    /// (`EstimatorTests`), but on real video the residual the bound is read from also holds the beats' own changes
    /// of shape, so the whole bound over-corrects. Fitted on the real-photograph clips and the simulator (8 subjects)
    /// at 0.2–0.5: from 0.3 down every uncompressed photograph clip from 75 px ends stable, lower values bring those
    /// clips' RMSSD closer and the simulator's 30 fps subjects' further, and 0.25 gave the 15 fps subjects the
    /// lowest error (docs/VITALS-ENGINE.md, *Beat-timing noise*).
    static let timingBoundFactor = 0.25
}
