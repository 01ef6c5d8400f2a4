import Foundation

/// The shapes of the simulated physiological signals, as pure functions of the phase within one cycle.
public enum Waveforms {
    /// Photoplethysmogram shape over one beat, unit peak, zero at both ends of the beat.
    ///
    /// A systolic wave (steep rise, peak at 18 % of the interval), a dicrotic notch near 35 % and a smaller
    /// diastolic wave near 45 %, built from two Gaussians with the endpoint values removed linearly so that
    /// consecutive beats join without a step.
    /// - Parameter phase: position within the beat, 0..<1.
    public static func ppg(phase: Double) -> Double {
        @inline(__always) func raw(_ x: Double) -> Double {
            let s = (x - 0.18) / 0.062
            let d = (x - 0.45) / 0.10
            return Foundation.exp(-0.5 * s * s) + 0.42 * Foundation.exp(-0.5 * d * d)
        }
        let start = raw(0), end = raw(1)
        let value = raw(phase) - (start * (1 - phase) + end * phase)
        return value / ppgPeak
    }

    /// One beat's pulse as a function of the time since its onset, in units of the nominal beat period: the shape
    /// of ``ppg(phase:)`` (unit peak at 0.18), zero at the onset and from about 0.75 on, never negative.
    ///
    /// The systolic peak follows the onset by a fixed delay (the pulse arrival time), whatever the next interval:
    /// a beat's timing in the wave is its own, as in a real photoplethysmogram, so beat-to-beat variability survives
    /// into the peaks. Consecutive pulses overlap and add.
    public static func ppgPulse(sinceOnset x: Double) -> Double {
        guard x > 0 else { return 0 }
        @inline(__always) func raw(_ x: Double) -> Double {
            let s = (x - 0.18) / 0.062
            let d = (x - 0.45) / 0.10
            return Foundation.exp(-0.5 * s * s) + 0.42 * Foundation.exp(-0.5 * d * d)
        }
        return max(0, raw(x) - raw(0)) / ppgPeak
    }

    /// The maximum of the un-normalised shape (computed once).
    private static let ppgPeak: Double = {
        func raw(_ x: Double) -> Double {
            let s = (x - 0.18) / 0.062
            let d = (x - 0.45) / 0.10
            return Foundation.exp(-0.5 * s * s) + 0.42 * Foundation.exp(-0.5 * d * d)
        }
        let start = raw(0), end = raw(1)
        var peak = 0.0
        for i in 0...2000 {
            let x = Double(i) / 2000
            peak = max(peak, raw(x) - (start * (1 - x) + end * x))
        }
        return peak
    }()

    /// Lung volume over one breath, 0 (fully exhaled) to 1 (fully inhaled): inhalation takes the first 40 %.
    /// - Parameter phase: position within the breath, 0..<1.
    public static func breathing(phase: Double) -> Double {
        if phase < 0.4 {
            return (1 - Foundation.cos(Double.pi * phase / 0.4)) / 2
        }
        return (1 + Foundation.cos(Double.pi * (phase - 0.4) / 0.6)) / 2
    }
}
