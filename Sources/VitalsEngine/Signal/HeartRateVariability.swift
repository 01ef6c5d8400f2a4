import Foundation

/// Heart-rate variability from a pulse wave: beats by peak picking with sub-sample (parabolic) timing, NN intervals
/// cleaned of ectopic/missed beats, then time-domain measures and Baevsky's stress index.
public struct HRVMeasures: Sendable, Hashable {
    /// Root mean square of successive NN differences, ms.
    public var rmssd: Double
    /// Standard deviation of NN intervals, ms.
    public var sdnn: Double
    /// Mean NN interval, ms.
    public var meanNN: Double
    /// Baevsky stress index AMo / (2 · Mo · MxDMn) with AMo in %, Mo and MxDMn in seconds (50 ms histogram bins).
    public var baevsky: Double
    /// NN intervals used.
    public var intervalCount: Int
    /// Fraction of detected intervals that passed the cleaning, 0–1.
    public var acceptedFraction: Double
    /// RMSSD before the beat-timing noise was removed, ms: what the detected beats' intervals show.
    public var uncorrectedRMSSD: Double = 0
    /// The variance of the beat-timing errors removed, ms² (6 times it from RMSSD², 2 times from SDNN²).
    public var timingNoise: Double = 0
    /// Successive interval pairs RMSSD was taken over.
    public var pairCount: Int = 0

    /// Computes the measures from NN intervals in milliseconds (already cleaned, consecutive); nil with fewer than 3.
    public static func from(intervals nn: [Double], acceptedFraction: Double = 1) -> HRVMeasures? {
        from(runs: [nn], acceptedFraction: acceptedFraction)
    }

    /// Computes the measures from runs of consecutive NN intervals in milliseconds: successive differences are taken
    /// only inside a run (never across a rejected beat), the other measures over all intervals; nil with fewer than
    /// three intervals or no successive pair.
    ///
    /// - Parameter timingNoise: the variance (ms²) of independent errors in the beat times, if known. Each error
    ///   lengthens one interval and shortens the next, adding 6·σ² to RMSSD² and 2·σ² to SDNN²; both are removed.
    public static func from(runs: [[Double]], acceptedFraction: Double = 1, timingNoise: Double = 0) -> HRVMeasures? {
        let nn = runs.flatMap { $0 }
        guard nn.count >= 3 else { return nil }
        var sq = 0.0, pairs = 0
        for run in runs where run.count >= 2 {
            for i in 1 ..< run.count {
                sq += (run[i] - run[i - 1]) * (run[i] - run[i - 1])
                pairs += 1
            }
        }
        guard pairs > 0 else { return nil }
        let mean = SignalMath.mean(nn)
        let noise = max(0, timingNoise)
        let spread = SignalMath.standardDeviation(nn)
        let sdnn = max(0, spread * spread - 2 * noise).squareRoot()
        let rmssd = max(0, sq / Double(pairs) - 6 * noise).squareRoot()
        // Baevsky: histogram with 50 ms bins.
        var bins: [Int: Int] = [:]
        for v in nn { bins[Int((v / 50).rounded(.down)), default: 0] += 1 }
        let (modeBin, modeCount) = bins.max { $0.value < $1.value || ($0.value == $1.value && $0.key > $1.key) }!
        let mo = (Double(modeBin) * 50 + 25) / 1000
        let amo = Double(modeCount) / Double(nn.count) * 100
        let range = max((nn.max()! - nn.min()!) / 1000, 0.05)
        return HRVMeasures(rmssd: rmssd, sdnn: sdnn, meanNN: mean, baevsky: amo / (2 * mo * range),
                           intervalCount: nn.count, acceptedFraction: acceptedFraction,
                           uncorrectedRMSSD: (sq / Double(pairs)).squareRoot(), timingNoise: noise, pairCount: pairs)
    }

    /// The floor under this window's RMSSD error, ms: ``leastRMSSDError(rmssd:timingNoise:pairs:)`` for the noise
    /// removed (``timingNoise``) over ``pairCount`` pairs, taking the corrected ``rmssd`` for the truth; NaN without
    /// pairs. A value whose floor is above the engine's bound is never stable (docs/VITALS-ENGINE.md).
    public var rmssdFloor: Double {
        Self.leastRMSSDError(rmssd: rmssd, timingNoise: timingNoise, pairs: pairCount)
    }

    /// The least mean absolute error (ms) RMSSD keeps even when beat-timing noise is removed exactly: a floor under
    /// any noise correction for a window whose beats carry independent timing errors of variance `timingNoise` (ms²),
    /// with `rmssd` the window's true RMSSD (ms) and `pairs` its successive interval pairs.
    ///
    /// Each successive difference carries n = e₊ − 2e + e₋ of the beats' errors e (variance 6σ², lag-one covariance
    /// −4σ², lag two σ²), so the mean square of M differences, less 6σ², misses the window's own R² by
    /// 2·mean(h·n) + mean(n²) − 6σ², h the heart's differences. The two parts are uncorrelated, and the second alone
    /// has variance 140σ⁴ / M whatever the heart does; the floor averages the square root's error over that spread
    /// (taken as normal; a negative remainder reads 0, as the estimator clamps it). Where the noise dominates, the
    /// heart's part adds little and the floor is the error itself (`EstimatorTests` simulates both).
    public static func leastRMSSDError(rmssd: Double, timingNoise: Double, pairs: Int) -> Double {
        guard pairs > 0, rmssd.isFinite, timingNoise.isFinite else { return .nan }
        let r2 = rmssd * rmssd, s2 = max(0, timingNoise)
        let spread = (140 * s2 * s2 / Double(pairs)).squareRoot()
        guard spread > 0 else { return 0 }
        // Midpoint rule over ±6 standard deviations of a standard normal.
        let steps = 480
        var total = 0.0
        for i in 0 ..< steps {
            let z = -6 + 12 * (Double(i) + 0.5) / Double(steps)
            let weight = exp(-z * z / 2) / (2 * Double.pi).squareRoot() * 12 / Double(steps)
            total += weight * abs(max(0, r2 + spread * z).squareRoot() - abs(rmssd))
        }
        return total
    }

    /// The variance (ms²) of beat-timing errors, read from the intervals themselves: an error in one beat's time
    /// moves the interval before it and the interval after it in opposite directions, so timing noise makes
    /// neighbouring intervals anti-correlated (lag-one autocovariance −σ²), while heart rhythm makes them alike or
    /// independent. The estimate is the negated lag-one autocovariance, zero when that is positive; heart rhythm that
    /// is itself positively correlated only makes it smaller (the correction errs on the side of none).
    public static func timingNoise(runs: [[Double]]) -> Double {
        let nn = runs.flatMap { $0 }
        guard nn.count >= 8 else { return 0 }
        let mean = SignalMath.mean(nn)
        var covariance = 0.0, pairs = 0
        for run in runs where run.count >= 2 {
            for i in 1 ..< run.count {
                covariance += (run[i] - mean) * (run[i - 1] - mean)
                pairs += 1
            }
        }
        guard pairs >= 6 else { return 0 }
        return max(0, -covariance / Double(pairs))
    }

    /// Detects beats in a uniformly sampled pulse wave and returns the cleaned NN intervals in ms, as runs of
    /// consecutive accepted intervals, the accepted fraction, and the beat times' precision when it could be judged;
    /// `expectedRate` (bpm) sets the refractory distance. ``beats(wave:shape:shapeBandShare:rate:expectedRate:)`` then
    /// ``intervals(beats:rate:expectedRate:)``.
    static func intervals(wave: [Double], shape: [Double]? = nil, shapeBandShare: Double = 1, rate fs: Double, expectedRate: Double)
        -> (runs: [[Double]], accepted: Double, timingBound: Double) {
        let found = beats(wave: wave, shape: shape, shapeBandShare: shapeBandShare, rate: fs, expectedRate: expectedRate)
        let cleaned = intervals(beats: found.times, rate: fs, expectedRate: expectedRate)
        return (cleaned.runs, cleaned.accepted, found.timingBound)
    }

    /// Finds the beats of a uniformly sampled pulse wave: their times in samples, and (with `shape`) how precise
    /// those times can be; `expectedRate` (bpm) sets the refractory distance.
    ///
    /// Beats are found as peaks of `wave` (narrow band around the pulse) and then timed on `shape` (a wider band that
    /// keeps the beat's form) by cross-correlating each beat with the average beat: the whole beat votes on its time,
    /// not the three samples around a peak, which keeps camera noise out of the intervals. `timingBound` is the
    /// median over the beats of the Cramér–Rao bound on that timing (ms², see ``refine(_:on:period:bandShare:)``), 0
    /// without `shape`; `shapeBandShare` is the share of the band from 0 to half of `fs` that `shape` was
    /// band-passed to.
    static func beats(wave: [Double], shape: [Double]? = nil, shapeBandShare: Double = 1, rate fs: Double, expectedRate: Double)
        -> (times: [Double], timingBound: Double) {
        guard wave.count > 5, expectedRate > 0, fs > 0 else { return ([], 0) }
        let period = 60 / expectedRate * fs
        let peaks = peakPositions(wave, minDistance: max(2, Int(0.6 * period)))
        guard let shape, shape.count == wave.count else { return (peaks, 0) }
        let refined = refine(peaks, on: shape, period: period, bandShare: shapeBandShare)
        return (refined.peaks, refined.timingBound * (1000 / fs) * (1000 / fs))
    }

    /// The NN intervals (ms) between successive beats (times in samples at `fs`), cleaned of ectopic and missed
    /// beats (more than 25 % from the median interval, or from the expected one when the median is itself far from
    /// it), as runs of consecutive accepted intervals, and the fraction accepted.
    static func intervals(beats peaks: [Double], rate fs: Double, expectedRate: Double) -> (runs: [[Double]], accepted: Double) {
        guard peaks.count >= 3, expectedRate > 0, fs > 0 else { return ([], 0) }
        var raw: [Double] = []
        for k in 1 ..< peaks.count { raw.append((peaks[k] - peaks[k - 1]) / fs * 1000) }
        let med = SignalMath.median(raw)
        let expected = 60_000 / expectedRate
        let reference = abs(med - expected) < 0.2 * expected ? med : expected
        var runs: [[Double]] = [[]]
        var acceptedCount = 0
        for v in raw {
            if abs(v - reference) <= 0.25 * reference {
                runs[runs.count - 1].append(v)
                acceptedCount += 1
            } else if !runs[runs.count - 1].isEmpty {
                runs.append([])
            }
        }
        return (runs.filter { !$0.isEmpty }, Double(acceptedCount) / Double(raw.count))
    }

    /// The variance (ms²) of the beat-timing errors of a wave taken from the whole skin, read from two parts of it
    /// that share the pulse but not the camera's noise (the forehead and the cheeks): each beat of `beats` is timed
    /// again on each part's `shape`, and the spread of the two times' difference is the sum of the parts' timing
    /// variances. For noise that averages out over pixels, a part holding the share `p` of the pixels times with
    /// variance σ²/p where the whole times with σ², so the whole's variance is p(1 − p) times the difference's.
    ///
    /// Unlike ``timingNoise(runs:)`` this does not depend on how the heart's own rhythm is correlated, and unlike the
    /// bound of ``refine(_:on:period:bandShare:)`` it sees noise that is not white (a codec's errors carried from frame to
    /// frame); noise the two parts share (a whole block of video held still) stays unseen. The spread is taken
    /// robustly (1.4826 × the median absolute deviation, which a beat timed on another cycle in one part does not
    /// move); 0 with fewer than eight beats timed in both, or parts of unequal length.
    static func splitTimingNoise(beats: [Double], first: [Double], second: [Double], firstShare p: Double,
                                 rate fs: Double, expectedRate: Double) -> Double {
        guard first.count == second.count, !first.isEmpty, p > 0, p < 1, fs > 0, expectedRate > 0 else { return 0 }
        let period = 60 / expectedRate * fs
        let a = refine(beats, on: first, period: period)
        let b = refine(beats, on: second, period: period)
        var differences: [Double] = []
        for k in beats.indices where a.timed[k] && b.timed[k] { differences.append(a.peaks[k] - b.peaks[k]) }
        guard differences.count >= 8 else { return 0 }
        let centre = SignalMath.median(differences)
        let spread = 1.4826 * SignalMath.median(differences.map { abs($0 - centre) })
        return p * (1 - p) * spread * spread * (1000 / fs) * (1000 / fs)
    }

    /// Positive local maxima at least `minDistance` samples apart (the highest within reach wins), with parabolic
    /// sub-sample positions.
    static func peakPositions(_ wave: [Double], minDistance: Int) -> [Double] {
        let n = wave.count
        var peaks: [Double] = []
        var lastIndex = -minDistance
        var i = 1
        while i < n - 1 {
            if wave[i] > 0, wave[i] >= wave[i - 1], wave[i] > wave[i + 1] {
                let windowEnd = min(n - 1, i + minDistance)
                var best = i
                for j in i ... windowEnd where wave[j] > wave[best] { best = j }
                if best == i || best == windowEnd, i - lastIndex >= minDistance || peaks.isEmpty {
                    peaks.append(Double(i) + parabolicShift(wave[i - 1], wave[i], wave[i + 1]))
                    lastIndex = i
                }
            }
            i += 1
        }
        return peaks
    }

    /// Re-times each beat by the lag that best matches the average beat of `shape` around it, and judges how
    /// precise that timing can be.
    ///
    /// `timingBound` (samples², 0 when no beat could be judged) is the median over the beats of the Cramér–Rao bound
    /// for a delay measured against a known template in white noise: the noise's level over the energy of the scaled
    /// template's slope. Noise a beat's timing cannot escape, so the least that beat-time errors add to the
    /// intervals; read from the wave itself, it does not depend on how the heart's own rhythm is correlated (see
    /// ``timingNoise(runs:)``). The noise's level is the beat's residual variance (what the scaled template leaves)
    /// over `bandShare`, the share of the band from 0 to half the sampling rate that `shape` was band-passed to: the
    /// residual holds only that share of white noise's variance, so without it the bound would read 2–10 times low,
    /// by an amount that depends on the pulse rate and the frame rate.
    /// `timed[k]` says whether beat `k` was re-timed (a beat too near either end keeps its peak's time).
    static func refine(_ peaks: [Double], on shape: [Double], period: Double, bandShare: Double = 1)
        -> (peaks: [Double], timed: [Bool], timingBound: Double) {
        let n = shape.count
        let half = max(2, Int(0.5 * period))
        let maxLag = max(1, Int(0.2 * period))
        let centres = peaks.map { Int($0.rounded()) }
        var template = [Double](repeating: 0, count: 2 * half + 1)
        var used = 0
        for c in centres where c - half >= 0 && c + half < n {
            for j in -half ... half { template[j + half] += shape[c + j] }
            used += 1
        }
        guard used >= 3 else { return (peaks, peaks.map { _ in false }, 0) }
        let m = SignalMath.mean(template)
        for j in template.indices { template[j] = (template[j] / Double(used)) - m / Double(used) }
        let templateEnergy = template.reduce(0) { $0 + $1 * $1 }
        let slopeEnergy = Self.slopeEnergy(template)
        var bounds: [Double] = []
        var refined: [Double] = []
        var timed: [Bool] = []
        for (k, c) in centres.enumerated() {
            guard c - half - maxLag - 1 >= 0, c + half + maxLag + 1 < n else {
                refined.append(peaks[k])
                timed.append(false)
                continue
            }
            timed.append(true)
            var scores = [Double](repeating: 0, count: 2 * maxLag + 3)
            for lag in -(maxLag + 1) ... (maxLag + 1) {
                var s = 0.0
                for j in -half ... half { s += template[j + half] * shape[c + lag + j] }
                scores[lag + maxLag + 1] = s
            }
            var best = 1
            for i in 1 ... 2 * maxLag + 1 where scores[i] > scores[best] { best = i }
            let shift = parabolicShift(scores[best - 1], scores[best], scores[best + 1])
            refined.append(Double(c + best - maxLag - 1) + shift)
            // The beat as the template scaled (least squares at the chosen whole-sample lag), and what is left.
            let at = c + best - maxLag - 1
            guard templateEnergy > 0, slopeEnergy > 0 else { continue }
            let scale = scores[best] / templateEnergy
            guard scale > 0 else { continue }
            var residual = 0.0
            for j in -half ... half {
                let e = shape[at + j] - scale * template[j + half]
                residual += e * e
            }
            bounds.append(residual / Double(2 * half + 1) / min(1, max(0.01, bandShare)) / (scale * scale * slopeEnergy))
        }
        return (refined, timed, bounds.isEmpty ? 0 : SignalMath.median(bounds))
    }

    /// The energy of a beat's slope, Σ s′(n)² in (units per sample)², taken in the frequency domain (Parseval,
    /// Σ ω²|S(ω)|² / N over the beat as one period): a finite difference would miss most of a sharp beat's slope at
    /// 15 fps (at 6 Hz a central difference keeps a quarter of it) and so overstate the timing bound.
    static func slopeEnergy(_ beat: [Double]) -> Double {
        let n = beat.count
        guard n >= 3 else { return 0 }
        var energy = 0.0
        for k in 1 ... n / 2 {
            var re = 0.0, im = 0.0
            let w = 2 * Double.pi * Double(k) / Double(n)
            for (j, v) in beat.enumerated() {
                re += v * cos(w * Double(j))
                im -= v * sin(w * Double(j))
            }
            // Frequencies k and n − k carry the same power; at k = n / 2 (n even) there is one of them.
            let pair = (2 * k == n) ? 1.0 : 2.0
            energy += pair * w * w * (re * re + im * im)
        }
        return energy / Double(n)
    }

    /// The offset (−0.5…0.5) of the vertex of the parabola through three equally spaced values around a maximum.
    static func parabolicShift(_ a: Double, _ b: Double, _ c: Double) -> Double {
        let d = a - 2 * b + c
        return d != 0 ? max(-0.5, min(0.5, 0.5 * (a - c) / d)) : 0
    }
}
