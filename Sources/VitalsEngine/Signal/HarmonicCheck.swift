import Foundation

/// Why a pulse rate is given but not as stable: it stands in a harmonic relation (about twice or half) with another
/// rhythm that could be the pulse instead, and the evidence does not settle which (docs/VITALS-ENGINE.md, *Half and
/// double rates*).
package enum PulseDoubt: String, Sendable, Hashable, CaseIterable {
    /// The spectrum holds a line at about half or twice the rate, and the harmonic structure, the beat intervals,
    /// the methods or the rate held before do not all agree on which of the two is the pulse.
    case harmonicSplit
    /// The rate moved to about half or twice the rate reported before, and has not yet held long enough.
    case harmonicMove
    /// The rate jumped by more than the tracker's prior width (9 bpm) since the update before: a new rhythm is
    /// stable from its second update on, not on a single window.
    case rateJump
    /// The rate sits on a line of the wearer's own rhythmic rotation, as the glasses' IMU measured it (a walk's step
    /// or sway): the skin's colour echoes it however much of the echo the fit took out, so the rate may be the
    /// motion's (``VitalsEngine/addRotationRate(at:across:down:)``).
    case motionRhythm
}

/// A rate and a line at about half or twice it (`low` × 2 ≈ `high`, Hz), with what the spectra show about which of
/// the two is the pulse: the evidence ``HarmonicCheck/doubt(_:)`` judges.
package struct HarmonicEvidence: Sendable, Hashable {
    /// The lower of the two rates, Hz.
    package var low: Double
    /// The higher, Hz.
    package var high: Double
    /// Whether the tracker chose the lower.
    package var choseLow: Bool
    /// Power at `high` over power at `low` in the tracker's running spectrum (the fused methods, pulse band).
    package var highOverLow: Double
    /// Whether the running spectrum of the wide-band wave holds a line at 3 × `low` (the third harmonic a pulse at
    /// `low` has; a pulse at `high` has nothing there, its harmonics being even multiples of `low`).
    package var oddHarmonic: Bool
    /// The third harmonic's share of the lower rate's power and its prominence over the noise around it (for the
    /// benchmark's trace); nil when not measured.
    package var oddShareSeen: Double? = nil
    package var oddProminenceSeen: Double? = nil
    /// Of the beats found in the time domain (peaks of the wave passed from 0.7 × `low` to 1.4 × `high`), the share
    /// of intervals nearer one period of `high` than of `low`; nil with fewer than four intervals near either.
    package var beatsAtHigh: Double?
    /// Whether the tracker reported the other rate of the two for several of its recent updates.
    package var heldOther: Bool
    /// Whether a method nearly as strong as the best reads the other rate.
    package var methodsOther: Bool

    /// `"57.5/115.0 bpm, chose 57.5: high/low 0.52, odd harmonic no, beats at high 0.40, held other no, methods other no"`.
    package var summary: String {
        let beats = beatsAtHigh.map { String(format: "%.2f", $0) } ?? "--"
        return String(format: "%.1f/%.1f bpm, chose %.1f: high/low %.2f, ", low * 60, high * 60, (choseLow ? low : high) * 60, highOverLow)
            + "odd harmonic \(oddHarmonic ? "yes" : "no")"
            + (oddShareSeen.map { String(format: " (%.3f, %.1f×)", $0, oddProminenceSeen ?? 0) } ?? "") + ", beats at high \(beats), held other \(heldOther ? "yes" : "no"), "
            + "methods other \(methodsOther ? "yes" : "no")"
    }
}

/// The rule that turns a harmonic relation into doubt rather than into a switch (docs/VITALS-ENGINE.md, *Half and
/// double rates*). A real pulse at f has its harmonic at 2f (and at 3f); a pulse at 2f has nothing at f or 3f. So:
///
/// - a rate with a line at twice it (at least ``partnerShare`` of its power) is stable only when that line is
///   explained as its harmonic: its own third harmonic is there, the line at twice it is not the stronger, no
///   method nearly as strong reads the double, and the tracker has not been reporting the double;
/// - a rate with a line at half it (at least ``subharmonicShare`` of its power, and not one of the video's own
///   lines) is stable only when that line is not a pulse: weaker than the rate's, without the third harmonic a pulse
///   there would have, the beats at the rate's period, no method and no recent track on the half.
///
/// Anything else is split evidence: the value is reported, never as stable.
enum HarmonicCheck {
    /// A line at twice the chosen rate with at least this share of its power asks the question.
    static let partnerShare = 0.3
    /// A line at half the chosen rate with at least this share of its power asks the question.
    static let subharmonicShare = 0.5
    /// How far (relative) a line may be from exactly twice or half to count as one: "about" a factor two.
    static let ratioTolerance = 0.06
    /// A third harmonic counts when its power is at least this share of the fundamental's (wide-band wave) …
    /// The simulator's pulse wave carries 0.31 in its third harmonic; on the real-photograph clips after HEVC the
    /// running spectrum read 0.08–0.6 on a 55 bpm pulse; a sinusoidal line (light, the codec, motion) under a
    /// 115 bpm pulse read 0.001–0.006 in `HarmonicTrapTests`.
    static let oddShare = 0.05
    /// … and this many times the median of the spectrum within 0.5 Hz of it: after HEVC the 55 bpm pulse's third
    /// harmonic stood 1–5 times over its neighbours, so the share, not the prominence, tells a pulse from a line.
    static let oddProminence = 2.0

    /// The doubt the evidence leaves about the chosen rate, or nil when it supports it.
    static func doubt(_ e: HarmonicEvidence) -> PulseDoubt? {
        if e.choseLow {
            guard e.highOverLow >= partnerShare else { return e.heldOther ? .harmonicMove : nil }
            // The beats are not asked here: a real slow pulse's sharp systolic wave and its harmonic give peaks at
            // the double's period too (0.7–1.0 of the intervals on the photographs' 55 bpm clips after HEVC).
            let supported = e.oddHarmonic && e.highOverLow <= 1 && !e.heldOther && !e.methodsOther
            return supported ? nil : .harmonicSplit
        } else {
            let lowOverHigh = e.highOverLow > 0 ? 1 / e.highOverLow : .infinity
            guard lowOverHigh >= subharmonicShare else { return e.heldOther ? .harmonicMove : nil }
            let supported = !e.oddHarmonic && lowOverHigh < 1 && (e.beatsAtHigh ?? 1) > 0.5 && !e.heldOther && !e.methodsOther
            return supported ? nil : .harmonicSplit
        }
    }

    /// Whether `a` is within ``ratioTolerance`` of `b` (relative).
    static func near(_ a: Double, _ b: Double) -> Bool {
        b > 0 && abs(a - b) <= ratioTolerance * b
    }

    /// The share of beat intervals nearer the period of `high` than of `low` (both Hz), from the positive peaks of
    /// `wave` (sampled at `fs`, already passed around both rates) at least 0.6 of `high`'s period apart; nil with
    /// fewer than four intervals within 25 % of either period.
    static func beatsAtHigh(_ wave: [Double], rate fs: Double, low: Double, high: Double) -> Double? {
        guard fs > 0, low > 0, high > low else { return nil }
        let peaks = HRVMeasures.peakPositions(wave, minDistance: max(2, Int(0.6 * fs / high)))
        guard peaks.count >= 3 else { return nil }
        let periodHigh = fs / high, periodLow = fs / low
        var atHigh = 0, atLow = 0
        for k in 1 ..< peaks.count {
            let d = peaks[k] - peaks[k - 1]
            if abs(d - periodHigh) <= 0.25 * periodHigh { atHigh += 1 } else if abs(d - periodLow) <= 0.25 * periodLow { atLow += 1 }
        }
        guard atHigh + atLow >= 4 else { return nil }
        return Double(atHigh) / Double(atHigh + atLow)
    }

    /// Whether `spectrum` (a wide-band power spectrum) holds a third harmonic of `f` (Hz): the strongest bin within
    /// ``ratioTolerance`` of 3f has at least ``oddShare`` of the strongest within it of f and ``oddProminence``
    /// times the median of the bins within 0.5 Hz of 3f (the line's own ±0.1 Hz left out).
    static func hasOddHarmonic(_ spectrum: BandSpectrum, of f: Double) -> Bool {
        guard let strength = oddHarmonicStrength(spectrum, of: f) else { return false }
        return strength.share >= oddShare && strength.prominence >= oddProminence
    }

    /// The strongest bin within ``ratioTolerance`` of 3f: its power as a share of the strongest within it of f, and
    /// over the median of the bins within 0.5 Hz of 3f (the line's own ±0.1 Hz left out); nil where the spectrum does
    /// not reach.
    static func oddHarmonicStrength(_ spectrum: BandSpectrum, of f: Double) -> (share: Double, prominence: Double)? {
        let third = 3 * f
        func strongest(near target: Double) -> Double? {
            zip(spectrum.frequencies, spectrum.power).filter { near($0.0, target) }.map(\.1).max()
        }
        guard let p1 = strongest(near: f), let p3 = strongest(near: third), p1 > 0 else { return nil }
        let around = zip(spectrum.frequencies, spectrum.power)
            .filter { abs($0.0 - third) <= 0.5 && abs($0.0 - third) > 0.1 }.map(\.1)
        guard around.count >= 8 else { return nil }
        let floor = SignalMath.median(around)
        return (p3 / p1, floor > 0 ? p3 / floor : .infinity)
    }
}
