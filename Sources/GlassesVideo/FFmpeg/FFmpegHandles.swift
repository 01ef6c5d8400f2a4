internal import CFFmpeg
import Synchronization

// Thin owning wrappers around libav* handles. Each class owns exactly one handle, frees it in deinit, and is
// internal: no FFmpeg pointer is reachable from the public API. None of them is Sendable; the owners confine
// them to one thread at a time.

/// Quiets FFmpeg's global logger once (damaged streams make the decoder log a lot); set
/// `GLASSES_FFMPEG_LOG=1` in the environment to keep FFmpeg's warnings.
enum FFmpegLogging {
    private static let configured = Mutex(false)

    static func configureOnce() {
        let first = configured.withLock { done in
            defer { done = true }
            return !done
        }
        guard first else { return }
        if getenvString("GLASSES_FFMPEG_LOG") == nil {
            av_log_set_level(AV_LOG_QUIET)
        }
    }

    private static func getenvString(_ name: String) -> String? {
        guard let value = getenv(name) else { return nil }
        return String(cString: value)
    }
}

/// Owns an `AVCodecContext`.
final class CodecContextHandle {
    let pointer: UnsafeMutablePointer<AVCodecContext>

    init(codec: UnsafePointer<AVCodec>) throws(VideoCodecError) {
        FFmpegLogging.configureOnce()
        guard let context = avcodec_alloc_context3(codec) else {
            throw VideoCodecError(code: .setupFailed, message: "avcodec_alloc_context3 failed")
        }
        pointer = context
    }

    deinit {
        var context: UnsafeMutablePointer<AVCodecContext>? = pointer
        avcodec_free_context(&context)
    }
}

/// Owns an `AVFrame`.
final class FrameHandle {
    let pointer: UnsafeMutablePointer<AVFrame>

    init() throws(VideoCodecError) {
        guard let frame = av_frame_alloc() else {
            throw VideoCodecError(code: .setupFailed, message: "av_frame_alloc failed")
        }
        pointer = frame
    }

    deinit {
        var frame: UnsafeMutablePointer<AVFrame>? = pointer
        av_frame_free(&frame)
    }
}

/// Owns an `AVPacket`.
final class PacketHandle {
    let pointer: UnsafeMutablePointer<AVPacket>

    init() throws(VideoCodecError) {
        guard let packet = av_packet_alloc() else {
            throw VideoCodecError(code: .setupFailed, message: "av_packet_alloc failed")
        }
        pointer = packet
    }

    deinit {
        var packet: UnsafeMutablePointer<AVPacket>? = pointer
        av_packet_free(&packet)
    }
}

/// Owns a `SwsContext`.
final class ScaleContextHandle {
    let pointer: OpaquePointer

    init(
        width: Int32, height: Int32, source: AVPixelFormat, destination: AVPixelFormat, flags: Int32
    ) throws(VideoCodecError) {
        guard let context = sws_getContext(width, height, source, width, height, destination, flags, nil, nil, nil)
        else {
            throw VideoCodecError(code: .setupFailed, message: "sws_getContext failed for \(width)x\(height)")
        }
        pointer = context
    }

    deinit { sws_freeContext(pointer) }
}
