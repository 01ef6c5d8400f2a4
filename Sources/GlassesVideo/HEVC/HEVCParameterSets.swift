import Foundation
import GlassesMedia

/// Reads the few fields of HEVC parameter sets that the bridge needs (picture size), and hvcC records.
enum HEVCParameterSets {
    /// The cropped picture size an SPS declares, or nil if the SPS is malformed or uses an unsupported layout.
    static func pictureSize(sequenceParameterSet unit: Data) -> (width: Int, height: Int)? {
        var reader = BitReader(rbsp: unescape(unit.dropFirst(2)))
        guard reader.skip(4), let maxSubLayersMinus1 = reader.bits(3), reader.skip(1) else { return nil }
        // profile_tier_level(1, maxSubLayersMinus1)
        guard reader.skip(88 + 8) else { return nil }
        var subLayerProfile: [Bool] = [], subLayerLevel: [Bool] = []
        for _ in 0 ..< maxSubLayersMinus1 {
            guard let profile = reader.bits(1), let level = reader.bits(1) else { return nil }
            subLayerProfile.append(profile == 1)
            subLayerLevel.append(level == 1)
        }
        if maxSubLayersMinus1 > 0 { guard reader.skip(2 * (8 - maxSubLayersMinus1)) else { return nil } }
        for index in 0 ..< maxSubLayersMinus1 {
            if subLayerProfile[index] { guard reader.skip(88) else { return nil } }
            if subLayerLevel[index] { guard reader.skip(8) else { return nil } }
        }
        guard reader.exponentialGolomb() != nil, let chromaFormat = reader.exponentialGolomb() else { return nil }
        if chromaFormat == 3 { guard reader.skip(1) else { return nil } }
        guard let width = reader.exponentialGolomb(), let height = reader.exponentialGolomb(),
              let cropped = reader.bits(1) else { return nil }
        var croppedWidth = width, croppedHeight = height
        if cropped == 1 {
            guard let left = reader.exponentialGolomb(), let right = reader.exponentialGolomb(),
                  let top = reader.exponentialGolomb(), let bottom = reader.exponentialGolomb() else { return nil }
            let subWidth = chromaFormat == 1 || chromaFormat == 2 ? 2 : 1
            let subHeight = chromaFormat == 1 ? 2 : 1
            croppedWidth -= subWidth * (left + right)
            croppedHeight -= subHeight * (top + bottom)
        }
        guard croppedWidth > 0, croppedHeight > 0, croppedWidth <= 16384, croppedHeight <= 16384 else { return nil }
        return (croppedWidth, croppedHeight)
    }

    /// Removes emulation-prevention bytes (00 00 03 → 00 00).
    static func unescape(_ bytes: Data) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var zeros = 0
        for byte in bytes {
            if zeros >= 2 && byte == 3 {
                zeros = 0
                continue
            }
            zeros = byte == 0 ? zeros + 1 : 0
            out.append(byte)
        }
        return out
    }

    /// Parses an `HEVCDecoderConfigurationRecord` (hvcC): its NAL length size and its parameter-set NAL units.
    static func parseHVCC(_ record: Data) -> (lengthSize: Int, units: [Data])? {
        let bytes = [UInt8](record)
        guard bytes.count >= 23, bytes[0] == 1 else { return nil }
        let lengthSize = Int(bytes[21] & 3) + 1
        var index = 23
        var units: [Data] = []
        for _ in 0 ..< Int(bytes[22]) {
            guard index + 3 <= bytes.count else { return nil }
            let count = Int(bytes[index + 1]) << 8 | Int(bytes[index + 2])
            index += 3
            for _ in 0 ..< count {
                guard index + 2 <= bytes.count else { return nil }
                let length = Int(bytes[index]) << 8 | Int(bytes[index + 1])
                index += 2
                guard index + length <= bytes.count else { return nil }
                units.append(Data(bytes[index ..< index + length]))
                index += length
            }
        }
        return (lengthSize, units)
    }
}

/// An MSB-first bit reader over an RBSP.
struct BitReader {
    private let bytes: [UInt8]
    private var position = 0

    init(rbsp: [UInt8]) { bytes = rbsp }

    mutating func bits(_ count: Int) -> Int? {
        guard count >= 0, position + count <= bytes.count * 8 else { return nil }
        var value = 0
        for _ in 0 ..< count {
            let bit = (bytes[position >> 3] >> (7 - UInt8(position & 7))) & 1
            value = value << 1 | Int(bit)
            position += 1
        }
        return value
    }

    mutating func skip(_ count: Int) -> Bool { bits(0) != nil && advance(count) }

    private mutating func advance(_ count: Int) -> Bool {
        guard count >= 0, position + count <= bytes.count * 8 else { return false }
        position += count
        return true
    }

    mutating func exponentialGolomb() -> Int? {
        var zeros = 0
        while true {
            guard let bit = bits(1) else { return nil }
            if bit == 1 { break }
            zeros += 1
            if zeros > 31 { return nil }
        }
        guard let rest = bits(zeros) else { return nil }
        return (1 << zeros) - 1 + rest
    }
}
