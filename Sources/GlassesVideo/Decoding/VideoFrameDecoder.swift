internal import CFFmpeg
import Foundation
import GlassesMedia

/// Decodes the glasses' ``WearablesKit/VideoFrame``s into pooled ``PixelBuffer``s for custom input.
///
/// HEVC samples (4-byte length-prefixed NAL units plus codec configuration) go to libavcodec's native `hevc`
/// decoder as Annex B, with the configuration's parameter sets put in front of every keyframe and whenever the
/// configuration changes, so parameter sets may arrive out of band, in band, or change (including a resolution
/// change such as 720×1280 ↔ 504×896). Raw NV12 video-range images are copied into a pooled buffer (`420v`) or
/// converted. Output is ``PixelFormat/bgra32``, ``PixelFormat/nv12VideoRange`` or ``PixelFormat/nv12FullRange``
/// (``outputFormat``, changeable between calls), in buffers from ``pool`` whose rows are padded to
/// ``VideoDecoderOptions/rowAlignment``.
///
/// Colour: NV12 output of an 8-bit 4:2:0 stream in the same range is a pure repack (luma copied, Cb/Cr
/// interleaved), bit-exact with what `ffmpeg -pix_fmt yuv420p` decodes. Other combinations (BGRA, or NV12 of the
/// other range) go through libswscale with the ffmpeg CLI's flags (bicubic), using the stream's matrix and range
/// (`matrix_coefficients`, `video_full_range_flag`), or BT.601 video range (16–235) when the stream says nothing,
/// as the glasses' streams do; BGRA output is byte-identical to `ffmpeg -pix_fmt bgra`.
///
/// Damage never stops the stream: a sample with broken NAL framing, or one libavcodec reports errors for (including
/// a reference picture that is missing because a keyframe was lost), is counted as ``VideoDecoderStatistics/corrupt``,
/// the decoder is reset, and samples are skipped (``VideoDecoderStatistics/skippedUntilKeyframe``) until the next
/// keyframe. Only when no picture at all has come out for ``VideoDecoderOptions/stallTimeoutUs`` of stream time
/// does ``decode(_:)`` throw `.videoStreamingError` (once per timeout period; decoding can go on afterwards).
///
/// Decoding is synchronous and blocks the calling thread (about 4 ms per 720p frame on one core): run it on your own
/// thread or dispatch queue, never on the cooperative pool. Use an instance from one thread at a time.
public final class VideoFrameDecoder {
    /// The layout produced; may be changed between calls.
    public var outputFormat: PixelFormat
    /// The decoder's settings.
    public let options: VideoDecoderOptions
    /// The pool every produced buffer comes from.
    public let pool: PixelBufferPool
    /// What the decoder has done so far.
    public private(set) var statistics = VideoDecoderStatistics()

    private let context: CodecContextHandle
    private let errors: ErrorCounterHandle
    private let packet: PacketHandle
    private let frame: FrameHandle
    private let converter: FrameConverter
    private var awaitingKeyframe = true
    private var currentConfiguration: HEVCCodecConfiguration?
    private var lastSize: (width: Int, height: Int)?
    private var lastProgressUs: Int64?

    /// Opens the `hevc` decoder.
    /// - Parameters:
    ///   - outputFormat: `.bgra32`, `.nv12VideoRange` or `.nv12FullRange`.
    ///   - options: threading, stall timeout, row alignment, pool size.
    ///   - pool: a pool to share; by default the decoder makes its own.
    /// - Throws: `.unsupportedPixelFormat`, `.codecUnavailable` or `.setupFailed`.
    public init(
        outputFormat: PixelFormat = .nv12VideoRange, options: VideoDecoderOptions = VideoDecoderOptions(),
        pool: PixelBufferPool? = nil
    ) throws(VideoCodecError) {
        try Self.checkSupported(outputFormat)
        guard let codec = avcodec_find_decoder(AV_CODEC_ID_HEVC) else {
            throw VideoCodecError(code: .codecUnavailable, message: "this FFmpeg build has no HEVC decoder")
        }
        self.outputFormat = outputFormat
        self.options = options
        self.pool = pool ?? PixelBufferPool(maximumIdleBuffers: options.maximumIdleBuffers)
        context = try CodecContextHandle(codec: codec)
        errors = ErrorCounterHandle()
        packet = try PacketHandle()
        frame = try FrameHandle()
        converter = FrameConverter(pool: self.pool, rowAlignment: max(1, options.rowAlignment))

        let ctx = context.pointer
        context.attach(errors)
        let threads = max(1, options.threadCount)
        ctx.pointee.thread_count = Int32(threads)
        if threads > 1 {
            ctx.pointee.thread_type = FF_THREAD_FRAME | FF_THREAD_SLICE
        }
        let opened = avcodec_open2(ctx, codec, nil)
        guard opened >= 0 else {
            throw VideoCodecError.ffmpeg(.setupFailed, "could not open the HEVC decoder", opened)
        }
    }

    private static func checkSupported(_ format: PixelFormat) throws(VideoCodecError) {
        guard format == .bgra32 || format.isNV12 else {
            throw VideoCodecError(code: .unsupportedPixelFormat, message: "cannot produce \(format); ask for BGRA, 420v or 420f")
        }
    }

    /// Decodes or converts one frame.
    /// - Returns: the pictures ready now (usually one; none while skipping to a keyframe or while a reordering
    ///   stream fills its delay).
    /// - Throws: `.videoStreamingError` when nothing has decoded for the stall timeout; `.unsupportedPixelFormat`
    ///   for a bad ``outputFormat``; `.decodeFailed` for failures that are not about the stream (out of memory).
    public func decode(_ videoFrame: VideoFrame) throws(VideoCodecError) -> [DecodedVideoFrame] {
        try Self.checkSupported(outputFormat)
        statistics.framesReceived += 1
        let time = videoFrame.presentationTimeUs
        var output: [DecodedVideoFrame] = []
        switch videoFrame.content {
        case .raw(let image):
            statistics.rawImages += 1
            noteSize(width: image.width, height: image.height)
            output.append(DecodedVideoFrame(presentationTimeUs: time, pixelBuffer: try converter.convert(image, to: outputFormat)))
        case .hevc(let sample):
            statistics.hevcSamples += 1
            output = try decode(sample, presentationTimeUs: time)
        }
        try trackProgress(at: time, produced: !output.isEmpty)
        return output
    }

    /// Drains the pictures libavcodec still holds (end of stream) and readies the decoder for a new stream, which
    /// must start with a keyframe.
    public func flush() throws(VideoCodecError) -> [DecodedVideoFrame] {
        var output: [DecodedVideoFrame] = []
        let sent = avcodec_send_packet(context.pointer, nil)
        if sent >= 0 {
            output = (try? receivePictures(errorsBefore: errors.count)) ?? []
        }
        avcodec_flush_buffers(context.pointer)
        awaitingKeyframe = true
        return output
    }

    // MARK: HEVC

    private func decode(_ sample: HEVCSample, presentationTimeUs: Int64) throws(VideoCodecError) -> [DecodedVideoFrame] {
        guard let units = HEVCNALUnits.splitLengthPrefixed(sample.data), !units.isEmpty,
              units.allSatisfy(HEVCNALUnits.hasValidHeader)
        else {
            markCorrupt()
            return []
        }
        let isKeyframe = units.contains { HEVCNALUnits.isRandomAccessPoint(type: HEVCNALUnits.type(of: $0) ?? 0) }
        let configuration = sample.codecConfiguration
        let hasParameterSets = !configuration.sequenceParameterSets.isEmpty
        let configurationChanged = hasParameterSets && configuration != currentConfiguration
        if configurationChanged && !isKeyframe {
            // New parameter sets can only take effect at a keyframe; what precedes it cannot be decoded.
            awaitingKeyframe = true
        }
        if awaitingKeyframe && !isKeyframe {
            statistics.skippedUntilKeyframe += 1
            return []
        }
        var stream = isKeyframe && hasParameterSets ? HEVCNALUnits.parameterSets(of: configuration) : []
        stream += units
        let bytes = HEVCNALUnits.annexB(stream)

        av_packet_unref(packet.pointer)
        let allocated = av_new_packet(packet.pointer, Int32(bytes.count))
        guard allocated >= 0 else {
            throw VideoCodecError.ffmpeg(.decodeFailed, "could not allocate a packet of \(bytes.count) bytes", allocated)
        }
        bytes.withUnsafeBytes { raw in
            UnsafeMutableRawPointer(packet.pointer.pointee.data).copyMemory(from: raw.baseAddress!, byteCount: raw.count)
        }
        packet.pointer.pointee.pts = presentationTimeUs
        packet.pointer.pointee.dts = presentationTimeUs
        packet.pointer.pointee.flags = isKeyframe ? AV_PKT_FLAG_KEY : 0

        let errorsBefore = errors.count
        var sent = avcodec_send_packet(context.pointer, packet.pointer)
        var output: [DecodedVideoFrame] = []
        if sent == FFmpegResult.again {
            // Only with frame threads: take what is ready, then the packet fits.
            guard let ready = try receivePictures(errorsBefore: errorsBefore) else { return [] }
            output = ready
            sent = avcodec_send_packet(context.pointer, packet.pointer)
        }
        av_packet_unref(packet.pointer)
        guard sent >= 0, errors.count == errorsBefore else {
            markCorrupt()
            return []
        }
        guard let pictures = try receivePictures(errorsBefore: errorsBefore) else { return output }
        output += pictures
        if isKeyframe {
            awaitingKeyframe = false
            if configurationChanged {
                currentConfiguration = configuration
            }
        }
        return output
    }

    /// Receives every ready picture; nil (after counting the damage) if libavcodec flagged an error meanwhile.
    private func receivePictures(errorsBefore: Int32) throws(VideoCodecError) -> [DecodedVideoFrame]? {
        var output: [DecodedVideoFrame] = []
        let picture = frame.pointer
        while true {
            let received = avcodec_receive_frame(context.pointer, picture)
            if received == FFmpegResult.again || received == FFmpegResult.endOfFile { break }
            guard received >= 0 else {
                markCorrupt()
                return nil
            }
            defer { av_frame_unref(picture) }
            let damaged = picture.pointee.decode_error_flags != 0
                || picture.pointee.flags & AV_FRAME_FLAG_CORRUPT != 0
                || errors.count != errorsBefore
            if damaged {
                markCorrupt()
                return nil
            }
            noteSize(width: Int(picture.pointee.width), height: Int(picture.pointee.height))
            let buffer = try converter.convert(picture, to: outputFormat)
            var time = picture.pointee.best_effort_timestamp
            if time == FFmpegResult.noTimestamp { time = picture.pointee.pts }
            statistics.decodedPictures += 1
            output.append(DecodedVideoFrame(presentationTimeUs: time, pixelBuffer: buffer))
        }
        return output
    }

    private func markCorrupt() {
        statistics.corrupt += 1
        awaitingKeyframe = true
        avcodec_flush_buffers(context.pointer)
    }

    private func noteSize(width: Int, height: Int) {
        if let lastSize, lastSize.width != width || lastSize.height != height {
            statistics.formatChanges += 1
        }
        lastSize = (width, height)
    }

    private func trackProgress(at time: Int64, produced: Bool) throws(VideoCodecError) {
        guard let last = lastProgressUs, !produced, time >= last else {
            lastProgressUs = time
            return
        }
        if time - last > options.stallTimeoutUs {
            lastProgressUs = time
            statistics.stalls += 1
            throw VideoCodecError(
                code: .videoStreamingError,
                message: "no picture decoded for \(Double(time - last) / 1_000_000) s of stream time "
                    + "(corrupt \(statistics.corrupt), skipped \(statistics.skippedUntilKeyframe))"
            )
        }
    }
}
