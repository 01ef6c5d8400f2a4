// A typecheck-only stand-in for Meta's MWDATMotion (experimental in DAT 1.0): the surface
// `../shared/reference/dat-1.0-extras.md` §1.1 quotes from the shipped .swiftinterface, declarations only (see
// MWDATCore.swift). Left out, because this machine has no `simd` module: `Quaternion.init(_: simd_quatf)` and
// `Quaternion.simd`; the relay's DAT client does not use them.
import Foundation
import MWDATCore

extension DeviceSession {
    public final func addMotion(configuration: MotionConfiguration = MotionConfiguration()) throws(DeviceSessionError) -> Motion? {
        fatalError("surface only")
    }
    public final func removeMotion() throws(DeviceSessionError) { fatalError("surface only") }
}

@frozen public enum MotionSamplingRate: Sendable, Equatable { case hz5, hz10, hz15, hz24, hz30, hz60 }

public struct MotionConfiguration: Sendable, Equatable {
    public let samplingRate: MotionSamplingRate
    public init(samplingRate: MotionSamplingRate = .hz10) { fatalError("surface only") }
}

public enum MotionState: Sendable, Equatable, CustomStringConvertible {
    case stopped, starting, started, stopping
    public var description: String { fatalError("surface only") }
}

public enum MotionError: DatError, Equatable { case sensorUnavailable, capabilityClosed, deviceDisconnected }

public final class Motion: Sendable {
    public final var statePublisher: any Announcer<MotionState> { fatalError("surface only") }
    public final var errorPublisher: any Announcer<MotionError> { fatalError("surface only") }
    public final let samples: AsyncStream<MotionSample>
    public final var state: MotionState { fatalError("surface only") }
    public final let configuration: MotionConfiguration
    public final func start() { fatalError("surface only") }
    public final func stop() { fatalError("surface only") }
    private init() { fatalError("surface only") }
}

public struct Vector3: Sendable, Equatable {
    public let x: Float, y: Float, z: Float
    public init(x: Float, y: Float, z: Float) { fatalError("surface only") }
    public init(_ simd: SIMD3<Float>) { fatalError("surface only") }
    public var simd: SIMD3<Float> { fatalError("surface only") }
}

public struct Quaternion: Sendable, Equatable {
    public let x: Float, y: Float, z: Float, w: Float
    public init(x: Float, y: Float, z: Float, w: Float) { fatalError("surface only") }
}

@frozen public enum MotionSource: Sendable, Equatable { case glasses, neuralBand, unknown }

public struct MotionSample: Sendable, Equatable {
    public let timestampNs: Int64
    public let accelerometer: Vector3?
    public let gyroscope: Vector3?
    public let magnetometer: Vector3?
    public let orientation: Quaternion?
    public let source: MotionSource
}
