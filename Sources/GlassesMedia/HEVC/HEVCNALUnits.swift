import Foundation


/// HEVC NAL unit plumbing: Annex B byte streams, 4-byte length-prefixed (`hvc1`) samples and parameter sets.
public enum HEVCNALUnits {
    /// NAL unit type of a video parameter set.
    public static let videoParameterSetType: UInt8 = 32
    /// NAL unit type of a sequence parameter set.
    public static let sequenceParameterSetType: UInt8 = 33
    /// NAL unit type of a picture parameter set.
    public static let pictureParameterSetType: UInt8 = 34

    /// The `nal_unit_type` of a NAL unit (the six bits after the forbidden zero bit), or nil if it is too short.
    public static func type(of nalUnit: Data) -> UInt8? {
        guard let first = nalUnit.first else { return nil }
        return (first >> 1) & 0x3F
    }

    /// Whether a NAL unit type is an IRAP picture (BLA, IDR or CRA: types 16–23).
    public static func isRandomAccessPoint(type: UInt8) -> Bool { (16 ... 23).contains(type) }

    /// Whether a NAL unit type is a parameter set (VPS, SPS or PPS).
    public static func isParameterSet(type: UInt8) -> Bool { (32 ... 34).contains(type) }

    /// Splits an Annex B byte stream (3- or 4-byte start codes) into NAL units without start codes.
    ///
    /// Bytes before the first start code are ignored; trailing zero bytes of each unit (the leading zero of the next
    /// 4-byte start code) are dropped.
    public static func splitAnnexB(_ stream: Data) -> [Data] {
        stream.withUnsafeBytes { raw -> [Data] in
            let bytes = raw.bindMemory(to: UInt8.self)
            let count = bytes.count
            var units: [Data] = []
            var index = 0
            var unitStart = -1
            while index + 2 < count {
                if bytes[index] == 0, bytes[index + 1] == 0, bytes[index + 2] == 1 {
                    if unitStart >= 0 { units.append(trimmedUnit(bytes, unitStart, index)) }
                    index += 3
                    unitStart = index
                } else if bytes[index + 2] > 1 {
                    index += 3
                } else {
                    index += 1
                }
            }
            if unitStart >= 0, unitStart <= count { units.append(trimmedUnit(bytes, unitStart, count)) }
            return units.filter { !$0.isEmpty }
        }
    }

    private static func trimmedUnit(_ bytes: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int) -> Data {
        var last = end
        while last > start, bytes[last - 1] == 0 { last -= 1 }
        return Data(UnsafeBufferPointer(rebasing: bytes[start ..< last]))
    }

    /// Walks the NAL units of a length-prefixed sample (big-endian lengths of `lengthSize` bytes, as in `hvc1`
    /// samples and MP4/MKV tracks), calling `body` with each unit's byte range within `sample`'s indices.
    /// - Returns: nil when the sample is well formed, otherwise what is wrong with it (a truncated length, a unit
    ///   shorter than `minimumUnitLength`, a length running past the end): a damaged sample, never a trap.
    public static func walkLengthPrefixed(
        _ sample: Data, lengthSize: Int = 4, minimumUnitLength: Int = 1, _ body: (Range<Data.Index>) -> Void = { _ in }
    ) -> String? {
        guard (1 ... 4).contains(lengthSize) else { return "NAL length size \(lengthSize) is not 1 to 4 bytes" }
        return sample.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) -> String? in
            var offset = 0
            while offset < bytes.count {
                guard bytes.count - offset >= lengthSize else { return "truncated NAL length prefix at byte \(offset)" }
                var length = 0
                for index in 0 ..< lengthSize { length = length << 8 | Int(bytes[offset + index]) }
                offset += lengthSize
                guard length >= minimumUnitLength else { return "NAL unit of \(length) bytes at byte \(offset - lengthSize)" }
                guard length <= bytes.count - offset else {
                    return "NAL unit of \(length) bytes overruns the \(bytes.count)-byte sample"
                }
                body(sample.startIndex + offset ..< sample.startIndex + offset + length)
                offset += length
            }
            return nil
        }
    }

    /// Splits a length-prefixed sample (4-byte lengths by default) into NAL units.
    /// - Returns: nil when a length is zero or runs past the end, or bytes are left over: a damaged sample.
    public static func splitLengthPrefixed(_ sample: Data, lengthSize: Int = 4) -> [Data]? {
        var units: [Data] = []
        let problem = walkLengthPrefixed(sample, lengthSize: lengthSize) { range in units.append(sample.subdata(in: range)) }
        return problem == nil ? units : nil
    }

    /// Joins NAL units into a 4-byte length-prefixed sample.
    public static func lengthPrefixed(_ units: [Data]) -> Data {
        var out = Data(capacity: units.reduce(0) { $0 + $1.count + 4 })
        for unit in units {
            let length = UInt32(unit.count)
            out.append(contentsOf: [UInt8(length >> 24), UInt8((length >> 16) & 0xFF), UInt8((length >> 8) & 0xFF), UInt8(length & 0xFF)])
            out.append(unit)
        }
        return out
    }

    /// Joins NAL units into an Annex B byte stream with 4-byte start codes.
    public static func annexB(_ units: [Data]) -> Data {
        var out = Data(capacity: units.reduce(0) { $0 + $1.count + 4 })
        for unit in units {
            out.append(contentsOf: [0, 0, 0, 1])
            out.append(unit)
        }
        return out
    }

    /// Whether a NAL unit header is well formed: forbidden bit clear, base layer, temporal id plus one non-zero.
    public static func hasValidHeader(_ unit: Data) -> Bool {
        guard unit.count >= 2 else { return false }
        let first = unit[unit.startIndex]
        let second = unit[unit.startIndex + 1]
        let layer = (UInt16(first & 1) << 5) | UInt16(second >> 3)
        return first & 0x80 == 0 && layer == 0 && second & 0x07 != 0
    }

    /// The parameter-set NAL units of a configuration in decoding order (VPS, SPS, PPS).
    public static func parameterSets(of configuration: HEVCCodecConfiguration) -> [Data] {
        configuration.videoParameterSets + configuration.sequenceParameterSets + configuration.pictureParameterSets
    }

    /// Sorts parameter-set NAL units into a configuration of the given size; other units are ignored.
    public static func configuration(parameterSets units: [Data], width: Int, height: Int) -> HEVCCodecConfiguration {
        var configuration = HEVCCodecConfiguration(
            videoParameterSets: [], sequenceParameterSets: [], pictureParameterSets: [], width: width, height: height
        )
        for unit in units {
            switch type(of: unit) {
            case videoParameterSetType: configuration.videoParameterSets.append(unit)
            case sequenceParameterSetType: configuration.sequenceParameterSets.append(unit)
            case pictureParameterSetType: configuration.pictureParameterSets.append(unit)
            default: break
            }
        }
        return configuration
    }
}
