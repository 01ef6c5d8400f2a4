/// What the engine reports about the picture, in SmartSpectra's terms (the adapter maps these to validation codes).
public enum VitalsCondition: String, Sendable, Hashable, CaseIterable {
    /// One face, well lit, steady, measurable.
    case ok
    /// No face in view.
    case noFaceFound
    /// More than one face in view.
    case multipleFacesFound
    /// The face (or the frame) is too dark.
    case tooDark
    /// The face (or the frame) is too bright or clipped.
    case tooBright
    /// The face or the camera moves too much.
    case excessiveMotion
    /// Frames arrive too slowly.
    case frameRateTooLow
    /// The face fills too much of the frame or is cut off by its edges.
    case faceTooClose
    /// The face is too small in the frame.
    case faceTooFar

    /// A hint a person can act on.
    public var hint: String {
        switch self {
        case .ok: "Measuring: hold still and breathe normally."
        case .noFaceFound: "No face found: turn toward the person and keep their whole face in view."
        case .multipleFacesFound: "Several faces in view: keep only one person in front of the camera."
        case .tooDark: "Too dark: add light in front of the face or move to a brighter place."
        case .tooBright: "Too bright: move out of direct sunlight or away from the glare."
        case .excessiveMotion: "Too much motion: keep your head steady for a few seconds."
        case .frameRateTooLow: "Frame rate too low: stream at 24–30 fps (more light helps the camera keep its rate)."
        case .faceTooClose: "Face too close: step back so the whole face and shoulders are in view."
        case .faceTooFar: "Face too far: move closer so the face fills more of the view."
        }
    }
}

/// A rate sample (pulse in bpm or breathing in breaths/min) with its confidence.
public struct VitalsRateSample: Sendable, Hashable {
    /// The rate.
    public var value: Double
    /// Confidence in percent, 0–100 (from spectral SNR, held below the stable threshold during warm-up).
    public var confidence: Double
    /// Microseconds on the input timeline.
    public var timestampUs: Int64
}

/// One sample of a waveform (pulse wave or breathing trace), unitless.
public struct VitalsTraceSample: Sendable, Hashable {
    /// The value.
    public var value: Double
    /// Microseconds on the input timeline.
    public var timestampUs: Int64
}

/// What the engine read off one frame with a face: the raw material of its estimates, for a caller that streams
/// waveforms frame by frame without reading the pixels a second time.
public struct VitalsFrameMeasurement: Sendable, Hashable {
    /// Mean red of the forehead and cheeks (0–255), sampled at the tracked sub-pixel position; one continuous series
    /// while the face is tracked (a new detection's regions are scaled to the level of the ones before).
    public var skinRed: Double
    /// Mean green of the forehead and cheeks (0–255).
    public var skinGreen: Double
    /// Mean blue of the forehead and cheeks (0–255).
    public var skinBlue: Double
    /// Vertical displacement of the upper chest band below the face, px (content moving down is positive), one
    /// continuous series while the face is tracked; nil when the band is outside the frame or has no texture.
    public var upperChest: Double?
    /// Vertical displacement of the lower chest band, px; nil as for ``upperChest``.
    public var lowerChest: Double?
    /// Vertical displacement of the background beside the head (the median of its regions), px; nil when it has
    /// no texture to follow.
    public var background: Double?
    /// Horizontal displacement of the background beside the head, px (content moving right is positive); nil as for
    /// ``background``. With ``background``, the camera's own motion: what ``MotionClockAlignment`` sets against an
    /// IMU's rotation.
    public var backgroundHorizontal: Double? = nil
}

/// One HRV window.
public struct VitalsHRVSample: Sendable, Hashable {
    /// The measures.
    public var measures: HRVMeasures
    /// Confidence in percent, 0–100.
    public var confidence: Double
    /// Microseconds on the input timeline (end of the window).
    public var timestampUs: Int64
}

/// What one call of ``VitalsEngine/process(_:timestampUs:)`` produced: the verdict on this frame and the samples
/// that are new since the previous call (empty most frames; filled about once a second).
public struct VitalsFrameResult: Sendable, Hashable {
    /// The verdict on the picture.
    public var condition: VitalsCondition
    /// The tracked face, if any, in frame pixels.
    public var face: VitalsRect?
    /// What was read off this frame's face and chest (nil without a face, and for a frame out of order).
    public var measurement: VitalsFrameMeasurement?
    /// New pulse-rate samples, bpm.
    public var pulseRate: [VitalsRateSample] = []
    /// New pulse-wave samples (the best method's band-passed wave), unitless.
    public var pulseWave: [VitalsTraceSample] = []
    /// Confidence of the pulse wave samples (that of the latest pulse rate).
    public var pulseWaveConfidence: Double = 0
    /// New breathing-rate samples, breaths/min.
    public var breathingRate: [VitalsRateSample] = []
    /// New upper (chest and shoulders) breathing-trace samples, pixels of vertical motion relative to the background.
    public var upperBreathingTrace: [VitalsTraceSample] = []
    /// New lower (lower chest) breathing-trace samples, pixels.
    public var lowerBreathingTrace: [VitalsTraceSample] = []
    /// Confidence of the breathing traces (that of the latest breathing rate).
    public var breathingTraceConfidence: Double = 0
    /// New HRV windows.
    public var hrv: [VitalsHRVSample] = []
    /// The method that currently has the best pulse signal.
    public var pulseMethod: PulseMethod? = nil
    /// Why this frame's pulse rate, if any, is not stable although its confidence might be: a line at about half or
    /// twice it that the evidence does not rule out (``PulseDoubt``); nil when there is no such doubt.
    package var pulseDoubt: PulseDoubt? = nil
    /// The evidence about a line at about half or twice this frame's pulse rate, when there was one (for the
    /// benchmark's trace).
    package var pulseHarmonic: HarmonicEvidence? = nil
}

/// The confidence thresholds at or above which SmartSpectra calls a value stable.
public enum VitalsStability {
    /// Pulse rate and pulse wave: confidence ≥ 40 (about ±3 bpm).
    public static let pulse = 40.0
    /// Breathing rate and traces: confidence ≥ 45 (about ±1 breath/min).
    public static let breathing = 45.0
    /// HRV: confidence ≥ 50 (about ±5 ms).
    public static let hrv = 50.0
}
