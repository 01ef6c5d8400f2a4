import Foundation

/// One estimate paired with the truth or reference at the same instant.
public struct ComparedPair: Sendable, Hashable {
    /// Seconds on the run's clock.
    public var t: Double
    /// The bridge's estimate.
    public var estimate: Double
    /// The truth or reference.
    public var reference: Double
    /// Estimate minus reference.
    public var difference: Double { estimate - reference }
    /// The mean of the two (Bland–Altman's x).
    public var mean: Double { (estimate + reference) / 2 }
    /// Creates a pair.
    public init(t: Double, estimate: Double, reference: Double) {
        self.t = t
        self.estimate = estimate
        self.reference = reference
    }
}

/// Agreement of estimates with a reference: MAE, RMSE, bias, limits of agreement and the share within 3 and 5 units.
public struct ErrorStatistics: Sendable, Hashable {
    /// How many pairs.
    public let count: Int
    /// Mean absolute error.
    public let meanAbsoluteError: Double
    /// Root mean square error.
    public let rootMeanSquareError: Double
    /// Mean of estimate − reference.
    public let bias: Double
    /// Sample standard deviation of the differences (0 with one pair).
    public let standardDeviation: Double
    /// Share of pairs with |difference| ≤ 3, from 0 to 1.
    public let withinThree: Double
    /// Share of pairs with |difference| ≤ 5.
    public let withinFive: Double

    /// The lower limit of agreement, bias − 1.96 SD.
    public var lowerLimit: Double { bias - 1.96 * standardDeviation }
    /// The upper limit of agreement, bias + 1.96 SD.
    public var upperLimit: Double { bias + 1.96 * standardDeviation }

    /// The statistics of `pairs`, or nil when there are none (non-finite pairs are left out).
    public init?(_ pairs: [ComparedPair]) {
        let differences = pairs.map(\.difference).filter(\.isFinite)
        guard !differences.isEmpty else { return nil }
        let n = Double(differences.count)
        count = differences.count
        meanAbsoluteError = differences.reduce(0) { $0 + abs($1) } / n
        rootMeanSquareError = (differences.reduce(0) { $0 + $1 * $1 } / n).squareRoot()
        bias = differences.reduce(0, +) / n
        let mean = bias
        standardDeviation = differences.count > 1
            ? (differences.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / (n - 1)).squareRoot() : 0
        withinThree = Double(differences.filter { abs($0) <= 3 + 1e-9 }.count) / n
        withinFive = Double(differences.filter { abs($0) <= 5 + 1e-9 }.count) / n
    }

    /// Pairs each estimate of `metric` (only stable ones when `stableOnly`) with the reference at its time.
    public static func pairs(
        _ metric: VitalMetric, run: RunRecord, reference: ReferenceSeries, stableOnly: Bool = true
    ) -> [ComparedPair] {
        let points = reference.points(metric)
        return metric.series(in: run).compactMap { sample in
            guard !stableOnly || sample.stable, let value = ReferenceSeries.interpolate(points, at: sample.t) else { return nil }
            return ComparedPair(t: sample.t, estimate: sample.value, reference: value)
        }
    }
}
