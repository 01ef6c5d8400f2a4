/// H.264's and HEVC's emulation prevention: inside a NAL unit, a 0x03 byte follows any two zero bytes that come
/// before a byte of 0 to 3, so that no start code appears in its payload. One place for both directions, shared by
/// the SPS reader and the capture-time SEI.
package enum EmulationPrevention {
    /// The RBSP of a NAL unit's payload: every 0x03 that follows two zero bytes removed.
    package static func removed<Bytes: Sequence<UInt8>>(from bytes: Bytes) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.underestimatedCount)
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

    /// A NAL unit's payload from its RBSP: a 0x03 inserted after two zero bytes before a byte of 0 to 3.
    package static func inserted(into bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + 4)
        var zeros = 0
        for byte in bytes {
            if zeros >= 2, byte <= 3 {
                out.append(3)
                zeros = 0
            }
            out.append(byte)
            zeros = byte == 0 ? zeros + 1 : 0
        }
        return out
    }
}
