import Foundation

/// Follows the pulse across successive spectra, so that one window dominated by noise or by the codec's rhythm does
/// not move the reported rate, and a slow pulse is not read as its harmonic.
///
/// Each update adds the window's fused spectrum (normalised) to a running sum that forgets with ``memory`` per
/// update (about four windows' worth), picks among its peaks the one that is strongest once weighted by a prior
/// centred on the rate reported before (a Gaussian of ``jumpWidth`` over a floor of ``priorFloor``: a new rhythm
/// must be about twice as strong to take over at once, and takes over in a few updates when it persists), then
/// prefers a peak at half the chosen frequency (within ``harmonicTolerance``) when that one is at least
/// ``subharmonicShare`` as strong (the chosen peak is then the pulse's harmonic). The rate is read off the current window's spectrum near the chosen peak.
struct PulseTracker {
    /// How much of the running spectrum each update keeps.
    static let memory = 0.75
    /// The prior's standard deviation, Hz (0.15 Hz = 9 bpm).
    static let jumpWidth = 0.15
    /// The prior far from the previous rate, relative to its peak.
    static let priorFloor = 0.5
    /// A peak at half the frequency at least this strong (relative) is the fundamental.
    static let subharmonicShare = 0.6
    /// How close to exactly half the frequency that peak must be, Hz (a harmonic is exactly twice its fundamental;
    /// a codec's rhythm near half a fast pulse is not, and must not halve it).
    static let harmonicTolerance = 0.025
    /// A sub-harmonic within this of the band's low edge (Hz; 0.1 Hz = 6 bpm) is not taken for the fundamental.
    static let edgeGuard = 0.1

    private var frequencies: [Double] = []
    private var accumulated: [Double] = []
    /// The frequency reported last, Hz.
    private(set) var frequency: Double?

    /// Forgets everything (a restarted measurement).
    mutating func reset() {
        frequencies = []
        accumulated = []
        frequency = nil
    }

    /// Takes the window's fused, normalised spectrum and returns the pulse frequency (Hz). A peak within
    /// ``harmonicTolerance`` of one of `videoLines` (Hz, the video's own rhythms, see ``SpectralLineFinder``) is never
    /// taken for the fundamental of the chosen one: a codec's 60 bpm refresh is exactly half a 120 bpm pulse.
    mutating func update(_ spectrum: BandSpectrum, videoLines: [Double] = []) -> Double {
        let power = spectrum.power
        guard power.count >= 3, spectrum.frequencies.count == power.count else { return spectrum.peak.frequency }
        if frequencies != spectrum.frequencies {
            frequencies = spectrum.frequencies
            accumulated = power
            frequency = nil
        } else {
            for i in accumulated.indices { accumulated[i] = Self.memory * accumulated[i] + power[i] }
        }
        let peaks = accumulated.indices.dropFirst().dropLast().filter {
            accumulated[$0] >= accumulated[$0 - 1] && accumulated[$0] > accumulated[$0 + 1]
        }
        guard !peaks.isEmpty else { return spectrum.peak.frequency }
        func prior(_ f: Double) -> Double {
            guard let previous = frequency else { return 1 }
            let d = (f - previous) / Self.jumpWidth
            return Self.priorFloor + (1 - Self.priorFloor) * exp(-0.5 * d * d)
        }
        var chosen = peaks.max { accumulated[$0] * prior(frequencies[$0]) < accumulated[$1] * prior(frequencies[$1]) }!
        // Harmonic check: a strong peak at half the frequency is the fundamental.
        let half = frequencies[chosen] / 2
        // Not near the band's low edge, where slow drift and the codec's slowest rhythms pile up.
        if half >= frequencies[0] + Self.edgeGuard,
           !videoLines.contains(where: { abs($0 - half) <= Self.harmonicTolerance }),
           let sub = peaks.filter({ abs(frequencies[$0] - half) <= Self.harmonicTolerance }).max(by: { accumulated[$0] < accumulated[$1] }),
           accumulated[sub] >= Self.subharmonicShare * accumulated[chosen] {
            chosen = sub
        }
        // The current window's own peak near the chosen one, refined by a parabola (the running sum's when the
        // window has no peak there).
        let step = frequencies[1] - frequencies[0]
        let reach = max(1, Int((0.08 / step).rounded()))
        let near = (max(1, chosen - reach) ... max(1, min(power.count - 2, chosen + reach)))
            .filter { power[$0] >= power[$0 - 1] && power[$0] > power[$0 + 1] }
        let (index, source) = near.max(by: { power[$0] < power[$1] }).map { ($0, power) } ?? (chosen, accumulated)
        var f = frequencies[index]
        let a = source[index - 1], b = source[index], c = source[index + 1]
        let denom = a - 2 * b + c
        if denom != 0 { f += max(-0.5, min(0.5, 0.5 * (a - c) / denom)) * step }
        frequency = f
        return f
    }
}
