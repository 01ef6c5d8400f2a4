internal import CFFmpeg
import Foundation

/// Decodes a JPEG photo with libavcodec's `mjpeg` decoder, to prove it decodes and to read its picture size.
public enum JPEGDecoder {
    /// The largest photo accepted, in bytes (a 4K JPEG is far smaller).
    public static let maximumBytes = 32 << 20

    /// Decodes `data` and returns the picture's width and height.
    /// - Throws: ``VideoCodecError`` `invalidArgument` for an empty or oversized input, `codecUnavailable` without an
    ///   mjpeg decoder, `decodeFailed` when libavcodec cannot decode a picture from it.
    public static func decodedSize(of data: Data) throws(VideoCodecError) -> (width: Int, height: Int) {
        guard !data.isEmpty, data.count <= maximumBytes else {
            throw VideoCodecError(code: .invalidArgument, message: "a photo of \(data.count) bytes is not a JPEG this decodes (1…\(maximumBytes) bytes)")
        }
        guard let codec = avcodec_find_decoder(AV_CODEC_ID_MJPEG) else {
            throw VideoCodecError(code: .codecUnavailable, message: "this FFmpeg build has no mjpeg decoder")
        }
        let context = try CodecContextHandle(codec: codec)
        context.pointer.pointee.thread_count = 1
        context.pointer.pointee.max_pixels = 64 << 20
        let opened = avcodec_open2(context.pointer, codec, nil)
        guard opened >= 0 else { throw VideoCodecError.ffmpeg(.setupFailed, "cannot open the mjpeg decoder", opened) }
        let packet = try PacketHandle()
        let frame = try FrameHandle()
        let allocated = av_new_packet(packet.pointer, Int32(data.count))  // count checked above: fits Int32
        guard allocated >= 0 else {
            throw VideoCodecError.ffmpeg(.decodeFailed, "could not allocate a packet of \(data.count) bytes", allocated)
        }
        data.withUnsafeBytes { raw in
            UnsafeMutableRawPointer(packet.pointer.pointee.data).copyMemory(from: raw.baseAddress!, byteCount: raw.count)
        }
        let sent = avcodec_send_packet(context.pointer, packet.pointer)
        guard sent >= 0 else { throw VideoCodecError.ffmpeg(.decodeFailed, "the JPEG does not decode", sent) }
        _ = avcodec_send_packet(context.pointer, nil)
        let received = avcodec_receive_frame(context.pointer, frame.pointer)
        guard received >= 0 else { throw VideoCodecError.ffmpeg(.decodeFailed, "the JPEG decoded to no picture", received) }
        let width = Int(frame.pointer.pointee.width), height = Int(frame.pointer.pointee.height)
        guard width > 0, height > 0 else {
            throw VideoCodecError(code: .decodeFailed, message: "the JPEG decoded to a \(width)×\(height) picture")
        }
        return (width, height)
    }
}
