/// The three headline vitals at an instant, nil where unknown: what a run line's `stats` values, `truth` and
/// `reference` hold (docs/schema/stats.json). One type for the bridge that writes them (GlassesBridge's
/// `VitalsSnapshot` is this type) and the report that reads them back (GlassesReport's `RunRecord`).
public struct VitalValues: Sendable, Hashable {
    /// Pulse rate in beats per minute.
    public var pulseRate: Double?
    /// Breathing rate in breaths per minute.
    public var breathingRate: Double?
    /// HRV as RMSSD in milliseconds.
    public var hrvRmssd: Double?

    /// Creates values; each is nil (unknown) unless given.
    public init(pulseRate: Double? = nil, breathingRate: Double? = nil, hrvRmssd: Double? = nil) {
        self.pulseRate = pulseRate
        self.breathingRate = breathingRate
        self.hrvRmssd = hrvRmssd
    }
}
