import Foundation

/// Small, allocation-light signal helpers shared by the estimators (uniformly sampled series).
enum SignalMath {
    static func mean(_ x: [Double]) -> Double { x.isEmpty ? 0 : x.reduce(0, +) / Double(x.count) }

    static func standardDeviation(_ x: [Double]) -> Double {
        guard x.count > 1 else { return 0 }
        let m = mean(x)
        return (x.reduce(0) { $0 + ($1 - m) * ($1 - m) } / Double(x.count - 1)).squareRoot()
    }

    static func median(_ x: [Double]) -> Double {
        guard !x.isEmpty else { return 0 }
        let s = x.sorted()
        return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
    }

    /// Removes a centred moving average of `window` samples (a cheap high-pass / detrend).
    static func detrend(_ x: [Double], window: Int) -> [Double] {
        let n = x.count
        guard n > 2, window > 1 else { return x.map { $0 - mean(x) } }
        var prefix = [Double](repeating: 0, count: n + 1)
        for i in 0 ..< n { prefix[i + 1] = prefix[i] + x[i] }
        let half = window / 2
        var out = [Double](repeating: 0, count: n)
        for i in 0 ..< n {
            let a = max(0, i - half), b = min(n, i + half + 1)
            out[i] = x[i] - (prefix[b] - prefix[a]) / Double(b - a)
        }
        return out
    }

    /// A centred moving average of `window` samples (a cheap low-pass).
    static func smooth(_ x: [Double], window: Int) -> [Double] {
        let n = x.count
        guard n > 0, window > 1 else { return x }
        var prefix = [Double](repeating: 0, count: n + 1)
        for i in 0 ..< n { prefix[i + 1] = prefix[i] + x[i] }
        let half = window / 2
        return (0 ..< n).map { i in
            let a = max(0, i - half), b = min(n, i + half + 1)
            return (prefix[b] - prefix[a]) / Double(b - a)
        }
    }

    /// A fourth-order Butterworth low-pass (two RBJ biquads) run forwards and backwards (zero phase): the amplitude is
    /// passed times 1 / (1 + (f / cutoff)⁸), half at `cutoff` Hz and 1/257 an octave above. `x` unchanged when the
    /// cutoff is not below the Nyquist frequency.
    static func lowPass(_ x: [Double], sampleRate fs: Double, cutoff: Double) -> [Double] {
        guard x.count > 4, cutoff > 0, cutoff < fs / 2 else { return x }
        let w0 = 2 * Double.pi * cutoff / fs
        func run(_ input: [Double], q: Double) -> [Double] {
            let alpha = sin(w0) / (2 * q), c = cos(w0), a0 = 1 + alpha
            return biquad(input, b0: (1 - c) / 2 / a0, b1: (1 - c) / a0, b2: (1 - c) / 2 / a0,
                          a1: -2 * c / a0, a2: (1 - alpha) / a0, steadyGain: 1)
        }
        var y = run(run(x, q: 0.5412), q: 1.3066)
        y.reverse()
        y = run(run(y, q: 0.5412), q: 1.3066)
        y.reverse()
        return y
    }

    /// A second-order band-pass (RBJ biquad, constant peak gain) run forwards and backwards (zero phase).
    static func bandPass(_ x: [Double], sampleRate fs: Double, low: Double, high: Double) -> [Double] {
        guard x.count > 4, high > low, high < fs / 2 else { return x }
        let f0 = (low * high).squareRoot()
        let q = f0 / (high - low)
        let w0 = 2 * Double.pi * f0 / fs
        let alpha = sin(w0) / (2 * q)
        let a0 = 1 + alpha
        let b0 = alpha / a0, b2 = -alpha / a0
        let a1 = -2 * cos(w0) / a0, a2 = (1 - alpha) / a0
        func run(_ input: [Double]) -> [Double] { biquad(input, b0: b0, b1: 0, b2: b2, a1: a1, a2: a2, steadyGain: 0) }
        var y = run(x)
        y.reverse()
        y = run(y)
        y.reverse()
        return y
    }

    /// One pass of a biquad, y = b0·x + b1·x₋₁ + b2·x₋₂ − a1·y₋₁ − a2·y₋₂ (coefficients divided by a0), started from
    /// the first value's steady state to limit the edge transient: the inputs before it taken as that value, the
    /// outputs before it as `steadyGain` times it (the filter's gain for a constant: 1 for a low-pass, 0 for a
    /// band-pass).
    private static func biquad(_ input: [Double], b0: Double, b1: Double, b2: Double, a1: Double, a2: Double,
                               steadyGain: Double) -> [Double] {
        var out = [Double](repeating: 0, count: input.count)
        let start = input.first ?? 0
        var x1 = start, x2 = start, y1 = steadyGain * start, y2 = steadyGain * start
        for i in 0 ..< input.count {
            let x0 = input[i]
            let y0 = b0 * x0 + b1 * x1 + b2 * x2 - a1 * y1 - a2 * y2
            out[i] = y0
            x2 = x1; x1 = x0; y2 = y1; y1 = y0
        }
        return out
    }

    /// Solves the small linear system `a · x = b` by Gaussian elimination with partial pivoting; nil when singular.
    static func solve(_ a: [[Double]], _ b: [Double]) -> [Double]? {
        let n = b.count
        var m = a, v = b
        for col in 0 ..< n {
            guard let pivot = (col ..< n).max(by: { abs(m[$0][col]) < abs(m[$1][col]) }), abs(m[pivot][col]) > 1e-12 else { return nil }
            m.swapAt(col, pivot)
            v.swapAt(col, pivot)
            for row in col + 1 ..< n {
                let f = m[row][col] / m[col][col]
                for k in col ..< n { m[row][k] -= f * m[col][k] }
                v[row] -= f * v[col]
            }
        }
        var x = [Double](repeating: 0, count: n)
        for row in stride(from: n - 1, through: 0, by: -1) {
            var sum = v[row]
            for k in row + 1 ..< n { sum -= m[row][k] * x[k] }
            x[row] = sum / m[row][row]
        }
        return x
    }

    /// Resamples `(t, v)` pairs (seconds, increasing) onto a uniform grid starting at `start` with `count` points.
    static func resample(times: [Double], values: [Double], start: Double, rate: Double, count: Int) -> [Double] {
        guard !times.isEmpty else { return [Double](repeating: 0, count: count) }
        var out = [Double](repeating: 0, count: count)
        var j = 0
        for i in 0 ..< count {
            let t = start + Double(i) / rate
            while j + 1 < times.count, times[j + 1] < t { j += 1 }
            if t <= times[0] { out[i] = values[0]; continue }
            if j + 1 >= times.count { out[i] = values[times.count - 1]; continue }
            let t0 = times[j], t1 = times[j + 1]
            let w = t1 > t0 ? (t - t0) / (t1 - t0) : 0
            out[i] = values[j] * (1 - w) + values[j + 1] * w
        }
        return out
    }
}

/// A power spectrum over a band, evaluated directly on a fine frequency grid (a zero-padded DFT of a Hann-windowed
/// series), with peak picking and the de Haan spectral SNR.
struct BandSpectrum {
    /// Frequencies, Hz.
    var frequencies: [Double]
    /// Power at each frequency (normalised to sum 1 when `normalize` was set).
    var power: [Double]

    init(frequencies: [Double], power: [Double]) {
        self.frequencies = frequencies
        self.power = power
    }

    /// The spectrum of `x` (sampled at `rate`) from `low` to `high` Hz in steps of `step` Hz.
    init(_ x: [Double], rate: Double, low: Double, high: Double, step: Double) {
        let n = x.count
        var windowed = [Double](repeating: 0, count: n)
        let m = SignalMath.mean(x)
        for i in 0 ..< n {
            let w = n > 1 ? 0.5 - 0.5 * cos(2 * Double.pi * Double(i) / Double(n - 1)) : 1
            windowed[i] = (x[i] - m) * w
        }
        var freqs: [Double] = []
        var f = low
        while f <= high + 1e-9 { freqs.append(f); f += step }
        var power = [Double](repeating: 0, count: freqs.count)
        // Goertzel recurrence: one multiply-add per sample and frequency. Each frequency's recurrence is a chain of
        // dependent operations, so four frequencies run side by side in one pass (the same arithmetic per chain).
        let coefficients = freqs.map { 2 * cos(2 * Double.pi * $0 / rate) }
        windowed.withUnsafeBufferPointer { samples in
            var k = 0
            while k + 4 <= coefficients.count {
                let c0 = coefficients[k], c1 = coefficients[k + 1], c2 = coefficients[k + 2], c3 = coefficients[k + 3]
                var a1 = 0.0, a2 = 0.0, b1 = 0.0, b2 = 0.0, d1 = 0.0, d2 = 0.0, e1 = 0.0, e2 = 0.0
                for v in samples {
                    let a0 = v + c0 * a1 - a2; a2 = a1; a1 = a0
                    let b0 = v + c1 * b1 - b2; b2 = b1; b1 = b0
                    let d0 = v + c2 * d1 - d2; d2 = d1; d1 = d0
                    let e0 = v + c3 * e1 - e2; e2 = e1; e1 = e0
                }
                power[k] = a1 * a1 + a2 * a2 - c0 * a1 * a2
                power[k + 1] = b1 * b1 + b2 * b2 - c1 * b1 * b2
                power[k + 2] = d1 * d1 + d2 * d2 - c2 * d1 * d2
                power[k + 3] = e1 * e1 + e2 * e2 - c3 * e1 * e2
                k += 4
            }
            while k < coefficients.count {
                let c = coefficients[k]
                var s1 = 0.0, s2 = 0.0
                for v in samples {
                    let s0 = v + c * s1 - s2
                    s2 = s1; s1 = s0
                }
                power[k] = s1 * s1 + s2 * s2 - c * s1 * s2
                k += 1
            }
        }
        self.frequencies = freqs
        self.power = power
    }

    /// The spectrum scaled to unit total power (all zeros stay zeros).
    var normalized: BandSpectrum {
        let total = power.reduce(0, +)
        return total > 0 ? BandSpectrum(frequencies: frequencies, power: power.map { $0 / total }) : self
    }

    /// The frequency of the highest bin, refined by a parabola through it and its neighbours.
    var peak: (frequency: Double, index: Int) {
        guard let (i, _) = power.enumerated().max(by: { $0.element < $1.element }) else { return (0, 0) }
        guard i > 0, i + 1 < power.count else { return (frequencies[i], i) }
        let a = power[i - 1], b = power[i], c = power[i + 1]
        let denom = a - 2 * b + c
        let shift = denom != 0 ? max(-0.5, min(0.5, 0.5 * (a - c) / denom)) : 0
        let step = frequencies[1] - frequencies[0]
        return (frequencies[i] + shift * step, i)
    }

    /// Spectral SNR in dB: power within `halfWidth` of `f0` (and of its harmonic, if inside the band) over the rest.
    func snr(at f0: Double, halfWidth: Double, harmonic: Bool = true) -> Double {
        var signal = 0.0, noise = 0.0
        for (f, p) in zip(frequencies, power) {
            if abs(f - f0) <= halfWidth || (harmonic && abs(f - 2 * f0) <= 2 * halfWidth) { signal += p } else { noise += p }
        }
        guard signal > 0 else { return -30 }
        guard noise > 0 else { return 30 }
        return 10 * log10(signal / noise)
    }
}
