#if canImport(simd)
import simd
#endif

/// How often the glasses sample their IMU: DAT 1.0's `MotionSamplingRate` (5, 10, 15, 24, 30 or 60 Hz).
///
/// Higher rates use more bandwidth and power.
@frozen public enum MotionSamplingRate: Sendable, Equatable, Hashable, CaseIterable {
    case hz5, hz10, hz15, hz24, hz30, hz60

    /// The rate in samples per second (a Linux addition: the link protocol and the simulator read it).
    public var hertz: Int {
        switch self {
        case .hz5: 5
        case .hz10: 10
        case .hz15: 15
        case .hz24: 24
        case .hz30: 30
        case .hz60: 60
        }
    }
}

/// What ``DeviceSession/addMotion(configuration:)`` asks for: DAT 1.0's `MotionConfiguration`.
public struct MotionConfiguration: Sendable, Equatable, Hashable {
    /// The sampling rate (default ``MotionSamplingRate/hz10``).
    public let samplingRate: MotionSamplingRate

    /// Creates a configuration.
    public init(samplingRate: MotionSamplingRate = .hz10) {
        self.samplingRate = samplingRate
    }
}

/// The lifecycle of a ``Motion`` capability: DAT 1.0's `MotionState`.
public enum MotionState: Sendable, Equatable, Hashable, CustomStringConvertible {
    case stopped, starting, started, stopping

    /// The case name.
    public var description: String {
        switch self {
        case .stopped: "stopped"
        case .starting: "starting"
        case .started: "started"
        case .stopping: "stopping"
        }
    }
}

/// What can go wrong with a ``Motion`` capability: DAT 1.0's `MotionError`.
public enum MotionError: DatError, Equatable, Hashable, CustomStringConvertible {
    /// The glasses answered that their IMU cannot be used now.
    case sensorUnavailable
    /// The capability was closed under the app: the session stopped or ended while motion was active.
    case capabilityClosed
    /// The glasses are not connected (the link dropped while motion was active, or `start()` found no link).
    case deviceDisconnected

    /// A message a person can act on.
    public var description: String {
        switch self {
        case .sensorUnavailable: "The glasses' motion sensor is unavailable."
        case .capabilityClosed: "The motion capability was closed because its session stopped."
        case .deviceDisconnected: "The glasses are disconnected; motion stopped."
        }
    }

    /// Same as ``description``.
    public var errorDescription: String? { description }
}

/// A three-axis reading: DAT 1.0's `Vector3`.
public struct Vector3: Sendable, Equatable, Hashable {
    public let x: Float
    public let y: Float
    public let z: Float

    /// Creates a vector from its components.
    public init(x: Float, y: Float, z: Float) {
        self.x = x
        self.y = y
        self.z = z
    }

    /// Creates a vector from a SIMD vector.
    public init(_ simd: SIMD3<Float>) {
        self.init(x: simd.x, y: simd.y, z: simd.z)
    }

    /// The vector as SIMD.
    public var simd: SIMD3<Float> { SIMD3(x, y, z) }
}

/// An orientation: DAT 1.0's `Quaternion` (`w` the real part).
///
/// On Apple platforms it converts to and from `simd_quatf` as in DAT; on Linux, where there is no `simd` module,
/// ``init(imag:real:)`` and ``imag`` stand in (the same parts `simd_quatf` names).
public struct Quaternion: Sendable, Equatable, Hashable {
    public let x: Float
    public let y: Float
    public let z: Float
    public let w: Float

    /// Creates a quaternion from its parts.
    public init(x: Float, y: Float, z: Float, w: Float) {
        self.x = x
        self.y = y
        self.z = z
        self.w = w
    }

    /// Creates a quaternion from its imaginary (vector) part and its real part, as `simd_quatf(imag:real:)`.
    public init(imag: SIMD3<Float>, real: Float) {
        self.init(x: imag.x, y: imag.y, z: imag.z, w: real)
    }

    /// The imaginary (vector) part.
    public var imag: SIMD3<Float> { SIMD3(x, y, z) }

    #if canImport(simd)
    /// Creates a quaternion from a `simd_quatf`.
    public init(_ simd: simd_quatf) {
        self.init(x: simd.imag.x, y: simd.imag.y, z: simd.imag.z, w: simd.real)
    }

    /// The quaternion as `simd_quatf`.
    public var simd: simd_quatf { simd_quatf(ix: x, iy: y, iz: z, r: w) }
    #endif
}

/// Which sensor produced a ``MotionSample``: DAT 1.0's `MotionSource`.
@frozen public enum MotionSource: Sendable, Equatable, Hashable {
    case glasses, neuralBand, unknown
}

/// One IMU reading: DAT 1.0's `MotionSample`.
///
/// Units: accelerometer m/s² (gravity included), gyroscope rad/s, magnetometer µT. Every sensor field is optional.
/// ``timestampNs`` is on the device's monotonic clock (for the simulator: the clock its video presentation times
/// are on, in nanoseconds instead of microseconds).
public struct MotionSample: Sendable, Equatable, Hashable {
    /// When the sample was taken, in nanoseconds on the device's monotonic clock.
    public let timestampNs: Int64
    /// Specific force in m/s², gravity included (a still, upright head reads about +9.81 on +X, the sky axis).
    public let accelerometer: Vector3?
    /// Angular rate in rad/s.
    public let gyroscope: Vector3?
    /// Magnetic field in µT.
    public let magnetometer: Vector3?
    /// Orientation.
    public let orientation: Quaternion?
    /// Which sensor produced the sample (``MotionSource/unknown`` when the device does not say).
    public let source: MotionSource

    /// Creates a sample.
    public init(timestampNs: Int64, accelerometer: Vector3? = nil, gyroscope: Vector3? = nil,
                magnetometer: Vector3? = nil, orientation: Quaternion? = nil, source: MotionSource = .unknown) {
        self.timestampNs = timestampNs
        self.accelerometer = accelerometer
        self.gyroscope = gyroscope
        self.magnetometer = magnetometer
        self.orientation = orientation
        self.source = source
    }
}
