import Foundation
import Testing
@testable import VitalsEngine

/// What keeps a fast motion in a profile search's reach (``ProfileReach``): the last frame when the reference is out
/// of reach or no longer matches, and the IMU's travel, which centres the search where the content went; and the
/// engine's travel from the gyroscope.
@Suite("Profile tracking that keeps up with a walking wearer")
struct ProfileReachTests {
    /// A textured profile (row or column means) of 200 samples whose content is shifted by `d` px, plus `extra`
    /// times a structure the reference does not have.
    static func profile(_ d: Double, extra: Double = 0) -> [Double] {
        (0 ..< 200).map { i in
            let x = Double(i) - d
            return 110 + 30 * sin(x / 9) + 12 * sin(x / 3.7 + 1) + 6 * sin(x / 1.9) + extra * sin(x / 2.6 + 0.5)
        }
    }

    /// A walking wearer's bob as the picture sees it: 14 px at 1.8 Hz, up to 6.6 px a frame at 24 fps.
    static func bob(_ t: Double) -> Double { 14 * sin(2 * .pi * 1.8 * t + 0.3) }

    @Test("a bob that carries the content beyond the search's reach of the reference is followed through the last frame")
    func bobBeyondTheReference() throws {
        var motion = ProfileMotion(region: VitalsRect(x: 0, y: 0, width: 10, height: 200), vertical: true, maxShift: 8)
        #expect(motion.update(profile: Self.profile(Self.bob(0))) == nil, "the first frame is the reference")
        var worst = 0.0
        for n in 1 ..< 240 {
            let t = Double(n) / 24
            let measured = motion.update(profile: Self.profile(Self.bob(t)))
            let d = try #require(measured, "lost at frame \(n)")
            worst = max(worst, abs(d - (Self.bob(t) - Self.bob(0))))
        }
        #expect(worst < 0.5, "worst error \(worst) px")
        // The reference alone cannot: 14 px either way is beyond a search of ±8.
        #expect(ProfileMotion.shift(of: Self.profile(14), against: Self.profile(-14), maxShift: 8) == nil)
    }

    @Test("content that changes until the reference no longer matches it is followed through the last frame")
    func changingContent() throws {
        // A slow drift of 3 px, never far enough to take a new reference, while a structure the reference lacks grows.
        func drift(_ n: Int) -> Double { 3 * sin(Double(n) / 60) }
        func frame(_ n: Int) -> [Double] { Self.profile(drift(n), extra: 0.25 * Double(n)) }
        var motion = ProfileMotion(region: VitalsRect(x: 0, y: 0, width: 10, height: 200), vertical: true, maxShift: 8)
        _ = motion.update(profile: frame(0))
        var worst = 0.0
        for n in 1 ..< 200 {
            let measured = motion.update(profile: frame(n))
            let d = try #require(measured, "lost at frame \(n)")
            worst = max(worst, abs(d - drift(n)))
        }
        #expect(worst < 0.5, "worst error \(worst) px")
        // By the end the first frame's profile no longer matches.
        let late = try #require(ProfileMotion.costs(of: frame(199), against: frame(0), maxShift: 8))
        #expect(ProfileMotion.bestShift(late.costs, variance: late.variance, maxShift: 8) == .poor)
    }

    @Test("the IMU's travel centres the search: steps larger than the search's reach are followed, after a frame without a profile too, and without it lost")
    func travelCentresTheSearch() throws {
        // 12 px at 2 Hz seen at 12 fps: up to 12.6 px a frame, beyond ±8 even from the last frame.
        func d(_ n: Int) -> Double { 12 * sin(2 * .pi * 2 * Double(n) / 12 + 0.3) }
        func run(travel: ((Int) -> Double)?) -> (lost: Int, worst: Double) {
            var motion = ProfileMotion(region: VitalsRect(x: 0, y: 0, width: 10, height: 200), vertical: true, maxShift: 8)
            _ = motion.update(profile: Self.profile(d(0)), travel: travel?(0))
            var lost = 0, worst = 0.0
            for n in 1 ..< 120 {
                // Every tenth frame has no profile (the region left the picture): the next has no last frame to match.
                if n % 10 == 5 {
                    _ = motion.update(profile: nil, travel: travel?(n))
                    continue
                }
                guard let measured = motion.update(profile: Self.profile(d(n)), travel: travel?(n)) else { lost += 1; continue }
                worst = max(worst, abs(measured - (d(n) - d(0))))
            }
            return (lost, worst)
        }
        // The gyroscope's travel at its own level, 0.8 px off the picture's (its gain and clock are estimates).
        let withIMU = run(travel: { n in 500 + d(n) + 0.8 * sin(Double(n)) })
        #expect(withIMU.lost == 0 && withIMU.worst < 0.5, "\(withIMU)")
        let without = run(travel: nil)
        #expect(without.lost > 10, "\(without)")
    }

    @Test("a group of regions, one of them flat, follows the bob through the last frame and with the IMU's travel")
    func groupFollowsTheBob() throws {
        // Two regions of a 40×220 luma picture: a textured one and a flat one.
        let width = 40, height = 220
        func picture(_ d: Double) -> [UInt8] {
            var luma = [UInt8](repeating: 128, count: width * height)
            let rows = Self.profile(d) + [Double](repeating: 110, count: 20)
            for y in 0 ..< height {
                for x in 0 ..< 20 { luma[y * width + x] = UInt8(max(0, min(255, rows[y].rounded()))) }
            }
            return luma
        }
        let regions = [VitalsRect(x: 0, y: 0, width: 20, height: 200), VitalsRect(x: 20, y: 0, width: 20, height: 200)]
        for withTravel in [false, true] {
            var group = ProfileMotionGroup(regions: regions, vertical: true, maxShift: 8)
            var worst = 0.0, lost = 0
            for n in 0 ..< 120 {
                let t = Double(n) / 24
                let luma = picture(Self.bob(t))
                let chroma = [UInt8](repeating: 128, count: width * height / 2)
                let measured = try luma.withUnsafeBufferPointer { y in
                    try chroma.withUnsafeBufferPointer { c in
                        let view = try VitalsPixelView(format: .nv12VideoRange, width: width, height: height, plane0: y.baseAddress!,
                                                       bytesPerRow0: width, plane1: c.baseAddress!, bytesPerRow1: width)
                        return group.update(view, travel: withTravel ? Self.bob(t) - 40 : nil)
                    }
                }
                guard n > 0 else { continue }
                guard let measured else { lost += 1; continue }
                worst = max(worst, abs(measured - (Self.bob(t) - Self.bob(0))))
            }
            // Whole-pixel luma: a little more than the profiles' own error.
            #expect(lost == 0 && worst < 0.7, "travel \(withTravel): lost \(lost), worst \(worst) px")
        }
    }

    @Test("the gyroscope's rotation between two frames is the rates' integral, held past the last reading, nil where they do not reach")
    func rotationBetweenFrames() throws {
        let offset = 0.04
        let alignment = MotionClockAlignmentTests.aligned(offset: offset, seconds: 10)
        let sway = MotionClockAlignmentTests.Sway.self
        for (a, b) in [(2.0, 2.0 + 1 / 24.0), (3.3, 3.6), (5.01, 5.02)] {
            let r = try #require(alignment.rotation(from: a, to: b, offset: offset))
            #expect(abs(r.across - (sway.across.angle(b) - sway.across.angle(a))) < 2e-5, "across \(a)…\(b)")
            #expect(abs(r.down - (sway.down.angle(b) - sway.down.angle(a))) < 2e-5, "down \(a)…\(b)")
        }
        // The last reading is at 10 s on the video's clock: a frame just past it takes the last rate.
        let last = 10 - 1 / 60.0
        let held = try #require(alignment.rotation(from: last - 0.03, to: last + 0.02, offset: offset))
        let rate = sway.across.rate(last)
        #expect(abs(held.across - (sway.across.angle(last) - sway.across.angle(last - 0.03) + 0.02 * rate)) < 1e-4)
        #expect(alignment.rotation(from: last - 0.01, to: last + 0.05, offset: offset) == nil, "under half covered")
        #expect(alignment.rotation(from: 3, to: 3, offset: offset) == nil && alignment.rotation(from: 3, to: .nan, offset: 0) == nil)
        #expect(MotionClockAlignment().rotation(from: 1, to: 2, offset: 0) == nil, "no readings")
    }

    @Test("the engine's travel is the rotation between frames times the estimate's gains, and nothing before an estimate")
    func engineTravel() throws {
        let engine = try VitalsEngine()
        let sway = MotionClockAlignmentTests.Sway.self
        for k in 0 ... 600 {
            let t = Double(k) / 60
            engine.addRotationRate(at: t + 0.04, across: sway.across.rate(t), down: sway.down.rate(t))
        }
        engine.advanceSensorTravel(from: 1, to: 1 + 1 / 24.0)
        #expect(engine.sensorTravel == nil, "no estimate, no travel")
        engine.motionEstimate = MotionClockAlignment.Estimate(offset: 0.04, fit: 0.9, pixelsPerRadianAcross: 300,
                                                              pixelsPerRadianDown: -250, pairs: 100)
        var previous: Double?
        for n in 0 ..< 120 {
            let t = 2 + Double(n) / 24
            engine.advanceSensorTravel(from: previous, to: t)
            previous = t
        }
        let travel = try #require(engine.sensorTravel)
        let end = 2 + 119 / 24.0
        #expect(abs(travel.x - 300 * (sway.across.angle(end) - sway.across.angle(2))) < 0.01, "\(travel)")
        #expect(abs(travel.y + 250 * (sway.down.angle(end) - sway.down.angle(2))) < 0.01, "\(travel)")
        // A gap longer than the prediction's holds the travel.
        engine.advanceSensorTravel(from: end, to: end + 1)
        #expect(engine.sensorTravel?.x == travel.x && engine.sensorTravel?.y == travel.y)
    }
}
