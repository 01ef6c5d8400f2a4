import Foundation
import Testing
@testable import VitalsEngine

@Suite("Estimators on synthetic signals")
struct EstimatorTests {
    /// A skin trace at `fs` Hz: skin tone × (1 + pulse along `signature`) × a shared lighting drift, plus noise.
    static func trace(bpm: Double, seconds: Double, fs: Double, signature: (Double, Double, Double), amplitude: Double,
                      seed: UInt64 = 7) -> (r: [Double], g: [Double], b: [Double]) {
        var rng = SplitMix(seed: seed)
        let n = Int(seconds * fs)
        var r = [Double](), g = [Double](), b = [Double]()
        for i in 0 ..< n {
            let t = Double(i) / fs
            let p = sin(2 * .pi * bpm / 60 * t) + 0.3 * sin(4 * .pi * bpm / 60 * t + 0.8)
            let light = 1 + 0.03 * sin(2 * .pi * 0.07 * t) + 0.01 * sin(2 * .pi * 0.3 * t)
            r.append(170 * light * (1 + amplitude * signature.0 * p) + rng.gaussian() * 0.05)
            g.append(120 * light * (1 + amplitude * signature.1 * p) + rng.gaussian() * 0.05)
            b.append(95 * light * (1 + amplitude * signature.2 * p) + rng.gaussian() * 0.05)
        }
        return (r, g, b)
    }

    @Test("POS, CHROM, GREEN and LUMA find the pulse under lighting drift", arguments: [48.0, 72.0, 96.0, 140.0])
    func pulseRate(bpm: Double) {
        let x = Self.trace(bpm: bpm, seconds: 12, fs: 30, signature: (0.43, 1, 0.69), amplitude: 0.003)
        let a = PulseAnalysis.analyse(r: x.r, g: x.g, b: x.b, rate: 30, low: 40, high: 180)
        #expect(abs(a.rate - bpm) < 1)
        #expect(a.snr > 3)
        #expect(VitalsEngine.confidence(snr: a.snr) >= VitalsStability.pulse)
        for method in PulseMethod.allCases { #expect(abs(a.methods[method]!.rate - bpm) < 2, "\(method)") }
    }

    @Test("after a codec erased the chroma (equal change in R, G, B), LUMA or GREEN carries the fusion")
    func lumaOnlyPulse() {
        // The pulse as HEVC leaves it: the same absolute change in every channel.
        var rng = SplitMix(seed: 3)
        let fs = 30.0, n = 360
        var r = [Double](), g = [Double](), b = [Double]()
        for i in 0 ..< n {
            let t = Double(i) / fs
            let p = 0.3 * sin(2 * .pi * 1.3 * t)
            let light = 1 + 0.02 * sin(2 * .pi * 0.05 * t)
            r.append(170 * light + p + rng.gaussian() * 0.08)
            g.append(120 * light + p + rng.gaussian() * 0.08)
            b.append(95 * light + p + rng.gaussian() * 0.08)
        }
        let a = PulseAnalysis.analyse(r: r, g: g, b: b, rate: fs, low: 40, high: 180)
        #expect(a.best == .luma || a.best == .green)
        #expect(a.methods[.luma]!.snr > a.methods[.pos]!.snr + 3)
        #expect(abs(a.rate - 78) < 1.5)
    }

    /// A skin trace as HEVC at 2 Mbit/s leaves a dark, fast subject: the pulse (144 bpm) as a small luma change
    /// about as large as the codec's noise, and the codec's refresh rhythm (55 bpm, with its harmonic) in chroma
    /// only (BT.601 Cb and Cr, so luma does not see it).
    static func codecTrace(seed: UInt64 = 5) -> (r: [Double], g: [Double], b: [Double]) {
        var rng = SplitMix(seed: seed)
        var r = [Double](), g = [Double](), b = [Double]()
        for i in 0 ..< 360 {
            let t = Double(i) / 30
            let y = 80 + 0.15 * sin(2 * .pi * 2.4 * t) + rng.gaussian() * 0.3
            let rhythm = 0.25 * (sin(2 * .pi * 0.92 * t) + 0.5 * sin(4 * .pi * 0.92 * t + 0.4))
            let cb = -6 + rhythm + rng.gaussian() * 0.3, cr = 10 + 0.7 * rhythm + rng.gaussian() * 0.3
            r.append(y + 1.402 * cr)
            g.append(y - 0.344_136 * cb - 0.714_136 * cr)
            b.append(y + 1.772 * cb)
        }
        return (r, g, b)
    }

    @Test("with chroma as clean as luma the three chroma methods outvote LUMA on a codec rhythm")
    func chromaRhythmWinsUnpenalised() {
        let x = Self.codecTrace()
        let a = PulseAnalysis.analyse(r: x.r, g: x.g, b: x.b, rate: 30, low: 40, high: 180, chromaExcess: 0)
        #expect(abs(a.methods[.luma]!.rate - 144) < 1.5)
        #expect(abs(a.rate - 55.2) < 2, "the failure mode this trace reproduces: \(a.rate) bpm, \(a.methods)")
    }

    @Test("at the chroma excess HEVC at 2 Mbit/s shows (1.5–3), LUMA carries the fusion", arguments: [1.5, 2.5])
    func chromaPenaltyHandsOverToLuma(excess: Double) {
        let x = Self.codecTrace()
        let a = PulseAnalysis.analyse(r: x.r, g: x.g, b: x.b, rate: 30, low: 40, high: 180, chromaExcess: excess)
        #expect(a.best == .luma)
        #expect(abs(a.rate - 144) < 1.5, "\(a.methods)")
    }

    @Test("the chroma penalty: none up to the tolerance, then the excess amplitude in dB")
    func chromaPenaltyScale() {
        #expect(PulseAnalysis.chromaPenalty(excess: 0) == 0)
        #expect(PulseAnalysis.chromaPenalty(excess: PulseAnalysis.chromaTolerance) == 0)
        #expect(abs(PulseAnalysis.chromaPenalty(excess: 10 * PulseAnalysis.chromaTolerance) - 20) < 1e-9)
    }

    /// Background colour at 30 Hz for 12 s: a grey wall under drifting light with camera noise, plus `chromaSteps`
    /// (the amplitude of a 1 Hz step rhythm in Cb, as a codec's refresh leaves it).
    static func background(chromaSteps: Double, seed: UInt64 = 9) -> (times: [Double], colours: [RGB]) {
        var rng = SplitMix(seed: seed)
        var times = [Double](), colours = [RGB]()
        for i in 0 ..< 360 {
            let t = Double(i) / 30
            let light = 1 + 0.004 * sin(2 * .pi * 0.3 * t) + 0.002 * sin(2 * .pi * 1.7 * t)
            let cb = chromaSteps * (t.truncatingRemainder(dividingBy: 1) < 0.5 ? 1 : -1)
            let y = 140 * light + rng.gaussian() * 0.02
            colours.append(RGB(r: 150 * light + rng.gaussian() * 0.02, g: y - 0.344_136 * cb, b: 120 * light + 1.772 * cb))
            times.append(t)
        }
        return (times, colours)
    }

    @Test("chroma excess: below the tolerance for light changes, above it for a chroma refresh rhythm")
    func chromaExcessFromBackground() {
        let still = Self.background(chromaSteps: 0)
        let lit = VitalsEngine.chromaExcess(times: still.times, colours: still.colours, from: 0, to: 11.9, rate: 30, low: 0.67, high: 3)
        #expect(lit < PulseAnalysis.chromaTolerance)
        let coded = Self.background(chromaSteps: 0.3)
        let stepped = VitalsEngine.chromaExcess(times: coded.times, colours: coded.colours, from: 0, to: 11.9, rate: 30, low: 0.67, high: 3)
        #expect(stepped > 2 * PulseAnalysis.chromaTolerance)
        // Too little to judge by, or nothing varying at all: no verdict.
        #expect(VitalsEngine.chromaExcess(times: Array(still.times.prefix(20)), colours: Array(still.colours.prefix(20)),
                                          from: 0, to: 0.6, rate: 30, low: 0.67, high: 3) == 0)
        let flat = [RGB](repeating: RGB(r: 100, g: 100, b: 100), count: 360)
        #expect(VitalsEngine.chromaExcess(times: still.times, colours: flat, from: 0, to: 11.9, rate: 30, low: 0.67, high: 3) == 0)
    }

    @Test("skin trace: a chroma rhythm the background shares is taken out when the video's chroma is noisy, and only then")
    func backgroundRhythmRemoved() throws {
        let engine = try VitalsEngine()
        // The skin: a 108 bpm pulse (mostly green, as blood absorbs it), the background's light, and the codec's
        // 1 s chroma steps at 1.5 times the background's.
        func samples(chromaSteps: Double) -> [VitalsEngine.Sample] {
            let background = Self.background(chromaSteps: chromaSteps)
            return background.times.indices.map { i in
                let t = background.times[i], bg = background.colours[i]
                let light = bg.r / 150
                let pulse = 0.25 * sin(2 * .pi * 1.8 * t)
                let cb = 1.5 * chromaSteps * (t.truncatingRemainder(dividingBy: 1) < 0.5 ? 1 : -1)
                let skin = RGB(r: 160 * light + 0.33 * pulse, g: 120 * light + pulse - 0.344_136 * cb, b: 100 * light + 0.53 * pulse + 1.772 * cb)
                return VitalsEngine.Sample(t: t, rgb: skin, faceX: 0, faceY: 0, motion: [0, 0, 0, 0], upper: nil, lower: nil,
                                           background: nil, backgroundRGB: bg)
            }
        }
        let coded = engine.skinTrace(samples(chromaSteps: 0.3), from: 0, to: 11.9, rate: 30)
        #expect(coded.chromaExcess > PulseAnalysis.chromaTolerance)
        let analysis = PulseAnalysis.analyse(r: coded.r, g: coded.g, b: coded.b, rate: 30, low: 40, high: 180,
                                             chromaExcess: coded.chromaExcess)
        // Every method finds the pulse: the steps (CHROM and GREEN read 60 bpm without the removal) and the light's
        // flicker at 1.7 Hz (LUMA reads 101) are what the skin shares with the background.
        for method in PulseMethod.allCases {
            #expect(abs(analysis.methods[method]!.rate - 108) < 2, "\(method) reads \(analysis.methods[method]!.rate) bpm")
        }
        #expect(abs(analysis.rate - 108) < 2, "fused \(analysis.rate) bpm")
        // Uncompressed: the background's chroma is no noisier than its luma, so it is left out and the skin's own
        // light change stays in the trace (the estimators' normalisation deals with it).
        let still = samples(chromaSteps: 0)
        let plain = engine.skinTrace(still, from: 0, to: 11.9, rate: 30)
        #expect(plain.chromaExcess <= PulseAnalysis.chromaTolerance)
        let green = SignalMath.resample(times: still.map(\.t), values: still.map(\.rgb.g), start: 0, rate: 30, count: plain.g.count)
        #expect(zip(plain.g, green).allSatisfy { abs($0 - $1) < 1e-9 })
    }

    @Test("a flat trace has no confident pulse")
    func noise() {
        var rng = SplitMix(seed: 11)
        let n = 360
        let r = (0 ..< n).map { _ in 150 + rng.gaussian() }, g = (0 ..< n).map { _ in 110 + rng.gaussian() }
        let b = (0 ..< n).map { _ in 90 + rng.gaussian() }
        let a = PulseAnalysis.analyse(r: r, g: g, b: b, rate: 30, low: 40, high: 180)
        #expect(VitalsEngine.confidence(snr: a.snr) < VitalsStability.pulse)
    }

    @Test("HRV measures from known NN intervals")
    func hrvFromIntervals() throws {
        let nn = [800.0, 820, 790, 810, 805, 830, 780]
        let m = try #require(HRVMeasures.from(intervals: nn))
        let diffs = zip(nn.dropFirst(), nn).map { $0 - $1 }
        let rmssd = (diffs.map { $0 * $0 }.reduce(0, +) / Double(diffs.count)).squareRoot()
        #expect(abs(m.rmssd - rmssd) < 1e-9)
        #expect(abs(m.meanNN - nn.reduce(0, +) / 7) < 1e-9)
        #expect(m.baevsky > 0)
        #expect(HRVMeasures.from(intervals: [800, 810]) == nil)
    }

    @Test("beat detection with sub-frame timing recovers RMSSD from a 30 fps pulse wave")
    func beatTiming() throws {
        var rng = SplitMix(seed: 5)
        var beats: [Double] = [0.3]
        var ibis: [Double] = []
        for _ in 0 ..< 70 {
            let ibi = 0.82 + 0.04 * rng.gaussian()
            ibis.append(ibi * 1000)
            beats.append(beats.last! + ibi)
        }
        let fs = 30.0
        let n = Int(beats.last! * fs)
        // A pulse-like wave: a smooth bump at every beat.
        let wave = (0 ..< n).map { i -> Double in
            let t = Double(i) / fs
            return beats.reduce(0) { acc, b in acc + exp(-pow((t - b) / 0.12, 2)) } - 0.3
        }
        let (runs, accepted, _) = HRVMeasures.intervals(wave: wave, rate: fs, expectedRate: 60_000 / 820)
        let m = try #require(HRVMeasures.from(runs: runs, acceptedFraction: accepted))
        let truth = try #require(HRVMeasures.from(intervals: ibis))
        #expect(accepted > 0.95)
        #expect(abs(m.rmssd - truth.rmssd) < 8)
        #expect(abs(m.meanNN - truth.meanNN) < 5)
    }

    @Test("RMSSD never takes a successive difference across a rejected beat")
    func runsSplitAtRejectedBeats() throws {
        // Two runs whose ends differ by 200 ms: joined they would add a 200 ms successive difference.
        let m = try #require(HRVMeasures.from(runs: [[800, 810, 800], [1000, 1010, 1000]]))
        #expect(abs(m.rmssd - 10) < 1e-9)
        #expect(m.intervalCount == 6)
        #expect(HRVMeasures.from(runs: [[800], [810], [820]]) == nil)
    }

    @Test("beat-timing noise is read from the intervals and removed from RMSSD")
    func timingNoiseCorrection() throws {
        var rng = SplitMix(seed: 21)
        // White RR variability (RMSSD 20 ms) observed through beat times with 12 ms errors.
        var beat = 0.0, beats: [Double] = [], rr: [Double] = []
        for _ in 0 ..< 400 {
            let interval = 420 + 14.14 * rng.gaussian()
            rr.append(interval)
            beat += interval
            beats.append(beat + 12 * rng.gaussian())
        }
        let observed = zip(beats.dropFirst(), beats).map { $0 - $1 }
        let truth = try #require(HRVMeasures.from(intervals: rr))
        let raw = try #require(HRVMeasures.from(intervals: observed))
        let noise = HRVMeasures.timingNoise(runs: [observed])
        let corrected = try #require(HRVMeasures.from(runs: [observed], timingNoise: noise))
        #expect(abs(noise.squareRoot() - 12) < 2.5, "timing noise \(noise.squareRoot()) ms")
        #expect(raw.rmssd > truth.rmssd + 10)
        #expect(abs(corrected.rmssd - truth.rmssd) < 4, "corrected \(corrected.rmssd) vs \(truth.rmssd)")
        // Smooth (positively correlated) rhythm without timing noise: no correction.
        let smooth = (0 ..< 200).map { 800 + 40 * sin(Double($0) / 3) }
        #expect(HRVMeasures.timingNoise(runs: [smooth]) == 0)
    }

    @Test("the least RMSSD error a perfect noise correction leaves: under simulated windows, and their error where noise dominates",
          arguments: [(17.2, 1610.0, 87, 100.0, true), (42.6, 4570.0, 59, 62.0, true), (34.4, 990.0, 87, 89.0, true),
                      (34.4, 100.0, 70, 89.0, false), (53.1, 767.0, 73, 74.0, false), (20.0, 0.0, 90, 90.0, false)])
    func leastRMSSDError(rmssd: Double, noise: Double, beats: Int, bpm: Double, noiseDominates: Bool) throws {
        // Windows of a heart with a breathing rhythm (half of RMSSD²) and white jitter (the other half), its beats seen
        // through independent timing errors of variance `noise`, corrected with that exact variance.
        var rng = SplitMix(seed: 41)
        let breath = 2 * Double.pi * 15 / bpm
        let swing = (0.25 * rmssd * rmssd / (1 - cos(breath))).squareRoot() * 2.0.squareRoot()
        var errors: [Double] = []
        for _ in 0 ..< 600 {
            let phase = 2 * Double.pi * Double(rng.next() % 1000) / 1000
            var rr: [Double] = [], times: [Double] = [], beat = 0.0
            for k in 0 ... beats {
                let interval = 60_000 / bpm + swing * sin(breath * Double(k) + phase) + rmssd / 2 * rng.gaussian()
                rr.append(interval)
                beat += interval
                times.append(beat + noise.squareRoot() * rng.gaussian())
            }
            let observed = zip(times.dropFirst(), times).map { $0 - $1 }
            let truth = try #require(HRVMeasures.from(intervals: Array(rr.dropFirst())))
            let corrected = try #require(HRVMeasures.from(runs: [observed], timingNoise: noise))
            #expect(corrected.pairCount == beats - 1)
            errors.append(abs(corrected.rmssd - truth.rmssd))
        }
        let simulated = errors.reduce(0, +) / Double(errors.count)
        let model = HRVMeasures.leastRMSSDError(rmssd: rmssd, timingNoise: noise, pairs: beats - 1)
        #expect(model <= simulated * 1.03, "floor \(model) ms, simulated \(simulated) ms")
        if noiseDominates { #expect(model >= simulated * 0.85, "floor \(model) ms, simulated \(simulated) ms") }
        if noise == 0 { #expect(model == 0) } else { #expect(model > 0.5) }
    }

    @Test("HRV measures keep what the intervals showed before the timing noise was taken out")
    func uncorrectedKept() throws {
        let nn = [800.0, 820, 790, 810, 805, 830, 780]
        let plain = try #require(HRVMeasures.from(intervals: nn))
        let corrected = try #require(HRVMeasures.from(runs: [nn], timingNoise: 50))
        #expect(corrected.uncorrectedRMSSD == plain.rmssd)
        #expect(abs(corrected.rmssd * corrected.rmssd - (plain.rmssd * plain.rmssd - 300)) < 1e-6)
        #expect(corrected.timingNoise == 50 && corrected.pairCount == 6)
    }

    @Test("a beat's slope energy is the derivative's, also for a sharp beat at a low frame rate")
    func slopeEnergy() {
        // A sinusoid over whole periods: Σ (A ω cos)² = N A² ω² / 2 exactly.
        let n = 20, periods = 3.0, amplitude = 2.0
        let w = 2 * Double.pi * periods / Double(n)
        let sine = (0 ..< n).map { amplitude * sin(w * Double($0)) }
        #expect(abs(HRVMeasures.slopeEnergy(sine) - Double(n) * amplitude * amplitude * w * w / 2) < 1e-9)
        // Near the Nyquist frequency a central difference keeps a small fraction; the spectral slope keeps it all.
        let fast = (0 ..< n).map { sin(2 * Double.pi * 8 * Double($0) / Double(n)) }
        let wf = 2 * Double.pi * 8 / Double(n)
        var central = 0.0
        for j in 0 ..< n { central += pow((fast[(j + 1) % n] - fast[(j + n - 1) % n]) / 2, 2) }
        #expect(abs(HRVMeasures.slopeEnergy(fast) - Double(n) * wf * wf / 2) < 1e-9)
        #expect(central < 0.2 * HRVMeasures.slopeEnergy(fast))
    }

    /// 75 beats of respiratory sinus arrhythmia (800 ± 40 ms, a 4.5-beat cycle: a smooth rhythm whose neighbouring
    /// intervals are alike, which masks the anti-correlation timing noise leaves in them) as a clean pulse wave of
    /// Gaussian bumps sampled at `rate`, and its intervals (ms).
    static func smoothRhythm(rate fs: Double) -> (rr: [Double], clean: [Double]) {
        var rr: [Double] = [], beats: [Double] = [0.5]
        for k in 0 ..< 75 {
            let interval = 800 + 40 * sin(2 * Double.pi * Double(k) / 4.5)
            rr.append(interval)
            beats.append(beats.last! + interval / 1000)
        }
        let n = Int(beats.last! * fs) + 15
        let clean = (0 ..< n).map { i -> Double in
            let t = Double(i) / fs
            return beats.reduce(0) { acc, b in acc + exp(-pow((t - b) / 0.12, 2)) }
        }
        return (rr, clean)
    }

    @Test("the beats' own noise bounds the timing correction where the heart's rhythm hides it from the intervals")
    func timingBoundFromTheWave() throws {
        // Respiratory sinus arrhythmia, which masks timing noise from the intervals (smoothRhythm).
        let fs = 30.0
        let (rr, clean) = Self.smoothRhythm(rate: fs)
        var rng = SplitMix(seed: 33)
        let noisy = clean.map { $0 + 0.12 * rng.gaussian() }
        // The engine's two bands around the pulse (VitalsEngine+HRV.swift), then its beat detection.
        let f0 = 60_000 / 800 / 60.0
        func detect(in signal: [Double]) -> (runs: [[Double]], accepted: Double, timingBound: Double) {
            let shapeBand = (low: f0 * 0.5, high: min(fs / 2 - 0.5, f0 * 3))
            return HRVMeasures.intervals(wave: SignalMath.bandPass(signal, sampleRate: fs, low: f0 * 0.6, high: f0 * 1.6),
                                         shape: SignalMath.bandPass(signal, sampleRate: fs, low: shapeBand.low, high: shapeBand.high),
                                         shapeBandShare: (shapeBand.high - shapeBand.low) / (fs / 2), rate: fs, expectedRate: 75)
        }
        let (runs, _, bound) = detect(in: noisy)
        let observed = runs.flatMap { $0 }
        #expect(observed.count > 60)
        // The timing errors actually made (each interval error is the difference of two beat-time errors).
        let cleanRuns = detect(in: clean).runs
        let reference = cleanRuns.flatMap { $0 }
        try #require(reference.count == observed.count)
        let errors = zip(observed, reference).map { $0 - $1 }
        let actual = errors.map { $0 * $0 }.reduce(0, +) / Double(errors.count) / 2
        // A lower bound, and a close one: the cross-correlation times these beats within a quarter of the Cramér–Rao
        // bound in variance (7.8 ms against 7.1). Taken from the band-passed residual without its band's share, the
        // bound read 3.2 ms, a fifth of the variance.
        #expect(bound > 0.6 * actual && bound < actual, "bound \(bound.squareRoot()) ms, actual \(actual.squareRoot()) ms")
        // The intervals alone show little timing noise here; with the bound RMSSD comes much closer to the truth.
        let truth = try #require(HRVMeasures.from(intervals: Array(rr.prefix(observed.count))))
        let lag = HRVMeasures.timingNoise(runs: runs)
        let lagOnly = try #require(HRVMeasures.from(runs: runs, timingNoise: lag))
        let bounded = try #require(HRVMeasures.from(runs: runs, timingNoise: max(lag, bound)))
        #expect(lagOnly.rmssd > truth.rmssd + 5, "lag-one only \(lagOnly.rmssd) vs \(truth.rmssd)")
        #expect(abs(bounded.rmssd - truth.rmssd) < 0.45 * abs(lagOnly.rmssd - truth.rmssd),
                "bounded \(bounded.rmssd), lag-one only \(lagOnly.rmssd), truth \(truth.rmssd)")
        // The engine takes a share of the bound (``VitalsEngine/timingBoundFactor``: on real video the residual also
        // holds the beats' changes of shape), which moves RMSSD the same way, by less.
        let engine = try #require(HRVMeasures.from(runs: runs, timingNoise: max(lag, VitalsEngine.timingBoundFactor * bound)))
        #expect(engine.rmssd < lagOnly.rmssd && engine.rmssd > bounded.rmssd, "engine \(engine.rmssd)")
    }

    @Test("the timing bound reads the noise's level whatever band the beat shape was passed through")
    func timingBoundIndependentOfTheBand() {
        // Beats with nothing above their second harmonic (the rhythm of smoothRhythm, each beat a fundamental and a
        // second harmonic, so at most 2.6 Hz), their shape taken through a band to 3 times the pulse (the engine's)
        // and through one to 5 times: the wider band is 1.8 times as wide and passes more noise but none more of the
        // beats, so the precision their timing can reach is the same.
        let fs = 30.0, f0 = 75 / 60.0
        var beats = [0.5]
        for k in 0 ..< 75 { beats.append(beats.last! + (800 + 40 * sin(2 * Double.pi * Double(k) / 4.5)) / 1000) }
        let count = Int(beats.last! * fs)
        var rng = SplitMix(seed: 35)
        var k = 0
        let noisy = (0 ..< count).map { i -> Double in
            let t = Double(i) / fs
            while k + 2 < beats.count, t >= beats[k + 1] { k += 1 }
            let phase = 2 * Double.pi * (Double(k) + (t - beats[k]) / (beats[k + 1] - beats[k]))
            return sin(phase) + 0.4 * sin(2 * phase + 0.5) + 0.3 * rng.gaussian()
        }
        let wave = SignalMath.bandPass(noisy, sampleRate: fs, low: f0 * 0.6, high: f0 * 1.6)
        func bound(upTo multiple: Double, shared: Bool) -> Double {
            let band = (low: f0 * 0.5, high: f0 * multiple)
            let shape = SignalMath.bandPass(noisy, sampleRate: fs, low: band.low, high: band.high)
            return HRVMeasures.beats(wave: wave, shape: shape, shapeBandShare: shared ? (band.high - band.low) / (fs / 2) : 1,
                                     rate: fs, expectedRate: 75).timingBound
        }
        let narrow = bound(upTo: 3, shared: true), wide = bound(upTo: 5, shared: true)
        #expect(narrow > 0 && wide / narrow > 0.8 && wide / narrow < 1.25, "bounds \(narrow) and \(wide) ms²")
        // Without the band's share the residual's variance alone sets the bound, and it follows the band (1.45 times
        // here: the filters' skirts make the two bands' noise differ by less than their widths).
        let narrowResidual = bound(upTo: 3, shared: false), wideResidual = bound(upTo: 5, shared: false)
        #expect(wideResidual / narrowResidual > 1.3, "residual-only bounds \(narrowResidual) and \(wideResidual) ms²")
    }

    @Test("two parts of the skin that disagree on the beat times measure the whole's timing noise")
    func timingNoiseFromTwoParts() throws {
        // The rhythm of timingBoundFromTheWave (smoothRhythm), seen through two
        // parts of the skin with independent noise: the forehead holds 40 % of the pixels, the cheeks 60 %.
        let fs = 30.0, share = 0.4
        let (rr, clean) = Self.smoothRhythm(rate: fs)
        var rng = SplitMix(seed: 34)
        // Pixel noise averages over each part's pixels; the whole is the pixel-weighted mean of the two.
        let forehead = clean.map { $0 + 0.15 / share.squareRoot() * rng.gaussian() }
        let cheeks = clean.map { $0 + 0.15 / (1 - share).squareRoot() * rng.gaussian() }
        let whole = zip(forehead, cheeks).map { share * $0 + (1 - share) * $1 }
        let f0 = 75 / 60.0
        func wave(_ s: [Double]) -> [Double] { SignalMath.bandPass(s, sampleRate: fs, low: f0 * 0.6, high: f0 * 1.6) }
        func shape(_ s: [Double]) -> [Double] { SignalMath.bandPass(s, sampleRate: fs, low: f0 * 0.5, high: min(fs / 2 - 0.5, f0 * 3)) }
        let found = HRVMeasures.beats(wave: wave(whole), shape: shape(whole), rate: fs, expectedRate: 75)
        let reference = HRVMeasures.beats(wave: wave(clean), shape: shape(clean), rate: fs, expectedRate: 75)
        try #require(found.times.count == reference.times.count && found.times.count > 60)
        // The errors the whole's beat times actually carry (ms²), against the same detection on the clean wave.
        let errors = zip(found.times, reference.times).dropFirst(2).dropLast(2).map { ($0 - $1) * 1000 / fs }
        let actual = errors.map { $0 * $0 }.reduce(0, +) / Double(errors.count)
        let split = HRVMeasures.splitTimingNoise(beats: found.times, first: shape(forehead), second: shape(cheeks),
                                                 firstShare: share, rate: fs, expectedRate: 75)
        // Of the right order and on the low side (here the two parts' timing errors are partly alike, which the
        // split cannot see: 8.4 ms against 11.5).
        #expect(split > 0.35 * actual && split < 1.2 * actual, "split \(split.squareRoot()) ms, actual \(actual.squareRoot()) ms")
        // Where the intervals hide the noise, the split removes it from RMSSD.
        let (runs, _) = HRVMeasures.intervals(beats: found.times, rate: fs, expectedRate: 75)
        let truth = try #require(HRVMeasures.from(intervals: Array(rr.prefix(runs.flatMap { $0 }.count))))
        let lag = HRVMeasures.timingNoise(runs: runs)
        let lagOnly = try #require(HRVMeasures.from(runs: runs, timingNoise: lag))
        let corrected = try #require(HRVMeasures.from(runs: runs, timingNoise: max(lag, split)))
        #expect(lagOnly.rmssd > truth.rmssd + 5, "lag-one only \(lagOnly.rmssd) vs \(truth.rmssd)")
        #expect(abs(corrected.rmssd - truth.rmssd) < 0.5 * abs(lagOnly.rmssd - truth.rmssd),
                "split-corrected \(corrected.rmssd), lag-one only \(lagOnly.rmssd), truth \(truth.rmssd)")
        // Two parts that agree (no noise) see none, whatever the heart's rhythm; unequal lengths are refused.
        #expect(HRVMeasures.splitTimingNoise(beats: reference.times, first: shape(clean), second: shape(clean),
                                             firstShare: share, rate: fs, expectedRate: 75) == 0)
        #expect(HRVMeasures.splitTimingNoise(beats: found.times, first: shape(forehead), second: Array(shape(cheeks).dropLast()),
                                             firstShare: share, rate: fs, expectedRate: 75) == 0)
    }

    @Test("the timing noise removed: the largest estimate, the split's trusted up to twice the others' deviation")
    func beatTimingNoisePolicy() {
        // The split sees more than the intervals: taken, up to 2² times the others' variance.
        #expect(VitalsEngine.beatTimingNoise(intervals: 100, split: 300, bound: 10) == 300)
        #expect(VitalsEngine.beatTimingNoise(intervals: 100, split: 900, bound: 10) == 400)
        #expect(VitalsEngine.beatTimingNoise(intervals: 100, split: 50, bound: 10) == 100)
        // The bound (times its factor) counts as one of the others.
        #expect(VitalsEngine.beatTimingNoise(intervals: 0, split: 1000, bound: 60) == 4 * VitalsEngine.timingBoundFactor * 60)
        #expect(VitalsEngine.beatTimingNoise(intervals: 0, split: 500, bound: 0) == 0)
        // A value whose removed noise is 90 % of its RMSSD² or more is never stable.
        #expect(VitalsEngine.isMostlyTimingNoise(rmssd: 100, timingNoise: 1500))
        #expect(!VitalsEngine.isMostlyTimingNoise(rmssd: 100, timingNoise: 1400))
    }

    @Test("HRV from beats the camera's noise swamps is given, never as stable; from clean beats it is stable and right")
    func hrvSwampedByTimingNoise() throws {
        // 62 s of a 75 bpm pulse with a slow breathing rhythm (RMSSD about 21 ms) in three skin regions, each with its
        // own pixel noise, sampled at 30 fps.
        func hrv(noise: Double, seed: UInt64) throws -> (sample: VitalsHRVSample, truth: Double) {
            let engine = try VitalsEngine()
            var rng = SplitMix(seed: seed)
            var rr: [Double] = [], beats: [Double] = [0.3]
            while beats.last! < 63 {
                let interval = 0.8 + 0.03 * sin(2 * Double.pi * Double(rr.count) / 6)
                rr.append(interval * 1000)
                beats.append(beats.last! + interval)
            }
            let shares = [0.4, 0.3, 0.3]
            engine.samples = (0 ..< 62 * 30).map { i in
                let t = Double(i) / 30
                let pulse = beats.reduce(0) { $0 + exp(-pow((t - $1) / 0.12, 2)) }
                let colours = shares.map { share in
                    let n = noise / share.squareRoot()
                    return RGB(r: 160 + 0.3 * pulse + n * rng.gaussian(), g: 120 + pulse + n * rng.gaussian(),
                               b: 100 + 0.5 * pulse + n * rng.gaussian())
                }
                let whole = zip(colours, shares).reduce(RGB(r: 0, g: 0, b: 0)) {
                    RGB(r: $0.r + $1.0.r * $1.1, g: $0.g + $1.0.g * $1.1, b: $0.b + $1.0.b * $1.1)
                }
                return VitalsEngine.Sample(t: t, rgb: whole, parts: VitalsEngine.SkinParts(colours: colours, shares: shares),
                                           faceX: 0, faceY: 0, motion: [0, 0, 0, 0], upper: nil, lower: nil, background: nil)
            }
            var result = VitalsFrameResult(condition: .ok, face: nil)
            engine.hrv(&result, at: 61.9, duration: 61.9, pulse: (rate: 75, confidence: 90, snr: 10))
            let sample = try #require(result.hrv.first)
            // The truth over the intervals of the window.
            let inWindow = zip(beats.dropFirst(), rr).filter { $0.0 > 2 && $0.0 < 61.9 }.map(\.1)
            return (sample, try #require(HRVMeasures.from(intervals: inWindow)).rmssd)
        }
        let clean = try hrv(noise: 0.02, seed: 3)
        #expect(clean.sample.confidence >= VitalsStability.hrv)
        #expect(abs(clean.sample.measures.rmssd - clean.truth) < 5, "RMSSD \(clean.sample.measures.rmssd) vs \(clean.truth)")
        // Noise that leaves every beat found (the accepted fraction alone would call it stable) but their times
        // far noisier than the heart's rhythm.
        let swamped = try hrv(noise: 0.5, seed: 4)
        #expect(swamped.sample.measures.acceptedFraction > 0.9)
        #expect(swamped.sample.confidence < VitalsStability.hrv,
                "RMSSD \(swamped.sample.measures.rmssd) vs \(swamped.truth), confidence \(swamped.sample.confidence)")
    }

    @Test("motion echoed in the colour trace is removed, the pulse kept")
    func motionRemoval() throws {
        let fs = 30.0, n = 360
        var rng = SplitMix(seed: 8)
        // Head sway (0.8 Hz, px) whose shading leaks into every channel, and a 1.5 Hz pulse in green.
        let sway = (0 ..< n).map { 3 * sin(2 * .pi * 0.8 * Double($0) / fs) + 0.05 * rng.gaussian() }
        let pulse = (0 ..< n).map { 0.3 * sin(2 * .pi * 1.5 * Double($0) / fs) }
        let r = (0 ..< n).map { 150 + 0.8 * sway[$0] }, g = (0 ..< n).map { 110 + 0.6 * sway[$0] + pulse[$0] }
        let b = (0 ..< n).map { 90 + 0.5 * sway[$0] }
        let still = [Double](repeating: 0, count: n)
        let before = PulseAnalysis.analyse(r: r, g: g, b: b, rate: fs, low: 40, high: 180)
        let cleaned = VitalsEngine.removeMotion([r, g, b], motion: [sway, still], rate: fs, low: 0.67, high: 3)
        let after = PulseAnalysis.analyse(r: cleaned[0], g: cleaned[1], b: cleaned[2], rate: fs, low: 40, high: 180)
        #expect(abs(before.methods[.luma]!.rate - 48) < 2, "the sway wins in luma before: \(before.methods[.luma]!.rate)")
        #expect(abs(before.methods[.green]!.rate - 48) < 2, "the sway wins in green before: \(before.methods[.green]!.rate)")
        #expect(abs(after.methods[.luma]!.rate - 90) < 1.5, "the pulse wins in luma after: \(after.methods[.luma]!.rate)")
        #expect(abs(after.rate - 90) < 1.5, "the pulse wins after: \(after.rate)")
        // No motion: the channels come back untouched.
        #expect(VitalsEngine.removeMotion([r], motion: [still], rate: fs, low: 0.67, high: 3)[0] == r)
    }

    @Test("a pulse 2 bpm from a line of the camera's motion is kept when the echo is fitted over 30 s, not 12")
    func motionFitOverLongerSpan() throws {
        let fs = 30.0
        let engine = try VitalsEngine()
        // 40 s of a camera shaking at 54 bpm (0.9 Hz) with a slow drift, whose shading leaks into every channel,
        // and a 56 bpm pulse in green: within one bin of a 12 s window of the shake's line. How much of the pulse a
        // fit takes as echo depends on the phase between the two, so every eighth of a turn is tried.
        let shakeHz = 0.9, pulseHz = 56.0 / 60
        var kept: [(short: Double, long: Double)] = []
        for k in 0 ..< 8 {
            var rng = SplitMix(seed: 21 + UInt64(k))
            let phase = Double(k) / 8 * 2 * .pi
            let samples = (0 ..< Int(40 * fs)).map { i -> VitalsEngine.Sample in
                let t = Double(i) / fs
                let x = 0.6 * sin(2 * .pi * shakeHz * t) + 2 * sin(2 * .pi * 0.13 * t + 1)
                let pulse = 0.3 * sin(2 * .pi * pulseHz * t + phase)
                let rgb = RGB(r: 150 + 0.8 * x + 0.02 * rng.gaussian(), g: 110 + 0.6 * x + pulse + 0.02 * rng.gaussian(),
                              b: 90 + 0.5 * x + 0.02 * rng.gaussian())
                return VitalsEngine.Sample(t: t, rgb: rgb, parts: nil, faceX: x, faceY: 0, motion: [x, 0, 0, 0],
                                           upper: nil, lower: nil, background: nil, backgroundRGB: nil)
            }
            let end = samples.last!.t
            let window = Array(samples.drop { end - $0.t > engine.configuration.pulseWindow })
            let fit = Array(samples.drop { end - $0.t > VitalsEngine.motionFitSpan })
            func amplitude(_ x: [Double], _ hz: Double) -> Double { Self.toneAmplitude(x, hz: hz, start: window[0].t, rate: fs) }
            let short = engine.skinTrace(window, from: window[0].t, to: end, rate: fs)
            let long = engine.skinTrace(window, from: window[0].t, to: end, rate: fs, fit: fit)
            kept.append((amplitude(short.g, pulseHz) / 0.3, amplitude(long.g, pulseHz) / 0.3))
            // Both take the echo out of red, which carries no pulse.
            #expect(amplitude(window.map(\.rgb.r), shakeHz) > 0.3)
            #expect(amplitude(short.r, shakeHz) < 0.02 && amplitude(long.r, shakeHz) < 0.02,
                    "phase \(k)/8: echo left in red \(amplitude(short.r, shakeHz)), \(amplitude(long.r, shakeHz))")
        }
        // Fitted over 30 s the pulse is kept at every phase; fitted over the 12 s window alone, at some phases
        // least squares takes much of it for echo.
        #expect(kept.allSatisfy { abs($0.long - 1) < 0.1 }, "pulse kept with the 30 s fit: \(kept.map(\.long))")
        #expect(kept.map(\.short).min()! < 0.6, "pulse kept with the 12 s fit: \(kept.map(\.short))")
    }

    @Test("the camera's motion measured on the background takes out an echo the small face's own tracking cannot")
    func cameraMotionFromBackground() throws {
        let fs = 30.0, shakeHz = 0.9, pulseHz = 1.8
        let engine = try VitalsEngine()
        // 12 s of a camera shaking at 54 bpm over a slow sway; the skin's shading echoes it. A small face's profile
        // tracker measures the shake with noise (σ 0.5 px a frame); the background, far larger, measures it to
        // 0.02 px.
        func samples(withBackground: Bool) -> [VitalsEngine.Sample] {
            var rng = SplitMix(seed: 8)
            return (0 ..< Int(12 * fs)).map { i -> VitalsEngine.Sample in
                let t = Double(i) / fs
                let camera = 0.6 * sin(2 * .pi * shakeHz * t) + 2 * sin(2 * .pi * 0.13 * t + 1)
                let tracked = camera + 0.5 * rng.gaussian(), background = camera + 0.02 * rng.gaussian()
                let pulse = 0.3 * sin(2 * .pi * pulseHz * t)
                let rgb = RGB(r: 150 + 0.8 * camera + 0.02 * rng.gaussian(), g: 110 + 0.6 * camera + pulse + 0.02 * rng.gaussian(),
                              b: 90 + 0.5 * camera + 0.02 * rng.gaussian())
                let motion = [0, tracked, 0, 0] + (withBackground ? [0, background] : [])
                return VitalsEngine.Sample(t: t, rgb: rgb, parts: nil, faceX: 0, faceY: tracked, motion: motion,
                                           upper: nil, lower: nil, background: background, backgroundRGB: nil)
            }
        }
        func traces(_ window: [VitalsEngine.Sample]) -> VitalsEngine.ColourTraces {
            engine.skinTrace(window, from: window[0].t, to: window.last!.t, rate: fs)
        }
        let faceOnly = traces(samples(withBackground: false)), withCamera = traces(samples(withBackground: true))
        func echo(_ x: [Double]) -> Double { Self.toneAmplitude(x, hz: shakeHz, start: 0, rate: fs) }
        // The echo in red is 0.48; the noisy face position takes out only part of it (least squares on a noisy
        // regressor shrinks the fit), the background's nearly all, and the pulse in green stays.
        #expect(echo(faceOnly.r) > 0.04, "echo left with the face's position alone: \(echo(faceOnly.r))")
        #expect(echo(withCamera.r) < 0.01, "echo left with the background's motion: \(echo(withCamera.r))")
        let kept = Self.toneAmplitude(withCamera.g, hz: pulseHz, start: 0, rate: fs) / 0.3
        #expect(abs(kept - 1) < 0.1, "pulse kept: \(kept)")
    }

    /// The amplitude of `x` (sampled at `rate` from `start` s) at `hz`: least squares on a sine and a cosine.
    static func toneAmplitude(_ x: [Double], hz: Double, start: Double, rate: Double) -> Double {
        let mean = SignalMath.mean(x)
        var c = 0.0, s = 0.0
        for (i, v) in x.enumerated() {
            let phase = 2 * .pi * hz * (start + Double(i) / rate)
            c += (v - mean) * cos(phase); s += (v - mean) * sin(phase)
        }
        return 2 * (c * c + s * s).squareRoot() / Double(x.count)
    }

    @Test("the motion's coupling is fitted only over samples since the face box last changed")
    func motionFitSinceBoxChange() throws {
        let fs = 30.0, shakeHz = 0.9
        let engine = try VitalsEngine()
        // 45 s of a camera shaking at 54 bpm with a 108 bpm pulse; at 30 s the face box changes, and the new skin
        // regions' colour follows the motion the other way (shading on the other side of the face).
        var rng = SplitMix(seed: 5)
        engine.samples = (0 ..< Int(45 * fs)).map { i -> VitalsEngine.Sample in
            let t = Double(i) / fs
            let x = 0.6 * sin(2 * .pi * shakeHz * t) + 2 * sin(2 * .pi * 0.13 * t + 1)
            let k = t < 30 ? 0.8 : -0.8
            let pulse = 0.3 * sin(2 * .pi * 1.8 * t)
            let rgb = RGB(r: 150 + k * x + 0.02 * rng.gaussian(), g: 110 + 0.75 * k * x + pulse + 0.02 * rng.gaussian(),
                          b: 90 + 0.6 * k * x + 0.02 * rng.gaussian())
            return VitalsEngine.Sample(t: t, rgb: rgb, parts: nil, faceX: x, faceY: 0, motion: [x, 0, 0, 0],
                                       upper: nil, lower: nil, background: nil, backgroundRGB: nil)
        }
        let end = engine.samples.last!.t
        let window = Array(engine.samples.drop { end - $0.t > engine.configuration.pulseWindow })
        func echo(_ fit: [VitalsEngine.Sample]) -> Double {
            let trace = engine.skinTrace(window, from: window[0].t, to: end, rate: fs, fit: fit)
            return Self.toneAmplitude(trace.r, hz: shakeHz, start: window[0].t, rate: fs)
        }
        // A box that never changed: the whole span.
        engine.lastBoxChange = 0
        #expect(engine.motionFitSamples(at: end).count == Int(VitalsEngine.motionFitSpan * fs) + 1)
        let acrossChange = engine.motionFitSamples(at: end)
        // Changed at 30 s: from there on only, which is still longer than the window.
        engine.lastBoxChange = 30
        let sinceChange = engine.motionFitSamples(at: end)
        #expect(sinceChange.first!.t >= 30 && sinceChange.count > window.count)
        #expect(echo(sinceChange) < 0.02, "echo left in red when fitted since the change: \(echo(sinceChange))")
        // Fitted across the change, the two couplings cancel and the echo stays.
        #expect(echo(acrossChange) > 0.2, "echo left in red when fitted across the change: \(echo(acrossChange))")
    }

    @Test("small linear systems are solved, singular ones refused")
    func linearSolve() throws {
        let x = try #require(SignalMath.solve([[2, 1], [1, 3]], [5, 10]))
        #expect(abs(x[0] - 1) < 1e-12 && abs(x[1] - 3) < 1e-12)
        #expect(SignalMath.solve([[1, 2], [2, 4]], [1, 2]) == nil)
    }

    @Test("profile matching measures sub-pixel vertical motion")
    func profileShift() throws {
        func profile(_ d: Double) -> [Double] {
            (0 ..< 120).map { (i: Int) -> Double in
                let x = Double(i) - d
                let slow: Double = 40 * sin(x / 7)
                let fast: Double = 10 * sin(x / 2.3)
                return 100 + slow + fast
            }
        }
        let base = profile(0)
        func shifted(_ d: Double) -> [Double] { profile(d) }
        for d in [-3.4, -1.0, 0.0, 0.6, 2.25] {
            let estimate = try #require(ProfileMotion.shift(of: shifted(d), against: base, maxShift: 6))
            #expect(abs(estimate - d) < 0.15, "shift \(d) measured \(estimate)")
        }
        #expect(ProfileMotion.shift(of: [Double](repeating: 5, count: 60), against: [Double](repeating: 5, count: 60), maxShift: 6) == nil)
        // A shift beyond the search range sits at its edge: no answer rather than a wrong one.
        #expect(ProfileMotion.shift(of: shifted(9), against: base, maxShift: 6) == nil)
        // Noise on a flat region matches nothing.
        var rng = SplitMix(seed: 3)
        let flatA = (0 ..< 120).map { _ in 100 + rng.gaussian() }, flatB = (0 ..< 120).map { _ in 100 + rng.gaussian() }
        #expect(ProfileMotion.shift(of: flatA, against: flatB, maxShift: 6) == nil)
    }

    @Test("the band spectrum is the Hann-windowed DFT's power at every frequency (four at a time and the rest)")
    func bandSpectrumIsTheDFT() {
        var rng = SplitMix(seed: 11)
        let rate = 30.0
        let x = (0 ..< 301).map { i in sin(2 * .pi * 1.3 * Double(i) / rate) + 0.5 * rng.gaussian() }
        // 467 frequencies: 116 groups of four and three left over.
        let spectrum = BandSpectrum(x, rate: rate, low: 40.0 / 60, high: 180.0 / 60, step: 0.005)
        #expect(spectrum.frequencies.count % 4 != 0)
        let n = x.count, mean = x.reduce(0, +) / Double(n)
        let windowed = (0 ..< n).map { i in (x[i] - mean) * (0.5 - 0.5 * cos(2 * .pi * Double(i) / Double(n - 1))) }
        for (k, f) in spectrum.frequencies.enumerated() {
            var re = 0.0, im = 0.0
            for (i, v) in windowed.enumerated() {
                let phase = 2 * .pi * f * Double(i) / rate
                re += v * cos(phase)
                im -= v * sin(phase)
            }
            let power = re * re + im * im
            #expect(abs(spectrum.power[k] - power) <= 1e-7 * max(1, power), "at \(f) Hz: \(spectrum.power[k]) against \(power)")
        }
    }

    @Test("the pulse's line is taken as wide as a heart's varying rate spreads it, which grows with the rate")
    func pulseLineWidthGrowsWithTheRate() {
        // 12 s at 30 fps of a pulse whose rate swings ±6 % with breathing at 15 /min: the line's power held within
        // the half-width the SNR counts as the pulse, out of the whole band's.
        let rate = 30.0, n = 361
        func share(pulse f0: Double, halfWidth: Double) -> Double {
            var phase = 0.0
            let x = (0 ..< n).map { i -> Double in
                phase += 2 * .pi * f0 * (1 + 0.06 * sin(2 * .pi * 0.25 * Double(i) / rate + 0.7)) / rate
                return cos(phase)
            }
            let spectrum = BandSpectrum(x, rate: rate, low: 40.0 / 60, high: 180.0 / 60, step: 0.005)
            let total = spectrum.power.reduce(0, +)
            let line = zip(spectrum.frequencies, spectrum.power).filter { abs($0.0 - f0) <= halfWidth }.map(\.1).reduce(0, +)
            return line / total
        }
        #expect(VitalsEngine.pulseLineHalfWidth(at: 1.0) == 0.1)
        #expect(share(pulse: 1.0, halfWidth: VitalsEngine.pulseLineHalfWidth(at: 1.0)) > 0.9)
        // At 135 bpm a fixed ±0.1 Hz leaves more of the line out than it does at 60 bpm; the wider reach keeps it.
        let fast = 135.0 / 60
        #expect(share(pulse: fast, halfWidth: 0.1) < 0.85)
        #expect(share(pulse: fast, halfWidth: VitalsEngine.pulseLineHalfWidth(at: fast)) > 0.86)
    }

    @Test("profile matching's one-pass cost finds the shift the two-pass definition finds")
    func profileShiftMatchesDefinition() throws {
        /// The definition: mean squared difference of the mean-removed profiles, per shift, then the parabola.
        func reference(_ p: [Double], _ ref: [Double], maxShift: Int) -> Double {
            let lo = maxShift, hi = p.count - maxShift
            let rm = ref[lo ..< hi].reduce(0, +) / Double(hi - lo)
            let costs = (-maxShift ... maxShift).map { d -> Double in
                let pm = (lo ..< hi).map { p[$0 + d] }.reduce(0, +) / Double(hi - lo)
                return (lo ..< hi).map { i in pow((p[i + d] - pm) - (ref[i] - rm), 2) }.reduce(0, +)
            }
            let best = costs.indices.min { costs[$0] < costs[$1] }!
            let a = costs[best - 1], b = costs[best], c = costs[best + 1]
            return Double(best - maxShift) + max(-0.5, min(0.5, 0.5 * (a - c) / (a - 2 * b + c)))
        }
        var rng = SplitMix(seed: 5)
        for trial in 0 ..< 6 {
            let d = Double(trial) * 0.7 - 2
            let profile = { (shift: Double) in (0 ..< 150).map { i -> Double in
                let x = Double(i) - shift
                return 120 + 30 * sin(x / 6) + 8 * sin(x / 1.9 + Double(trial)) }
            }
            let moved = profile(d).map { $0 + 0.3 * rng.gaussian() }
            let measured = try #require(ProfileMotion.shift(of: moved, against: profile(0), maxShift: 8))
            #expect(abs(measured - reference(moved, profile(0), maxShift: 8)) < 1e-6, "shift \(d)")
        }
    }

    @Test("row and column profiles read the same luma from NV12 and from BGRA")
    func profilesFromBothLayouts() throws {
        let width = 64, height = 48
        let luma = (0 ..< width * height).map { i in UInt8((i % width * 3 + i / width * 5 + (i * 7) % 13) % 256) }
        // BGRA with B = G = R = Y: the fixed-point BT.601 weights sum to 256, so the luma read back is Y exactly.
        let bgra: [UInt8] = luma.flatMap { (v: UInt8) -> [UInt8] in [v, v, v, 255] }
        let chroma = [UInt8](repeating: 128, count: width * height / 2)
        let region = VitalsRect(x: 5, y: 3, width: 50, height: 37)
        for vertical in [false, true] {
            let fromNV12 = try luma.withUnsafeBufferPointer { y in
                try chroma.withUnsafeBufferPointer { c in
                    let view = try VitalsPixelView(format: .nv12VideoRange, width: width, height: height, plane0: y.baseAddress!,
                                                   bytesPerRow0: width, plane1: c.baseAddress!, bytesPerRow1: width)
                    return ProfileMotion.profile(view, region, vertical: vertical)
                }
            }
            let fromBGRA = try bgra.withUnsafeBufferPointer { p in
                let view = try VitalsPixelView(format: .bgra, width: width, height: height, plane0: p.baseAddress!,
                                               bytesPerRow0: width * 4, plane1: nil, bytesPerRow1: 0)
                return ProfileMotion.profile(view, region, vertical: vertical)
            }
            // And both are the mean of the sampled pixels, computed here the slow way.
            let expected: [Double] = vertical
                ? (0 ..< region.height).map { y in
                    let xs = Array(stride(from: region.x, to: region.maxX, by: 4))
                    return Double(xs.map { Int(luma[(region.y + y) * width + $0]) }.reduce(0, +)) / Double(xs.count) }
                : (0 ..< region.width).map { x in
                    let ys = Array(stride(from: region.y, to: region.maxY, by: 4))
                    return Double(ys.map { Int(luma[$0 * width + region.x + x]) }.reduce(0, +)) / Double(ys.count) }
            #expect(fromNV12 == expected, "vertical \(vertical)")
            #expect(fromBGRA == expected, "vertical \(vertical)")
        }
    }
}

/// A small deterministic generator for test signals.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }
    mutating func gaussian() -> Double {
        let u = max(unit(), 1e-12), v = unit()
        return (-2 * log(u)).squareRoot() * cos(2 * .pi * v)
    }
}
