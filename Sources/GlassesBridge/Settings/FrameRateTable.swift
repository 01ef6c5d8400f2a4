import Foundation
import SmartSpectraInput

/// How far a stream frame rate can be trusted for one vital.
public enum VitalTrust: String, Sendable, Hashable {
    /// Measured against ground truth at this rate (the vitals benchmark): values may be `stable`.
    case measured
    /// Not measured at this rate: the run goes on with a warning, values are shown but never `stable`.
    case unverified
    /// The rate cannot carry this vital at all (below twice its highest frequency): asking for it is a usage error.
    case impossible
}

/// What one DAT frame rate gives: the single frame-rate table of the bridge (`docs/CLI.md` prints it).
public struct FrameRateCapability: Sendable, Hashable {
    /// Frames per second, one of DAT's 2, 7, 15, 24, 30.
    public let frameRate: UInt
    /// Pulse rate (and the pulse trace).
    public let pulse: VitalTrust
    /// HRV (beat-to-beat timing).
    public let hrv: VitalTrust
    /// Breathing rate (and the breathing traces).
    public let breathing: VitalTrust
    /// Why, in one sentence a person can act on.
    public let reason: String

    /// The trust of the vital a metric belongs to (nil for metrics outside the three: face, EDA).
    public func trust(of metric: MetricType) -> VitalTrust? {
        switch metric {
        case .pulseRate, .arterialPressureTrace: pulse
        case .hrv: hrv
        case .breathingRate, .chestBreathing, .abdomenBreathing, .breathingAmplitude, .apnea, .respiratoryLineLength,
             .baseline, .inhaleExhaleRatio: breathing
        default: nil
        }
    }
}

/// The frame-rate rule: which `--fps` values give which metrics.
///
/// The evidence: the vitals benchmark (`docs/VITALS-ENGINE.md`) measures 30 fps and 15 fps (`raw-15fps`: pulse
/// MAE 1.18 bpm, breathing 0.10 /min, RMSSD 8.9 ms), so 15, 24 and 30 are `measured` for everything. At 2 fps the
/// camera samples the pulse below its Nyquist rate (1 Hz, 60 bpm): a 72 bpm pulse reads as 48, so pulse and HRV are
/// `impossible`; breathing (0.1–1 Hz) is within reach but not measured. 7 fps (Nyquist 210 bpm) can carry a pulse
/// in principle and breathing easily, but neither is measured, and beats timed to 143 ms cannot give HRV.
public enum FrameRateTable {
    /// Every DAT rate, fastest first.
    public static let rows: [FrameRateCapability] = [
        FrameRateCapability(frameRate: 30, pulse: .measured, hrv: .measured, breathing: .measured,
                            reason: "the benchmark's reference rate"),
        FrameRateCapability(frameRate: 24, pulse: .measured, hrv: .measured, breathing: .measured,
                            reason: "between the two measured rates"),
        FrameRateCapability(frameRate: 15, pulse: .measured, hrv: .measured, breathing: .measured,
                            reason: "measured: pulse and breathing as accurate as at 30 fps, HRV coarser"),
        FrameRateCapability(frameRate: 7, pulse: .unverified, hrv: .unverified, breathing: .unverified,
                            reason: "not measured at 7 fps, and beats timed to 143 ms are too coarse for HRV"),
        FrameRateCapability(frameRate: 2, pulse: .impossible, hrv: .impossible, breathing: .unverified,
                            reason: "2 fps samples the pulse too slowly (a 72 bpm pulse reads as 48 bpm); breathing is not measured at 2 fps"),
    ]

    /// The slowest rate at which every vital is `measured`.
    public static let lowestMeasuredRate: UInt = 15

    /// The row of a rate; rates outside DAT's list get the row of the next lower DAT rate (2 below 7).
    public static func capability(at frameRate: UInt) -> FrameRateCapability {
        rows.first { $0.frameRate <= frameRate } ?? rows[rows.count - 1]
    }

    /// The usage error for asking `metrics` at `frameRate` when the rate cannot carry one of them, else nil.
    package static func refusal(frameRate: UInt, metrics: MetricSelection) -> BridgeUsageError? {
        let row = capability(at: frameRate)
        let impossible = MetricSelection.singles.filter { metrics.contains($0.metric) && row.trust(of: $0.metric) == .impossible }
        guard !impossible.isEmpty else { return nil }
        let possible = MetricSelection.bundles.filter { bundle in
            bundle.metrics.allSatisfy { row.trust(of: $0).map { $0 != .impossible } ?? false }
        }.map(\.name)
        return BridgeUsageError(
            "--fps \(frameRate) cannot measure \(impossible.map(\.name).joined(separator: ", ")): \(row.reason). "
                + "Stream at \(lowestMeasuredRate) fps or more (--fps \(lowestMeasuredRate), 24 or 30)"
                + (possible.isEmpty ? "." : ", or ask only for what \(frameRate) fps carries (--metrics \(possible.joined(separator: ",")))."))
    }

    /// The warning printed at the start of a run whose rate is not measured for some of `metrics`, else nil.
    package static func warning(frameRate: UInt, metrics: MetricSelection) -> String? {
        let row = capability(at: frameRate)
        let vitals: [(String, VitalTrust, [MetricType])] = [
            ("pulse", row.pulse, [.pulseRate, .arterialPressureTrace]), ("HRV", row.hrv, [.hrv]),
            ("breathing", row.breathing, MetricSelection.bundles[0].metrics),
        ]
        let unverified = vitals.filter { $0.1 == .unverified && $0.2.contains(where: metrics.contains) }.map(\.0)
        guard !unverified.isEmpty else { return nil }
        return "--fps \(frameRate) gives no trustworthy \(unverified.joined(separator: ", ")): \(row.reason). "
            + "Values are shown but never marked stable. Stream at \(lowestMeasuredRate) fps or more for trustworthy vitals."
    }

    /// The hint for a `frameRateTooLow` verdict on a recording that declares `fileRate` frames per second.
    package static func lowFileFrameRateHint(fileRate: UInt) -> String {
        "Frame rate too low for stable vitals: the recording is at \(fileRate) fps, below the \(lowestMeasuredRate) fps "
            + "they need (record at \(lowestMeasuredRate), 24 or 30 fps)."
    }

    /// The hint for a `frameRateTooLow` verdict on a network stream whose frames arrive at `arrivingRate`.
    package static func lowStreamFrameRateHint(arrivingRate: Double) -> String {
        let arriving = arrivingRate.rounded() == arrivingRate ? "\(Int(arrivingRate))" : String(format: "%.1f", arrivingRate)
        return "Frame rate too low: the stream arrives at \(arriving) fps; vitals need \(lowestMeasuredRate) fps or more "
            + "(set the app's frame rate to 24 or 30, or lower its resolution on a slow network)."
    }

    /// The hint for a `frameRateTooLow` verdict on a live stream asked at `askedRate` whose frames arrive at
    /// `arrivingRate`, in the table's terms (the engine's own hint names 24–30 fps, which the table contradicts:
    /// 15 fps is measured).
    package static func lowFrameRateHint(askedRate: UInt, arrivingRate: Double) -> String {
        let arriving = arrivingRate.rounded() == arrivingRate ? "\(Int(arrivingRate))" : String(format: "%.1f", arrivingRate)
        if askedRate >= lowestMeasuredRate {
            return "Frame rate too low: frames arrive at \(arriving) fps of the \(askedRate) asked for; vitals need "
                + "\(lowestMeasuredRate) fps or more (more light helps the camera keep its rate)."
        }
        return "Frame rate too low for stable vitals: \(askedRate) fps is below the \(lowestMeasuredRate) fps they need "
            + "(--fps \(lowestMeasuredRate), 24 or 30)."
    }
}
