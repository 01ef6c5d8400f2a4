internal import CFFmpeg
import Foundation
import GlassesMedia

/// One compressed access unit from ``HEVCEncoder``.
public struct EncodedHEVCSample: Sendable, Hashable {
    /// Presentation time in microseconds, as given to ``HEVCEncoder/encode(_:presentationTimeUs:forceKeyframe:)``.
    public var presentationTimeUs: Int64
    /// Whether the sample is an IRAP (IDR) picture, where decoding can start.
    public var isKeyframe: Bool
    /// NAL units, each with a 4-byte big-endian length prefix; no parameter sets (those are in
    /// ``HEVCEncoder/codecConfiguration``).
    public var data: Data

    /// Creates a sample.
    public init(presentationTimeUs: Int64, isKeyframe: Bool, data: Data) {
        self.presentationTimeUs = presentationTimeUs
        self.isKeyframe = isKeyframe
        self.data = data
    }
}

/// A low-latency HEVC encoder over libavcodec's `libx265`, for the simulated glasses.
///
/// Settings: preset `ultrafast`, tune `zerolatency`, no B-frames, no lookahead, closed GOPs (every keyframe is an
/// IDR), an IDR at least every `keyframeInterval` frames, average bitrate `bitrate` with a one-second VBV buffer
/// capped at the same rate, BT.601 video-range signalled in the VUI. Parameter sets are emitted once (global
/// header) and exposed as ``codecConfiguration``; samples never repeat them. One frame in gives one sample out
/// (no reordering, no delay), in input order.
///
/// Encoding blocks the calling thread (a few milliseconds per 720p frame): call it from your own thread or
/// dispatch queue, never from the cooperative pool. Use an instance from one thread at a time.
public final class HEVCEncoder {
    /// Picture width in pixels.
    public let width: Int
    /// Picture height in pixels.
    public let height: Int
    /// Nominal frame rate (frames per second) the rate control assumes.
    public let frameRate: Int
    /// Target bitrate in bits per second.
    public let bitrate: Int
    /// Maximum distance between keyframes, in frames.
    public let keyframeInterval: Int
    /// The parameter sets (VPS, SPS, PPS) every sample depends on.
    public let codecConfiguration: HEVCCodecConfiguration

    private let context: CodecContextHandle
    private let frame: FrameHandle
    private let packet: PacketHandle

    /// Opens a libx265 encoder.
    /// - Parameters:
    ///   - width: picture width, even, 16…8192.
    ///   - height: picture height, even, 16…8192.
    ///   - frameRate: frames per second, 1…240.
    ///   - bitrate: average bits per second (at least 10 kb/s).
    ///   - keyframeInterval: maximum frames between IDR pictures (default: one second's worth, `frameRate`).
    ///   - threads: worker threads for x265's wavefront-parallel encoding, 1…16 (default 1: no thread pool, one
    ///     picture on the calling thread). More threads encode a picture sooner; the bitstream's rules are unchanged.
    ///   - psychovisual: x265's psycho-visual rate-distortion tuning (`psy-rd`, `psy-rdoq`; on by default, as
    ///     `ultrafast` has it). Off, a picture costs about a third less CPU, at the same bit rate, with flatter
    ///     texture: for real-time simulation where the CPU, not the picture, is the limit.
    /// - Throws: ``VideoCodecError`` `.invalidArgument` for bad sizes, rates or thread counts, `.codecUnavailable`
    ///   when FFmpeg has no libx265, `.setupFailed` when the encoder does not open.
    public init(
        width: Int, height: Int, frameRate: Int, bitrate: Int = 2_000_000, keyframeInterval: Int? = nil, threads: Int = 1,
        psychovisual: Bool = true
    ) throws(VideoCodecError) {
        let interval = keyframeInterval ?? frameRate
        guard (16 ... 8192).contains(width), (16 ... 8192).contains(height), width % 2 == 0, height % 2 == 0 else {
            throw VideoCodecError(code: .invalidArgument, message: "HEVC encoder size \(width)x\(height) must be even and 16…8192")
        }
        guard (1 ... 240).contains(frameRate) else {
            throw VideoCodecError(code: .invalidArgument, message: "HEVC encoder frame rate \(frameRate) must be 1…240")
        }
        guard bitrate >= 10_000 else {
            throw VideoCodecError(code: .invalidArgument, message: "HEVC encoder bitrate \(bitrate) b/s is below 10 kb/s")
        }
        guard (1 ... 16).contains(threads) else {
            throw VideoCodecError(code: .invalidArgument, message: "HEVC encoder threads \(threads) must be 1…16")
        }
        guard interval >= 1 else {
            throw VideoCodecError(code: .invalidArgument, message: "keyframe interval \(interval) must be at least 1")
        }
        guard let codec = avcodec_find_encoder_by_name("libx265") else {
            throw VideoCodecError(code: .codecUnavailable, message: "this FFmpeg build has no libx265 encoder")
        }
        self.width = width
        self.height = height
        self.frameRate = frameRate
        self.bitrate = bitrate
        self.keyframeInterval = interval

        context = try CodecContextHandle(codec: codec)
        frame = try FrameHandle()
        packet = try PacketHandle()

        let ctx = context.pointer
        ctx.pointee.width = Int32(width)
        ctx.pointee.height = Int32(height)
        ctx.pointee.pix_fmt = AV_PIX_FMT_YUV420P
        ctx.pointee.time_base = AVRational(num: 1, den: 1_000_000)
        ctx.pointee.framerate = AVRational(num: Int32(frameRate), den: 1)
        ctx.pointee.bit_rate = Int64(bitrate)
        ctx.pointee.rc_max_rate = Int64(bitrate)
        ctx.pointee.rc_buffer_size = Int32(clamping: bitrate)
        ctx.pointee.gop_size = Int32(interval)
        ctx.pointee.max_b_frames = 0
        ctx.pointee.thread_count = 1
        ctx.pointee.flags |= Int32(AV_CODEC_FLAG_GLOBAL_HEADER)
        ctx.pointee.color_range = AVCOL_RANGE_MPEG
        ctx.pointee.colorspace = AVCOL_SPC_SMPTE170M
        ctx.pointee.color_primaries = AVCOL_PRI_SMPTE170M
        ctx.pointee.color_trc = AVCOL_TRC_SMPTE170M

        let privateData = ctx.pointee.priv_data
        av_opt_set(privateData, "preset", "ultrafast", 0)
        av_opt_set(privateData, "tune", "zerolatency", 0)
        av_opt_set_int(privateData, "forced-idr", 1, 0)
        var x265Parameters = [
            "log-level=error", "bframes=0", "rc-lookahead=0", "open-gop=0", "repeat-headers=0",
            "keyint=\(interval)", "min-keyint=1", "scenecut=0", "frame-threads=1", threads == 1 ? "pools=none" : "pools=\(threads)",
        ]
        if !psychovisual { x265Parameters += ["psy-rd=0", "psy-rdoq=0"] }
        av_opt_set(privateData, "x265-params", x265Parameters.joined(separator: ":"), 0)

        let opened = avcodec_open2(ctx, codec, nil)
        guard opened >= 0 else {
            throw VideoCodecError.ffmpeg(.setupFailed, "could not open libx265 for \(width)x\(height)", opened)
        }
        var headerUnits: [Data] = []
        if let extradata = ctx.pointee.extradata, ctx.pointee.extradata_size > 0 {
            headerUnits = HEVCNALUnits.splitAnnexB(Data(bytes: extradata, count: Int(ctx.pointee.extradata_size)))
        }
        let configuration = HEVCNALUnits.configuration(parameterSets: headerUnits, width: width, height: height)
        guard !configuration.videoParameterSets.isEmpty, !configuration.sequenceParameterSets.isEmpty,
              !configuration.pictureParameterSets.isEmpty
        else {
            throw VideoCodecError(code: .setupFailed, message: "libx265 produced no VPS/SPS/PPS in its global header")
        }
        codecConfiguration = configuration

        let picture = frame.pointer
        picture.pointee.width = Int32(width)
        picture.pointee.height = Int32(height)
        picture.pointee.format = AV_PIX_FMT_YUV420P.rawValue
        let allocated = av_frame_get_buffer(picture, 0)
        guard allocated >= 0 else {
            throw VideoCodecError.ffmpeg(.setupFailed, "could not allocate the encoder's input picture", allocated)
        }
    }

    /// Encodes one NV12 video-range picture.
    ///
    /// - Parameters:
    ///   - image: the picture; its size must equal the encoder's.
    ///   - presentationTimeUs: its presentation time in microseconds (strictly increasing).
    ///   - forceKeyframe: make this picture an IDR.
    /// - Returns: the samples ready now, normally exactly one (this picture).
    /// - Throws: ``VideoCodecError`` `.invalidArgument` for a size mismatch, `.encodeFailed` when libx265 fails.
    public func encode(
        _ image: RawVideoImage, presentationTimeUs: Int64, forceKeyframe: Bool = false
    ) throws(VideoCodecError) -> [EncodedHEVCSample] {
        guard image.width == width, image.height == height else {
            throw VideoCodecError(
                code: .invalidArgument,
                message: "image is \(image.width)x\(image.height) but the encoder is \(width)x\(height)"
            )
        }
        let picture = frame.pointer
        let writable = av_frame_make_writable(picture)
        guard writable >= 0 else {
            throw VideoCodecError.ffmpeg(.encodeFailed, "could not make the input picture writable", writable)
        }
        image.data.withUnsafeBytes { raw in
            let source = raw.baseAddress!
            ChromaRepacking.copyPlane(
                source: source, sourceStride: image.lumaBytesPerRow,
                destination: picture.pointee.data.0!, destinationStride: Int(picture.pointee.linesize.0),
                width: width, height: height
            )
            ChromaRepacking.deinterleave(
                source: source + image.lumaBytesPerRow * height, sourceStride: image.chromaBytesPerRow,
                cb: picture.pointee.data.1!, cbStride: Int(picture.pointee.linesize.1),
                cr: picture.pointee.data.2!, crStride: Int(picture.pointee.linesize.2),
                width: width / 2, height: height / 2
            )
        }
        picture.pointee.pts = presentationTimeUs
        picture.pointee.pict_type = forceKeyframe ? AV_PICTURE_TYPE_I : AV_PICTURE_TYPE_NONE
        let sent = avcodec_send_frame(context.pointer, picture)
        guard sent >= 0 else {
            throw VideoCodecError.ffmpeg(.encodeFailed, "libx265 rejected the picture at \(presentationTimeUs) µs", sent)
        }
        return try drainPackets()
    }

    /// Signals the end of the stream and returns every sample still inside the encoder.
    /// After this the encoder accepts no more pictures.
    public func flush() throws(VideoCodecError) -> [EncodedHEVCSample] {
        let sent = avcodec_send_frame(context.pointer, nil)
        guard sent >= 0 || sent == FFmpegResult.endOfFile else {
            throw VideoCodecError.ffmpeg(.encodeFailed, "could not flush libx265", sent)
        }
        return try drainPackets()
    }

    private func drainPackets() throws(VideoCodecError) -> [EncodedHEVCSample] {
        var samples: [EncodedHEVCSample] = []
        while true {
            let received = avcodec_receive_packet(context.pointer, packet.pointer)
            if received == FFmpegResult.again || received == FFmpegResult.endOfFile { break }
            guard received >= 0 else {
                throw VideoCodecError.ffmpeg(.encodeFailed, "libx265 failed to produce a packet", received)
            }
            let data = Data(bytes: packet.pointer.pointee.data, count: Int(packet.pointer.pointee.size))
            let units = HEVCNALUnits.splitAnnexB(data).filter { unit in
                guard let type = HEVCNALUnits.type(of: unit) else { return false }
                return !HEVCNALUnits.isParameterSet(type: type)
            }
            let isKeyframe = packet.pointer.pointee.flags & AV_PKT_FLAG_KEY != 0
            samples.append(EncodedHEVCSample(
                presentationTimeUs: packet.pointer.pointee.pts, isKeyframe: isKeyframe,
                data: HEVCNALUnits.lengthPrefixed(units)
            ))
            av_packet_unref(packet.pointer)
        }
        return samples
    }
}
