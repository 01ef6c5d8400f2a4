import Foundation
import WearablesKit

// The IMU clock: samples are taken and sent on the glasses' scheduler at the requested rate, from the time the host
// asked, on the clock the video presentation times are on.
extension SimulatedGlasses {
    /// Starts the IMU clock at `rate` (a new generation: ticks of an older clock stop).
    func startMotion(_ rate: MotionSamplingRate) {
        let generation: UInt64 = state.withLock { s in
            s.motionGeneration += 1
            return s.motionGeneration
        }
        log("motion \(rate.hertz) Hz")
        let start = scheduler.now
        scheduler.schedule(after: .zero) { [weak self] in
            self?.motionTick(generation: generation, interval: .seconds(1) / rate.hertz, start: start, index: 0)
        }
    }

    private func motionTick(generation: UInt64, interval: Duration, start: Duration, index: Int) {
        let link = state.withLock { s -> (any HostLink)? in
            guard s.motionGeneration == generation else { return nil }
            return s.link
        }
        guard let link else { return }
        let due = start + interval * index
        link.send(.motionSamples([imuSample(at: due)]))
        let next = start + interval * (index + 1)
        scheduler.schedule(after: next - scheduler.now) { [weak self] in
            self?.motionTick(generation: generation, interval: interval, start: start, index: index + 1)
        }
    }

    /// The IMU reading at `time` on the scheduler's clock: the rendered head motion, measured (see ``SimulatedIMU``),
    /// stamped on the IMU's clock (the video's, plus ``Options/motionClockOffset``).
    func imuSample(at time: Duration) -> MotionSample {
        let elapsed = time - epoch
        let stamped = elapsed + options.motionClockOffset
        let nanoseconds = stamped.components.seconds * 1_000_000_000 + stamped.components.attoseconds / 1_000_000_000
        return SimulatedIMU.sample(rotation: scene.headRotation(at: Self.seconds(elapsed)), timestampNs: nanoseconds)
    }
}

/// The simulated glasses' IMU: an ideal sensor at the centre of the head's rotation, measuring the head motion the
/// camera renders (``SimulatedScene/headRotation(at:)``), with no noise or bias.
///
/// Axes, as a worn pair measured (the frame Meta never documented): `+X` up (the sky axis), `Y` lateral (`+Y` the
/// wearer's right, right-handed), `+Z` forward.
/// - gyroscope (rad/s): the time derivatives of the head's yaw, pitch and roll, on X, Y and Z; for the small angles
///   of the rendered motion (a few hundredths of a radian) that is the body's angular rate to within the angle's
///   own size (a few per cent).
/// - accelerometer (m/s²): the reaction to gravity, `g = 9.80665`, in the head's frame; the head does not translate.
///   A still, upright head reads `(+g, 0, 0)`: `+g` on X.
/// - orientation: from the neutral, upright, forward-looking pose (identity) to the head's pose, as
///   `q = q_X(yaw) · q_Y(pitch) · q_Z(roll)` (body to reference frame).
/// - magnetometer: nil (not simulated). Source: ``MotionSource/glasses``.
public enum SimulatedIMU {
    /// Standard gravity, m/s².
    public static let gravity = 9.80665

    /// The sample an ideal IMU reads for `rotation`.
    public static func sample(rotation r: HeadRotation, timestampNs: Int64) -> MotionSample {
        let (cb, sb) = (cos(r.pitch), sin(r.pitch))
        let (cc, sc) = (cos(r.roll), sin(r.roll))
        // World up (+X in the neutral pose) seen from the head: the first row of R_X(yaw)·R_Y(pitch)·R_Z(roll).
        let accelerometer = Vector3(
            x: Float(gravity * cb * cc), y: Float(-gravity * cb * sc), z: Float(gravity * sb))
        let gyroscope = Vector3(x: Float(r.yawRate), y: Float(r.pitchRate), z: Float(r.rollRate))
        let q = multiply(multiply(axisAngle(0, r.yaw), axisAngle(1, r.pitch)), axisAngle(2, r.roll))
        return MotionSample(
            timestampNs: timestampNs, accelerometer: accelerometer, gyroscope: gyroscope, magnetometer: nil,
            orientation: Quaternion(x: Float(q.x), y: Float(q.y), z: Float(q.z), w: Float(q.w)), source: .glasses)
    }

    private typealias Q = (w: Double, x: Double, y: Double, z: Double)

    private static func axisAngle(_ axis: Int, _ angle: Double) -> Q {
        let (c, s) = (cos(angle / 2), sin(angle / 2))
        return (c, axis == 0 ? s : 0, axis == 1 ? s : 0, axis == 2 ? s : 0)
    }

    private static func multiply(_ a: Q, _ b: Q) -> Q {
        (a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z,
         a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
         a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
         a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w)
    }
}
