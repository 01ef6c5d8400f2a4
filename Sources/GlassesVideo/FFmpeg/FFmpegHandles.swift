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
        cffmpeg_install_counting_log_callback()
    }

    private static func getenvString(_ name: String) -> String? {
        guard let value = getenv(name) else { return nil }
        return String(cString: value)
    }
}

/// Owns an `AVCodecContext`.
final class CodecContextHandle {
    let pointer: UnsafeMutablePointer<AVCodecContext>
    /// The error counter `opaque` points at, if any; released only after the context is freed (see deinit).
    private var errorCounter: ErrorCounterHandle?

    /// Hangs an error counter on the context (before it is opened) and keeps it alive as long as the context.
    func attach(_ counter: ErrorCounterHandle) {
        errorCounter = counter
        pointer.pointee.opaque = UnsafeMutableRawPointer(counter.pointer)
    }

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

/// Owns a heap `cffmpeg_error_counter` that a decoder context points at through `opaque`.
final class ErrorCounterHandle {
    let pointer: UnsafeMutablePointer<cffmpeg_error_counter>

    init() {
        pointer = .allocate(capacity: 1)
        pointer.initialize(to: cffmpeg_error_counter(magic: CFFMPEG_ERROR_COUNTER_MAGIC, errors: 0))
    }

    /// Error-level log lines so far.
    var count: Int32 { cffmpeg_error_count(pointer) }

    deinit {
        pointer.pointee.magic = 0
        pointer.deallocate()
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

/// Owns an input `AVFormatContext` (a demuxer over a file).
final class FormatInputHandle {
    let pointer: UnsafeMutablePointer<AVFormatContext>

    init(path: String, options: [String: String]) throws(VideoCodecError) {
        FFmpegLogging.configureOnce()
        var dictionary: OpaquePointer?
        for (key, value) in options { av_dict_set(&dictionary, key, value, 0) }
        defer { av_dict_free(&dictionary) }
        var context: UnsafeMutablePointer<AVFormatContext>?
        let opened = avformat_open_input(&context, path, nil, &dictionary)
        guard opened >= 0, let context else {
            throw VideoCodecError.ffmpeg(.fileError, "cannot open \(path)", opened)
        }
        pointer = context
    }

    deinit {
        var context: UnsafeMutablePointer<AVFormatContext>? = pointer
        avformat_close_input(&context)
    }
}

/// Owns an output `AVFormatContext` and its `AVIOContext` (a muxer writing a file).
final class FormatOutputHandle {
    let pointer: UnsafeMutablePointer<AVFormatContext>

    init(path: String, formatName: String) throws(VideoCodecError) {
        FFmpegLogging.configureOnce()
        var context: UnsafeMutablePointer<AVFormatContext>?
        let allocated = avformat_alloc_output_context2(&context, nil, formatName, path)
        guard allocated >= 0, let context else {
            throw VideoCodecError.ffmpeg(.codecUnavailable, "no \(formatName) muxer for \(path)", allocated)
        }
        pointer = context
        let opened = avio_open(&context.pointee.pb, path, AVIO_FLAG_WRITE)
        guard opened >= 0 else {
            throw VideoCodecError.ffmpeg(.fileError, "cannot create \(path)", opened)
        }
    }

    deinit {
        if pointer.pointee.pb != nil { avio_closep(&pointer.pointee.pb) }
        avformat_free_context(pointer)
    }
}
