import Foundation
import Testing
@testable import VitalsEngine

/// Half and double rates (docs/VITALS-ENGINE.md, *Half and double rates*): a harmonic relation between the rate and
/// another line is a reason for doubt, and a value at half the heart's rate is never stable.
@Suite("Half and double rates")
struct HarmonicTrapTests {
    /// The simulator's photoplethysmogram over one beat (a sharp systolic wave and a smaller diastolic one; its
    /// second harmonic carries about a fifth of the fundamental's power, its third about a third).
    static func ppg(_ phase: Double) -> Double {
        func raw(_ x: Double) -> Double {
            let s = (x - 0.18) / 0.062, d = (x - 0.45) / 0.10
            return exp(-0.5 * s * s) + 0.42 * exp(-0.5 * d * d)
        }
        return raw(phase) - (raw(0) * (1 - phase) + raw(1) * phase)
    }

    /// `seconds` of skin colour at `fs`: a pulse at `bpm` whose intervals vary by 3 % with a 5 s rhythm, of
    /// amplitude `pulse` (green; red and blue in the skin's proportions), plus a sinusoid at `lineBPM` of amplitude
    /// `line` with the same colour signature (a rhythm every method reads like the pulse: shading, the codec), plus
    /// pixel noise.
    static func samples(bpm: Double, pulse: Double, lineBPM: Double, line: Double, seconds: Double, fs: Double,
                        seed: UInt64) -> [VitalsEngine.Sample] {
        var rng = SplitMix(seed: seed)
        var beats: [Double] = [0]
        while beats.last! < seconds + 2 {
            let interval = 60 / bpm * (1 + 0.03 * sin(2 * Double.pi * beats.last! / 5))
            beats.append(beats.last! + interval)
        }
        let lineHz = lineBPM / 60
        let lineOffset = 0.37
        return (0 ..< Int(seconds * fs)).map { i in
            let t = Double(i) / fs
            let k = max(0, (beats.lastIndex { $0 <= t } ?? 0))
            let phase = (t - beats[k]) / (beats[k + 1] - beats[k])
            let v = pulse * ppg(phase) + line * sin(2 * Double.pi * lineHz * t + lineOffset)
            let rgb = RGB(r: 160 + 0.33 * v + 0.05 * rng.gaussian(), g: 120 + v + 0.05 * rng.gaussian(),
                          b: 100 + 0.5 * v + 0.05 * rng.gaussian())
            return VitalsEngine.Sample(t: t, rgb: rgb, parts: nil, faceX: 0, faceY: 0, motion: [0, 0, 0, 0], upper: nil,
                                       lower: nil, background: nil)
        }
    }

    /// The engine's pulse samples, one a second from 10 s, as it would give them on `samples` arriving at `fs`.
    static func pulseSamples(_ samples: [VitalsEngine.Sample], fs: Double) throws -> [(rate: Double, stable: Bool)] {
        let engine = try VitalsEngine()
        engine.frameTimes = samples.prefix(Int(4 * fs)).map(\.t)
        var out: [(Double, Bool)] = []
        let end = samples.last!.t
        var t = 10.0
        while t <= end {
            engine.samples = samples.filter { $0.t <= t }
            var result = VitalsFrameResult(condition: .ok, face: nil)
            engine.pulse(&result, at: t, duration: t)
            for s in result.pulseRate { out.append((s.value, s.confidence >= VitalsStability.pulse)) }
            t += 1
        }
        return out
    }

    @Test("a weak 115 bpm pulse under a stronger line at half of it: no stable value at the half, at 24 fps",
          arguments: [0.2, 0.25])
    func halfRateTrap(line: Double) throws {
        // The pulse's fundamental has an amplitude of 0.16: the line's power at 57.5 bpm is 1.6 (0.2) or 2.6 (0.25)
        // times the pulse's at 115 bpm.
        let trap = try Self.pulseSamples(Self.samples(bpm: 115, pulse: 0.5, lineBPM: 57.5, line: line, seconds: 45, fs: 24,
                                                      seed: 11), fs: 24)
        // Without the line the same pulse is read and called stable: the trap is the line, not a pulse too weak.
        let clean = try Self.pulseSamples(Self.samples(bpm: 115, pulse: 0.5, lineBPM: 57.5, line: 0, seconds: 45, fs: 24,
                                                       seed: 11), fs: 24)
        #expect(clean.contains { $0.stable && abs($0.rate - 115) < 3 }, "\(clean)")
        // The trap's line is what the tracker reads (it is the stronger), so the half is offered: never as stable.
        #expect(trap.contains { abs($0.rate - 57.5) < 3 }, "the half is read: \(trap)")
        let stableAtHalf = trap.filter { $0.stable && abs($0.rate - 57.5) < 6 }
        #expect(stableAtHalf.isEmpty, "stable at the half: \(stableAtHalf.map(\.rate)) of \(trap)")
    }

    @Test("a real slow pulse (its harmonics at 2f and 3f) is still stable at its own rate")
    func slowPulseStaysStable() throws {
        let slow = try Self.pulseSamples(Self.samples(bpm: 57.5, pulse: 0.5, lineBPM: 115, line: 0, seconds: 45, fs: 24, seed: 12),
                                         fs: 24)
        let stable = slow.filter(\.stable)
        #expect(stable.count >= 20, "\(slow)")
        #expect(stable.allSatisfy { abs($0.rate - 57.5) < 3 }, "\(stable)")
    }

    @Test("the harmonic rule: a rate with a line at twice it is stable only when its third harmonic explains it")
    func doubtRule() {
        let explained = HarmonicEvidence(low: 1, high: 2, choseLow: true, highOverLow: 0.5, oddHarmonic: true, beatsAtHigh: 0.9,
                                         heldOther: false, methodsOther: false)
        #expect(HarmonicCheck.doubt(explained) == nil)
        var e = explained
        e.oddHarmonic = false
        #expect(HarmonicCheck.doubt(e) == .harmonicSplit, "no third harmonic: the line at 2f may be a pulse of its own")
        e = explained
        e.heldOther = true
        #expect(HarmonicCheck.doubt(e) == .harmonicSplit, "the tracker held the double")
        e = explained
        e.highOverLow = 1.2
        #expect(HarmonicCheck.doubt(e) == .harmonicSplit, "a harmonic stronger than its fundamental")
        e = explained
        e.highOverLow = 0.1
        #expect(HarmonicCheck.doubt(e) == nil, "no line at twice the rate worth asking about")
        // The higher rate chosen with a line at half of it: stable only when that line is not a pulse.
        var high = HarmonicEvidence(low: 1, high: 2, choseLow: false, highOverLow: 1.5, oddHarmonic: false, beatsAtHigh: 0.8,
                                    heldOther: false, methodsOther: false)
        #expect(HarmonicCheck.doubt(high) == nil)
        high.oddHarmonic = true
        #expect(HarmonicCheck.doubt(high) == .harmonicSplit, "the half has a pulse's third harmonic")
        high.oddHarmonic = false
        high.highOverLow = 0.9
        #expect(HarmonicCheck.doubt(high) == .harmonicSplit, "the half is the stronger line")
        high.highOverLow = 1.5
        high.methodsOther = true
        #expect(HarmonicCheck.doubt(high) == .harmonicSplit, "a method reads the half")
        high.methodsOther = false
        high.beatsAtHigh = 0.3
        #expect(HarmonicCheck.doubt(high) == .harmonicSplit, "the beats in the time domain come at the half's period")
    }

    @Test("a jump to a new rhythm is not stable on its first window: the tracker flags it, then not once it holds")
    func jumpFlagged() throws {
        var tracker = PulseTracker()
        for k in 0 ..< 6 { _ = tracker.update(VideoLineTests.spectrum(lines: [(70.0 / 60, 100)], seed: UInt64(900 + k)).normalized) }
        #expect(!tracker.jumped)
        // A far stronger rhythm at 131 bpm takes over within a few windows.
        var rates: [Double] = [], jumps: [Bool] = []
        for k in 0 ..< 6 {
            rates.append(60 * tracker.update(VideoLineTests.spectrum(lines: [(70.0 / 60, 10), (131.0 / 60, 2000)], seed: UInt64(950 + k)).normalized))
            jumps.append(tracker.jumped)
        }
        let first = try #require(rates.firstIndex { abs($0 - 131) < 2 }, "\(rates)")
        #expect(jumps[first], "the window it arrives on: \(rates) \(jumps)")
        #expect(first + 1 < rates.count && rates[(first + 1)...].allSatisfy { abs($0 - 131) < 2 }, "\(rates)")
        #expect(!jumps[(first + 1)...].contains(true), "it holds from then on: \(rates) \(jumps)")
    }

    @Test("a held rate is not switched to a line at half of it; a fresh one is, and the half is then in doubt")
    func heldRateNotSwitched() {
        func window(_ k: Int, half: Bool) -> BandSpectrum {
            VideoLineTests.spectrum(lines: half ? [(115.0 / 60, 100), (57.5 / 60, 80)] : [(115.0 / 60, 100)], seed: UInt64(700 + k))
                .normalized
        }
        // Ten windows of a 115 bpm pulse alone, then a line at exactly half of it at 0.8 of the pulse's power.
        var held = PulseTracker()
        var f = 0.0
        for k in 0 ..< 10 { f = held.update(window(k, half: false)) }
        #expect(abs(f * 60 - 115) < 2)
        for k in 10 ..< 16 { f = held.update(window(k, half: true)) }
        #expect(abs(f * 60 - 115) < 2, "the tracker stays on the held rate: \(f * 60)")
        let pair = held.pair
        #expect(pair.map { !$0.choseLow && abs($0.low * 60 - 57.5) < 2 } == true, "the half is noted: \(String(describing: pair))")
        // A tracker that held nothing takes the half for the fundamental, as before, but the evidence is split: the
        // line at twice it is the stronger, which a pulse's harmonic is not.
        var fresh = PulseTracker()
        for k in 10 ..< 16 { f = fresh.update(window(k, half: true)) }
        #expect(abs(f * 60 - 57.5) < 2, "\(f * 60)")
        let freshPair = fresh.pair
        #expect(freshPair.map { $0.choseLow && $0.highOverLow > 1 } == true, "\(String(describing: freshPair))")
        #expect(freshPair.flatMap { HarmonicCheck.doubt($0) } == .harmonicSplit)
    }
}
