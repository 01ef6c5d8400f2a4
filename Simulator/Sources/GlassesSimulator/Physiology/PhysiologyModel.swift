import Foundation

/// Generates heartbeats and breathing incrementally and deterministically from a ``SubjectProfile``.
///
/// Beats are generated one RR interval at a time: the mean interval of the current target rate, shortened on
/// inhalation (respiratory sinus arrhythmia), plus a slow 0.1 Hz (Mayer wave) component and white beat-to-beat
/// jitter sized so the RMSSD of the intervals approaches the profile's target. Breathing is a phase integrated
/// at 20 Hz from a rate that wanders slowly (±4 %) around its target. Generation only ever extends the series,
/// so the result does not depend on the order in which times are queried.
public struct PhysiologyModel: Sendable {
    /// Breathing samples per second.
    public static let breathingSampleRate: Double = 20

    private var profile: SubjectProfile
    private var targetPulseRate: Double
    private var targetBreathingRate: Double
    private var beatRandom: SeededRandom
    private var breathRandom: SeededRandom
    private let lfPhase: Double
    private var breathRateWander: Double = 0
    private(set) var beatTimes: [Double] = []
    private(set) var breathPhase: [Double] = [0]
    private(set) var breathRate: [Double] = []

    /// Creates a model at time zero.
    public init(profile: SubjectProfile) {
        self.profile = profile
        self.targetPulseRate = profile.pulseRate
        self.targetBreathingRate = profile.breathingRate
        var setup = SeededRandom(seed: profile.seed, stream: 1)
        self.lfPhase = setup.uniform(0...(2 * Double.pi))
        self.beatRandom = SeededRandom(seed: profile.seed, stream: 2)
        self.breathRandom = SeededRandom(seed: profile.seed, stream: 3)
        let initialBreathPhase = setup.unit()
        self.breathPhase = [initialBreathPhase]
        self.breathRate = [profile.breathingRate]
        // Start mid-beat so that time zero is not always a beat onset.
        self.beatTimes = [-setup.unit() * 60 / profile.pulseRate]
    }

    /// Changes the mean pulse rate for beats generated from now on.
    public mutating func setPulseRate(_ bpm: Double) { targetPulseRate = min(max(bpm, 25), 240) }
    /// Changes the mean breathing rate for breathing generated from now on.
    public mutating func setBreathingRate(_ brpm: Double) { targetBreathingRate = min(max(brpm, 3), 60) }

    /// The time through which beats and breathing exist.
    public var generatedThrough: Double {
        min(beatTimes.last ?? 0, Double(breathPhase.count - 1) / Self.breathingSampleRate)
    }

    /// Extends beats and breathing so that both cover `time` (plus the current beat's end).
    public mutating func generate(through time: Double) {
        let dt = 1 / Self.breathingSampleRate
        while Double(breathPhase.count - 1) * dt < time + 1 {
            // Ornstein–Uhlenbeck wander of the breathing rate (time constant 20 s, ±4 %).
            breathRateWander += -breathRateWander * dt / 20 + 0.04 * (2 * dt / 20).squareRoot() * breathRandom.gaussian()
            let rate = targetBreathingRate * (1 + breathRateWander)
            breathRate.append(rate)
            breathPhase.append(breathPhase[breathPhase.count - 1] + rate / 60 * dt)
        }
        while (beatTimes.last ?? 0) <= time + 0.5 {
            let t = beatTimes[beatTimes.count - 1]
            let meanRR = 60 / targetPulseRate
            // Respiratory sinus arrhythmia, scaled down if it alone would exceed the RMSSD target.
            let breathHz = targetBreathingRate / 60
            var rsa = profile.respiratorySinusArrhythmia
            let rsaRMSSD = Self.rsaRMSSD(depth: rsa, meanRR: meanRR, breathHz: breathHz)
            let target = profile.hrvRMSSD / 1000
            if rsaRMSSD > 0.7 * target, rsaRMSSD > 0 { rsa *= 0.7 * target / rsaRMSSD }
            let rsaPart = Self.rsaRMSSD(depth: rsa, meanRR: meanRR, breathHz: breathHz)
            let jitter = (max(0, target * target - rsaPart * rsaPart) / 2).squareRoot()
            let phase = breathingPhase(at: max(t, 0))
            let lf = 0.6 * target * Foundation.sin(2 * Double.pi * 0.1 * t + lfPhase)
            var rr = meanRR * (1 - rsa * Foundation.sin(2 * Double.pi * phase)) + lf + jitter * beatRandom.gaussian()
            rr = min(max(rr, 0.25), 2.4)
            beatTimes.append(t + rr)
        }
    }

    private static func rsaRMSSD(depth: Double, meanRR: Double, breathHz: Double) -> Double {
        2 * depth * meanRR * abs(Foundation.sin(Double.pi * breathHz * meanRR)) / 2.0.squareRoot()
    }

    /// Cumulative breathing cycles at `time` (linear between samples).
    func breathingPhase(at time: Double) -> Double {
        Self.interpolate(breathPhase, at: time)
    }

    static func interpolate(_ series: [Double], at time: Double) -> Double {
        let x = max(0, time) * breathingSampleRate
        let i = Int(x)
        if i >= series.count - 1 { return series[series.count - 1] }
        let f = x - Double(i)
        return series[i] * (1 - f) + series[i + 1] * f
    }

    /// A snapshot of everything generated so far.
    public var groundTruth: GroundTruth {
        GroundTruth(beatTimes: beatTimes, breathPhase: breathPhase, breathRate: breathRate)
    }
}
