/// The timestamp rules of custom input, for one run: a pure value, no clock of its own.
///
/// Timestamps are microseconds on the caller's monotonic timeline, non-negative, below `Int64.max - 2`, strictly
/// increasing, and no more than two seconds (2 000 000 µs) apart. A gap of exactly 2 000 000 µs is allowed.
/// Each run (each `start()`) begins a fresh timeline: the first frame may carry any valid timestamp.
struct TimestampTimeline: Sendable, Hashable {
    /// The largest allowed distance between consecutive timestamps, in microseconds.
    static let maximumGapUs: Int64 = 2_000_000
    /// The exclusive upper bound for timestamps (`Int64.max - 2`).
    static let exclusiveUpperBoundUs: Int64 = Int64.max - 2

    /// The last accepted timestamp in this run.
    private(set) var lastTimestampUs: Int64?

    /// Checks a timestamp against the rules, in order: range, monotonicity, gap. Does not record it.
    func check(_ timestampUs: Int64) -> SmartSpectraError? {
        if timestampUs < 0 {
            return SmartSpectraError(
                code: .nonMonotonicTimestamp,
                message: "Timestamp \(timestampUs) µs is negative; timestamps are non-negative microseconds."
            )
        }
        if timestampUs >= Self.exclusiveUpperBoundUs {
            return SmartSpectraError(
                code: .nonMonotonicTimestamp,
                message: "Timestamp \(timestampUs) µs is not below Int64.max - 2."
            )
        }
        guard let last = lastTimestampUs else { return nil }
        if timestampUs <= last {
            let what = timestampUs == last ? "repeats" : "goes back from"
            return SmartSpectraError(
                code: .nonMonotonicTimestamp,
                message: "Timestamp \(timestampUs) µs \(what) the previous frame's \(last) µs; timestamps must strictly increase."
            )
        }
        // Both values lie in 0 ..< Int64.max - 2, so the difference cannot overflow.
        if timestampUs - last > Self.maximumGapUs {
            return SmartSpectraError(
                code: .timestampGap,
                message: "Timestamp \(timestampUs) µs is \(timestampUs - last) µs after the previous frame (over 2 s); "
                    + "stop and start again to begin a fresh timeline after an interruption."
            )
        }
        return nil
    }

    /// Records an accepted timestamp (already checked).
    mutating func record(_ timestampUs: Int64) {
        lastTimestampUs = timestampUs
    }
}
