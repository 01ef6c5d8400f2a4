import Foundation
import Testing
@testable import VitalsEngine

/// The colour traces stay continuous when the tracked face box is replaced (``ColourSplice``).
@Suite("Colour traces across a re-adopted face box", .serialized)
struct ColourSpliceTests {
    @Test("a join scales later colours onto the level of the first regions, channel by channel, and joins compound")
    func joinsCompound() {
        var splice = ColourSplice()
        let old = ColourSplice.Colours(skin: RGB(r: 160, g: 120, b: 100), parts: [RGB(r: 150, g: 110, b: 90), RGB(r: 170, g: 130, b: 110)],
                                       background: RGB(r: 80, g: 80, b: 80))
        let new = ColourSplice.Colours(skin: RGB(r: 150, g: 115, b: 98), parts: [RGB(r: 140, g: 100, b: 80), RGB(r: 170, g: 130, b: 110)],
                                       background: RGB(r: 100, g: 90, b: 80))
        // Before any join nothing changes.
        #expect(splice.applied(to: new).skin == new.skin)
        splice.join(old: old, new: new)
        let once = splice.applied(to: new)
        #expect(abs(once.skin.r - 160) < 1e-9 && abs(once.skin.g - 120) < 1e-9 && abs(once.skin.b - 100) < 1e-9)
        #expect(once.parts.map { $0.map(\.r) } == [150, 170])
        #expect(abs(once.background!.r - 80) < 1e-9 && abs(once.background!.g - 80) < 1e-9)
        // A pulse of +1 % on the new regions is +1 % on the spliced trace: a gain, not an offset.
        let pulsing = splice.applied(to: ColourSplice.Colours(skin: RGB(r: 151.5, g: 116.15, b: 98.98), parts: nil, background: nil))
        #expect(abs(pulsing.skin.g / 120 - 1.01) < 1e-9)
        // A second re-adoption compounds: the third regions land on the first ones' level.
        let third = ColourSplice.Colours(skin: RGB(r: 140, g: 110, b: 90), parts: nil, background: nil)
        splice.join(old: ColourSplice.Colours(skin: new.skin, parts: nil, background: nil), new: third)
        let twice = splice.applied(to: third)
        #expect(abs(twice.skin.r - 160) < 1e-9 && abs(twice.skin.b - 100) < 1e-9)
    }

    @Test("a ratio out of range or a dark channel leaves the gain as it was, on all three channels alike")
    func implausibleJoinsAreLeftOut() {
        var splice = ColourSplice()
        let base = ColourSplice.Colours(skin: RGB(r: 160, g: 120, b: 100), parts: nil, background: nil)
        // The new regions on something three times darker in blue (off the face): no join, not even for red and green.
        splice.join(old: base, new: ColourSplice.Colours(skin: RGB(r: 150, g: 115, b: 30), parts: nil, background: nil))
        #expect(splice.applied(to: base).skin == base.skin)
        // A channel at the floor of the range: no ratio is taken.
        splice.join(old: ColourSplice.Colours(skin: RGB(r: 160, g: 1, b: 100), parts: nil, background: nil), new: base)
        #expect(splice.applied(to: base).skin == base.skin)
        // Parts whose count changed are left as they are.
        splice.join(old: ColourSplice.Colours(skin: base.skin, parts: [RGB(r: 1, g: 1, b: 1)], background: nil),
                    new: ColourSplice.Colours(skin: base.skin, parts: [RGB(r: 100, g: 100, b: 100), RGB(r: 90, g: 90, b: 90)], background: nil))
        #expect(splice.applied(to: ColourSplice.Colours(skin: base.skin, parts: [RGB(r: 100, g: 100, b: 100), RGB(r: 90, g: 90, b: 90)],
                                                        background: nil)).parts?.first == RGB(r: 100, g: 100, b: 100))
    }

    /// The benchmark's subject 12 (seed 1012) through HEVC at 4 Mbit/s. On its decoded frames the detector's box
    /// used to flicker between 228 and 270 px (the periodic full-frame search found the larger one, the local search
    /// the smaller one again a moment later), and each re-adoption moved the skin regions onto other skin: without
    /// the splice the skin's luma steps there by 2.3–2.4 levels, 50 times its typical change from frame to frame; the
    /// same flicker at 31 s hid this subject's pulse from every method for the rest of the benchmark's 40 s run.
    /// Since the budgeted search (``FaceScout``) finds the face first, at a size between the two, this clip no longer
    /// flickers, so the test re-adopts as the flicker did: a box a quarter wider at 4 s, the tracked one again at 6 s.
    @Test("seed 1012 through HEVC at 4 Mbit/s: the skin's colour does not step where the face box is re-adopted")
    func noStepAtReadoption() async throws {
        let trace = try await onOwnThread {
            try Self.recordSkin(seed: 1012, bitrate: 4_000_000, seconds: 8.5, readoptions: [4.0: 1.25, 6.0: 0.8])
        }
        // Frames where the tracked box changed size: re-adoptions (the profile tracker only moves a box).
        let changes = trace.indices.dropFirst().filter { trace[$0].width != trace[$0 - 1].width }
        try #require(changes.count >= 2, "\(changes.count) re-adoptions in this run: the test would check too little")
        let steps = trace.indices.dropFirst().map { abs(trace[$0].luma - trace[$0 - 1].luma) }.sorted()
        let typical = steps[steps.count / 2]
        for i in changes {
            let step = abs(trace[i].luma - trace[i - 1].luma)
            #expect(step <= max(8 * typical, 0.3), "skin luma stepped \(step) levels at frame \(i) (typical \(typical))")
        }
    }

    /// Per decoded frame with a face: the tracked box's width and the skin's luma as the engine measured it. At each
    /// time in `readoptions` (seconds) the tracked box is replaced, after that frame, by one scaled about its centre,
    /// as a detection of another size replaces it (``VitalsEngine/adopt(_:view:force:at:)``).
    static func recordSkin(seed: UInt64, bitrate: Int, seconds: Double,
                           readoptions: [Double: Double] = [:]) throws -> [(width: Int, luma: Double)] {
        let engine = try VitalsEngine()
        var trace: [(width: Int, luma: Double)] = []
        var pending = readoptions.sorted { $0.key < $1.key }
        try SceneThroughHEVC.run(try SceneThroughHEVC.benchmarkSubject(seed: seed), width: 504, height: 896, seconds: seconds,
                                 bitrate: bitrate) { decoded, t in
            let result = try SceneThroughHEVC.process(decoded, with: engine) { view in
                guard let (at, scale) = pending.first, t >= at, let box = engine.trackedBox else { return }
                pending.removeFirst()
                let width = Int(Double(box.width) * scale)
                engine.adopt(VitalsRect(x: box.x + (box.width - width) / 2, y: box.y + (box.height - width) / 2, width: width, height: width),
                             view: view, force: false, at: t)
            }
            if let face = result.face, let m = result.measurement {
                trace.append((face.width, RGB(r: m.skinRed, g: m.skinGreen, b: m.skinBlue).luma))
            }
        }
        return trace
    }
}
