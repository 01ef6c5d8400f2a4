import Foundation
import GlassesMedia

/// Reads the few fields of HEVC parameter sets that the bridge needs (picture size), and hvcC records.
enum HEVCParameterSets {
    /// The cropped picture size an SPS declares, or nil if the SPS is malformed or uses an unsupported layout.
    /// The reader itself is GlassesMedia's ``HEVCPictureSize``, shared with WearablesKit's size check.
    static func pictureSize(sequenceParameterSet unit: Data) -> (width: Int, height: Int)? {
        guard let size = HEVCPictureSize(sequenceParameterSet: unit) else { return nil }
        return (size.width, size.height)
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
