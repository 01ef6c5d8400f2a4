import Foundation

// Breathing: the vertical motion of the chest and the background, and the rate and traces found in it.
extension VitalsEngine {
    /// The vertical motion this frame of the upper and lower chest rows.
    func measureChest(_ view: VitalsPixelView) -> (upper: Double?, lower: Double?) {
        (chestUpper?.update(view, travel: sensorTravel?.y), chestLower?.update(view, travel: sensorTravel?.y))
    }

    /// The background's motion this frame, horizontal and vertical: the camera's own motion (nil on an axis that
    /// could not be matched).
    func measureCamera(_ view: VitalsPixelView) -> (x: Double?, y: Double?) {
        (backgroundHorizontal?.update(view, travel: sensorTravel?.x), backgroundVertical?.update(view, travel: sensorTravel?.y))
    }

    func breathing(_ result: inout VitalsFrameResult, at t: Double, duration: Double) {
        let c = configuration
        let fs = 10.0
        let window = Array(samples.drop { t - $0.t > c.breathingWindow })
        guard let start = window.first?.t else { return }
        let count = Int((t - start) * fs) + 1
        guard count > 40 else { return }
        // Candidate signals: chest rows and head, each minus the background (or minus the head when the
        // background has no texture to track).
        func series(_ f: (Sample) -> Double?) -> [Double]? {
            let valid = window.compactMap { s in f(s).map { (s.t, $0) } }
            guard valid.count > window.count / 2 else { return nil }
            return SignalMath.resample(times: valid.map(\.0), values: valid.map(\.1), start: start, rate: fs, count: count)
        }
        let hasBackground = window.filter { $0.background != nil }.count > window.count / 2
        let reference: (Sample) -> Double? = hasBackground ? { $0.background } : { $0.faceY }
        var candidates: [(name: String, signal: [Double])] = []
        if let s = series({ s in s.upper.flatMap { u in reference(s).map { u - $0 } } }) { candidates.append(("upper", s)) }
        if let s = series({ s in s.lower.flatMap { u in reference(s).map { u - $0 } } }) { candidates.append(("lower", s)) }
        if hasBackground, let s = series({ s in s.background.map { (s.headY ?? s.faceY) - $0 } }) { candidates.append(("head", s)) }
        guard !candidates.isEmpty else { return }
        let low = c.breathingRange.lowerBound / 60, high = c.breathingRange.upperBound / 60
        var best: (rate: Double, snr: Double, index: Int)?
        var detrended: [[Double]] = []
        for (i, candidate) in candidates.enumerated() {
            let x = Self.removeLine(candidate.signal)
            detrended.append(x)
            let spectrum = BandSpectrum(x, rate: fs, low: low, high: high, step: 0.002).normalized
            let peak = Self.interiorPeak(spectrum)
            let snr = spectrum.snr(at: peak, halfWidth: 0.03)
            if best == nil || snr > best!.snr { best = (peak * 60, snr, i) }
        }
        guard let chosen = best else { return }
        var confidence = Self.confidence(snr: chosen.snr - 1)
        if duration < c.breathingWarmUp { confidence = min(confidence, VitalsStability.breathing - 1) }
        // A rate at the edge of the band is the slope of slow drift (or of something faster), not a breath: never stable.
        if chosen.rate - c.breathingRange.lowerBound < Self.breathingEdge || c.breathingRange.upperBound - chosen.rate < Self.breathingEdge {
            confidence = min(confidence, VitalsStability.breathing - 1)
        }
        let us = Int64((t * 1_000_000).rounded())
        result.breathingRate.append(VitalsRateSample(value: chosen.rate, confidence: confidence, timestampUs: us))
        result.breathingTraceConfidence = confidence
        // Traces: upper and lower, inhalation up (image y grows downward, so negate), newest second only.
        let upperIndex = candidates.firstIndex { $0.name == "upper" } ?? chosen.index
        let lowerIndex = candidates.firstIndex { $0.name == "lower" } ?? upperIndex
        let up = SignalMath.smooth(detrended[upperIndex], window: 5), lo = SignalMath.smooth(detrended[lowerIndex], window: 5)
        var lastTs = lastEmittedBreathing
        for i in 0 ..< count {
            let ts = start + Double(i) / fs
            guard ts > lastEmittedBreathing, ts > t - 1.5 else { continue }
            let stamp = Int64((ts * 1_000_000).rounded())
            result.upperBreathingTrace.append(VitalsTraceSample(value: -up[i], timestampUs: stamp))
            result.lowerBreathingTrace.append(VitalsTraceSample(value: -lo[i], timestampUs: stamp))
            lastTs = ts
        }
        lastEmittedBreathing = lastTs
    }

    /// How close to either end of the breathing band (breaths/min) a rate may be and still be called stable.
    static let breathingEdge = 1.0

    /// The highest local maximum of `spectrum` inside the band (not on its first or last bin), refined by a parabola;
    /// the overall peak when the spectrum has none (it only rises towards an edge).
    static func interiorPeak(_ spectrum: BandSpectrum) -> Double {
        let p = spectrum.power, f = spectrum.frequencies
        guard p.count >= 5, f.count == p.count else { return spectrum.peak.frequency }
        guard let i = (2 ..< p.count - 2).filter({ p[$0] >= p[$0 - 1] && p[$0] > p[$0 + 1] }).max(by: { p[$0] < p[$1] }) else {
            return spectrum.peak.frequency
        }
        let a = p[i - 1], b = p[i], c = p[i + 1]
        let denom = a - 2 * b + c
        let shift = denom != 0 ? max(-0.5, min(0.5, 0.5 * (a - c) / denom)) : 0
        return f[i] + shift * (f[1] - f[0])
    }

    static func removeLine(_ x: [Double]) -> [Double] {
        let n = Double(x.count)
        guard x.count > 2 else { return x }
        var sx = 0.0, sy = 0.0, sxx = 0.0, sxy = 0.0
        for (i, v) in x.enumerated() {
            let d = Double(i)
            sx += d; sy += v; sxx += d * d; sxy += d * v
        }
        let slope = (n * sxy - sx * sy) / max(n * sxx - sx * sx, 1e-12)
        let intercept = (sy - slope * sx) / n
        return x.enumerated().map { $0.element - (intercept + slope * Double($0.offset)) }
    }
}
