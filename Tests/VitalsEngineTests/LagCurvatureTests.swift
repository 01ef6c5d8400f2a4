import Foundation
import Testing
@testable import VitalsEngine

/// The motion echo's second order: the squares of the skin regions' lag (`VitalsEngine.echoSignals`), fitted when
/// the lag swings far enough over a long enough fit (`VitalsEngine.curvatureLeft`).
@Suite("The lag's curvature in the motion echo")
struct LagCurvatureTests {
    static let fs = 24.0
    static let band = (low: 0.67, high: 3.0)

    /// The six recorded motion signals of a face whose skin regions lag it by `lag` across (px) and not at all down:
    /// face position (moving `faceGain` times the lag), lag, camera (still).
    static func recorded(lag: [Double], faceGain: Double = 2) -> [[Double]] {
        let still = [Double](repeating: 0, count: lag.count)
        return [lag.map { 200 + faceGain * $0 }, still.map { _ in 300 }, lag, still, still, still]
    }

    /// A lag that sways slowly by `slow` px (0.13 Hz) with a fast rhythm of `fast` px (1.1 Hz, 66 bpm) on top, over
    /// `seconds`, with a little tracking noise.
    static func lag(slow: Double, fast: Double, seconds: Double, seed: UInt64 = 5) -> [Double] {
        var rng = SplitMix(seed: seed)
        return (0 ..< Int(seconds * fs)).map { i in
            let t = Double(i) / fs
            let sway: Double = slow * sin(2 * Double.pi * 0.13 * t)
            let rhythm: Double = fast * sin(2 * Double.pi * 1.1 * t + 0.4)
            return sway + rhythm + 0.01 * rng.gaussian()
        }
    }

    @Test("the shading's curvature under a slow sway is taken out with the lag's squares; a linear fit leaves its lines")
    func curvatureRemoved() throws {
        let lag = Self.lag(slow: 1.5, fast: 0.5, seconds: 30)
        let n = lag.count
        // Shading that follows the lag with curvature (its square puts lines at 1.1 ± 0.13 Hz, 58 and 74 bpm, each
        // 0.75 in amplitude in green) and a weaker 1.5 Hz (90 bpm) pulse in green.
        let echo: [Double] = lag.map { x in 0.6 * x + x * x }
        let pulse: [Double] = (0 ..< n).map { i in 0.3 * sin(2 * Double.pi * 1.5 * Double(i) / Self.fs) }
        // Not in proportion to the skin's colour (which POS and CHROM would cancel): green's shading, mostly.
        let red: [Double] = echo.map { 150 + 0.2 * $0 }
        let green: [Double] = (0 ..< n).map { i in 110 + echo[i] + pulse[i] }
        let blue: [Double] = echo.map { 90 + 0.4 * $0 }
        let channels = [red, green, blue]
        let motion = VitalsEngine.echoSignals(Self.recorded(lag: lag))
        #expect(motion.count == VitalsEngine.pictureMotionSignals)
        let left = VitalsEngine.curvatureLeft(motion, span: 30, rate: Self.fs, low: Self.band.low, high: Self.band.high)
        #expect(left.isEmpty, "a lag swinging by 0.35 px in the band over 30 s fits its squares")
        let squares = VitalsEngine.curvatureSignals
        func rate(leaving: Set<Int>) -> Double {
            let coupling = VitalsEngine.motionCoupling(channels, motion: motion, rate: Self.fs, low: Self.band.low,
                                                       high: Self.band.high, leaving: leaving)
            let cleaned = VitalsEngine.removeMotion(channels, motion: motion, coupling: coupling)
            return PulseAnalysis.analyse(r: cleaned[0], g: cleaned[1], b: cleaned[2], rate: Self.fs, low: 40, high: 180).rate
        }
        let linear = rate(leaving: squares)
        #expect(abs(linear - 90) > 5, "a linear fit leaves the curvature's lines, which outweigh the pulse: \(linear)")
        let curved = rate(leaving: left)
        #expect(abs(curved - 90) < 1.5, "with the squares the pulse wins: \(curved)")
    }

    @Test("the squares are left out of short fits, of a lag that barely swings in the band and of a face moving far")
    func curvatureGate() {
        let squares = VitalsEngine.curvatureSignals
        func left(_ lag: [Double], span: Double, faceGain: Double = 2) -> Set<Int> {
            VitalsEngine.curvatureLeft(VitalsEngine.echoSignals(Self.recorded(lag: lag, faceGain: faceGain)), span: span,
                                       rate: Self.fs, low: Self.band.low, high: Self.band.high)
        }
        let swinging = Self.lag(slow: 1.5, fast: 0.5, seconds: 30)
        #expect(left(swinging, span: 30).isEmpty)
        #expect(left(swinging, span: VitalsEngine.curvatureSpan - 1) == squares, "a fit shorter than the span")
        // A 3 px shake's lag: 0.2 px in the band.
        #expect(left(Self.lag(slow: 1.5, fast: 0.28, seconds: 30), span: 30) == squares, "too little motion in the band")
        // A nod: the face moves by about 3.5 px in the band (ten times the lag), its regions placed again and again.
        #expect(left(swinging, span: 30, faceGain: 10) == squares, "the face itself moves too far")
        // Not the recorded signals: nothing is added, so there are no squares to leave.
        #expect(VitalsEngine.echoSignals([swinging]).count == 1)
    }
}
