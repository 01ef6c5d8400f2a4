import Foundation

/// Follows the pulse across successive spectra, so that one window dominated by noise or by the codec's rhythm does
/// not move the reported rate, and a slow pulse is not read as its harmonic.
///
/// Each update adds the window's fused spectrum (normalised) to a running sum that forgets with ``memory`` per
/// update (about four windows' worth), picks among its peaks the one that is strongest once weighted by a prior
/// centred on the rate reported before (a Gaussian of ``jumpWidth`` over a floor of ``priorFloor``: a new rhythm
/// must be about twice as strong to take over at once, and takes over in a few updates when it persists), then
/// prefers a peak at half the chosen frequency (within ``harmonicTolerance``) when that one is at least
/// ``subharmonicShare`` as strong (the chosen peak is then the pulse's harmonic), unless the tracker has held the
/// chosen rate for ``heldUpdates`` updates: a harmonic relation with a held rate is a reason for doubt, not for a
/// switch. The rate is read off the current window's spectrum near the chosen peak.
///
/// After each update ``pair`` holds the line at about half or twice the chosen rate, if there is one, with what the
/// running spectra say about it (the relative power, the third harmonic of the lower rate in the wide-band
/// spectrum, whether the tracker reported the other rate lately), for ``HarmonicCheck`` to judge with the engine's
/// own evidence (the beats in the time domain, the methods); ``sinceHarmonicMove`` counts the updates since the
/// reported rate last moved by about a factor two.
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

    /// A rate reported for this many updates in a row is held: a line at half of it no longer takes over by the
    /// harmonic check (it becomes doubt, ``HarmonicCheck``).
    static let heldUpdates = 4
    /// How many recent reported rates the tracker remembers, and how many of them at the other rate of a harmonic
    /// pair make that rate one the tracker "held" (``HarmonicEvidence/heldOther``).
    static let historyLength = 20
    static let heldOtherCount = 5
    /// Updates after a move by about a factor two during which the new rate is not stable (persistence).
    static let harmonicPersistence = 6

    private var frequencies: [Double] = []
    private var accumulated: [Double] = []
    private var wideFrequencies: [Double] = []
    private var wideAccumulated: [Double] = []
    /// The frequency reported last, Hz.
    private(set) var frequency: Double?
    /// The last ``historyLength`` reported frequencies, oldest first.
    private var history: [Double] = []
    /// The line at about half or twice the rate chosen by the last update, with the spectra's evidence about it
    /// (``HarmonicEvidence/beatsAtHigh`` and ``HarmonicEvidence/methodsOther`` are left for the engine to fill).
    private(set) var pair: HarmonicEvidence?
    /// Updates since the reported rate moved by about a factor two (large when it never did).
    private(set) var sinceHarmonicMove = Int.max / 2
    /// Whether the last update's rate jumped by more than ``jumpWidth`` from the one before.
    private(set) var jumped = false

    /// Forgets everything (a restarted measurement).
    mutating func reset() {
        frequencies = []
        accumulated = []
        wideFrequencies = []
        wideAccumulated = []
        frequency = nil
        history = []
        pair = nil
        sinceHarmonicMove = Int.max / 2
        jumped = false
    }

    /// The running wide-band spectrum (the best method's wave beyond the pulse band, for the harmonics), if any.
    var wideSpectrum: BandSpectrum? {
        wideAccumulated.isEmpty ? nil : BandSpectrum(frequencies: wideFrequencies, power: wideAccumulated)
    }

    /// Whether the rate `f` (Hz) was held in the recent history: reported within ``HarmonicCheck/ratioTolerance``
    /// of it at least ``heldOtherCount`` times in the last ``historyLength`` updates.
    func recentlyHeld(_ f: Double) -> Bool {
        history.filter { HarmonicCheck.near($0, f) }.count >= Self.heldOtherCount
    }

    /// Takes the window's fused, normalised spectrum and returns the pulse frequency (Hz). A peak within
    /// ``harmonicTolerance`` of one of `videoLines` (Hz, the video's own rhythms, see ``SpectralLineFinder``) is never
    /// taken for the fundamental of the chosen one: a codec's 60 bpm refresh is exactly half a 120 bpm pulse.
    ///
    /// `wide` is the window's normalised spectrum of the best method's wave over a wider band (up to at least three
    /// times the pulse band's middle, where the frame rate allows), kept as a running sum like the pulse band's: what
    /// ``pair`` reads the third harmonic from. Without it the pair's ``HarmonicEvidence/oddHarmonic`` is false.
    mutating func update(_ spectrum: BandSpectrum, videoLines: [Double] = [], wide: BandSpectrum? = nil) -> Double {
        pair = nil
        let power = spectrum.power
        guard power.count >= 3, spectrum.frequencies.count == power.count else { return spectrum.peak.frequency }
        if frequencies != spectrum.frequencies {
            frequencies = spectrum.frequencies
            accumulated = power
            frequency = nil
        } else {
            for i in accumulated.indices { accumulated[i] = Self.memory * accumulated[i] + power[i] }
        }
        if let wide, wide.power.count == wide.frequencies.count, !wide.power.isEmpty {
            if wideFrequencies != wide.frequencies {
                wideFrequencies = wide.frequencies
                wideAccumulated = wide.power
            } else {
                for i in wideAccumulated.indices { wideAccumulated[i] = Self.memory * wideAccumulated[i] + wide.power[i] }
            }
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
        // Harmonic check: a strong peak at half the frequency is the fundamental, unless the chosen rate is the one
        // held for the last updates (then the half is doubt, judged below, not a switch).
        let half = frequencies[chosen] / 2
        let held = history.count >= Self.heldUpdates
            && history.suffix(Self.heldUpdates).allSatisfy { abs($0 - frequencies[chosen]) <= Self.jumpWidth / 3 }
        // Not near the band's low edge, where slow drift and the codec's slowest rhythms pile up.
        if !held, half >= frequencies[0] + Self.edgeGuard,
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
        jumped = frequency.map { abs(f - $0) > Self.jumpWidth } ?? false
        if let previous = frequency, HarmonicCheck.near(f, 2 * previous) || HarmonicCheck.near(f, previous / 2) {
            sinceHarmonicMove = 0
        } else {
            sinceHarmonicMove += 1
        }
        pair = harmonicPair(of: chosen, peaks: peaks, videoLines: videoLines)
        frequency = f
        history.append(f)
        if history.count > Self.historyLength { history.removeFirst(history.count - Self.historyLength) }
        return f
    }

    /// The strongest line of the running spectrum at about twice or half the peak `chosen` (an index), judged by
    /// its share of the chosen peak's power against ``HarmonicCheck/partnerShare`` (twice) and
    /// ``HarmonicCheck/subharmonicShare`` (half; never one of `videoLines`, nor near the band's low edge), with the
    /// evidence the spectra and the history hold about it; nil when there is none.
    private func harmonicPair(of chosen: Int, peaks: [Int], videoLines: [Double]) -> HarmonicEvidence? {
        let fc = frequencies[chosen], pc = accumulated[chosen]
        guard pc > 0 else { return nil }
        let doubles = peaks.filter { HarmonicCheck.near(frequencies[$0], 2 * fc) }
        let halves = peaks.filter { index in
            HarmonicCheck.near(frequencies[index], fc / 2) && frequencies[index] >= frequencies[0] + Self.edgeGuard
                && !videoLines.contains { abs($0 - frequencies[index]) <= Self.harmonicTolerance }
        }
        let double = doubles.max { accumulated[$0] < accumulated[$1] }
        let halfLine = halves.max { accumulated[$0] < accumulated[$1] }
        // The candidate whose power relative to its threshold is the larger asks the question.
        let doubleScore = double.map { accumulated[$0] / pc / HarmonicCheck.partnerShare } ?? 0
        let halfScore = halfLine.map { accumulated[$0] / pc / HarmonicCheck.subharmonicShare } ?? 0
        let evidence: HarmonicEvidence
        if let double, doubleScore >= 1, doubleScore >= halfScore {
            evidence = HarmonicEvidence(low: fc, high: frequencies[double], choseLow: true,
                                        highOverLow: accumulated[double] / pc, oddHarmonic: oddHarmonic(of: fc),
                                        beatsAtHigh: nil, heldOther: recentlyHeld(frequencies[double]), methodsOther: false)
        } else if let halfLine, halfScore >= 1 {
            let fl = frequencies[halfLine]
            evidence = HarmonicEvidence(low: fl, high: fc, choseLow: false, highOverLow: pc / max(accumulated[halfLine], .leastNonzeroMagnitude),
                                        oddHarmonic: oddHarmonic(of: fl), beatsAtHigh: nil, heldOther: recentlyHeld(fl),
                                        methodsOther: false)
        } else {
            // No line at about twice or half; the rate held before may still be one (a move).
            if recentlyHeld(2 * fc) {
                return HarmonicEvidence(low: fc, high: 2 * fc, choseLow: true, highOverLow: 0, oddHarmonic: oddHarmonic(of: fc),
                                        beatsAtHigh: nil, heldOther: true, methodsOther: false)
            }
            if recentlyHeld(fc / 2) {
                return HarmonicEvidence(low: fc / 2, high: fc, choseLow: false, highOverLow: .infinity,
                                        oddHarmonic: oddHarmonic(of: fc / 2), beatsAtHigh: nil, heldOther: true, methodsOther: false)
            }
            return nil
        }
        var noted = evidence
        if let wide = wideSpectrum, let strength = HarmonicCheck.oddHarmonicStrength(wide, of: evidence.low) {
            noted.oddShareSeen = strength.share
            noted.oddProminenceSeen = strength.prominence
        }
        return noted
    }

    /// Whether the running wide-band spectrum holds a third harmonic of `f` (``HarmonicCheck/hasOddHarmonic(_:of:)``).
    private func oddHarmonic(of f: Double) -> Bool {
        guard let wide = wideSpectrum else { return false }
        return HarmonicCheck.hasOddHarmonic(wide, of: f)
    }
}
