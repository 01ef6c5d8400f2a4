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
        for (axis, m, t) in [("x", measured.x, truth.x), ("y", measured.y, truth.y)] {
            let (slope, correlation) = Self.fit(m, on: t)
            #expect(correlation > 0.95 && abs(slope - 1) < 0.1, "\(axis): slope \(slope), correlation \(correlation)")
        }
    }

    /// The least-squares slope of `y` on `x`, and their correlation.
    static func fit(_ y: [Double], on x: [Double]) -> (slope: Double, correlation: Double) {
        let mx = SignalMath.mean(x), my = SignalMath.mean(y)
        var sxy = 0.0, sxx = 0.0, syy = 0.0
        for (a, b) in zip(x, y) { sxy += (a - mx) * (b - my); sxx += (a - mx) * (a - mx); syy += (b - my) * (b - my) }
        return (sxy / sxx, sxy / (sxx * syy).squareRoot())
    }
}
