import Foundation

// Colour traces: the skin's colour on a uniform grid with the motion echo removed, and the background's chroma
// noise: what the pulse estimators and HRV both start from.
extension VitalsEngine {
    /// The sampling rate the traces are resampled to: the input rate rounded, at most 30 Hz.
    var analysisRate: Double {
        guard frameTimes.count >= 3, let first = frameTimes.first, let last = frameTimes.last, last > first else { return 30 }
        return min(30, max(8, (Double(frameTimes.count - 1) / (last - first)).rounded()))
    }

    /// The skin's colour over `window` on a uniform grid at `rate`, with the face's motion echo removed in the
    /// pulse band: what the pulse estimators and HRV both start from.
    func skinTrace(_ window: [Sample], from start: Double, to end: Double, rate fs: Double) -> (r: [Double], g: [Double], b: [Double]) {
        let trace = Self.colourTrace(window, from: start, to: end, rate: fs)
        let motion = Self.motionTrace(window, from: start, rate: fs, count: trace.r.count)
        let band = pulseBand(rate: fs)
        let cleaned = Self.removeMotion([trace.r, trace.g, trace.b], motion: motion, rate: fs, low: band.low, high: band.high)
        return (cleaned[0], cleaned[1], cleaned[2])
    }

    /// The pulse range in Hz, its top kept below the Nyquist frequency of `rate`.
    private func pulseBand(rate fs: Double) -> (low: Double, high: Double) {
        (configuration.pulseRange.lowerBound / 60, min(configuration.pulseRange.upperBound / 60, fs / 2 - 0.1))
    }

    /// The background's chroma-to-luma noise ratio over `window` in the pulse band (see
    /// ``chromaExcess(times:colours:from:to:rate:low:high:)``).
    func chromaExcess(_ window: [Sample], from start: Double, to end: Double, rate fs: Double) -> Double {
        let valid = window.compactMap { s in s.backgroundRGB.map { (t: s.t, colour: $0) } }
        guard valid.count * 4 >= window.count * 3 else { return 0 }
        let band = pulseBand(rate: fs)
        return Self.chromaExcess(times: valid.map(\.t), colours: valid.map(\.colour), from: start, to: end, rate: fs,
                                 low: band.low, high: band.high)
    }

    /// How much more the video's chroma varies than its luma in a still background, between `low` and `high` Hz:
    /// the band-passed standard deviation of the worse of Cb and Cr over that of Y (BT.601 scaling, so the units
    /// match). 0 when there is too little to judge by or the background does not vary at all.
    ///
    /// A camera's own noise and changing light move luma at least as much as chroma (uncompressed video measures
    /// 0.1–0.5); a codec starved of bits spends little on chroma, which then steps with its refresh rhythm (HEVC at
    /// 2 Mbit/s measures 1–3). The pulse estimators mark down the methods that read chroma by this ratio.
    static func chromaExcess(times: [Double], colours: [RGB], from start: Double, to end: Double, rate: Double,
                             low: Double, high: Double) -> Double {
        guard times.count == colours.count, times.count > Int(4 * rate), end > start else { return 0 }
        let count = Int((end - start) * rate) + 1
        func spread(_ f: (RGB) -> Double) -> Double {
            let trace = SignalMath.resample(times: times, values: colours.map(f), start: start, rate: rate, count: count)
            return SignalMath.standardDeviation(SignalMath.bandPass(trace, sampleRate: rate, low: low, high: high))
        }
        let y = spread(\.luma)
        let cb = spread { ($0.b - $0.luma) / 1.772 }, cr = spread { ($0.r - $0.luma) / 1.402 }
        guard y > 1e-9 else { return 0 }
        return max(cb, cr) / y
    }

    /// The skin's mean red, green and blue, resampled onto a uniform grid from `start` through `end` at `rate`.
    private static func colourTrace(_ window: [Sample], from start: Double, to end: Double, rate: Double) -> (r: [Double], g: [Double], b: [Double]) {
        let count = Int((end - start) * rate) + 1
        let times = window.map(\.t)
        return (SignalMath.resample(times: times, values: window.map(\.rgb.r), start: start, rate: rate, count: count),
                SignalMath.resample(times: times, values: window.map(\.rgb.g), start: start, rate: rate, count: count),
                SignalMath.resample(times: times, values: window.map(\.rgb.b), start: start, rate: rate, count: count))
    }

    /// The face-motion signals of `window` on the colour trace's grid (see `Sample.motion`).
    private static func motionTrace(_ window: [Sample], from start: Double, rate: Double, count: Int) -> [[Double]] {
        let times = window.map(\.t)
        return (0 ..< 4).map { k in
            SignalMath.resample(times: times, values: window.map { $0.motion[k] }, start: start, rate: rate, count: count)
        }
    }

    /// Removes from each channel what the motion signals explain in the pulse band `low`–`high` Hz (least squares
    /// on the band-passed signals), so that shading sliding through the skin regions does not read as pulse.
    /// Motion signals that barely move (band-passed σ ≤ 0.02 px) are left out.
    static func removeMotion(_ channels: [[Double]], motion: [[Double]], rate: Double, low: Double, high: Double) -> [[Double]] {
        let count = channels.first?.count ?? 0
        // Fit on the band-passed signals (the pulse band is where the echo matters), remove with the whole motion
        // (mean removed), so the echo goes at every frequency the filter would have only partly passed.
        let used = motion.filter { $0.count == count }
            .map { m in (whole: m.map { $0 - SignalMath.mean(m) }, band: SignalMath.bandPass(m, sampleRate: rate, low: low, high: high)) }
            .filter { SignalMath.standardDeviation($0.band) > 0.02 }
        guard !used.isEmpty else { return channels }
        let regressors = used.map(\.band)
        let n = regressors.count
        func dot(_ a: [Double], _ b: [Double]) -> Double { zip(a, b).reduce(0) { $0 + $1.0 * $1.1 } }
        var gram = [[Double]](repeating: [Double](repeating: 0, count: n), count: n)
        for i in 0 ..< n { for j in 0 ..< n { gram[i][j] = dot(regressors[i], regressors[j]) } }
        for i in 0 ..< n { gram[i][i] *= 1.001 }   // a touch of ridge for nearly collinear motion
        return channels.map { channel in
            let y = SignalMath.bandPass(channel, sampleRate: rate, low: low, high: high)
            guard let beta = SignalMath.solve(gram, regressors.map { dot($0, y) }) else { return channel }
            var out = channel
            for k in 0 ..< n { for i in 0 ..< count { out[i] -= beta[k] * used[k].whole[i] } }
            return out
        }
    }
}
