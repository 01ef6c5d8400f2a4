import Foundation
import Testing
@testable import GlassesSimulator

/// The kinds of wearer motion (``WearerMotion``): each one's rates are its angles' derivatives (what the IMU reads is
/// the motion rendered), each has the shape its documentation gives, and a scenario names them.
@Suite("The wearer's motion: walking, nodding, turning")
struct WearerMotionTests {
    static func scene(_ motion: WearerMotion, seed: UInt64 = 7) throws -> SimulatedScene {
        try SimulatedScene(profile: SubjectProfile(headMotion: true, headMotionAmplitude: 0.015, wearerMotion: motion, seed: seed))
    }

    @Test("every kind's rates are the time derivatives of its angles (central differences, within 1 %)",
          arguments: WearerMotion.allCases)
    func ratesAreDerivatives(_ motion: WearerMotion) throws {
        let scene = try Self.scene(motion)
        let h = 1e-5
        var worst = 0.0, largest = 0.0
        for k in 0 ..< 2400 {
            let t = Double(k) * 0.0125 + 0.003
            let before = scene.headRotation(at: t - h), after = scene.headRotation(at: t + h), now = scene.headRotation(at: t)
            for (numeric, exact) in [((after.yaw - before.yaw) / (2 * h), now.yawRate), ((after.pitch - before.pitch) / (2 * h), now.pitchRate),
                                     ((after.roll - before.roll) / (2 * h), now.rollRate)] {
                worst = max(worst, abs(numeric - exact))
                largest = max(largest, abs(exact))
            }
        }
        #expect(largest > 0 && worst < 0.01 * largest, "\(motion): worst difference \(worst) rad/s against rates up to \(largest)")
    }

    @Test("walking pitches at the step rate (1.6–2.0 Hz) and sways at half of it; the drift has neither")
    func walkingHasTheStepRate() throws {
        func strongest(_ signal: (Double) -> Double) -> Double {
            // The strongest frequency in 0.5–2.5 Hz over 60 s (a 0.01 Hz grid).
            let times = (0 ..< 1440).map { Double($0) / 24 }
            let values = times.map(signal)
            return stride(from: 0.5, through: 2.5, by: 0.01).max { a, b in
                func power(_ f: Double) -> Double {
                    let c = zip(times, values).reduce(0) { $0 + $1.1 * cos(2 * .pi * f * $1.0) }
                    let s = zip(times, values).reduce(0) { $0 + $1.1 * sin(2 * .pi * f * $1.0) }
                    return c * c + s * s
                }
                return power(a) < power(b)
            }!
        }
        let walking = try Self.scene(.walking)
        let step = strongest { walking.headRotation(at: $0).pitchRate }
        let sway = strongest { walking.headRotation(at: $0).yawRate }
        #expect((1.6 ... 2.0).contains(step) && abs(sway - step / 2) < 0.03, "step \(step) Hz, sway \(sway) Hz")
        let drift = try Self.scene(.drift)
        #expect(strongest { drift.headRotation(at: $0).pitchRate } < 1.0)
    }

    @Test("nodding comes in bursts: 3 s of pitch every 9 s, and between them the slow drift alone")
    func noddingBursts() throws {
        let scene = try Self.scene(.nodding)
        let speeds = (0 ..< 27 * 100).map { abs(scene.headRotation(at: Double($0) / 100).pitchRate) }
        // Per second: the fastest pitch rate; bursts are 3 of every 9 seconds.
        let perSecond = (0 ..< 27).map { s in speeds[(s * 100) ..< (s * 100 + 100)].max()! }
        let fast = perSecond.filter { $0 > 0.1 }.count, slow = perSecond.filter { $0 < 0.02 }.count
        #expect(fast >= 6 && fast <= 12 && slow >= 12, "per-second peak pitch rates: \(perSecond)")
    }

    @Test("turning holds four amplitudes of yaw for 4 s, every 12 s")
    func turningHolds() throws {
        let scene = try Self.scene(.turning)
        let turn = 4 * 0.015 / SimulatedScene.focalLengthPerWidth
        let yaws = (0 ..< 2400).map { scene.headRotation(at: Double($0) / 100).yaw }
        // The drift adds at most half its own size (about 0.6 of an amplitude) either way.
        let held = yaws.filter { $0 > 0.8 * turn }.count, away = yaws.filter { $0 < 0.2 * turn }.count
        #expect(held >= 2 * 350 && held <= 2 * 520 && away >= 2 * 600, "held \(held), away \(away) of 2400")
    }

    @Test("a scenario names the kind; an unknown one is refused; the default is the drift")
    func scenarioField() throws {
        let parsed = try JSONDecoder().decode(SubjectProfile.self, from: Data(#"{"headMotion": true, "wearerMotion": "nodding"}"#.utf8))
        #expect(parsed.wearerMotion == .nodding && SubjectProfile().wearerMotion == .drift)
        #expect(SubjectProfile.fieldNames.contains("wearerMotion"))
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(SubjectProfile.self, from: Data(#"{"wearerMotion": "jogging"}"#.utf8))
        }
    }
}
