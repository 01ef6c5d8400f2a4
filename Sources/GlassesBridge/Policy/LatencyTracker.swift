import WearablesKit

/// End-to-end latency of a run, as `stats` and the summary report it: from the glasses' capture to `sendFrame`
/// accepted, and the part of it spent on the link (sent → received), in milliseconds.
///
/// Percentiles come from a fixed histogram (``LatencyHistogram``): exact below 0.128 ms, within 0.8 % above; the
/// maxima are exact.
public struct LatencySummary: Sendable, Hashable {
    /// Frames measured.
    public var samples: UInt64
    /// Median capture → `sendFrame` accepted, ms.
    public var p50Ms: Double
    /// 99th percentile capture → `sendFrame` accepted, ms.
    public var p99Ms: Double
    /// Longest capture → `sendFrame` accepted, ms.
    public var maxMs: Double
    /// Median time on the link (sender handed it over → host end received it), ms.
    public var linkP50Ms: Double
    /// 99th percentile time on the link, ms.
    public var linkP99Ms: Double
    /// Longest time on the link, ms.
    public var linkMaxMs: Double

    /// Creates a summary.
    public init(
        samples: UInt64, p50Ms: Double, p99Ms: Double, maxMs: Double, linkP50Ms: Double, linkP99Ms: Double,
        linkMaxMs: Double
    ) {
        self.samples = samples
        self.p50Ms = p50Ms
        self.p99Ms = p99Ms
        self.maxMs = maxMs
        self.linkP50Ms = linkP50Ms
        self.linkP99Ms = linkP99Ms
        self.linkMaxMs = linkMaxMs
    }
}

/// Capture → `sendFrame` accepted latencies counted into a few fixed buckets: a Prometheus histogram's
/// observations, each measured frame once, with their sum.
///
/// Unlike ``LatencySummary`` (percentiles over a stats interval), these counts only grow over a run, so a scraper
/// can subtract two of them and compute any quantile over any window (`histogram_quantile`).
public struct LatencyBuckets: Sendable, Hashable {
    /// The buckets' upper bounds in microseconds, ascending: a frame is counted in the first bucket whose bound
    /// is at or above its latency, and in a last, unbounded bucket when none is.
    public static let upperBoundsUs: [UInt64] = [
        2_500, 5_000, 10_000, 25_000, 50_000, 100_000, 250_000, 500_000, 1_000_000, 2_500_000, 5_000_000, 10_000_000,
    ]

    /// Frames per bucket (not cumulative), in ``upperBoundsUs`` order, then the unbounded bucket.
    public private(set) var counts = [UInt64](repeating: 0, count: LatencyBuckets.upperBoundsUs.count + 1)
    /// The sum of the counted latencies, in microseconds.
    public private(set) var sumUs: UInt64 = 0

    /// Creates empty buckets.
    public init() {}

    /// Frames counted.
    public var count: UInt64 { counts.reduce(0, &+) }

    /// Counts one frame's latency.
    package mutating func record(microseconds: UInt64) {
        let index = Self.upperBoundsUs.firstIndex { microseconds <= $0 } ?? Self.upperBoundsUs.count
        counts[index] &+= 1
        sumUs &+= microseconds
    }
}

/// A histogram of microsecond values in bounded memory: 1,344 counters, whatever the run's length.
///
/// Values below 128 µs have a bucket each; above, each power of two is split into 64 buckets, so a bucket is at
/// most 1/64 of its lower bound wide and a percentile (the bucket's midpoint, kept within the smallest and largest
/// value seen; the smallest or largest itself when the rank is the first or last) is within 0.8 % of the true one. Values up to ``LatencyTracker/maximumPlausibleUs`` are held.
struct LatencyHistogram: Sendable, Hashable {
    static let exactBuckets = 128
    static let bucketsPerOctave = 64
    /// Buckets for 0 …< 2^26 µs (67 s).
    static let bucketCount = exactBuckets + (26 - 7) * bucketsPerOctave

    private var counts: [UInt64] = []
    private(set) var count: UInt64 = 0
    private(set) var minimum: UInt64 = .max
    private(set) var maximum: UInt64 = 0

    /// The bucket holding `value` (below 2^26).
    static func index(of value: UInt64) -> Int {
        if value < UInt64(exactBuckets) { return Int(value) }
        let octave = 63 - value.leadingZeroBitCount  // 7 …
        let shift = octave - 6
        return exactBuckets + (octave - 7) * bucketsPerOctave + Int(value >> UInt64(shift)) - bucketsPerOctave
    }

    /// The value a bucket stands for: itself below 128, else its range's midpoint.
    static func representative(ofBucket index: Int) -> UInt64 {
        if index < exactBuckets { return UInt64(index) }
        let octave = 7 + (index - exactBuckets) / bucketsPerOctave
        let mantissa = UInt64(bucketsPerOctave + (index - exactBuckets) % bucketsPerOctave)
        let shift = UInt64(octave - 6)
        return (mantissa << shift) + (1 << shift) / 2
    }

    /// Adds a value (clamped into the histogram's range).
    mutating func record(_ value: UInt64) {
        let value = min(value, (1 << 26) - 1)
        if counts.isEmpty { counts = Array(repeating: 0, count: Self.bucketCount) }
        counts[Self.index(of: value)] &+= 1
        count &+= 1
        minimum = Swift.min(minimum, value)
        maximum = Swift.max(maximum, value)
    }

    /// The nearest-rank `quantile` (0 < q ≤ 1), or nil when empty.
    func percentile(_ quantile: Double) -> UInt64? {
        guard count > 0 else { return nil }
        let rank = max(1, UInt64((quantile * Double(count)).rounded(.up)))
        // The extremes are known exactly.
        if rank >= count { return maximum }
        if rank == 1 { return minimum }
        var seen: UInt64 = 0
        for (index, bucketCount) in counts.enumerated() where bucketCount > 0 {
            seen &+= bucketCount
            if seen >= rank { return Swift.min(Swift.max(Self.representative(ofBucket: index), minimum), maximum) }
        }
        return maximum
    }
}

/// The one owner of latency measurements in a run: what ``FrameWorker`` records when `sendFrame` accepts a frame
/// that carries ``FrameTiming``, kept for the current stats interval and for the whole run, in bounded memory.
///
/// All times are on the host's clock: the link's host end mapped capture and send times onto it, and the pipeline
/// reads the same scheduler (`BridgeClock.scheduler`, which the link is opened with). A frame whose figures cannot
/// be right is not measured but counted (``implausible``): received after it was accepted (the link's clock is not
/// the pipeline's), or a latency beyond ``maximumPlausibleUs``. A latency or link time below zero, which the clock
/// offset's error (half a heartbeat round trip) can produce for a very short hop, is counted as zero.
struct LatencyTracker: Sendable {
    /// Longer than this is taken for a clock mistake, not a latency (60 s).
    static let maximumPlausibleUs: Int64 = 60_000_000

    private var intervalTotal = LatencyHistogram()
    private var intervalLink = LatencyHistogram()
    private var runTotal = LatencyHistogram()
    private var runLink = LatencyHistogram()
    /// Every measured frame of the run, in a Prometheus histogram's buckets.
    private(set) var runBuckets = LatencyBuckets()
    /// Frames with timing that could not be measured.
    private(set) var implausible: UInt64 = 0

    /// A frame with `timing` was accepted by `sendFrame` at host time `acceptedUs`.
    mutating func record(_ timing: FrameTiming, acceptedUs: Int64) {
        let total = acceptedUs.subtractingReportingOverflow(timing.captureUs)
        let link = timing.receivedUs.subtractingReportingOverflow(timing.sentUs)
        guard timing.receivedUs <= acceptedUs, !total.overflow, !link.overflow,
              total.partialValue <= Self.maximumPlausibleUs, link.partialValue <= Self.maximumPlausibleUs
        else {
            implausible &+= 1
            return
        }
        let totalUs = UInt64(max(0, total.partialValue))
        let linkUs = UInt64(max(0, link.partialValue))
        intervalTotal.record(totalUs)
        intervalLink.record(linkUs)
        runTotal.record(totalUs)
        runLink.record(linkUs)
        runBuckets.record(microseconds: totalUs)
    }

    /// The interval since the last call (nil when no frame was measured in it); starts a new interval.
    mutating func takeInterval() -> LatencySummary? {
        defer {
            intervalTotal = LatencyHistogram()
            intervalLink = LatencyHistogram()
        }
        return Self.summary(intervalTotal, intervalLink)
    }

    /// The whole run so far (nil when no frame was measured).
    var run: LatencySummary? { Self.summary(runTotal, runLink) }

    private static func summary(_ total: LatencyHistogram, _ link: LatencyHistogram) -> LatencySummary? {
        guard total.count > 0 else { return nil }
        func ms(_ us: UInt64?) -> Double { Double(us ?? 0) / 1000 }
        return LatencySummary(
            samples: total.count, p50Ms: ms(total.percentile(0.5)), p99Ms: ms(total.percentile(0.99)),
            maxMs: ms(total.maximum), linkP50Ms: ms(link.percentile(0.5)), linkP99Ms: ms(link.percentile(0.99)),
            linkMaxMs: ms(link.maximum))
    }
}
