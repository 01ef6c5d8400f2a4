import Foundation

/// Finds persistent narrow lines: bins that a pair of spectra (same grid) hold high window after window.
///
/// The engine runs two. One watches the background's chroma (Cb and Cr), for the video's own rhythms: the
/// background beside the head carries no pulse, so a persistent line there is the video's, such as a codec's
/// refresh (1 s at the glasses' GOP, so 60 bpm and its harmonic at 120). The other watches the tracked face
/// position (x and y), for the lines of a camera shaking at a steady rhythm, whose echo in the skin the linear
/// motion removal may leave behind.
///
/// Each update expresses every bin of both spectra as its prominence (power over that spectrum's median, the
/// larger of the two) and adds it to a running mean that keeps ``memory`` of itself per update: noise spikes (5–15
/// times the median in a 12 s window) average out, a line repeated every window stays 10–140 times. Bins whose
/// mean prominence exceeds ``prominence`` (after at least three updates) are the lines.
struct SpectralLineFinder {
    /// How much of the running prominence each update keeps (about four windows' worth).
    static let memory = 0.75
    /// Mean prominence above which a bin belongs to a line.
    static let prominence = 12.0

    private var frequencies: [Double] = []
    private var mean: [Double] = []
    private var updates = 0

    /// Forgets everything (a restarted measurement).
    mutating func reset() {
        frequencies = []
        mean = []
        updates = 0
    }

    /// Takes one window's pair of spectra (same grid: Cb and Cr, or x and y); ``mask`` and ``lines`` then say
    /// what they hold.
    mutating func update(_ first: BandSpectrum, _ second: BandSpectrum) {
        guard first.frequencies == second.frequencies, first.power.count >= 3 else { return }
        func ratio(_ p: [Double]) -> [Double] {
            let median = p.sorted()[p.count / 2]
            return median > 0 ? p.map { $0 / median } : p.map { _ in 0 }
        }
        let prominence = zip(ratio(first.power), ratio(second.power)).map { max($0, $1) }
        if frequencies != first.frequencies {
            frequencies = first.frequencies
            mean = prominence
            updates = 1
        } else {
            for i in mean.indices { mean[i] = Self.memory * mean[i] + (1 - Self.memory) * prominence[i] }
            updates += 1
        }
    }

    /// The current mask on the last grid (empty before the first update): 0 where a line is, 1 elsewhere.
    var mask: [Double] {
        // A single window cannot tell a line from a noise spike: the first updates mask nothing.
        guard updates >= 3 else { return mean.map { _ in 1 } }
        return mean.map { $0 > Self.prominence ? 0 : 1 }
    }

    /// The centre frequencies (Hz) of the lines found: the strongest bin of each run of masked bins.
    var lines: [Double] {
        let m = mask
        var result: [Double] = []
        var i = 0
        while i < m.count {
            guard m[i] == 0 else { i += 1; continue }
            var best = i
            while i < m.count, m[i] == 0 {
                if mean[i] > mean[best] { best = i }
                i += 1
            }
            result.append(frequencies[best])
        }
        return result
    }
}
