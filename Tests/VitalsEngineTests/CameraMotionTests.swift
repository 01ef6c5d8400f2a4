import Foundation
import GlassesSimulator
import Testing
@testable import VitalsEngine

/// The camera's own motion, measured on the background beside the head, reaches the motion removal.
///
/// A simulated wearer's head moves the whole scene (the simulator's `headMotion`); the engine measures the background
/// regions' displacement every frame and keeps it, with the face's tracked position, as a motion signal the skin's
/// colour may echo (``VitalsEngine/Sample/motion``). `EstimatorTests.cameraMotionFromBackground` shows what that signal
/// does for the echo; this checks, on rendered frames, that it is the camera's motion, in pixels, on the right axes.
@Suite("The camera's motion from the background")
struct CameraMotionTests {
    @Test("the background's displacement follows the simulated head motion, each axis its own, pixel for pixel")
    func backgroundFollowsTheCamera() throws {
        let width = 504, height = 896, fps = 30.0
        // A large, slow sway (0.015 of the width: up to 7.5 px) so that a few seconds cover several pixels each way.
        let scene = try SimulatedScene(profile: SubjectProfile(pulseRate: 70, breathingRate: 12, headMotion: true, seed: 3))
        let engine = try VitalsEngine()
        var shifts: [Int64: (x: Double, y: Double)] = [:]
        for n in 0 ..< Int(6 * fps) {
            let t = Double(n) / fps, us = Int64((t * 1_000_000).rounded())
            let image = scene.render(at: t, width: width, height: height)
            let shift = scene.frameInfo(at: t, width: width, height: height).cameraShift
            // The renderer moves the background by whole pixels.
            shifts[us] = (shift.x.rounded(), shift.y.rounded())
            try image.data.withUnsafeBytes { raw in
                let base = raw.baseAddress!.assumingMemoryBound(to: UInt8.self)
                let view = try VitalsPixelView(format: .nv12VideoRange, width: width, height: height, plane0: base,
                                               bytesPerRow0: image.lumaBytesPerRow,
                                               plane1: base + image.lumaBytesPerRow * height, bytesPerRow1: image.chromaBytesPerRow)
                _ = engine.process(view, timestampUs: us)
            }
        }
        let samples = engine.samples
        try #require(samples.count > 100 && samples.allSatisfy { $0.motion.count == 6 })
        var measured: (x: [Double], y: [Double]) = ([], []), truth: (x: [Double], y: [Double]) = ([], [])
        for s in samples {
            let shift = try #require(shifts[Int64((s.t * 1_000_000).rounded())])
            measured.x.append(s.motion[4]); measured.y.append(s.motion[5])
            truth.x.append(shift.x); truth.y.append(shift.y)
        }
        #expect(SignalMath.standardDeviation(truth.x) > 1.5 && SignalMath.standardDeviation(truth.y) > 1.5)
        // Each axis follows its own: the camera's roll shifts each background row a little differently in x, and a
        // region can lose its match for a moment, so the check is a fit over the run, not frame by frame.
        // The head's height for breathing moves with the camera too (and a little with each breath).
        let heads = samples.map { $0.headY ?? .nan }
        for (axis, m, t) in [("x", measured.x, truth.x), ("y", measured.y, truth.y), ("head", heads, truth.y)] {
            let (slope, correlation) = Self.fit(m, on: t)
            #expect(correlation > 0.95 && abs(slope - 1) < 0.1, "\(axis): slope \(slope), correlation \(correlation)")
        }
    }

    @Test("regions matched as one follow the textured one, where a plain wall alone gives no match or a wrong one")
    func regionsMatchedAsOne() throws {
        // A 160×200 luma picture: rows 0–199 of the left half carry a texture that moves down 0.5 px a frame; the
        // right half is a plain wall with fresh camera noise each frame.
        let width = 160, height = 200
        let textured = VitalsRect(x: 8, y: 20, width: 60, height: 160), plain = VitalsRect(x: 92, y: 20, width: 60, height: 160)
        var rng = SplitMix(seed: 4)
        func frame(_ shift: Double) -> [UInt8] {
            var luma = [UInt8](repeating: 0, count: width * height)
            for y in 0 ..< height {
                let u = Double(y) - shift
                let texture = 120 + 40 * sin(u / 5) + 20 * sin(u / 2.3 + 1)
                for x in 0 ..< width {
                    let v = x < width / 2 ? texture : 128 + 1.5 * rng.gaussian()
                    luma[y * width + x] = UInt8(max(0, min(255, v.rounded())))
                }
            }
            return luma
        }
        var group = ProfileMotionGroup(regions: [textured, plain], vertical: true, maxShift: 8)
        var alone = ProfileMotion(region: plain, vertical: true, maxShift: 8)
        let chroma = [UInt8](repeating: 128, count: width * height / 2)
        var worstGroup = 0.0, worstAlone = 0.0, aloneMeasured = 0
        for n in 0 ..< 30 {
            let shift = 0.5 * Double(n)
            let luma = frame(shift)
            try luma.withUnsafeBufferPointer { y in
                try chroma.withUnsafeBufferPointer { c in
                    let view = try VitalsPixelView(format: .nv12VideoRange, width: width, height: height, plane0: y.baseAddress!,
                                                   bytesPerRow0: width, plane1: c.baseAddress!, bytesPerRow1: width)
                    let measured = group.update(view)
                    if n > 0 { worstGroup = max(worstGroup, abs((measured ?? .infinity) - shift)) }
                    if let d = alone.update(view) {
                        aloneMeasured += 1
                        worstAlone = max(worstAlone, abs(d - shift))
                    }
                }
            }
        }
        #expect(worstGroup < 0.1, "the group's largest error: \(worstGroup) px")
        // The plain region alone either finds no match or a wrong one: it is what the group must not be led by.
        #expect(aloneMeasured < 10 || worstAlone > 1, "the plain region alone: \(aloneMeasured) matches, largest error \(worstAlone) px")
    }

    @Test("breathing's head signal is the head's own height, not a tracker that lost part of the camera's sway")
    func breathingHeadFollowsTheCamera() throws {
        // 40 s at 30 fps: the camera sways at 6.6/min (1.5 px) and at 13.8/min; the head rises 0.3 px with each of
        // 18 breaths a minute. No chest is tracked, so the head minus the background is the only candidate. A small
        // face's box (faceY) followed only 0.65 of the sway; the head's height (headY) followed all of it.
        func rate(withHeadHeight: Bool) throws -> Double {
            let engine = try VitalsEngine()
            engine.samples = (0 ..< 1200).map { i -> VitalsEngine.Sample in
                let t = Double(i) / 30
                let camera = 1.5 * sin(2 * .pi * 0.11 * t) + 0.9 * sin(2 * .pi * 0.23 * t + 1)
                let head = camera + 0.3 * sin(2 * .pi * 0.3 * t)
                var sample = VitalsEngine.Sample(t: t, rgb: RGB(r: 150, g: 110, b: 90), faceX: 0, faceY: (0.65 * camera).rounded(),
                                                 motion: [0, 0, 0, 0], upper: nil, lower: nil, background: camera, backgroundRGB: nil)
                if withHeadHeight { sample.headY = head }
                return sample
            }
            var result = VitalsFrameResult(condition: .ok, face: nil)
            engine.breathing(&result, at: engine.samples.last!.t, duration: 40)
            return try #require(result.breathingRate.last).value
        }
        let withHead = try rate(withHeadHeight: true), withBox = try rate(withHeadHeight: false)
        #expect(abs(withHead - 18) < 1, "breathing from the head's height: \(withHead)/min")
        #expect(abs(withBox - 18) > 3, "breathing from the box that lost the sway: \(withBox)/min (the case the head's height is for)")
    }

    /// The least-squares slope of `y` on `x`, and their correlation.
    static func fit(_ y: [Double], on x: [Double]) -> (slope: Double, correlation: Double) {
        let mx = SignalMath.mean(x), my = SignalMath.mean(y)
        var sxy = 0.0, sxx = 0.0, syy = 0.0
        for (a, b) in zip(x, y) { sxy += (a - mx) * (b - my); sxx += (a - mx) * (a - mx); syy += (b - my) * (b - my) }
        return (sxy / sxx, sxy / (sxx * syy).squareRoot())
    }
}
