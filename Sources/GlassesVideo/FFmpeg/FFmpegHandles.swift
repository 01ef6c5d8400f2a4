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

    /// Opens a network input (`rtmp://`, `srt://`, `udp://`) with `interrupt` hung on the context before it opens,
    /// so that the blocking open (listening for a publisher, probing) and every later read can be cancelled.
    /// - Parameter format: the demuxer to use (libavformat's name), or nil to let the protocol choose (RTMP: FLV).
    init(url: String, format: String?, options: [String: String], interrupt: InterruptHandle) throws(VideoCodecError) {
        FFmpegLogging.configureOnce()
        NetworkInitialisation.once()
        var dictionary: OpaquePointer?
        for (key, value) in options { av_dict_set(&dictionary, key, value, 0) }
        defer { av_dict_free(&dictionary) }
        guard let allocated = avformat_alloc_context() else {
            throw VideoCodecError(code: .setupFailed, message: "avformat_alloc_context failed")
        }
        allocated.pointee.interrupt_callback = cffmpeg_interrupt_record(interrupt.pointer)
        var inputFormat: UnsafePointer<AVInputFormat>?
        if let format {
            guard let found = av_find_input_format(format) else {
                avformat_free_context(allocated)
                throw VideoCodecError(code: .codecUnavailable, message: "this FFmpeg has no \(format) demuxer")
            }
            inputFormat = found
        }
        var context: UnsafeMutablePointer<AVFormatContext>? = allocated
        // On failure avformat_open_input frees the context itself.
        let opened = avformat_open_input(&context, url, inputFormat, &dictionary)
        guard opened >= 0, let context else {
            throw VideoCodecError.ffmpeg(.fileError, "cannot open the stream", opened)
        }
        pointer = context
    }

    deinit {
        var context: UnsafeMutablePointer<AVFormatContext>? = pointer
        avformat_close_input(&context)
    }
}

/// Calls `avformat_network_init` once per process (libavformat's network protocols need it).
enum NetworkInitialisation {
    private static let done = Mutex(false)

    static func once() {
        let first = done.withLock { done in
            defer { done = true }
            return !done
        }
        if first { avformat_network_init() }
    }
}

/// Owns a heap `cffmpeg_interrupt`: libavformat's interrupt callback reads it while a blocking call runs, and any
/// thread may stop it. It must outlive the `AVFormatContext` it is hung on (its owner keeps both, the context
/// freed first). Sendable: every field is read and written atomically by the C helpers.
final class InterruptHandle: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<cffmpeg_interrupt>

    init() {
        pointer = .allocate(capacity: 1)
        pointer.initialize(to: cffmpeg_interrupt(stop: 0, timed_out: 0, deadline_us: 0))
    }

    /// Cancels the blocking call under way and every later one.
    func stop() { cffmpeg_interrupt_stop(pointer) }

    /// Whether ``stop()`` was called.
    var isStopped: Bool { cffmpeg_interrupt_stopped(pointer) != 0 }

    /// Ends calls that run past `duration` from now (nil: no deadline).
    func setDeadline(after duration: Duration?) {
        let microseconds = duration.map { max(1, $0.components.seconds * 1_000_000 + $0.components.attoseconds / 1_000_000_000_000) } ?? 0
        cffmpeg_interrupt_set_deadline(pointer, microseconds)
    }

    /// Whether the last interruption was the deadline's.
    var timedOut: Bool { cffmpeg_interrupt_timed_out(pointer) != 0 }

    deinit {
        pointer.deinitialize(count: 1)
        pointer.deallocate()
    }
}

/// Owns an output `AVFormatContext` and its `AVIOContext` (a muxer writing a file).
final class FormatOutputHandle {
    let pointer: UnsafeMutablePointer<AVFormatContext>

    init(path: String, formatName: String) throws(VideoCodecError) {
        FFmpegLogging.configureOnce()
        NetworkInitialisation.once()  // a path may be a URL (srt://, udp://)
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
