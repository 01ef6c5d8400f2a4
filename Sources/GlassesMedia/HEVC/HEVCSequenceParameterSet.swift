import Foundation

/// The picture size an HEVC sequence parameter set declares: what a decoder will allocate for, read before any
/// decoder sees the unit, so a stream can be held to the size it negotiated.
public struct HEVCPictureSize: Sendable, Hashable, CustomStringConvertible {
    /// `pic_width_in_luma_samples`: the coded width the decoder allocates.
    public let codedWidth: Int
    /// `pic_height_in_luma_samples`: the coded height the decoder allocates.
    public let codedHeight: Int
    /// The width after the conformance window (what is displayed).
    public let width: Int
    /// The height after the conformance window.
    public let height: Int

    /// `WIDTHxHEIGHT`, with the coded size when cropping applies.
    public var description: String {
        codedWidth == width && codedHeight == height ? "\(width)x\(height)" : "\(width)x\(height) (coded \(codedWidth)x\(codedHeight))"
    }

    /// The largest coded dimension the reader accepts (HEVC level 6.2 allows 8444 × 4320; 16384 covers every level).
    public static let maximumDimension = 16384

    /// Reads the size from one SPS NAL unit (with its two-byte header, without start code or length prefix).
    /// - Returns: nil when the unit is not an SPS, is truncated, or declares a size of 0 or above
    ///   ``maximumDimension``: a caller that cannot read the size must not decode the stream.
    public init?(sequenceParameterSet unit: Data) {
        guard HEVCNALUnits.type(of: unit) == HEVCNALUnits.sequenceParameterSetType, unit.count > 2 else { return nil }
        var reader = RBSPBitReader(rbsp: EmulationPrevention.removed(from: unit.dropFirst(2)))
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
        guard reader.exponentialGolomb() != nil, let chromaFormat = reader.exponentialGolomb(), chromaFormat <= 3 else {
            return nil
        }
        if chromaFormat == 3 { guard reader.skip(1) else { return nil } }
        guard let width = reader.exponentialGolomb(), let height = reader.exponentialGolomb(),
              let cropped = reader.bits(1) else { return nil }
        guard width > 0, height > 0, width <= Self.maximumDimension, height <= Self.maximumDimension else { return nil }
        var croppedWidth = width, croppedHeight = height
        if cropped == 1 {
            guard let left = reader.exponentialGolomb(), let right = reader.exponentialGolomb(),
                  let top = reader.exponentialGolomb(), let bottom = reader.exponentialGolomb() else { return nil }
            // Each offset is below 2^32 (the Exp-Golomb reader stops at 31 leading zeros): no overflow in Int.
            let subWidth = chromaFormat == 1 || chromaFormat == 2 ? 2 : 1
            let subHeight = chromaFormat == 1 ? 2 : 1
            croppedWidth -= subWidth * (left + right)
            croppedHeight -= subHeight * (top + bottom)
        }
        guard croppedWidth > 0, croppedHeight > 0 else { return nil }
        codedWidth = width
        codedHeight = height
        self.width = croppedWidth
        self.height = croppedHeight
    }
}

/// An MSB-first bit reader over an RBSP.
struct RBSPBitReader {
    private let bytes: [UInt8]
    private var position = 0

    init(rbsp: [UInt8]) { bytes = rbsp }

    mutating func bits(_ count: Int) -> Int? {
        guard count >= 0, count <= 32, position + count <= bytes.count * 8 else { return nil }
        var value = 0
        for _ in 0 ..< count {
            let bit = (bytes[position >> 3] >> (7 - UInt8(position & 7))) & 1
            value = value << 1 | Int(bit)
            position += 1
        }
        return value
    }

    mutating func skip(_ count: Int) -> Bool {
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
