/// The one place where `Duration` becomes microseconds, milliseconds or seconds and back.
///
/// Presentation times travel as microseconds (the link, files, custom input's timestamps), schedulers count in
/// `Duration`, and displays in seconds. Conversions to integers saturate instead of trapping, because durations
/// can come from a device or a file.
extension Duration {
    /// Whole microseconds, truncated toward zero and saturated at `Int64`'s range.
    public var wholeMicroseconds: Int64 { Self.saturatedUnits(self, perSecond: 1_000_000) }

    /// Whole milliseconds, truncated toward zero and saturated at `Int64`'s range.
    public var wholeMilliseconds: Int64 { Self.saturatedUnits(self, perSecond: 1_000) }

    /// Whole nanoseconds, truncated toward zero and saturated at `Int64`'s range.
    public var wholeNanoseconds: Int64 { Self.saturatedUnits(self, perSecond: 1_000_000_000) }

    /// The duration in seconds.
    public var inSeconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }

    /// A duration from a count of seconds that may be absurd; nil when it is not finite or beyond ±2^62 s.
    public static func checkedSeconds(_ seconds: Double) -> Duration? {
        guard seconds.isFinite, abs(seconds) < 4.6e18 else { return nil }
        let whole = seconds.rounded(.towardZero)
        let attoseconds = ((seconds - whole) * 1e18).rounded()
        return Duration(secondsComponent: Int64(whole), attosecondsComponent: Int64(attoseconds))
    }

    private static func saturatedUnits(_ duration: Duration, perSecond units: Int64) -> Int64 {
        let (seconds, attoseconds) = duration.components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: units)
        if overflow { return seconds < 0 ? .min : .max }
        let fraction = attoseconds / (1_000_000_000_000_000_000 / units)
        let (total, sumOverflow) = scaled.addingReportingOverflow(fraction)
        if sumOverflow { return seconds < 0 ? .min : .max }
        return total
    }
}
