import Foundation

/// A linear RGB colour with components in 0...1.
public struct LinearRGB: Sendable, Hashable, Codable {
    /// Red.
    public var r: Double
    /// Green.
    public var g: Double
    /// Blue.
    public var b: Double

    /// Creates a colour.
    public init(r: Double, g: Double, b: Double) {
        self.r = r
        self.g = g
        self.b = b
    }
}

/// How the wearer's head moves, when ``SubjectProfile/headMotion`` is on: the kinds of motion that carry the glasses'
/// camera with them. Every kind is a smooth function of time with exact rates (what the simulated IMU reads), scaled
/// by ``SubjectProfile/headMotionAmplitude``, with the seed choosing its phases and rates.
public enum WearerMotion: String, Sendable, Hashable, Codable, CaseIterable {
    /// Slow sway (sums of sines at 0.07–1.1 Hz): a wearer standing and looking at someone; what `headMotion` has
    /// always rendered.
    case drift
    /// Walking: the head pitches with every step (1.2 amplitudes at the step rate, 1.6–2.0 Hz or 96–120 a minute as
    /// the seed draws it, and 0.4 at twice it) and sways from side to side (0.8) and rolls at half the step rate, over
    /// half the slow drift. Both rates lie in the pulse band.
    case walking
    /// Nodding while listening: bursts of pitch (3 s, up to 3 amplitudes, at 1.3–2.2 Hz) every 9 s, over half the
    /// slow drift.
    case nodding
    /// Turning to a second person and back: the head turns by four amplitudes in 0.8 s, holds 4 s and turns back,
    /// every 12 s, over half the slow drift.
    case turning
}

/// Everything that describes the simulated person and the camera looking at them: vitals, skin, light, noise and
/// motion. All fields have defaults, so a scenario file only names what it changes; the same profile (seed
/// included) renders the same bytes.
public struct SubjectProfile: Sendable, Hashable, Codable {
    /// Mean pulse rate in beats per minute.
    public var pulseRate: Double
    /// Mean breathing rate in breaths per minute.
    public var breathingRate: Double
    /// Target short-term heart-rate variability: the RMSSD of the generated RR intervals, in milliseconds.
    public var hrvRMSSD: Double
    /// Depth of respiratory sinus arrhythmia as a fraction of the RR interval (RR shortens on inhalation).
    public var respiratorySinusArrhythmia: Double
    /// Peak relative modulation of the skin's green channel by the pulse (0.003 = 0.3 %).
    public var pulseAmplitude: Double
    /// Relative pulsatile strengths in R, G, B (green = 1); nil uses the blood-volume signature
    /// P_bv ≈ [0.33, 0.77, 0.53] normalised to green, jittered a little per seed (it depends on camera and light).
    public var pulseSignature: LinearRGB?
    /// Skin albedo; nil picks one of several skin tones from the seed.
    public var skinTone: LinearRGB?
    /// Illuminant intensity, 1 = nominal (0.2 is a dim room, 1.4 bright).
    public var lightingLevel: Double
    /// Slow illumination drift shared by all channels, as a relative amplitude (0.02 = ±2 %).
    public var lightingDrift: Double
    /// Temporal sensor noise, standard deviation in luma LSB (chroma gets half).
    public var sensorNoise: Double
    /// Whether the wearer's head (and so the glasses' camera) moves, shifting and rolling the whole scene.
    public var headMotion: Bool
    /// Amplitude of the wearer's head motion as a fraction of the frame width.
    public var headMotionAmplitude: Double
    /// How the wearer's head moves when ``headMotion`` is on (``WearerMotion/drift`` by default).
    public var wearerMotion: WearerMotion
    /// Vertical chest excursion at full inhalation, as a fraction of the frame height (the head moves a quarter).
    public var breathingAmplitude: Double
    /// Seed for everything random: beat-to-beat variability, texture, noise, motion.
    public var seed: UInt64

    /// Creates a profile; the defaults describe a calm adult at 72 bpm and 15 breaths/min in normal light.
    public init(
        pulseRate: Double = 72,
        breathingRate: Double = 15,
        hrvRMSSD: Double = 40,
        respiratorySinusArrhythmia: Double = 0.03,
        pulseAmplitude: Double = 0.003,
        pulseSignature: LinearRGB? = nil,
        skinTone: LinearRGB? = nil,
        lightingLevel: Double = 1,
        lightingDrift: Double = 0,
        sensorNoise: Double = 2,
        headMotion: Bool = false,
        headMotionAmplitude: Double = 0.015,
        wearerMotion: WearerMotion = .drift,
        breathingAmplitude: Double = 0.008,
        seed: UInt64 = 1
    ) {
        self.pulseRate = pulseRate
        self.breathingRate = breathingRate
        self.hrvRMSSD = hrvRMSSD
        self.respiratorySinusArrhythmia = respiratorySinusArrhythmia
        self.pulseAmplitude = pulseAmplitude
        self.pulseSignature = pulseSignature
        self.skinTone = skinTone
        self.lightingLevel = lightingLevel
        self.lightingDrift = lightingDrift
        self.sensorNoise = sensorNoise
        self.headMotion = headMotion
        self.headMotionAmplitude = headMotionAmplitude
        self.wearerMotion = wearerMotion
        self.breathingAmplitude = breathingAmplitude
        self.seed = seed
    }

    /// The fields a scenario's `subject` may set (the JSON keys).
    public static var fieldNames: [String] { CodingKeys.allCases.map(\.rawValue) }

    private enum CodingKeys: String, CodingKey, CaseIterable {
        case pulseRate, breathingRate, hrvRMSSD, respiratorySinusArrhythmia, pulseAmplitude, pulseSignature, skinTone,
             lightingLevel, lightingDrift, sensorNoise, headMotion, headMotionAmplitude, wearerMotion, breathingAmplitude, seed
    }

    /// Decodes a profile; every key is optional and falls back to the default.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let d = SubjectProfile()
        pulseRate = try c.decodeIfPresent(Double.self, forKey: .pulseRate) ?? d.pulseRate
        breathingRate = try c.decodeIfPresent(Double.self, forKey: .breathingRate) ?? d.breathingRate
        hrvRMSSD = try c.decodeIfPresent(Double.self, forKey: .hrvRMSSD) ?? d.hrvRMSSD
        respiratorySinusArrhythmia = try c.decodeIfPresent(Double.self, forKey: .respiratorySinusArrhythmia)
            ?? d.respiratorySinusArrhythmia
        pulseAmplitude = try c.decodeIfPresent(Double.self, forKey: .pulseAmplitude) ?? d.pulseAmplitude
        pulseSignature = try c.decodeIfPresent(LinearRGB.self, forKey: .pulseSignature)
        skinTone = try c.decodeIfPresent(LinearRGB.self, forKey: .skinTone)
        lightingLevel = try c.decodeIfPresent(Double.self, forKey: .lightingLevel) ?? d.lightingLevel
        lightingDrift = try c.decodeIfPresent(Double.self, forKey: .lightingDrift) ?? d.lightingDrift
        sensorNoise = try c.decodeIfPresent(Double.self, forKey: .sensorNoise) ?? d.sensorNoise
        headMotion = try c.decodeIfPresent(Bool.self, forKey: .headMotion) ?? d.headMotion
        headMotionAmplitude = try c.decodeIfPresent(Double.self, forKey: .headMotionAmplitude) ?? d.headMotionAmplitude
        wearerMotion = try c.decodeIfPresent(WearerMotion.self, forKey: .wearerMotion) ?? d.wearerMotion
        breathingAmplitude = try c.decodeIfPresent(Double.self, forKey: .breathingAmplitude) ?? d.breathingAmplitude
        seed = try c.decodeIfPresent(UInt64.self, forKey: .seed) ?? d.seed
    }

    /// The pulse rates a profile may ask for, bpm.
    public static let pulseRateRange = 25.0...240
    /// The breathing rates a profile may ask for, breaths per minute.
    public static let breathingRateRange = 3.0...60
    /// The RMSSD a profile may ask for, ms.
    public static let hrvRMSSDRange = 0.0...250
    /// The pulse amplitudes a profile may ask for, as a fraction of the skin's green.
    public static let pulseAmplitudeRange = 0.0...0.05
    /// The lighting levels a profile may ask for (1 = nominal).
    public static let lightingLevelRange = 0.05...2.0
    /// The sensor noise a profile may ask for, luma LSB.
    public static let sensorNoiseRange = 0.0...40

    /// A bound of these ranges as the commands' messages and help texts write it: `25`, `0.05`, never `25.0`.
    public static func format(_ value: Double) -> String { String(format: "%g", value) }

    /// `range` as `low...high` (`25...240`).
    static func text(_ range: ClosedRange<Double>) -> String { "\(format(range.lowerBound))...\(format(range.upperBound))" }

    /// Checks that every value is physically sensible.
    /// - Throws: ``SimulatorError`` with code `invalidProfile` naming the first bad field.
    public func validate() throws(SimulatorError) {
        func check(_ ok: Bool, _ field: String, _ rule: String) throws(SimulatorError) {
            if !ok { throw SimulatorError(.invalidProfile, "\(field) \(rule)", context: ["field": field]) }
        }
        try check(Self.pulseRateRange.contains(pulseRate), "pulseRate", "must be \(Self.text(Self.pulseRateRange)) bpm")
        try check(Self.breathingRateRange.contains(breathingRate), "breathingRate",
                  "must be \(Self.text(Self.breathingRateRange)) breaths/min")
        try check(Self.hrvRMSSDRange.contains(hrvRMSSD), "hrvRMSSD", "must be \(Self.text(Self.hrvRMSSDRange)) ms")
        try check((0...0.2).contains(respiratorySinusArrhythmia), "respiratorySinusArrhythmia", "must be 0...0.2")
        try check(Self.pulseAmplitudeRange.contains(pulseAmplitude), "pulseAmplitude", "must be \(Self.text(Self.pulseAmplitudeRange))")
        try check(Self.lightingLevelRange.contains(lightingLevel), "lightingLevel", "must be \(Self.text(Self.lightingLevelRange))")
        try check((0...0.5).contains(lightingDrift), "lightingDrift", "must be 0...0.5")
        try check(Self.sensorNoiseRange.contains(sensorNoise), "sensorNoise", "must be \(Self.text(Self.sensorNoiseRange)) LSB")
        try check((0...0.2).contains(headMotionAmplitude), "headMotionAmplitude", "must be 0...0.2")
        try check((0...0.1).contains(breathingAmplitude), "breathingAmplitude", "must be 0...0.1")
        for (name, colour) in [("pulseSignature", pulseSignature), ("skinTone", skinTone)] {
            if let colour {
                try check([colour.r, colour.g, colour.b].allSatisfy { $0.isFinite && (0...1.5).contains($0) }, name,
                          "components must be 0...1.5")
            }
        }
    }
}

/// An error of the simulator: a code, a message a person can act on, and context.
public struct SimulatorError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }
        /// A subject profile value is out of range.
        public static let invalidProfile = Code("invalidProfile")
        /// A scenario file could not be read or makes no sense.
        public static let invalidScenario = Code("invalidScenario")
        /// An image or video file for the feed could not be used.
        public static let invalidFeed = Code("invalidFeed")
        /// The encoder failed.
        public static let encoderFailed = Code("encoderFailed")
        /// An output file could not be written.
        public static let outputFailed = Code("outputFailed")
        /// A fault cannot be injected on this link (garbage bytes need a socket with a raw-byte writer).
        public static let faultUnavailable = Code("faultUnavailable")
        /// A command-line argument is wrong.
        public static let invalidArgument = Code("invalidArgument")
        /// The code's name.
        public var description: String { name }
    }

    /// The kind of failure.
    public var code: Code
    /// A message a person can act on.
    public var message: String
    /// Extra facts (file, field, line).
    public var context: [String: String]

    /// Creates an error.
    public init(_ code: Code, _ message: String, context: [String: String] = [:]) {
        self.code = code
        self.message = message
        self.context = context
    }

    /// `code: message`.
    public var description: String { "\(code): \(message)" }
}
