/// The group a metric belongs to (`presage.smartspectra.FeatureType`), one per ``Metrics`` sub-message.
public enum FeatureType: Int, Sendable, Hashable, CaseIterable {
    /// ``Breathing``.
    case breathing = 0
    /// ``Eda``.
    case eda = 2
    /// ``Face``.
    case face = 3
    /// ``Cardio``.
    case cardio = 4
}

extension MetricType {
    /// The breathing bundle, also the default when no metrics are requested: chest and abdomen traces, rate,
    /// amplitude, apnea, respiratory line length, baseline and inhale/exhale ratio.
    public static let breathingBundle: [MetricType] = [
        .chestBreathing, .abdomenBreathing, .breathingRate, .breathingAmplitude, .apnea,
        .respiratoryLineLength, .baseline, .inhaleExhaleRatio,
    ]
    /// The cardio bundle: pulse rate, arterial pressure trace and HRV.
    public static let cardioBundle: [MetricType] = [.pulseRate, .arterialPressureTrace, .hrv]
    /// The face bundle: landmarks, blinking, talking and expressions.
    public static let faceBundle: [MetricType] = [.faceLandmarks, .blinking, .talking, .expressions]
    /// The EDA bundle: the EDA proxy trace.
    public static let edaBundle: [MetricType] = [.edaTrace]

    /// The feature (``Metrics`` sub-message) the metric is reported in.
    public var feature: FeatureType {
        switch self {
        case .chestBreathing, .abdomenBreathing, .breathingRate, .breathingAmplitude, .apnea,
             .respiratoryLineLength, .baseline, .inhaleExhaleRatio: .breathing
        case .edaTrace: .eda
        case .faceLandmarks, .blinking, .talking, .expressions: .face
        case .pulseRate, .arterialPressureTrace, .hrv: .cardio
        }
    }

    /// The protobuf enum value name, e.g. `PULSE_RATE`.
    public var protoName: String {
        switch self {
        case .chestBreathing: "CHEST_BREATHING"
        case .abdomenBreathing: "ABDOMEN_BREATHING"
        case .breathingRate: "BREATHING_RATE"
        case .breathingAmplitude: "BREATHING_AMPLITUDE"
        case .apnea: "APNEA"
        case .respiratoryLineLength: "RESPIRATORY_LINE_LENGTH"
        case .baseline: "BASELINE"
        case .inhaleExhaleRatio: "INHALE_EXHALE_RATIO"
        case .edaTrace: "EDA_TRACE"
        case .faceLandmarks: "FACE_LANDMARKS"
        case .blinking: "BLINKING"
        case .talking: "TALKING"
        case .expressions: "EXPRESSIONS"
        case .pulseRate: "PULSE_RATE"
        case .arterialPressureTrace: "ARTERIAL_PRESSURE_TRACE"
        case .hrv: "HRV"
        }
    }

    /// Removes repeated metrics, keeping the first occurrence of each, in order.
    public static func deduplicated(_ metrics: [MetricType]) -> [MetricType] {
        var seen = Set<MetricType>()
        return metrics.filter { seen.insert($0).inserted }
    }

    /// The metrics a run measures for a requested list: nil means the breathing bundle; duplicates collapse.
    public static func effectiveSet(for requested: [MetricType]?) -> Set<MetricType> {
        Set(requested ?? breathingBundle)
    }
}

extension Metrics {
    /// Returns the payload with every field the requested set does not cover emptied, and every feature with no
    /// requested metric removed (so `hasCardio` is false unless a cardio metric was requested).
    ///
    /// `breathing.strict` travels with `breathingRate`.
    public func restricted(to requested: Set<MetricType>) -> Metrics {
        var result = self
        let features = Set(requested.map(\.feature))
        if !features.contains(.breathing) {
            result.clearBreathing()
        } else if hasBreathing {
            if !requested.contains(.breathingRate) {
                result.breathing.rate = []
                result.breathing.strict = nil
            }
            if !requested.contains(.chestBreathing) { result.breathing.upperTrace = [] }
            if !requested.contains(.abdomenBreathing) { result.breathing.lowerTrace = [] }
            if !requested.contains(.breathingAmplitude) { result.breathing.amplitude = [] }
            if !requested.contains(.apnea) { result.breathing.apnea = [] }
            if !requested.contains(.respiratoryLineLength) { result.breathing.respiratoryLineLength = [] }
            if !requested.contains(.baseline) { result.breathing.baseline = [] }
            if !requested.contains(.inhaleExhaleRatio) { result.breathing.inhaleExhaleRatio = [] }
        }
        if !features.contains(.cardio) {
            result.clearCardio()
        } else if hasCardio {
            if !requested.contains(.pulseRate) { result.cardio.pulseRate = [] }
            if !requested.contains(.arterialPressureTrace) { result.cardio.arterialPressureTrace = [] }
            if !requested.contains(.hrv) { result.cardio.hrv = [] }
        }
        if !features.contains(.eda) { result.clearEda() }
        if !features.contains(.face) {
            result.clearFace()
        } else if hasFace {
            if !requested.contains(.faceLandmarks) { result.face.landmarks = [] }
            if !requested.contains(.blinking) { result.face.blinking = [] }
            if !requested.contains(.talking) { result.face.talking = [] }
            if !requested.contains(.expressions) { result.face.expression = [] }
        }
        return result
    }

    /// Whether the payload carries no sample at all (sub-messages may still be present but empty).
    public var isEmpty: Bool {
        breathing == Breathing() && cardio == Cardio() && eda == Eda() && face == Face()
    }
}
