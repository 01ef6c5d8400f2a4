import Foundation

/// A reference heart rate read while the bridge runs (`--reference lsl:…` on a run or on `check`): what it is
/// called, and what it has given so far as a recording on the wall clock (nil before its first reading).
package struct LiveReference: Sendable {
    /// How outputs name it (`lsl:HeartRate (live)`).
    package var name: String
    /// The readings so far.
    package var recording: @Sendable () -> ReferenceRecording?

    /// Creates a live reference.
    package init(name: String, recording: @escaping @Sendable () -> ReferenceRecording?) {
        self.name = name
        self.recording = recording
    }

    /// The reference's heart rate at `time` (``ReferenceRecording/heartRate(at:)``), nil before its first reading
    /// or when no reading is near enough.
    package func heartRate(at time: Date) -> Double? {
        recording()?.heartRate(at: time)
    }
}

/// How a run's pulse agreed with a live reference, as the summary reports it: paired at each `stats` event, where
/// the bridge's latest pulse was stable and the reference had a reading within 3 s (``ReferenceRecording``'s rule).
public struct ReferenceAgreement: Sendable, Hashable {
    /// The reference's name (`lsl:HeartRate (live)`).
    public var source: String
    /// `stats` events at which the reference had a heart rate.
    public private(set) var readings = 0
    /// Of those, the ones where the bridge's pulse was stable: the pairs the errors are over.
    public private(set) var pairs = 0
    private var referenceSum = 0.0
    private var bridgeSum = 0.0
    private var absoluteErrorSum = 0.0

    /// Creates an agreement with nothing paired yet.
    public init(source: String) {
        self.source = source
    }

    /// Notes one `stats` instant: the reference's heart rate there (nil: none) and the bridge's latest pulse with
    /// its stable flag. Values that are not finite are not readings.
    public mutating func note(reference: Double?, pulse: Double?, stable: Bool) {
        guard let reference, reference.isFinite else { return }
        readings += 1
        referenceSum += reference
        guard stable, let pulse, pulse.isFinite else { return }
        pairs += 1
        bridgeSum += pulse
        absoluteErrorSum += abs(pulse - reference)
    }

    /// The mean of the reference's heart rate over its readings; nil without one.
    public var referenceMean: Double? { readings > 0 ? referenceSum / Double(readings) : nil }
    /// The mean of the bridge's stable pulse over the pairs; nil without a pair.
    public var bridgeMean: Double? { pairs > 0 ? bridgeSum / Double(pairs) : nil }
    /// The mean |bridge − reference| over the pairs, bpm; nil without a pair.
    public var meanAbsoluteError: Double? { pairs > 0 ? absoluteErrorSum / Double(pairs) : nil }
}
