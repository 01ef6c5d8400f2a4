import Foundation

/// An axis range rounded out to "nice" numbers (1, 2, 2.5 or 5 times a power of ten), with its ticks.
public struct NiceScale: Sendable, Hashable {
    /// The lower end of the axis (a tick).
    public let lower: Double
    /// The upper end of the axis (a tick).
    public let upper: Double
    /// The distance between ticks.
    public let step: Double

    /// Rounds `low...high` out to nice ticks, about `ticks` of them; a zero-width or non-finite range is widened.
    public init(low: Double, high: Double, ticks: Int = 5) {
        var low = low.isFinite ? low : 0
        var high = high.isFinite ? high : 1
        if low > high { swap(&low, &high) }
        if high - low < 1e-9 {
            let pad = max(abs(low) * 0.1, 1)
            low -= pad
            high += pad
        }
        let step = Self.niceStep((high - low) / Double(max(ticks - 1, 1)))
        self.step = step
        lower = (low / step).rounded(.down) * step
        upper = (high / step).rounded(.up) * step
        firstTick = nil
    }

    /// Keeps `low...high` as the axis' ends and puts nice ticks inside it (a time axis that ends where the run ends).
    public init(exactLow low: Double, high: Double, ticks: Int = 5) {
        let rounded = NiceScale(low: low, high: high, ticks: ticks)
        step = rounded.step
        (lower, upper) = low < high && low.isFinite && high.isFinite ? (low, high) : (rounded.lower, rounded.upper)
        firstTick = (lower / step).rounded(.up) * step
    }

    /// The first tick (the lower end unless the scale keeps exact ends).
    private var firstTick: Double?

    /// A nice number close to `raw`: 1, 2, 2.5 or 5 times a power of ten.
    public static func niceStep(_ raw: Double) -> Double {
        guard raw.isFinite, raw > 0 else { return 1 }
        let exponent = (log10(raw)).rounded(.down)
        let magnitude = pow(10, exponent)
        let fraction = raw / magnitude
        let nice: Double = fraction <= 1 ? 1 : fraction <= 2 ? 2 : fraction <= 2.5 ? 2.5 : fraction <= 5 ? 5 : 10
        return nice * magnitude
    }

    /// The tick values from ``lower`` to ``upper``.
    public var ticks: [Double] {
        var result: [Double] = []
        var index = 0.0
        while true {
            let value = (firstTick ?? lower) + index * step
            if value > upper + step * 1e-6 || result.count > 200 { break }
            result.append(abs(value) < step * 1e-9 ? 0 : value)
            index += 1
        }
        return result
    }

    /// Decimals that show every tick distinctly.
    public var decimals: Int {
        let exponent = -(log10(step)).rounded(.down)
        let base = max(0, Int(exponent))
        return step / pow(10, Double(-base)) == 2.5 ? base + 1 : base
    }

    /// A tick's label.
    public func label(_ value: Double) -> String {
        String(format: "%.\(decimals)f", value)
    }
}
