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

    /// Computes the measures from NN intervals in milliseconds (already cleaned); nil with fewer than 3.
    public static func from(intervals nn: [Double], acceptedFraction: Double = 1) -> HRVMeasures? {
        guard nn.count >= 3 else { return nil }
        let mean = SignalMath.mean(nn)
        let sdnn = SignalMath.standardDeviation(nn)
        var sq = 0.0
        for i in 1 ..< nn.count { sq += (nn[i] - nn[i - 1]) * (nn[i] - nn[i - 1]) }
        let rmssd = (sq / Double(nn.count - 1)).squareRoot()
        // Baevsky: histogram with 50 ms bins.
        var bins: [Int: Int] = [:]
        for v in nn { bins[Int((v / 50).rounded(.down)), default: 0] += 1 }
        let (modeBin, modeCount) = bins.max { $0.value < $1.value || ($0.value == $1.value && $0.key > $1.key) }!
        let mo = (Double(modeBin) * 50 + 25) / 1000
        let amo = Double(modeCount) / Double(nn.count) * 100
        let range = max((nn.max()! - nn.min()!) / 1000, 0.05)
        return HRVMeasures(rmssd: rmssd, sdnn: sdnn, meanNN: mean, baevsky: amo / (2 * mo * range),
                           intervalCount: nn.count, acceptedFraction: acceptedFraction)
    }

    /// Detects beats in a uniformly sampled pulse wave and returns the cleaned NN intervals in ms plus the accepted
    /// fraction; `expectedRate` (bpm) sets the refractory distance.
    static func intervals(wave: [Double], rate fs: Double, expectedRate: Double) -> (nn: [Double], accepted: Double) {
        let n = wave.count
        guard n > 5, expectedRate > 0 else { return ([], 0) }
        let period = 60 / expectedRate * fs
        let minDistance = max(2, Int(0.6 * period))
        var peaks: [Double] = []
        var lastIndex = -minDistance
        var i = 1
        while i < n - 1 {
            if wave[i] > 0, wave[i] >= wave[i - 1], wave[i] > wave[i + 1] {
                // Keep the highest maximum within the refractory distance.
                let windowEnd = min(n - 1, i + minDistance)
                var best = i
                for j in i ... windowEnd where wave[j] > wave[best] { best = j }
                if best == i || best == windowEnd {
                    if i - lastIndex >= minDistance || (peaks.isEmpty) {
                        let a = wave[i - 1], b = wave[i], c = wave[i + 1]
                        let d = a - 2 * b + c
                        let shift = d != 0 ? max(-0.5, min(0.5, 0.5 * (a - c) / d)) : 0
                        peaks.append(Double(i) + shift)
                        lastIndex = i
                    }
                }
            }
            i += 1
        }
        guard peaks.count >= 3 else { return ([], 0) }
        var raw: [Double] = []
        for k in 1 ..< peaks.count { raw.append((peaks[k] - peaks[k - 1]) / fs * 1000) }
        let med = SignalMath.median(raw)
        let expected = 60_000 / expectedRate
        let reference = abs(med - expected) < 0.2 * expected ? med : expected
        var accepted: [Double] = []
        var acceptedCount = 0
        for v in raw where abs(v - reference) <= 0.25 * reference {
            accepted.append(v)
            acceptedCount += 1
        }
        return (accepted, Double(acceptedCount) / Double(raw.count))
    }
}
