// The metrics schema of SmartSpectra v3 (protobuf package `presage.smartspectra`), as Swift values.
// Field names follow the protobuf fields in lowerCamelCase, which is also their protobuf JSON name.

/// One sample of a measured quantity (`presage.smartspectra.Measurement`).
public struct Measurement: Sendable, Hashable {
    /// The value.
    public var value: Float
    /// Whether the value is currently reliable.
    public var stable: Bool
    /// Microseconds on the input timeline.
    public var timestamp: Int64

    /// Creates a measurement.
    public init(value: Float, stable: Bool, timestamp: Int64) {
        self.value = value
        self.stable = stable
        self.timestamp = timestamp
    }
}

/// One sample with a confidence (`presage.smartspectra.MeasurementWithConfidence`).
public struct MeasurementWithConfidence: Sendable, Hashable {
    /// The value.
    public var value: Float
    /// Whether the value is currently reliable (confidence at or above the metric's threshold).
    public var stable: Bool
    /// Confidence in percent, 0–100.
    public var confidence: Float
    /// Microseconds on the input timeline.
    public var timestamp: Int64

    /// Creates a measurement with confidence.
    public init(value: Float, stable: Bool, confidence: Float, timestamp: Int64) {
        self.value = value
        self.stable = stable
        self.confidence = confidence
        self.timestamp = timestamp
    }
}

/// Whether something was detected at an instant (`presage.smartspectra.DetectionStatus`).
public struct DetectionStatus: Sendable, Hashable {
    /// Detected or not.
    public var detected: Bool
    /// Whether the verdict is reliable.
    public var stable: Bool
    /// Microseconds on the input timeline.
    public var timestamp: Int64

    /// Creates a detection status.
    public init(detected: Bool, stable: Bool, timestamp: Int64) {
        self.detected = detected
        self.stable = stable
        self.timestamp = timestamp
    }
}

/// A single float (`presage.smartspectra.Strict`).
public struct Strict: Sendable, Hashable {
    /// The value.
    public var value: Float
    /// Creates a strict value.
    public init(value: Float = 0) { self.value = value }
}

/// Breathing metrics (`presage.smartspectra.Breathing`).
public struct Breathing: Sendable, Hashable {
    /// Breathing rate in breaths per minute.
    public var rate: [MeasurementWithConfidence] = []
    /// Upper (chest) breathing trace.
    public var upperTrace: [Measurement] = []
    /// Lower (abdomen) breathing trace.
    public var lowerTrace: [Measurement] = []
    /// Breathing amplitude.
    public var amplitude: [Measurement] = []
    /// Apnea detections.
    public var apnea: [DetectionStatus] = []
    /// Respiratory line length.
    public var respiratoryLineLength: [Measurement] = []
    /// Breathing baseline.
    public var baseline: [Measurement] = []
    /// Inhale/exhale ratio.
    public var inhaleExhaleRatio: [Measurement] = []
    /// Strict breathing rate.
    public var strict: Strict? = nil
    /// Creates empty breathing metrics.
    public init() {}
}

/// Heart-rate variability over a window (`presage.smartspectra.Hrv`).
public struct Hrv: Sendable, Hashable {
    /// Root mean square of successive NN differences, ms.
    public var rmssd: Double
    /// Mean NN interval, ms.
    public var meanNn: Double
    /// Standard deviation of NN intervals, ms.
    public var sdnn: Double
    /// Baevsky stress index, AMo / (2 · Mo · MxDMn), unitless.
    public var baevsky: Double
    /// Microseconds on the input timeline.
    public var timestamp: Int64
    /// Confidence in percent, 0–100.
    public var confidence: Float
    /// Whether the value is reliable (confidence ≥ 50).
    public var stable: Bool
    /// The floor under the RMSSD error that the beats' timing noise sets (ms): the least error any correction of
    /// that noise leaves; nil when the backend does not say. A Linux extension carried in process (the bridge's
    /// summary reports it), not part of SmartSpectra's message or its JSON.
    public var rmssdFloor: Double?

    /// Creates an HRV sample.
    public init(rmssd: Double, meanNn: Double, sdnn: Double, baevsky: Double, timestamp: Int64, confidence: Float, stable: Bool,
                rmssdFloor: Double? = nil) {
        self.rmssdFloor = rmssdFloor
        self.rmssd = rmssd
        self.meanNn = meanNn
        self.sdnn = sdnn
        self.baevsky = baevsky
        self.timestamp = timestamp
        self.confidence = confidence
        self.stable = stable
    }
}

/// Cardio metrics (`presage.smartspectra.Cardio`).
public struct Cardio: Sendable, Hashable {
    /// Pulse rate in beats per minute.
    public var pulseRate: [MeasurementWithConfidence] = []
    /// Uncalibrated, unitless pulse waveform.
    public var arterialPressureTrace: [MeasurementWithConfidence] = []
    /// HRV windows.
    public var hrv: [Hrv] = []
    /// Creates empty cardio metrics.
    public init() {}
}

/// Electrodermal-activity proxy (`presage.smartspectra.Eda`).
public struct Eda: Sendable, Hashable {
    /// The EDA proxy trace.
    public var trace: [Measurement] = []
    /// Creates empty EDA metrics.
    public init() {}
}

/// A 2-D point in pixels (`presage.smartspectra.Point2dFloat`).
public struct Point2dFloat: Sendable, Hashable {
    /// x in pixels.
    public var x: Float
    /// y in pixels.
    public var y: Float
    /// Creates a point.
    public init(x: Float, y: Float) {
        self.x = x
        self.y = y
    }
}

/// Facial landmarks at an instant (`presage.smartspectra.Landmarks`).
public struct Landmarks: Sendable, Hashable {
    /// Landmark positions.
    public var value: [Point2dFloat]
    /// Whether tracking is reliable.
    public var stable: Bool
    /// Whether tracking was re-initialised.
    public var reset: Bool
    /// Microseconds on the input timeline.
    public var timestamp: Int64
    /// Creates landmarks.
    public init(value: [Point2dFloat], stable: Bool, reset: Bool, timestamp: Int64) {
        self.value = value
        self.stable = stable
        self.reset = reset
        self.timestamp = timestamp
    }
}

/// Facial expression categories (`presage.smartspectra.ExpressionType`).
public enum ExpressionType: Int, Sendable, Hashable, CaseIterable {
    case unspecified = 0, angry = 1, contempt = 2, disgust = 3, fear = 4, happy = 5, neutral = 6, sad = 7, surprise = 8
}

/// One expression score (`presage.smartspectra.ExpressionScore`).
public struct ExpressionScore: Sendable, Hashable {
    /// The expression.
    public var type: ExpressionType
    /// Confidence in percent.
    public var confidence: Float
    /// Creates a score.
    public init(type: ExpressionType, confidence: Float) {
        self.type = type
        self.confidence = confidence
    }
}

/// Expression scores at an instant (`presage.smartspectra.Expression`).
public struct Expression: Sendable, Hashable {
    /// Whether the scores are reliable.
    public var stable: Bool
    /// Microseconds on the input timeline.
    public var timestamp: Int64
    /// Scores.
    public var scores: [ExpressionScore]
    /// Creates an expression sample.
    public init(stable: Bool, timestamp: Int64, scores: [ExpressionScore]) {
        self.stable = stable
        self.timestamp = timestamp
        self.scores = scores
    }
}

/// Face metrics (`presage.smartspectra.Face`).
public struct Face: Sendable, Hashable {
    /// Blink detections.
    public var blinking: [DetectionStatus] = []
    /// Talking detections.
    public var talking: [DetectionStatus] = []
    /// Landmarks.
    public var landmarks: [Landmarks] = []
    /// Expressions.
    public var expression: [Expression] = []
    /// Creates empty face metrics.
    public init() {}
}

/// One metrics payload (`presage.smartspectra.Metrics`): only the samples new since the previous payload.
///
/// As with protobuf messages, a sub-message is "present" when set; read `hasCardio` before `cardio`.
public struct Metrics: Sendable, Hashable {
    /// Breathing metrics (empty unless `hasBreathing`).
    public var breathing: Breathing { get { _breathing ?? Breathing() } set { _breathing = newValue } }
    /// Cardio metrics (empty unless `hasCardio`).
    public var cardio: Cardio { get { _cardio ?? Cardio() } set { _cardio = newValue } }
    /// EDA metrics (empty unless `hasEda`).
    public var eda: Eda { get { _eda ?? Eda() } set { _eda = newValue } }
    /// Face metrics (empty unless `hasFace`).
    public var face: Face { get { _face ?? Face() } set { _face = newValue } }

    /// Whether breathing is present.
    public var hasBreathing: Bool { _breathing != nil }
    /// Whether cardio is present.
    public var hasCardio: Bool { _cardio != nil }
    /// Whether EDA is present.
    public var hasEda: Bool { _eda != nil }
    /// Whether face is present.
    public var hasFace: Bool { _face != nil }

    /// Removes breathing.
    public mutating func clearBreathing() { _breathing = nil }
    /// Removes cardio.
    public mutating func clearCardio() { _cardio = nil }
    /// Removes EDA.
    public mutating func clearEda() { _eda = nil }
    /// Removes face.
    public mutating func clearFace() { _face = nil }

    private var _breathing: Breathing?
    private var _cardio: Cardio?
    private var _eda: Eda?
    private var _face: Face?

    /// Creates an empty payload.
    public init() {}
}

/// A metric the SDK can measure (`presage.smartspectra.MetricType`), with its protobuf number.
public enum MetricType: Int, Sendable, Hashable, CaseIterable {
    case chestBreathing = 0, abdomenBreathing = 1, breathingRate = 2, breathingAmplitude = 3, apnea = 4
    case respiratoryLineLength = 5, baseline = 6, inhaleExhaleRatio = 7
    case edaTrace = 10, faceLandmarks = 11, blinking = 12, talking = 13, expressions = 14
    case pulseRate = 15, arterialPressureTrace = 16, hrv = 17
}
