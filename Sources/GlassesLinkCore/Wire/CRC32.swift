/// CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320, as in zlib and PNG), table-driven, slicing by eight.
///
/// `CRC32.checksum("123456789".utf8)` is `0xCBF43926`.
public struct CRC32: Sendable, Hashable {
    /// Eight 256-entry tables, one after another: table `k` advances the CRC over a byte followed by `k` zeros.
    private static let tables: [UInt32] = {
        var tables = [UInt32](repeating: 0, count: 8 * 256)
        for byte in 0..<256 {
            var crc = UInt32(byte)
            for _ in 0..<8 {
                crc = (crc & 1) != 0 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1
            }
            tables[byte] = crc
        }
        for slice in 1..<8 {
            for byte in 0..<256 {
                let previous = tables[(slice - 1) * 256 + byte]
                tables[slice * 256 + byte] = (previous >> 8) ^ tables[Int(previous & 0xFF)]
            }
        }
        return tables
    }()

    private var state: UInt32 = 0xFFFF_FFFF

    /// Starts a checksum over nothing.
    public init() {}

    /// The checksum of everything fed so far.
    public var value: UInt32 { state ^ 0xFFFF_FFFF }

    /// Feeds raw bytes.
    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        var crc = state
        var index = 0
        let count = bytes.count
        Self.tables.withUnsafeBufferPointer { tables in
            let table = tables.baseAddress!
            let base = bytes.baseAddress
            while count - index >= 8 {
                let word =
                    UInt64(littleEndian: base!.loadUnaligned(fromByteOffset: index, as: UInt64.self))
                    ^ UInt64(crc)
                let t0 = table[7 * 256 &+ Int(truncatingIfNeeded: word & 0xFF)]
                let t1 = table[6 * 256 &+ Int(truncatingIfNeeded: (word >> 8) & 0xFF)]
                let t2 = table[5 * 256 &+ Int(truncatingIfNeeded: (word >> 16) & 0xFF)]
                let t3 = table[4 * 256 &+ Int(truncatingIfNeeded: (word >> 24) & 0xFF)]
                let t4 = table[3 * 256 &+ Int(truncatingIfNeeded: (word >> 32) & 0xFF)]
                let t5 = table[2 * 256 &+ Int(truncatingIfNeeded: (word >> 40) & 0xFF)]
                let t6 = table[1 * 256 &+ Int(truncatingIfNeeded: (word >> 48) & 0xFF)]
                let t7 = table[Int(truncatingIfNeeded: word >> 56)]
                crc = (t0 ^ t1) ^ (t2 ^ t3) ^ ((t4 ^ t5) ^ (t6 ^ t7))
                index &+= 8
            }
            while index < count {
                crc = (crc >> 8) ^ table[Int((crc ^ UInt32(base!.load(fromByteOffset: index, as: UInt8.self))) & 0xFF)]
                index += 1
            }
        }
        state = crc
    }

    /// Feeds a byte sequence.
    public mutating func update(_ bytes: some Sequence<UInt8>) {
        let done: Void? = bytes.withContiguousStorageIfAvailable { update(UnsafeRawBufferPointer($0)) }
        if done == nil {
            let copy = Array(bytes)
            copy.withUnsafeBytes { update($0) }
        }
    }

    /// The checksum of `bytes`.
    public static func checksum(_ bytes: some Sequence<UInt8>) -> UInt32 {
        var crc = CRC32()
        crc.update(bytes)
        return crc.value
    }
}
