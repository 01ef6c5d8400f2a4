import Foundation
import VitalsEngine

/// One frame's samples of the streamed waveforms.
struct TraceSample: Sendable, Hashable {
    /// The frame's timestamp, µs on the input timeline.
    var timestampUs: Int64
    /// Pulse wave (band-limited POS projection of the skin colour), scaled to about unit spread; unitless.
    var pulse: Double
    /// Upper (chest) breathing trace: vertical chest motion relative to the background, pixels, inhalation up.
    var upper: Double
    /// Lower (lower chest) breathing trace, pixels, inhalation up.
    var lower: Double
}

/// The pulse wave and the breathing traces, one sample per frame, at a fixed cost per frame.
///
/// The engine's own waveforms come out of its windowed analysis once a second, and only after 10 s. This takes what
/// the engine read off each frame (``VitalsFrameMeasurement``: the skin's mean colour of forehead and cheeks, the
/// vertical motion of two chest bands and of the background beside the head) and runs causal filters on it: the
/// colour through a band-limited POS projection (0.65–3 Hz), each chest band's motion minus the background's through
/// a 0.06–0.8 Hz band-pass (the upper band standing in for the lower when that is outside the frame). It reads no
/// pixels itself and recomputes no window: the engine is the one owner of skin sampling and chest motion. Samples
/// start with the second frame that has a measurement; a frame without one, or a gap over ``maximumGapSeconds``,
/// starts over.
final class StreamingTraces {
    /// A gap in the input longer than this restarts the filters (the engine restarts its signals after 1 s too).
    static let maximumGapSeconds = 1.0

    private var lastTime: Double?
    private var running = false
    private var frameInterval: Double?
    private var designRate: Double?
    private var colour = PulseProjector()
    private var upperFilter = BandPass()
    private var lowerFilter = BandPass()

    /// Takes what the engine measured on one frame (nil without a face); returns this frame's samples, or nil while
    /// there is no measurement or the filters are just starting.
    func update(_ measurement: VitalsFrameMeasurement?, timestampUs: Int64) -> TraceSample? {
        let t = Double(timestampUs) / 1_000_000
        defer { lastTime = t }
        guard let measurement else {
            reset()
            return nil
        }
        guard let last = lastTime, t > last, t - last <= Self.maximumGapSeconds, running else {
            reset()
            running = true
            return nil
        }
        let dt = t - last
        frameInterval = frameInterval.map { $0 + 0.1 * (dt - $0) } ?? dt
        let rate = 1 / (frameInterval ?? dt)
        if designRate.map({ abs($0 - rate) / $0 > 0.1 }) ?? true { design(rate: rate) }

        let m = measurement
        let pulse = colour.update((m.skinRed, m.skinGreen, m.skinBlue), dt: dt)
        let reference = m.background ?? 0
        let up = m.upperChest.map { upperFilter(-($0 - reference)) } ?? 0
        // The lower band falls outside a frame whose subject sits low in it: then the lower trace follows the upper
        // (as the engine's windowed traces do), rather than a flat line.
        let low = (m.lowerChest ?? m.upperChest).map { lowerFilter(-($0 - reference)) } ?? 0
        return TraceSample(timestampUs: timestampUs, pulse: pulse, upper: up, lower: low)
    }

    private func reset() {
        running = false
        frameInterval = nil
        designRate = nil
        colour = PulseProjector()
        upperFilter = BandPass()
        lowerFilter = BandPass()
    }

    private func design(rate: Double) {
        designRate = rate
        colour.design(rate: rate)
        upperFilter.design(low: 0.06, high: 0.8, rate: rate)
        lowerFilter.design(low: 0.06, high: 0.8, rate: rate)
    }
}

/// A second-order section (RBJ biquad), direct form I.
struct Biquad {
    private var b0 = 1.0, b1 = 0.0, b2 = 0.0, a1 = 0.0, a2 = 0.0
    private var x1 = 0.0, x2 = 0.0, y1 = 0.0, y2 = 0.0

    /// A Butterworth (Q = 1/√2) low- or high-pass at `cutoff` Hz for samples at `rate` Hz; the state is kept.
    mutating func design(highPass: Bool, cutoff: Double, rate: Double) {
        let f = min(max(cutoff, 1e-3), 0.45 * rate)
        let w = 2 * Double.pi * f / rate
        // alpha = sin(w) / (2Q) with Q = 1/√2.
        let cosw = cos(w), alpha = sin(w) / 2.0.squareRoot()
        let a0 = 1 + alpha
        if highPass {
            b0 = (1 + cosw) / 2 / a0; b1 = -(1 + cosw) / a0; b2 = b0
        } else {
            b0 = (1 - cosw) / 2 / a0; b1 = (1 - cosw) / a0; b2 = b0
        }
        a1 = -2 * cosw / a0
        a2 = (1 - alpha) / a0
    }

    mutating func callAsFunction(_ x: Double) -> Double {
        let y = b0 * x + b1 * x1 + b2 * x2 - a1 * y1 - a2 * y2
        x2 = x1; x1 = x
        y2 = y1; y1 = y
        return y
    }
}

/// A high-pass followed by a low-pass: a band-pass that settles in a few periods of its lower edge.
struct BandPass {
    private var high = Biquad()
    private var low = Biquad()

    mutating func design(low lowEdge: Double, high highEdge: Double, rate: Double) {
        high.design(highPass: true, cutoff: lowEdge, rate: rate)
        low.design(highPass: false, cutoff: highEdge, rate: rate)
    }

    mutating func callAsFunction(_ x: Double) -> Double { low(high(x)) }
}

/// POS (plane orthogonal to skin) on running statistics: colour normalised by its running mean, projected on the
/// two POS axes, each band-passed to the pulse band, mixed by the ratio of their running spreads, and scaled to
/// about unit spread.
struct PulseProjector {
    private var mean: (r: Double, g: Double, b: Double)?
    private var first = BandPass()
    private var second = BandPass()
    private var variance1 = 0.0, variance2 = 0.0, varianceOut = 0.0
    /// Time constant of the running statistics, seconds.
    private let tau = 1.6

    mutating func design(rate: Double) {
        first.design(low: 0.65, high: 3.0, rate: rate)
        second.design(low: 0.65, high: 3.0, rate: rate)
    }

    mutating func update(_ c: (r: Double, g: Double, b: Double), dt: Double) -> Double {
        let k = min(1, dt / tau)
        let m = mean.map { (r: $0.r + k * (c.r - $0.r), g: $0.g + k * (c.g - $0.g), b: $0.b + k * (c.b - $0.b)) } ?? c
        mean = m
        guard m.r > 1e-6, m.g > 1e-6, m.b > 1e-6 else { return 0 }
        let rn = c.r / m.r, gn = c.g / m.g, bn = c.b / m.b
        let s1 = first(gn - bn), s2 = second(gn + bn - 2 * rn)
        variance1 += k * (s1 * s1 - variance1)
        variance2 += k * (s2 * s2 - variance2)
        let alpha = variance2 > 1e-18 ? (variance1 / variance2).squareRoot() : 0
        let h = s1 + alpha * s2
        varianceOut += k * (h * h - varianceOut)
        return varianceOut > 1e-18 ? h / varianceOut.squareRoot() : 0
    }
}
