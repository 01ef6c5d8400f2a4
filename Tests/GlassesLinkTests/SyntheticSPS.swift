import Foundation

/// Builds a minimal, well-formed HEVC sequence parameter set declaring a picture size, up to the fields a size
/// reader looks at (Main profile, 4:2:0, no sub-layers), with emulation prevention, so tests can hand WearablesKit
/// parameter sets of any size without an encoder.
enum SyntheticSPS {
    static func make(width: Int, height: Int, crop: (right: Int, bottom: Int)? = nil) -> Data {
        var bits: [Bool] = []
        func put(_ value: Int, _ count: Int) {
            for shift in stride(from: count - 1, through: 0, by: -1) { bits.append((value >> shift) & 1 == 1) }
        }
        func ue(_ value: Int) {
            let code = value + 1
            let length = Int.bitWidth - code.leadingZeroBitCount
            put(0, length - 1)
            put(code, length)
        }
        put(0, 4)  // sps_video_parameter_set_id
        put(0, 3)  // sps_max_sub_layers_minus1
        put(1, 1)  // sps_temporal_id_nesting_flag
        put(0, 2); put(0, 1); put(1, 5)  // general profile space, tier, profile idc (Main)
        put(0x6000_0000, 32)  // profile compatibility flags
        put(0b1001, 4); put(0, 44)  // progressive, frame-only, constraint flags
        put(93, 8)  // general_level_idc (3.1)
        ue(0)  // sps_seq_parameter_set_id
        ue(1)  // chroma_format_idc: 4:2:0
        ue(width)
        ue(height)
        if let crop {
            put(1, 1)
            ue(0); ue(crop.right / 2); ue(0); ue(crop.bottom / 2)
        } else {
            put(0, 1)
        }
        ue(0); ue(0); ue(0)  // bit depths, log2_max_pic_order_cnt_lsb_minus4 (the rest a reader never needs)
        bits.append(true)  // rbsp_stop_one_bit
        while bits.count % 8 != 0 { bits.append(false) }
        var rbsp: [UInt8] = []
        for index in stride(from: 0, to: bits.count, by: 8) {
            rbsp.append(bits[index ..< index + 8].reduce(0) { $0 << 1 | ($1 ? 1 : 0) })
        }
        var unit: [UInt8] = [0x42, 0x01]  // NAL header: type 33 (SPS)
        var zeros = 0
        for byte in rbsp {
            if zeros >= 2 && byte <= 3 {
                unit.append(3)
                zeros = 0
            }
            unit.append(byte)
            zeros = byte == 0 ? zeros + 1 : 0
        }
        return Data(unit)
    }
}
