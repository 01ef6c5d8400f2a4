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
/// The engine's own waveforms come out of its windowed analysis once a second, and only after 10 s. This follows
/// the face the engine tracks and, per frame, reads a few hundred pixels and runs causal filters: the skin's mean
/// colour of forehead and cheeks goes through a band-limited POS projection (0.65–3 Hz), and the vertical motion of
/// two chest bands (row profiles matched against a reference) minus that of the background beside the head goes
/// through a 0.06–0.8 Hz band-pass. No window is ever recomputed. Samples start with the second frame that shows a
/// face; losing the face, or a gap over ``maximumGapSeconds``, starts over.
final class StreamingTraces {
    /// A gap in the input longer than this restarts the filters (the engine restarts its signals after 1 s too).
    static let maximumGapSeconds = 1.0

    private var lastTime: Double?
    private var frameInterval: Double?
    private var designRate: Double?
    private var anchor: VitalsRect?
    private var upper: VerticalMotion?
    private var lower: VerticalMotion?
    private var background: VerticalMotion?
    private var colour = PulseProjector()
    private var upperFilter = BandPass()
    private var lowerFilter = BandPass()

    /// Takes one frame and the face the engine tracks in it; returns this frame's samples, or nil while there is no
    /// face or the filters are just starting.
    func update(_ view: VitalsPixelView, face: VitalsRect?, timestampUs: Int64) -> TraceSample? {
        let t = Double(timestampUs) / 1_000_000
        defer { lastTime = t }
        guard let face, face.width >= 16, face.height >= 16 else {
            reset()
            return nil
        }
        guard let last = lastTime, t > last, t - last <= Self.maximumGapSeconds, anchor != nil else {
            reset()
            adopt(face, in: view)
            return nil
        }
        let dt = t - last
        frameInterval = frameInterval.map { $0 + 0.1 * (dt - $0) } ?? dt
        let rate = 1 / (frameInterval ?? dt)
        if designRate.map({ abs($0 - rate) / $0 > 0.1 }) ?? true { design(rate: rate) }
        if let anchor, moved(face, from: anchor) { reanchor(face, in: view) }

        let pulse = colour.update(Self.skinColour(of: face, in: view), dt: dt)
        let reference = background?.update(view) ?? 0
        let upperMotion = upper?.update(view), lowerMotion = lower?.update(view)
        let up = upperMotion.map { upperFilter(-($0 - reference)) } ?? 0
        let low = lowerMotion.map { lowerFilter(-($0 - reference)) } ?? 0
        return TraceSample(timestampUs: timestampUs, pulse: pulse, upper: up, lower: low)
    }

    private func reset() {
        anchor = nil
        upper = nil
        lower = nil
        background = nil
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

    /// Whether the tracked face has moved or grown so much that the chest and background bands must follow.
    private func moved(_ face: VitalsRect, from anchor: VitalsRect) -> Bool {
        let w = Double(anchor.width)
        let dx = Double(face.x + face.width / 2 - anchor.x - anchor.width / 2)
        let dy = Double(face.y + face.height / 2 - anchor.y - anchor.height / 2)
        return abs(dx) > 0.25 * w || abs(dy) > 0.25 * w || abs(Double(face.width - anchor.width)) > 0.3 * w
    }

    private func adopt(_ face: VitalsRect, in view: VitalsPixelView) {
        anchor = face
        let bands = Self.bands(for: face, in: view)
        upper = bands.upper.flatMap { VerticalMotion(region: $0, shift: max(3, face.height / 16), in: view) }
        lower = bands.lower.flatMap { VerticalMotion(region: $0, shift: max(3, face.height / 16), in: view) }
        background = bands.background.flatMap { VerticalMotion(region: $0, shift: max(3, face.height / 16), in: view) }
    }

    /// Moves the bands with the face, continuing each displacement from where it was (no step in the traces).
    private func reanchor(_ face: VitalsRect, in view: VitalsPixelView) {
        let offsets = (upper?.displacement ?? 0, lower?.displacement ?? 0, background?.displacement ?? 0)
        adopt(face, in: view)
        upper?.displacement = offsets.0
        lower?.displacement = offsets.1
        background?.displacement = offsets.2
    }

    /// The chest bands below the face and the background beside the head (the wider side), in frame pixels.
    static func bands(for face: VitalsRect, in view: VitalsPixelView) -> (upper: VitalsRect?, lower: VitalsRect?, background: VitalsRect?) {
        let cx = face.x + face.width / 2
        let top = face.maxY + face.height / 5
        let half = face.height / 2
        func inside(_ r: VitalsRect) -> VitalsRect? {
            let c = r.clamped(width: view.width, height: view.height)
            return c.width >= 8 && c.height >= 8 ? c : nil
        }
        let upper = inside(VitalsRect(x: cx - face.width, y: top, width: 2 * face.width, height: half))
        let lower = inside(VitalsRect(x: cx - face.width, y: top + half, width: 2 * face.width, height: half))
        let gap = face.width / 5
        let left = VitalsRect(x: 0, y: face.y, width: face.x - gap, height: face.height)
        let right = VitalsRect(x: face.maxX + gap, y: face.y, width: view.width - face.maxX - gap, height: face.height)
        let background = inside(left.width >= right.width ? left : right)
        return (upper, lower, background)
    }

    /// The mean colour of forehead and cheeks inside the face box, on a grid of about 12 × 12 points per region.
    static func skinColour(of face: VitalsRect, in view: VitalsPixelView) -> (r: Double, g: Double, b: Double) {
        let parts: [(Double, Double, Double, Double)] = [(0.30, 0.08, 0.70, 0.22), (0.18, 0.50, 0.38, 0.70), (0.62, 0.50, 0.82, 0.70)]
        var sum = (r: 0.0, g: 0.0, b: 0.0), count = 0.0
        for (x0, y0, x1, y1) in parts {
            let region = VitalsRect(
                x: face.x + Int(x0 * Double(face.width)), y: face.y + Int(y0 * Double(face.height)),
                width: Int((x1 - x0) * Double(face.width)), height: Int((y1 - y0) * Double(face.height))
            ).clamped(width: view.width, height: view.height)
            guard region.width > 0, region.height > 0 else { continue }
            let step = max(1, min(region.width, region.height) / 12)
            var y = region.y
            while y < region.maxY {
                var x = region.x
                while x < region.maxX {
                    let c = view.colour(x, y)
                    sum.r += c.r; sum.g += c.g; sum.b += c.b; count += 1
                    x += step
                }
                y += step
            }
        }
        guard count > 0 else { return (0, 0, 0) }
        return (sum.r / count, sum.g / count, sum.b / count)
    }
}

/// The vertical displacement of a band of rows, matched by its row profile against a reference profile (sum of
/// absolute differences over whole-row shifts, refined by a parabola; the reference is renewed after large shifts).
struct VerticalMotion {
    let region: VitalsRect
    let maxShift: Int
    private var reference: [Double]
    private var referenceOffset = 0.0
    /// Displacement since the band was placed, pixels (image y, down positive).
    var displacement = 0.0

    init?(region: VitalsRect, shift: Int, in view: VitalsPixelView) {
        // Keep room to shift inside the frame.
        let top = max(0, region.y - shift), bottom = min(view.height, region.maxY + shift)
        guard bottom - top > 2 * shift + 4 else { return nil }
        self.region = VitalsRect(x: region.x, y: top, width: region.width, height: bottom - top)
        self.maxShift = shift
        self.reference = Self.profile(of: self.region, in: view)
    }

    /// Matches the current frame and returns the displacement.
    mutating func update(_ view: VitalsPixelView) -> Double {
        let current = Self.profile(of: region, in: view)
        guard current.count == reference.count else { return displacement }
        let n = current.count
        var costs: [Double] = []
        for s in -maxShift ... maxShift {
            var sum = 0.0
            for i in maxShift ..< n - maxShift { sum += abs(current[i + s] - reference[i]) }
            costs.append(sum)
        }
        guard let best = costs.indices.min(by: { costs[$0] < costs[$1] }) else { return displacement }
        var shift = Double(best - maxShift)
        if best > 0, best < costs.count - 1 {
            let a = costs[best - 1], b = costs[best], c = costs[best + 1]
            let denominator = a - 2 * b + c
            if denominator > 1e-12 { shift += 0.5 * (a - c) / denominator }
        }
        displacement = referenceOffset + shift
        if abs(shift) > Double(maxShift) / 2 {
            reference = current
            referenceOffset = displacement
        }
        return displacement
    }

    /// Mean luma of each row of `region`, sampled every few columns.
    static func profile(of region: VitalsRect, in view: VitalsPixelView) -> [Double] {
        let step = max(1, region.width / 48)
        var rows: [Double] = []
        rows.reserveCapacity(region.height)
        for y in region.y ..< region.maxY {
            var sum = 0, count = 0
            var x = region.x
            while x < region.maxX {
                sum += view.lumaSample(x, y)
                count += 1
                x += step
            }
            rows.append(Double(sum) / Double(max(count, 1)))
        }
        return rows
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

extension VitalsPixelView {
    /// Luma (0–255 as stored) at a pixel; BT.601 weights for BGRA.
    func lumaSample(_ x: Int, _ y: Int) -> Int {
        switch format {
        case .bgra:
            let p = plane0 + y * bytesPerRow0 + 4 * x
            return (29 * Int(p[0]) + 150 * Int(p[1]) + 77 * Int(p[2])) >> 8
        case .nv12VideoRange, .nv12FullRange:
            return Int(plane0[y * bytesPerRow0 + x])
        }
    }

    /// Red, green and blue (0–255, full range) at a pixel; BT.601 for NV12.
    func colour(_ x: Int, _ y: Int) -> (r: Double, g: Double, b: Double) {
        switch format {
        case .bgra:
            let p = plane0 + y * bytesPerRow0 + 4 * x
            return (Double(p[2]), Double(p[1]), Double(p[0]))
        case .nv12VideoRange, .nv12FullRange:
            guard let chroma = plane1 else {
                let v = Double(plane0[y * bytesPerRow0 + x])
                return (v, v, v)
            }
            let c = chroma + (y / 2) * bytesPerRow1 + (x / 2) * 2
            var luma = Double(plane0[y * bytesPerRow0 + x]), cb = Double(c[0]) - 128, cr = Double(c[1]) - 128
            if format == .nv12VideoRange {
                luma = (luma - 16) * 255 / 219
                cb *= 255 / 224
                cr *= 255 / 224
            }
            return (luma + 1.402 * cr, luma - 0.344136 * cb - 0.714136 * cr, luma + 1.772 * cb)
        }
    }
}
