import Foundation
import Testing
@testable import VitalsEngine

/// HRV where the beats allow it (docs/VITALS-ENGINE.md, *HRV where the beats allow it*): a window is stable only when
/// the floor its beats' timing noise sets under the RMSSD error is within the bound.
@Suite("HRV and the floor the beats set")
struct HRVFloorTests {
    /// The engine's HRV window over 62 s of a 75 bpm pulse with a slow breathing rhythm (RMSSD about 21 ms) in three
    /// skin regions, each with pixel noise of `noise` (scaled to its share), sampled at 30 fps; the pulse as found
    /// with confidence 90.
    static func window(noise: Double, seed: UInt64) throws -> VitalsHRVSample {
        let engine = try VitalsEngine()
        var rng = SplitMix(seed: seed)
        var beats: [Double] = [0.3]
        var k = 0
        while beats.last! < 63 {
            beats.append(beats.last! + 0.8 + 0.03 * sin(2 * Double.pi * Double(k) / 6))
            k += 1
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
        return try #require(result.hrv.first)
    }

    @Test("a window whose floor exceeds the bound is never stable, though its noise leaves most of RMSSD; below it, stable")
    func floorGate() throws {
        var aboveBound = 0, withinBound = 0
        // From clean beats to beats whose timing noise nearly swamps the rhythm.
        for (i, noise) in [0.02, 0.1, 0.2, 0.3, 0.4, 0.5, 0.55, 0.6].enumerated() {
            let sample = try Self.window(noise: noise, seed: UInt64(20 + i))
            let m = sample.measures
            let floor = m.rmssdFloor
            let mostlyNoise = VitalsEngine.isMostlyTimingNoise(rmssd: m.uncorrectedRMSSD, timingNoise: m.timingNoise)
            if floor > VitalsEngine.rmssdFloorBound {
                #expect(sample.confidence < VitalsStability.hrv,
                        "noise \(noise): floor \(floor) ms, RMSSD \(m.rmssd), confidence \(sample.confidence)")
                // The cases that matter: the old gate (noise nearly all of RMSSD²) would have let it through.
                if !mostlyNoise && m.acceptedFraction > 0.9 { aboveBound += 1 }
            } else if !mostlyNoise {
                withinBound += 1
            }
        }
        // The sweep reaches both sides of the bound, with the floor alone deciding on the far side.
        #expect(aboveBound >= 1, "no window above the bound that only the floor withholds")
        #expect(withinBound >= 1)
        let clean = try Self.window(noise: 0.02, seed: 20)
        #expect(clean.measures.rmssdFloor <= VitalsEngine.rmssdFloorBound && clean.confidence >= VitalsStability.hrv,
                "floor \(clean.measures.rmssdFloor), confidence \(clean.confidence)")
    }

    @Test("the floor is the least RMSSD error for the noise removed over the window's pairs")
    func floorOfTheMeasures() throws {
        let m = try #require(HRVMeasures.from(runs: [[800, 830, 790, 840, 805, 835, 795, 825, 810, 820]], timingNoise: 60))
        #expect(m.rmssdFloor == HRVMeasures.leastRMSSDError(rmssd: m.rmssd, timingNoise: 60, pairs: m.pairCount))
        #expect(m.rmssdFloor > 0)
        let quiet = try #require(HRVMeasures.from(runs: [[800, 830, 790, 840, 805, 835, 795, 825, 810, 820]]))
        #expect(quiet.rmssdFloor == 0)
    }
}
