import Foundation
import Testing
import WearablesKit

@testable import GlassesLink
@testable import GlassesLinkCore

/// DAT Motion on the wire (PROTOCOL.md 4, 6, 7.7): four message types added inside protocol 1, and the "has an IMU"
/// bool appended to the device hello.
@Suite("Motion on the wire")
struct MotionWireTests {
    static let full = MotionSample(
        timestampNs: 1_234_567_890_123, accelerometer: Vector3(x: 9.81, y: -0.5, z: 0.25),
        gyroscope: Vector3(x: 0.01, y: -0.02, z: 0.03), magnetometer: Vector3(x: 20, y: -40, z: 5),
        orientation: Quaternion(x: 0.1, y: 0.2, z: 0.3, w: 0.927), source: .glasses)
    static let sparse = MotionSample(timestampNs: -5, gyroscope: Vector3(x: .infinity, y: 0, z: -0))

    static let frames: [LinkFrame] = [
        .host(.startMotion(.hz5)), .host(.startMotion(.hz60)), .host(.stopMotion),
        .device(.motion(.started(.hz24))), .device(.motion(.stopped)), .device(.motion(.unavailable)),
        .device(.motionSamples([])), .device(.motionSamples([full])), .device(.motionSamples([sparse, full, sparse])),
    ]

    @Test("every motion message round trips, bit for bit")
    func roundTrips() throws {
        try LatencyWireTests.expectRoundTrips(Self.frames)
        #expect(LatencyWireTests.body(.host(.startMotion(.hz10))).0 == .startMotion)
        #expect(LatencyWireTests.body(.device(.motionSamples([]))).0 == .motionSamples)
    }

    @Test("sample layout: timestamp, source, presence bits, then the present fields as f32")
    func sampleLayout() {
        let (_, bytes) = LatencyWireTests.body(.device(.motionSamples([Self.sparse])))
        // u16 count 1; i64 −5; source unknown (0); bits: gyroscope only (2); three f32s.
        #expect(Array(bytes.prefix(12)) == [0, 1, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFB, 0, 2])
        #expect(bytes.count == 12 + 12)
    }

    @Test("malformed motion bodies are typed errors")
    func malformed() {
        #expect(throws: BodyDecodingError.self) { try LatencyWireTests.decode(.startMotion, [6]) }
        #expect(throws: BodyDecodingError.self) { try LatencyWireTests.decode(.motion, [3]) }
        var (_, bytes) = LatencyWireTests.body(.device(.motionSamples([Self.full])))
        #expect(throws: BodyDecodingError.self) { try LatencyWireTests.decode(.motionSamples, Array(bytes.dropLast())) }
        bytes[11] = 0x10  // an unknown field bit
        #expect(throws: BodyDecodingError.self) { try LatencyWireTests.decode(.motionSamples, bytes) }
    }

    @Test("the hello's IMU flag: appended; an older device's hello (without it) reads as no IMU")
    func helloFlag() throws {
        let withIMU = DeviceInfo(identifier: "g", name: "G", uuid: UUID(uuid: (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)), hasIMU: true)
        var without = withIMU
        without.hasIMU = false
        let (type, newBytes) = LatencyWireTests.body(.device(.hello(withIMU)))
        let (_, noBytes) = LatencyWireTests.body(.device(.hello(without)))
        // The IMU flag, then the standalone photo flag (PhotoWireTests).
        #expect(newBytes == Array(noBytes.dropLast(2)) + [1, 0])
        #expect(noBytes.suffix(2) == [0, 0])
        #expect(try LatencyWireTests.decode(type, newBytes) == .device(.hello(withIMU)))
        #expect(try LatencyWireTests.decode(type, noBytes) == .device(.hello(without)))
        // An older device's hello ends before the flags.
        #expect(try LatencyWireTests.decode(type, Array(noBytes.dropLast(2))) == .device(.hello(without)))
        #expect(try LatencyWireTests.decode(type, Array(newBytes.dropLast())) == .device(.hello(withIMU)))
        // Fields a later version appends are ignored.
        #expect(try LatencyWireTests.decode(type, newBytes + [0xEE]) == .device(.hello(withIMU)))
    }
}
