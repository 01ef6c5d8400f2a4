import Foundation

/// The colour-to-pulse methods run side by side on the same skin trace.
public enum PulseMethod: String, Sendable, Hashable, CaseIterable {
    /// Plane-orthogonal-to-skin (Wang, den Brinker, Stuijk, de Haan 2017).
    case pos
    /// Chrominance-based (de Haan & Jeanne 2013).
    case chrom
    /// The green channel alone (Verkruysse et al. 2008).
    case green
    /// Luma (BT.601 weights of R, G, B) alone: after HEVC the pulse survives only as a luma change, and green
    /// decoded from NV12 also carries the codec's chroma noise, which luma cancels.
    case luma
}

extension PulseMethod {
    /// Whether the method reads colour differences (chroma), not only brightness.
    var readsChroma: Bool { self != .luma }
}

/// Colour-trace to pulse-wave projections (uniformly sampled RGB means in, zero-mean pulse wave out).
enum PulseProjection {
    /// POS: temporal normalisation per 1.6 s window, projection on the plane orthogonal to the skin tone,
    /// alpha-tuning of the two projections, overlap-add.
    static func pos(r: [Double], g: [Double], b: [Double], rate: Double) -> [Double] {
        let n = r.count
        let l = max(2, Int((1.6 * rate).rounded()))
        var h = [Double](repeating: 0, count: n)
        guard n >= l else { return h }
        var s1 = [Double](repeating: 0, count: l), s2 = [Double](repeating: 0, count: l)
        for start in 0 ... (n - l) {
            var mr = 0.0, mg = 0.0, mb = 0.0
            for i in start ..< start + l { mr += r[i]; mg += g[i]; mb += b[i] }
            mr /= Double(l); mg /= Double(l); mb /= Double(l)
            guard mr > 0, mg > 0, mb > 0 else { continue }
            for k in 0 ..< l {
                let cr = r[start + k] / mr, cg = g[start + k] / mg, cb = b[start + k] / mb
                s1[k] = cg - cb
                s2[k] = cg + cb - 2 * cr
            }
            let sd1 = SignalMath.standardDeviation(s1), sd2 = SignalMath.standardDeviation(s2)
            let alpha = sd2 > 0 ? sd1 / sd2 : 0
            var m = 0.0
            for k in 0 ..< l { m += s1[k] + alpha * s2[k] }
            m /= Double(l)
            for k in 0 ..< l { h[start + k] += s1[k] + alpha * s2[k] - m }
        }
        return h
    }

    /// CHROM: chrominance signals X = 3R − 2G and Y = 1.5R + G − 1.5B of the normalised trace, band-passed,
    /// combined as X − αY per Hann window with half overlap.
    static func chrom(r: [Double], g: [Double], b: [Double], rate: Double, low: Double, high: Double) -> [Double] {
        let n = r.count
        let l = max(4, Int((1.6 * rate).rounded()) & ~1)
        guard n >= l else { return [Double](repeating: 0, count: n) }
        let norm = max(3, Int(1.6 * rate))
        let rs = SignalMath.smooth(r, window: norm), gs = SignalMath.smooth(g, window: norm), bs = SignalMath.smooth(b, window: norm)
        var x = [Double](repeating: 0, count: n), y = [Double](repeating: 0, count: n)
        for i in 0 ..< n {
            let rn = rs[i] > 0 ? r[i] / rs[i] : 1, gn = gs[i] > 0 ? g[i] / gs[i] : 1, bn = bs[i] > 0 ? b[i] / bs[i] : 1
            x[i] = 3 * rn - 2 * gn
            y[i] = 1.5 * rn + gn - 1.5 * bn
        }
        let xf = SignalMath.bandPass(x, sampleRate: rate, low: low, high: high)
        let yf = SignalMath.bandPass(y, sampleRate: rate, low: low, high: high)
        var out = [Double](repeating: 0, count: n)
        let hop = l / 2
        var start = 0
        while start + l <= n {
            let xs = Array(xf[start ..< start + l]), ys = Array(yf[start ..< start + l])
            let sy = SignalMath.standardDeviation(ys)
            let alpha = sy > 0 ? SignalMath.standardDeviation(xs) / sy : 0
            for k in 0 ..< l {
                let w = 0.5 - 0.5 * cos(2 * Double.pi * Double(k) / Double(l - 1))
                out[start + k] += (xs[k] - alpha * ys[k]) * w
            }
            start += hop
        }
        return out
    }

    /// GREEN: the green channel relative to its local mean.
    static func green(g: [Double], rate: Double) -> [Double] {
        let gs = SignalMath.smooth(g, window: max(3, Int(1.6 * rate)))
        return zip(g, gs).map { $1 > 0 ? $0 / $1 - 1 : 0 }
    }

    /// LUMA: 0.299 R + 0.587 G + 0.114 B relative to its local mean (for NV12 input this is the decoded Y exactly:
    /// the chroma terms of the YUV→RGB conversion cancel).
    static func luma(r: [Double], g: [Double], b: [Double], rate: Double) -> [Double] {
        green(g: (0 ..< r.count).map { RGB(r: r[$0], g: g[$0], b: b[$0]).luma }, rate: rate)
    }

    /// The unfiltered wave of `method`.
    static func wave(_ method: PulseMethod, r: [Double], g: [Double], b: [Double], rate: Double, low: Double, high: Double) -> [Double] {
        switch method {
        case .pos: pos(r: r, g: g, b: b, rate: rate)
        case .chrom: chrom(r: r, g: g, b: b, rate: rate, low: low, high: high)
        case .green: green(g: g, rate: rate)
        case .luma: luma(r: r, g: g, b: b, rate: rate)
        }
    }
}

/// The result of one pulse-rate analysis window.
struct PulseAnalysis {
    /// Pulse rate, bpm.
    var rate: Double
    /// Spectral SNR of the fused spectrum at the chosen peak, dB.
    var snr: Double
    /// Per-method rate and the SNR that ranked it (dB, fundamental only, chroma penalty applied).
    var methods: [PulseMethod: (rate: Double, snr: Double)]
    /// The method with the best SNR.
    var best: PulseMethod
    /// The band-passed pulse wave of the best method, one value per input sample.
    var wave: [Double]
    /// The fused spectrum (normalised) whose peak is ``rate``.
    var spectrum: BandSpectrum

    /// Background chroma-to-luma noise ratio (see `VitalsEngine.chromaExcess`) up to which the methods that read
    /// chroma are trusted fully: uncompressed video measures 0.1–0.5 (lighting moves luma more than chroma),
    /// HEVC at 4 Mbit/s about 0.6–0.8, at 2 Mbit/s 1–3.
    static let chromaTolerance = 0.5

    /// How many dB the SNR of a method that reads chroma is marked down for a video whose chroma is `excess` times
    /// noisier than its luma: 0 up to ``chromaTolerance``, then the excess noise amplitude in dB.
    static func chromaPenalty(excess: Double) -> Double {
        20 * log10(max(1, excess / chromaTolerance))
    }

    /// The frequency grid of every method's spectrum, Hz.
    static let spectrumStep = 0.005

    /// Runs POS, CHROM, GREEN and LUMA on a uniformly sampled trace and fuses their normalised spectra weighted by
    /// linear SNR.
    ///
    /// The SNR that ranks and weights the methods counts the fundamental only: a harmonic lies inside the band only
    /// for candidates below half its top, so counting it would favour slow candidates (a codec's 1 s refresh
    /// rhythm and its harmonic, say) over a fast pulse. Methods that read chroma lose ``chromaPenalty(excess:)``
    /// for `chromaExcess`: after HEVC the pulse survives in luma while chroma carries the codec's own rhythms.
    /// `chromaMask` (one factor per bin of the spectra's grid, see ``SpectralLineFinder``) multiplies the spectra of
    /// the methods that read chroma, so the video's own lines are not read as pulse; a mask of another length is
    /// ignored. `mask` multiplies every method's spectrum alike (the camera's lines the skin still echoes, see
    /// `VitalsEngine.echoMask`).
    static func analyse(r: [Double], g: [Double], b: [Double], rate fs: Double, low: Double, high: Double,
                        chromaExcess: Double = 0, chromaMask: [Double] = [], mask: [Double] = []) -> PulseAnalysis {
        let lowHz = low / 60, highHz = min(high / 60, fs / 2 - 0.1)
        var waves: [PulseMethod: [Double]] = [:]
        for method in PulseMethod.allCases {
            let raw = PulseProjection.wave(method, r: r, g: g, b: b, rate: fs, low: lowHz, high: highHz)
            // CHROM band-passes inside its projection.
            waves[method] = method == .chrom ? raw : SignalMath.bandPass(raw, sampleRate: fs, low: lowHz, high: highHz)
        }
        var methods: [PulseMethod: (rate: Double, snr: Double)] = [:]
        var fused: [Double] = []
        var spectra: [PulseMethod: BandSpectrum] = [:]
        for method in PulseMethod.allCases {
            var spectrum = BandSpectrum(waves[method]!, rate: fs, low: lowHz, high: highHz, step: spectrumStep)
            if method.readsChroma, chromaMask.count == spectrum.power.count {
                spectrum.power = zip(spectrum.power, chromaMask).map { $0 * $1 }
            }
            if mask.count == spectrum.power.count {
                spectrum.power = zip(spectrum.power, mask).map { $0 * $1 }
            }
            spectrum = spectrum.normalized
            spectra[method] = spectrum
            let peak = spectrum.peak.frequency
            var snr = spectrum.snr(at: peak, halfWidth: 0.1, harmonic: false)
            if method.readsChroma { snr -= chromaPenalty(excess: chromaExcess) }
            methods[method] = (peak * 60, snr)
        }
        let best = PulseMethod.allCases.max { methods[$0]!.snr < methods[$1]!.snr }!
        // Weights: linear SNR relative to the best, so a method 10 dB worse counts a tenth. POS, CHROM and GREEN
        // read the same chroma, so together they count as one voice (their best), and a rhythm they share is not
        // counted three times against LUMA.
        let bestSNR = methods[best]!.snr
        var weights = PulseMethod.allCases.map { pow(10, (methods[$0]!.snr - bestSNR) / 10) }
        let chroma = PulseMethod.allCases.indices.filter { PulseMethod.allCases[$0].readsChroma }
        let chromaTotal = chroma.reduce(0) { $0 + weights[$1] }
        if chromaTotal > 0 {
            let scale = chroma.map { weights[$0] }.max()! / chromaTotal
            for i in chroma { weights[i] *= scale }
        }
        for (method, weight) in zip(PulseMethod.allCases, weights) {
            let p = spectra[method]!.power
            if fused.isEmpty { fused = p.map { $0 * weight } } else { for i in 0 ..< p.count { fused[i] += p[i] * weight } }
        }
        let fusedSpectrum = BandSpectrum(frequencies: spectra[best]!.frequencies, power: fused).normalized
        let peak = fusedSpectrum.peak.frequency
        return PulseAnalysis(rate: peak * 60, snr: fusedSpectrum.snr(at: peak, halfWidth: 0.1), methods: methods, best: best,
                             wave: waves[best]!, spectrum: fusedSpectrum)
    }
}
