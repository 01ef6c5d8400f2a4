import Foundation
import Testing
@testable import VitalsEngine

/// Persistent lines (``SpectralLineFinder``): the video's own rhythms and a steadily shaking camera's, and how the
/// pulse tracker and the estimators keep them out.
@Suite("Persistent spectral lines")
struct VideoLineTests {
    /// The pulse band's grid, 40–180 bpm in steps of `PulseAnalysis.spectrumStep`.
    static let grid = stride(from: 40.0 / 60, through: 3.0, by: PulseAnalysis.spectrumStep).map { $0 }

    /// A noise spectrum (exponentially distributed bins, as a periodogram's are) with a Hann main lobe of
    /// `strength` times the median at each frequency of `lines`.
    static func spectrum(lines: [(Double, Double)], seed: UInt64) -> BandSpectrum {
        var rng = SplitMix(seed: seed)
        let power = grid.map { f -> Double in
            var p = -log(max(1e-12, rng.unit())) / log(2)   // median 1
            for (line, strength) in lines {
                let d = (f - line) / (1.0 / 12)   // in bins of a 12 s window
                if abs(d) < 2 { p += strength * pow(cos(.pi * d / 4), 4) }
            }
            return p
        }
        return BandSpectrum(frequencies: grid, power: power)
    }

    @Test("a line the background's chroma keeps is found; a single spike and plain noise are not")
    func linesFound() {
        var finder = SpectralLineFinder()
        // A codec refresh at 1 Hz (and its harmonic) in Cb, noise in Cr: masked once three windows agree.
        for k in 0 ..< 6 {
            finder.update(Self.spectrum(lines: [(1.0, 40), (2.0, 30)], seed: UInt64(k)),
                                     Self.spectrum(lines: [], seed: UInt64(100 + k)))
            if k < 2 { #expect(finder.mask.allSatisfy { $0 == 1 }, "window \(k): nothing is masked before three windows") }
        }
        let lines = finder.lines
        #expect(lines.count == 2, "\(lines)")
        #expect(lines.contains { abs($0 - 1.0) <= 0.01 } && lines.contains { abs($0 - 2.0) <= 0.01 })
        let mask = finder.mask
        let masked = zip(Self.grid, mask).filter { $0.1 == 0 }.map(\.0)
        #expect(masked.allSatisfy { abs($0 - 1.0) < 0.15 || abs($0 - 2.0) < 0.15 }, "only the lines' lobes are masked")
        #expect(mask[Self.grid.firstIndex { $0 >= 1.5 }!] == 1)

        // Plain noise with one window holding a spike of 15 times the median: no line.
        var quiet = SpectralLineFinder()
        for k in 0 ..< 8 {
            quiet.update(Self.spectrum(lines: k == 5 ? [(1.7, 15)] : [], seed: UInt64(200 + k)),
                             Self.spectrum(lines: [], seed: UInt64(300 + k)))
        }
        #expect(quiet.lines.isEmpty, "\(quiet.lines)")
        #expect(quiet.mask.allSatisfy { $0 == 1 })
        quiet.reset()
        #expect(quiet.mask.isEmpty)
    }

    @Test("the tracker halves a rate to a peak at exactly half, unless that peak is one of the video's lines")
    func harmonicCheckSkipsVideoLines() {
        // A 121 bpm pulse with a codec line at 60 bpm of 0.8 its power: the line looks like the fundamental.
        let peaks = [(121.0 / 60, 100.0), (1.0, 80.0)]
        func run(videoLines: [Double]) -> Double {
            var tracker = PulseTracker()
            var f = 0.0
            for k in 0 ..< 4 {
                let s = Self.spectrum(lines: peaks, seed: UInt64(400 + k))
                f = tracker.update(s.normalized, videoLines: videoLines)
            }
            return f * 60
        }
        #expect(abs(run(videoLines: []) - 60) < 2, "a true sub-harmonic is still taken")
        #expect(abs(run(videoLines: [1.0]) - 121) < 2, "the codec's line is not")
    }

    @Test("the estimators that read chroma do not read a masked line; LUMA is not masked")
    func maskKeepsChromaOffTheLine() {
        // Skin whose chroma steps with a 1 Hz codec rhythm far stronger than a 108 bpm pulse carried in luma.
        var rng = SplitMix(seed: 5)
        var r = [Double](), g = [Double](), b = [Double]()
        for i in 0 ..< 360 {
            let t = Double(i) / 30
            let pulse = 0.3 * sin(2 * .pi * 1.8 * t)
            let cb = 0.6 * sin(2 * .pi * 1.0 * t)
            r.append(150 + pulse + rng.gaussian() * 0.05)
            g.append(110 + pulse - 0.344_136 * cb + rng.gaussian() * 0.05)
            b.append(90 + pulse + 1.772 * cb + rng.gaussian() * 0.05)
        }
        let plain = PulseAnalysis.analyse(r: r, g: g, b: b, rate: 30, low: 40, high: 180)
        #expect(abs(plain.methods[.chrom]!.rate - 60) < 2, "without the mask CHROM reads the codec: \(plain.methods[.chrom]!.rate)")
        let mask = plain.spectrum.frequencies.map { abs($0 - 1.0) < 0.12 ? 0.0 : 1.0 }
        let masked = PulseAnalysis.analyse(r: r, g: g, b: b, rate: 30, low: 40, high: 180, chromaMask: mask)
        #expect(abs(masked.methods[.chrom]!.rate - 60) > 5, "CHROM off the line: \(masked.methods[.chrom]!.rate)")
        #expect(masked.methods[.luma]!.rate == plain.methods[.luma]!.rate && masked.methods[.luma]!.snr == plain.methods[.luma]!.snr)
        #expect(abs(masked.rate - 108) < 2, "fused \(masked.rate)")
    }

    @Test("a motion line is masked only where the motion removal took out most of the skin's power")
    func echoMaskNeedsTheEcho() {
        #expect(VitalsEngine.echoMask(lines: [1, 0, 0, 1], echoLeft: [0.1, 0.1, 0.9, 0.1]) == [1, 0, 1, 1])
        #expect(VitalsEngine.echoMask(lines: [0, 0], echoLeft: [0.1]).isEmpty)
    }

    @Test("a steady shake's line is found in the face position and, in compressed video, masked where the skin echoed it, not at the pulse")
    func shakeLineMasked() throws {
        // 12 s at 30 fps: a 108 bpm pulse, and a 0.9 Hz vertical shake whose echo in the skin is 5 times stronger;
        // the background beside the head carries the codec's 1 s refresh in its chroma, or, uncompressed, nothing.
        func samples(compressed: Bool) -> [VitalsEngine.Sample] {
            (0 ..< 360).map { i -> VitalsEngine.Sample in
                let t = Double(i) / 30
                let shake = 0.6 * sin(2 * .pi * 0.9 * t)
                let v = 120 + 0.2 * sin(2 * .pi * 1.8 * t) + 1.0 * shake
                let refresh = compressed ? 0.5 * sin(2 * .pi * 1.0 * t) : 0
                return VitalsEngine.Sample(t: t, rgb: RGB(r: v + 30, g: v, b: v - 20), faceX: 0, faceY: shake,
                                           motion: [0, shake, 0, shake], upper: nil, lower: nil, background: nil,
                                           backgroundRGB: RGB(r: 90, g: 100, b: 110 + refresh))
            }
        }
        let grid = stride(from: 40.0 / 60, through: 3.0, by: PulseAnalysis.spectrumStep).map { $0 }
        let engine = try VitalsEngine()
        let trace = engine.skinTrace(samples(compressed: true), from: 0, to: 11.9, rate: 30)
        let echoLeft = engine.echoLeft(trace, rate: 30)
        #expect(echoLeft.count == grid.count)
        func left(at f: Double) -> Double { echoLeft[grid.firstIndex { $0 >= f }!] }
        #expect(left(at: 0.9) < 0.05, "the echo was taken out: \(left(at: 0.9))")
        #expect(left(at: 1.8) > 0.9, "the pulse was not: \(left(at: 1.8))")
        for _ in 0 ..< 4 { engine.findLines(in: trace, rate: 30) }
        try #require(!engine.videoLines.lines.isEmpty, "the codec's line is found")
        let mask = engine.echoMask(trace, rate: 30)
        #expect(mask.count == grid.count)
        #expect(mask[grid.firstIndex { $0 >= 0.9 }!] == 0)
        #expect(mask[grid.firstIndex { $0 >= 1.8 }!] == 1)
        // Uncompressed, the same shake's line is found but nothing is masked.
        let plain = try VitalsEngine()
        let rawTrace = plain.skinTrace(samples(compressed: false), from: 0, to: 11.9, rate: 30)
        for _ in 0 ..< 4 { plain.findLines(in: rawTrace, rate: 30) }
        #expect(plain.motionLines.lines.contains { abs($0 - 0.9) < 0.05 }, "motion lines \(plain.motionLines.lines)")
        #expect(plain.videoLines.lines.isEmpty)
        #expect(plain.echoMask(rawTrace, rate: 30).isEmpty)
    }

    @Test("once the background shows the video's own lines, chroma is taken as at least twice the tolerance noisier than luma")
    func videoLinesFloorTheChromaExcess() throws {
        // Skin whose chroma carries a codec's 55 bpm rhythm and whose luma carries a 144 bpm pulse, in a window
        // where the background's own measure reads 0.4, the level of uncompressed video (shake and dim light raise
        // the background's luma as much as the codec raises its chroma).
        let x = EstimatorTests.codecTrace()
        let trace = VitalsEngine.ColourTraces(r: x.r, g: x.g, b: x.b, chromaExcess: 0.4, background: nil, motion: [],
                                              lumaBeforeMotionRemoval: [], lumaAfterMotionRemoval: [])
        let engine = try VitalsEngine()
        #expect(engine.chromaExcess(of: trace) == 0.4, "no line seen yet: the background's own measure")
        let misread = PulseAnalysis.analyse(r: x.r, g: x.g, b: x.b, rate: 30, low: 40, high: 180, chromaExcess: engine.chromaExcess(of: trace))
        #expect(abs(misread.rate - 55.2) < 2, "at 0.4 the chroma rhythm wins: \(misread.rate) bpm")
        #expect(misread.best.readsChroma, "\(misread.methods)")
        // The background's chroma holds the codec's 1 s refresh window after window.
        let refresh = (0 ..< 360).map { i -> VitalsEngine.Sample in
            let t = Double(i) / 30
            return VitalsEngine.Sample(t: t, rgb: RGB(r: 150, g: 120, b: 100), faceX: 0, faceY: 0, motion: [0, 0, 0, 0], upper: nil,
                                       lower: nil, background: nil, backgroundRGB: RGB(r: 90, g: 100, b: 110 + 0.5 * sin(2 * .pi * t)))
        }
        let background = engine.skinTrace(refresh, from: 0, to: 11.9, rate: 30)
        for _ in 0 ..< 4 { engine.findLines(in: background, rate: 30) }
        try #require(!engine.videoLines.lines.isEmpty, "the codec's line is found")
        #expect(engine.chromaExcess(of: trace) == VitalsEngine.compressedChromaExcess)
        let read = PulseAnalysis.analyse(r: x.r, g: x.g, b: x.b, rate: 30, low: 40, high: 180, chromaExcess: engine.chromaExcess(of: trace))
        // The methods that read chroma lose 6 dB, and LUMA's pulse becomes the best method's (the wave HRV times).
        for method in PulseMethod.allCases where method.readsChroma {
            #expect(abs(misread.methods[method]!.snr - read.methods[method]!.snr - 20 * log10(2)) < 1e-6)
        }
        #expect(read.best == .luma, "\(read.methods)")
        func share(_ a: PulseAnalysis) -> Double {
            func at(_ bpm: Double) -> Double { a.spectrum.power[a.spectrum.frequencies.firstIndex { $0 * 60 >= bpm }!] }
            return at(143.6) / at(55.2)
        }
        #expect(share(read) > 2 * share(misread), "the pulse's share of the fused spectrum: \(share(misread)) → \(share(read))")
        // A window whose own measure is higher keeps it.
        var noisier = trace
        noisier.chromaExcess = 2.5
        #expect(engine.chromaExcess(of: noisier) == 2.5)
    }
}
