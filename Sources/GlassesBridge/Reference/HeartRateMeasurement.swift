import Foundation

/// One Bluetooth Heart Rate Measurement notification (GATT characteristic 0x2A37 of the Heart Rate Service 0x180D),
/// so a live chest strap is a transport away from `--reference`.
package struct HeartRateMeasurement: Sendable, Hashable {
    /// The sensor-contact bits (flags bits 1–2).
    package enum SensorContact: Sendable, Hashable {
        /// The sensor does not report contact (bit 2 clear).
        case notSupported
        /// Supported, and no contact now (bit 2 set, bit 1 clear).
        case notDetected
        /// Supported and in contact (bits 2 and 1 set).
        case detected
    }

    /// Heart rate, beats per minute.
    package var heartRate: Int
    /// Whether the value was sent as uint16 (flags bit 0).
    package var isUInt16: Bool
    /// The sensor's contact status.
    package var sensorContact: SensorContact
    /// Energy expended since the last reset, kilojoules (flags bit 3), when sent.
    package var energyExpendedKJ: Int?
    /// RR intervals in units of 1/1024 s, as sent (flags bit 4); empty when none.
    package var rrIntervals1024: [UInt16]

    /// The RR intervals in milliseconds.
    package var rrIntervalsMs: [Double] { rrIntervals1024.map { Double($0) * 1000 / 1024 } }

    /// Parses one notification's bytes (little-endian).
    /// - Throws: ``HeartRateMeasurementError`` for an empty or truncated notification or a dangling RR byte.
    package static func parse(_ bytes: [UInt8]) throws(HeartRateMeasurementError) -> HeartRateMeasurement {
        guard let flags = bytes.first else { throw HeartRateMeasurementError(code: .empty, message: "an empty notification has no flags byte") }
        var index = 1
        func uint16(_ what: String) throws(HeartRateMeasurementError) -> UInt16 {
            guard bytes.count - index >= 2 else {
                throw HeartRateMeasurementError(code: .truncated, message: "truncated: \(what) needs 2 bytes at offset \(index), \(bytes.count - index) left")
            }
            defer { index += 2 }
            return UInt16(bytes[index]) | UInt16(bytes[index + 1]) << 8
        }
        let wide = flags & 0x01 != 0
        let rate: Int
        if wide {
            rate = Int(try uint16("the uint16 heart rate"))
        } else {
            guard bytes.count > index else {
                throw HeartRateMeasurementError(code: .truncated, message: "truncated: the uint8 heart rate needs 1 byte at offset 1, 0 left")
            }
            rate = Int(bytes[index])
            index += 1
        }
        let contact: SensorContact = flags & 0x04 == 0 ? .notSupported : (flags & 0x02 != 0 ? .detected : .notDetected)
        var energy: Int?
        if flags & 0x08 != 0 { energy = Int(try uint16("the energy expended")) }
        var rr: [UInt16] = []
        if flags & 0x10 != 0 {
            guard (bytes.count - index) % 2 == 0 else {
                throw HeartRateMeasurementError(code: .truncated, message: "truncated: \(bytes.count - index) RR bytes left at offset \(index); RR intervals are 2 bytes each")
            }
            while index < bytes.count { rr.append(try uint16("an RR interval")) }
        }
        return HeartRateMeasurement(heartRate: rate, isUInt16: wide, sensorContact: contact, energyExpendedKJ: energy, rrIntervals1024: rr)
    }
}

/// A Heart Rate Measurement notification that cannot be read.
package struct HeartRateMeasurementError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of problem.
    package enum Code: String, Sendable, Hashable {
        /// No bytes at all.
        case empty
        /// Fewer bytes than the flags announce.
        case truncated
    }

    /// The kind of problem.
    package var code: Code
    /// What is wrong, with the offset.
    package var message: String

    /// The message.
    package var description: String { message }
}
