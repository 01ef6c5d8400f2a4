/// How the engine measures: windows, warm-up, detection cadence and picture limits. Defaults follow SmartSpectra's
/// documented behaviour (pulse over ~12 s, breathing over 30 s, HRV over 60 s).
public struct VitalsEngineConfiguration: Sendable, Hashable {
    /// Pulse analysis window, seconds.
    public var pulseWindow = 12.0
    /// Seconds of face data before the first pulse rate.
    public var pulseFirstOutput = 10.0
    /// Seconds of data before pulse confidence may reach the stable threshold.
    public var pulseWarmUp = 12.0
    /// Breathing analysis window, seconds.
    public var breathingWindow = 30.0
    /// Seconds of data before the first breathing rate.
    public var breathingFirstOutput = 10.0
    /// Seconds of data before breathing confidence may reach the stable threshold.
    public var breathingWarmUp = 30.0
    /// HRV window, seconds.
    public var hrvWindow = 60.0
    /// Seconds of data before the first HRV window.
    public var hrvFirstOutput = 30.0
    /// Seconds of data before HRV confidence may reach the stable threshold.
    public var hrvWarmUp = 60.0
    /// Seconds between HRV outputs.
    public var hrvInterval = 10.0
    /// Seconds between rate updates.
    public var updateInterval = 1.0
    /// Pulse range, bpm.
    public var pulseRange: ClosedRange<Double> = 40 ... 180
    /// Breathing range, breaths/min.
    public var breathingRange: ClosedRange<Double> = 5 ... 40
    /// Seconds between full-frame searches for a rival face while a face is tracked (the tracked face itself is
    /// re-detected every ``localDetectionInterval`` frames; with no face tracked the search runs every 0.25 s). A
    /// second face then counts within this plus 0.6 s.
    public var fullDetectionInterval = 2.0
    /// Frames between local re-detections around the tracked face.
    public var localDetectionInterval = 10
    /// Below this frame rate the verdict is `frameRateTooLow`.
    public var minimumFrameRate = 22.0
    /// Face narrower than this fraction of the frame's shorter side: `faceTooFar` (0.095: 48 px at 504×896, the
    /// smallest face whose pulse the real-photograph benchmark still measures within 3 bpm; docs/VITALS-ENGINE.md).
    public var minimumFaceFraction = 0.095
    /// Face wider than this fraction of the frame's shorter side: `faceTooClose`.
    public var maximumFaceFraction = 0.7
    /// Face moving more than this fraction of its width per second: `excessiveMotion`.
    public var maximumFaceSpeed = 0.5
    /// Mean face luma below this (0–255): `tooDark`.
    public var darkLuma = 40.0
    /// Mean face luma above this (0–255): `tooBright`.
    public var brightLuma = 225.0
    /// A gap in the input longer than this (seconds) restarts the measurement.
    public var maximumGap = 1.0

    /// The defaults.
    public init() {}
}
