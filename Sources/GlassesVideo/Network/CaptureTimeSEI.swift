import Foundation
import GlassesMedia

/// A frame's capture time carried inside the video itself, for streams (RTMP, SRT, RTSP, UDP) that have no link
/// protocol to say when a frame was captured: an SEI message of the kind "user data unregistered" (H.264 and HEVC
/// payload type 5) with GlassesBridge's UUID and the capture time in microseconds since the Unix epoch on the
/// sender's wall clock (8 bytes, big-endian).
///
/// `glasses-sim --publish` stamps every frame; a phone relay may. A decoder that does not know the UUID ignores the
/// message (as the standards require), and a transcoder that passes unregistered SEI through (FFmpeg's HEVC and
/// H.264 decoders export it as frame side data; its libx264 wrapper writes it back) keeps it. The bridge maps the
/// time onto its own clock through the two wall clocks, so the measured latency is as good as their agreement
/// (the same machine: exact; NTP on a LAN: a few milliseconds).
public enum CaptureTimeSEI {
    /// The UUID that marks the message (random, fixed: `4d8c3b1e-7a52-4c1f-9b0e-6a2f1d3c5e71`).
    public static let uuid: [UInt8] = [0x4D, 0x8C, 0x3B, 0x1E, 0x7A, 0x52, 0x4C, 0x1F, 0x9B, 0x0E, 0x6A, 0x2F, 0x1D, 0x3C, 0x5E, 0x71]

    /// The codec whose NAL unit syntax to use.
    public enum Codec: Sendable {
        case h264, hevc
    }

    /// An SEI NAL unit (no start code, no length prefix) carrying `captureWallUs`: an HEVC prefix SEI (type 39) or
    /// an H.264 SEI (type 6), with emulation prevention applied.
    public static func nalUnit(captureWallUs: Int64, codec: Codec) -> Data {
        var payload: [UInt8] = [5, 24] + uuid  // payload type 5 (user data unregistered), 24 bytes
        let bits = UInt64(bitPattern: captureWallUs)
        for shift in stride(from: 56, through: 0, by: -8) { payload.append(UInt8(truncatingIfNeeded: bits >> UInt64(shift))) }
        payload.append(0x80)  // rbsp_trailing_bits
        let header: [UInt8] = codec == .hevc ? [39 << 1, 1] : [6]
        return Data(header + EmulationPrevention.inserted(into: payload))
    }

    /// The capture time in a NAL unit (no start code, no length prefix), if it is an SEI that carries one.
    public static func captureWallUs(inNALUnit unit: Data, codec: Codec) -> Int64? {
        let headerBytes = codec == .hevc ? 2 : 1
        guard unit.count > headerBytes + 2, let first = unit.first else { return nil }
        let isSEI = codec == .hevc ? (first >> 1) & 0x3F == 39 : first & 0x1F == 6
        guard isSEI else { return nil }
        return captureWallUs(inSEIPayloads: EmulationPrevention.removed(from: unit.dropFirst(headerBytes)))
    }

    /// The capture time in one "user data unregistered" payload as FFmpeg exports it (`AV_FRAME_DATA_SEI_UNREGISTERED`:
    /// the UUID, then the user data), if it is ours.
    public static func captureWallUs(inUnregisteredPayload payload: UnsafeRawBufferPointer) -> Int64? {
        guard payload.count >= 24, payload.prefix(16).elementsEqual(uuid) else { return nil }
        var value: UInt64 = 0
        for byte in payload[16 ..< 24] { value = value << 8 | UInt64(byte) }
        return Int64(bitPattern: value)
    }

    /// Walks the SEI messages of an RBSP (bounds-checked: a truncated or hostile message ends the walk).
    private static func captureWallUs(inSEIPayloads bytes: [UInt8]) -> Int64? {
        var index = 0
        func number() -> Int? {
            var value = 0
            while index < bytes.count {
                let byte = Int(bytes[index])
                index += 1
                value += byte
                if byte != 0xFF { return value }
                if value > 1 << 20 { return nil }
            }
            return nil
        }
        while index < bytes.count, bytes[index] != 0x80 {
            guard let type = number(), let size = number(), size <= bytes.count - index else { return nil }
            if type == 5, size >= 24 {
                let found = bytes[index ..< index + 24].withUnsafeBytes { captureWallUs(inUnregisteredPayload: $0) }
                if let found { return found }
            }
            index += size
        }
        return nil
    }
}
