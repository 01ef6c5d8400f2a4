internal import CFFmpeg
import Foundation
import GlassesMedia

/// Plays a video file as a pair of glasses would send it: a sequence of ``WearablesKit/VideoFrame``s in file order
/// with the file's timestamps.
///
/// - HEVC in Annex B (`.hevc`, `.h265`, `.265`), MP4/MOV or Matroska (any container libavformat demuxes): each
///   packet becomes an `.hevc` sample of 4-byte length-prefixed NAL units; parameter sets (from the container's
///   hvcC or in band) are moved into the sample's ``WearablesKit/HEVCCodecConfiguration``, which follows in-band
///   changes. Samples come in decoding order, as a device sends them. Annex B files carry no timestamps, so their
///   samples are stamped in decoding order at `annexBFrameRate` (right for streams without B-frames, such as the
///   glasses'; a stream with B-frames then gets its pictures' times in decoding order). Matroska stores
///   milliseconds, so its times are rounded to the millisecond.
/// - H.264 (phones record it) in any of those containers or Annex B (`.h264`): decoded here with libavcodec's
///   `h264` decoder into `.raw` NV12 video-range images, in presentation order, so they play through the same path
///   as raw frames and come out of ``VideoFrameDecoder`` as the same pictures. ``kind`` is `.hevc(container:)` for
///   them too (``codec`` says `h264`). Other codecs are refused with the `ffmpeg` command that converts them.
/// - Y4M 8-bit 4:2:0 (any chroma siting): each frame becomes a `.raw` NV12 image (chroma interleaved, values
///   unchanged), timed by the header's frame rate. Files marked full range are passed through unchanged.
///
/// Every number from a file is checked against ``VideoFileLimits`` before it is used: picture sizes, frame rates
/// (`.fileLimitExceeded`) and timestamps, which must advance with steps of at most
/// ``VideoFileLimits/maximumFrameGapUs`` and go back at most ``VideoFileLimits/maximumReorderUs``
/// (`.brokenTimestamps`, typically a track whose timescale is 0 or 1). A file that ends before its structure says
/// (an MP4 box or Matroska segment cut off, fewer samples than the MP4 index lists, a Y4M frame cut off) ends with
/// `.truncatedFile` after the frames it does hold, never with a quiet end: see ``nextFrame()``.
///
/// Reading blocks on file I/O: use it off the cooperative pool, one thread at a time.
public final class VideoFileReader {
    /// What kind of file this is.
    public enum Kind: Sendable, Hashable {
        /// Video through libavformat (Annex B, MP4, Matroska, …), with the demuxer's name: HEVC, or H.264 decoded
        /// to raw images (see ``VideoFileReader/codec``).
        case hevc(container: String)
        /// YUV4MPEG2.
        case y4m
    }

    /// What kind of file this is.
    public let kind: Kind
    /// The file's video codec as libavcodec names it: `hevc`, `h264`, or `rawvideo` for Y4M.
    public let codec: String
    /// The file being read.
    public let path: String
    /// The picture size the file declares first.
    public let width: Int
    /// The picture height the file declares first.
    public let height: Int

    /// The file's playing time in seconds as its header or index says (Y4M: frames over the frame rate; MP4 and
    /// Matroska: the container's duration), or nil when the file does not say (raw HEVC or H.264 streams).
    public var durationSeconds: Double? {
        if let y4m { return y4m.durationSeconds }
        guard let context = input?.pointer else { return nil }
        let duration = context.pointee.duration
        guard duration > 0, duration != FFmpegResult.noTimestamp else { return nil }
        let seconds = Double(duration) / 1_000_000  // AV_TIME_BASE
        return seconds.isFinite && seconds <= 360_000 ? seconds : nil
    }

    /// The frame rate the file declares (Y4M: its header; MP4 and Matroska: the video track's average rate), or nil
    /// when it declares none in range (raw HEVC or H.264 streams carry no timing: their rate is only assumed).
    public var declaredFrameRate: Double? {
        if let y4m {
            let header = y4m.header
            guard header.frameRateNumerator > 0, header.frameRateDenominator > 0 else { return nil }
            return Double(header.frameRateNumerator) / Double(header.frameRateDenominator)
        }
        return isAnnexB ? nil : containerFrameRate
    }

    private var containerFrameRate: Double?
    private let y4m: Y4MReader?
    private let input: FormatInputHandle?
    private let packet: PacketHandle?
    private let h264: H264FileDecoder?
    private var pendingImages: [H264FileDecoder.Picture] = []
    private var streamIndex: Int32 = 0
    private var timeBase = AVRational(num: 1, den: 1_000_000)
    private var lengthSize = 4
    private var configuration: HEVCCodecConfiguration
    private var frameIndex = 0
    private var packetsRead: Int64 = 0
    private var lastTimeUs: Int64?
    private var frameDurationUs: Int64
    private var isAnnexB = false
    private var timeline = TimestampChecker()
    private var endOfInput = false
    private var endError: VideoCodecError?

    /// Opens a file.
    /// - Parameters:
    ///   - path: the file.
    ///   - annexBFrameRate: frames per second assumed for Annex B files, which carry no timing (default 30;
    ///     clamped to ``VideoFileLimits/minimumFrameRate``…``VideoFileLimits/maximumFrameRate``).
    /// - Throws: `.fileError` when it cannot be opened, `.truncatedFile` when it is cut off before its index,
    ///   `.unsupportedFile` when it holds no HEVC or H.264 video and is not Y4M (the message gives the `ffmpeg`
    ///   command that converts it), `.fileLimitExceeded` for a picture size or frame rate out of range.
    public init(path: String, annexBFrameRate: Int = 30) throws(VideoCodecError) {
        let rate = min(max(VideoFileLimits.minimumFrameRate, annexBFrameRate), VideoFileLimits.maximumFrameRate)
        self.path = path
        frameDurationUs = 1_000_000 / Int64(rate)
        // A recording is read twice from its start (the kind is sniffed, then the file opened), which a pipe cannot
        // do: a FIFO would hang, a pipe read as "invalid data". Said plainly instead.
        var status = stat()
        if stat(path, &status) == 0, (status.st_mode & S_IFMT) != S_IFREG {
            let what = (status.st_mode & S_IFMT) == S_IFDIR ? "a folder" : "not a regular file (a pipe or a device)"
            throw VideoCodecError(code: .unsupportedFile, message: "\(path) is \(what): play a recording from a file", context: ["path": path])
        }
        if Self.isY4M(path: path) {
            let reader = try Y4MReader(path: path)
            guard reader.header.layout == .yuv420, reader.header.width % 2 == 0, reader.header.height % 2 == 0 else {
                throw VideoCodecError(code: .unsupportedFile, message: "\(path): only even-sized 4:2:0 Y4M plays as a device",
                                      context: ["path": path])
            }
            y4m = reader
            input = nil
            packet = nil
            h264 = nil
            kind = .y4m
            codec = "rawvideo"
            width = reader.header.width
            height = reader.header.height
            configuration = HEVCCodecConfiguration(videoParameterSets: [], sequenceParameterSets: [],
                                                   pictureParameterSets: [], width: width, height: height)
            return
        }
        y4m = nil
        let opened: FormatInputHandle
        do { opened = try FormatInputHandle(path: path, options: Self.demuxerOptions(frameRate: rate)) } catch {
            throw Self.openError(error, path: path)
        }
        input = opened
        packet = try PacketHandle()
        let context = opened.pointer
        let probed = avformat_find_stream_info(context, nil)
        guard probed >= 0 else {
            throw Self.openError(.ffmpeg(.unsupportedFile, "cannot read \(path)", probed, context: ["path": path]), path: path)
        }
        let best = av_find_best_stream(context, AVMEDIA_TYPE_VIDEO, -1, -1, nil, 0)
        guard best >= 0, let stream = context.pointee.streams[Int(best)] else {
            throw VideoCodecError(
                code: .unsupportedFile,
                message: "\(path) holds no video stream (and is not Y4M)", context: ["path": path]
            )
        }
        let codecID = stream.pointee.codecpar.pointee.codec_id
        guard codecID == AV_CODEC_ID_HEVC || codecID == AV_CODEC_ID_H264 else {
            let name = avcodec_get_name(codecID).map { String(cString: $0) } ?? "an unknown codec"
            throw VideoCodecError(
                code: .unsupportedFile,
                message: "\(path) holds \(name) video; this plays HEVC, H.264 and Y4M. Convert it: "
                    + "ffmpeg -i \(path) -c:v libx265 -pix_fmt yuv420p out.mp4",
                context: ["path": path, "codec": name]
            )
        }
        streamIndex = best
        timeBase = stream.pointee.time_base
        guard timeBase.num > 0, timeBase.den > 0 else {
            throw VideoCodecError(code: .brokenTimestamps,
                                  message: "\(path): its video track has no usable timescale (\(timeBase.num)/\(timeBase.den))",
                                  context: ["path": path])
        }
        let parameters = stream.pointee.codecpar.pointee
        width = Int(parameters.width)
        height = Int(parameters.height)
        try VideoFileLimits.checkSize(width: width, height: height, path: path, what: "its video track")
        let containerName = context.pointee.iformat.map { String(cString: $0.pointee.name) } ?? "unknown"
        kind = .hevc(container: containerName)
        isAnnexB = containerName == "hevc" || containerName == "h264"
        let average = stream.pointee.avg_frame_rate
        if average.num > 0, average.den > 0,
           Int64(average.num) >= Int64(VideoFileLimits.minimumFrameRate) * Int64(average.den),
           Int64(average.num) <= Int64(VideoFileLimits.maximumFrameRate) * Int64(average.den) {
            frameDurationUs = Int64(average.den) * 1_000_000 / Int64(average.num)
            containerFrameRate = Double(average.num) / Double(average.den)
        }
        if codecID == AV_CODEC_ID_H264 {
            codec = "h264"
            h264 = try H264FileDecoder(parameters: stream.pointee.codecpar, timeBase: timeBase, path: path)
            configuration = HEVCCodecConfiguration(videoParameterSets: [], sequenceParameterSets: [],
                                                   pictureParameterSets: [], width: width, height: height)
            return
        }
        codec = "hevc"
        h264 = nil
        var units: [Data] = []
        if let extradata = parameters.extradata, parameters.extradata_size > 0 {
            let record = Data(bytes: extradata, count: Int(parameters.extradata_size))
            if let hvcc = HEVCParameterSets.parseHVCC(record) {
                lengthSize = hvcc.lengthSize
                units = hvcc.units
            } else {
                lengthSize = 0
                units = HEVCNALUnits.splitAnnexB(record)
            }
        } else {
            lengthSize = 0
        }
        configuration = HEVCNALUnits.configuration(parameterSets: units, width: width, height: height)
        try updateSize()
    }

    /// The demuxers a file may be read with (libavformat's names): MP4/MOV, Matroska/WebM, and raw HEVC or H.264.
    /// Nothing else is probed, so a hostile file cannot pick a demuxer that opens other files (an HLS playlist)
    /// or one this module was never tested with.
    public static let containers = ["mov", "matroska", "hevc", "h264"]

    private static func demuxerOptions(frameRate: Int) -> [String: String] {
        ["framerate": "\(frameRate)", "format_whitelist": containers.joined(separator: ","), "protocol_whitelist": "file"]
    }

    private static func isY4M(path: String) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? handle.close() }
        let start = (try? handle.read(upToCount: 10)) ?? Data()
        return start == Data("YUV4MPEG2 ".utf8)
    }

    /// Turns a failure to open or probe a file into the user's terms: truncated, not a video file, or the
    /// system's reason (no such file, permission denied).
    private static func openError(_ error: VideoCodecError, path: String) -> VideoCodecError {
        var context = error.context
        context["path"] = path
        if let cut = ContainerStructure.truncation(ofFileAt: path) {
            return VideoCodecError(code: .truncatedFile, message: "\(path) is truncated: \(cut)",
                                   ffmpegCode: error.ffmpegCode, ffmpegMessage: error.ffmpegMessage, context: context)
        }
        let reason = error.ffmpegMessage ?? "unexpected error"
        if error.ffmpegCode == cffmpeg_averror(EINVAL) {
            // What libavformat says for a container outside `containers`.
            return VideoCodecError(
                code: .unsupportedFile,
                message: "\(path) is not an MP4, Matroska, HEVC, H.264 or Y4M file; convert it: "
                    + "ffmpeg -i \(path) -c:v libx265 -pix_fmt yuv420p out.mp4",
                ffmpegCode: error.ffmpegCode, ffmpegMessage: error.ffmpegMessage, context: context
            )
        }
        if error.ffmpegCode == FFmpegResult.invalidData {
            return VideoCodecError(code: .unsupportedFile, message: "\(path) is not a video file this can read (\(reason))",
                                   ffmpegCode: error.ffmpegCode, ffmpegMessage: error.ffmpegMessage, context: context)
        }
        return VideoCodecError(code: error.code, message: "cannot open \(path): \(reason)",
                               ffmpegCode: error.ffmpegCode, ffmpegMessage: error.ffmpegMessage, context: context)
    }

    /// The next frame in file order, or nil at the clean end of the file.
    /// - Throws: `.truncatedFile` (after every frame the file holds) when the file ends before its structure or
    ///   index says; `.brokenTimestamps` when the next frame's time goes backwards, stops advancing or jumps
    ///   beyond ``VideoFileLimits``; `.unsupportedFile` for a malformed file; `.fileLimitExceeded` for a picture
    ///   size out of range; `.fileError` for a read error. Once it has thrown or returned nil, it returns nil.
    public func nextFrame() throws(VideoCodecError) -> VideoFrame? {
        if let y4m {
            guard !endOfInput else { return nil }
            let payload: Data?
            do { payload = try y4m.nextFramePayload() } catch {
                endOfInput = true
                throw error
            }
            guard let payload else {
                endOfInput = true
                return nil
            }
            let time = y4m.presentationTimeUs(ofFrame: frameIndex)
            frameIndex += 1
            guard let image = ChromaRepacking.rawImage(fromI420: payload, width: width, height: height) else {
                throw VideoCodecError(code: .unsupportedFile, message: "\(path): Y4M frame \(frameIndex) has a bad size",
                                      context: ["path": path, "frame": "\(frameIndex - 1)"])
            }
            return VideoFrame(presentationTimeUs: time, content: .raw(image))
        }
        do {
            return try nextContainerFrame()
        } catch {
            endOfInput = true
            pendingImages = []
            throw error
        }
    }

    private func nextContainerFrame() throws(VideoCodecError) -> VideoFrame? {
        guard let input, let packet else { return nil }
        while true {
            if !pendingImages.isEmpty {
                let next = pendingImages.removeFirst()
                let (pts, image) = (next.pts, next.image)
                // Annex B has no timestamps: pictures are stamped in presentation (output) order.
                let time = isAnnexB ? try annexBTime() : try stamp(pts: pts, dts: FFmpegResult.noTimestamp)
                frameIndex += 1
                return VideoFrame(presentationTimeUs: time, content: .raw(image))
            }
            if endOfInput {
                if let endError {
                    self.endError = nil
                    throw endError
                }
                return nil
            }
            av_packet_unref(packet.pointer)
            let read = av_read_frame(input.pointer, packet.pointer)
            if read < 0 {
                endOfInput = true
                endError = endOfFileError(read)
                if let h264 { pendingImages += try h264.decode(nil, frameIndex: frameIndex) }
                continue
            }
            guard packet.pointer.pointee.stream_index == streamIndex else { continue }
            packetsRead += 1
            guard packet.pointer.pointee.size > 0 else { continue }
            if let h264 {
                pendingImages += try h264.decode(packet.pointer, frameIndex: frameIndex)
                continue
            }
            let bytes = Data(bytes: packet.pointer.pointee.data, count: Int(packet.pointer.pointee.size))
            let isFlaggedKey = packet.pointer.pointee.flags & AV_PKT_FLAG_KEY != 0
            let pts = packet.pointer.pointee.pts, dts = packet.pointer.pointee.dts
            av_packet_unref(packet.pointer)
            let units: [Data]
            if lengthSize == 0 {
                units = HEVCNALUnits.splitAnnexB(bytes)
            } else {
                guard let split = HEVCNALUnits.splitLengthPrefixed(bytes, lengthSize: lengthSize) else {
                    if let cut = ContainerStructure.truncation(ofFileAt: path) {
                        throw VideoCodecError(code: .truncatedFile,
                                              message: "\(path) is truncated after \(frameIndex) frames: \(cut)",
                                              context: ["path": path, "frame": "\(frameIndex)"])
                    }
                    throw VideoCodecError(code: .unsupportedFile, message: "\(path): packet \(frameIndex + 1) has broken NAL lengths",
                                          context: ["path": path, "frame": "\(frameIndex)"])
                }
                units = split
            }
            let parameterSets = units.filter { HEVCNALUnits.isParameterSet(type: HEVCNALUnits.type(of: $0) ?? 0) }
            if !parameterSets.isEmpty {
                configuration = HEVCNALUnits.configuration(parameterSets: parameterSets, width: width, height: height)
                try updateSize()
            }
            let rest = units.filter { !HEVCNALUnits.isParameterSet(type: HEVCNALUnits.type(of: $0) ?? 0) }
            guard !rest.isEmpty else { continue }
            let time = isAnnexB ? try annexBTime() : try stamp(pts: pts, dts: dts)
            let isKeyframe = isFlaggedKey
                || rest.contains { HEVCNALUnits.isRandomAccessPoint(type: HEVCNALUnits.type(of: $0) ?? 0) }
            frameIndex += 1
            let sample = HEVCSample(data: HEVCNALUnits.lengthPrefixed(rest), isKeyframe: isKeyframe,
                                    codecConfiguration: configuration)
            return VideoFrame(presentationTimeUs: time, content: .hevc(sample))
        }
    }

    /// What a failed `av_read_frame` means: nil for a clean end, `.truncatedFile` for a file that ends before its
    /// structure or index says, otherwise a read error in words.
    private func endOfFileError(_ result: Int32) -> VideoCodecError? {
        let context = ["path": path, "frame": "\(frameIndex)"]
        if let cut = ContainerStructure.truncation(ofFileAt: path) {
            return VideoCodecError(code: .truncatedFile,
                                   message: "\(path) is truncated after \(packetsRead) frames: \(cut)", context: context)
        }
        if result == FFmpegResult.endOfFile { return nil }
        if let io = input?.pointer.pointee.pb, avio_feof(io) != 0 {
            return VideoCodecError.ffmpeg(.truncatedFile, "\(path) is truncated: it ends inside frame \(packetsRead + 1)",
                                          result, context: context)
        }
        return VideoCodecError.ffmpeg(
            result == FFmpegResult.invalidData ? .unsupportedFile : .fileError,
            "cannot read frame \(packetsRead + 1) of \(path): \(FFmpegResult.text(result))", result, context: context
        )
    }

    private func updateSize() throws(VideoCodecError) {
        if let sps = configuration.sequenceParameterSets.first, let size = HEVCParameterSets.pictureSize(sequenceParameterSet: sps) {
            try VideoFileLimits.checkSize(width: size.width, height: size.height, path: path, what: "its HEVC parameter set")
            configuration.width = size.width
            configuration.height = size.height
        }
    }

    /// The time of the next Annex B frame (no timestamps in the file: its index at the assumed rate).
    private func annexBTime() throws(VideoCodecError) -> Int64 {
        let product = Int64(frameIndex).multipliedReportingOverflow(by: frameDurationUs)
        guard !product.overflow else { throw timelineError(.brokenTimestamps, "has more frames than a timeline holds") }
        try timeline.check(product.partialValue, frame: frameIndex, path: path)
        return product.partialValue
    }

    private func timelineError(_ code: VideoCodecError.Code, _ text: String) -> VideoCodecError {
        VideoCodecError(code: code, message: "\(path) \(text)", context: ["path": path, "frame": "\(frameIndex)"])
    }

    /// A frame's time in microseconds from its timestamps, checked: computed without overflow, within
    /// ``VideoFileLimits/maximumTimestampUs``, and consistent with the frames before it (``TimestampChecker``).
    private func stamp(pts: Int64, dts: Int64) throws(VideoCodecError) -> Int64 {
        let raw = pts != FFmpegResult.noTimestamp ? pts : dts
        var time: Int64
        if raw != FFmpegResult.noTimestamp {
            guard let scaled = Self.rescale(raw, from: timeBase, to: AVRational(num: 1, den: 1_000_000)) else {
                throw VideoCodecError(
                    code: .brokenTimestamps,
                    message: "\(path): frame \(frameIndex + 1) has the timestamp \(raw) × \(timeBase.num)/\(timeBase.den) s, "
                        + "beyond the \(VideoFileLimits.maximumTimestampUs / 3_600_000_000) hours a file may last",
                    context: ["path": path, "frame": "\(frameIndex)"]
                )
            }
            time = scaled
        } else {
            time = (lastTimeUs ?? -frameDurationUs) + frameDurationUs
        }
        if pts == FFmpegResult.noTimestamp, let lastTimeUs, time <= lastTimeUs { time = lastTimeUs + frameDurationUs }
        try timeline.check(time, frame: frameIndex, path: path, timeBase: timeBase)
        lastTimeUs = time
        return time
    }

    /// `value × from / to`, rounded to nearest, or nil when the result would not fit comfortably in 64 bits
    /// (beyond ±4 × 10^18), which libavutil would report only as `INT64_MIN`.
    static func rescale(_ value: Int64, from: AVRational, to: AVRational) -> Int64? {
        guard from.num > 0, from.den > 0, to.num > 0, to.den > 0 else { return nil }
        let estimate = Double(value) * Double(from.num) * Double(to.den) / (Double(from.den) * Double(to.num))
        let limit = 4.0e18
        guard estimate.isFinite, abs(estimate) <= limit else { return nil }
        return av_rescale_q(value, from, to)
    }

    /// `value` ticks of `numerator/denominator` s in microseconds, or nil when that does not fit (see ``rescale``).
    static func microseconds(_ value: Int64, timeBaseNumerator: Int32, timeBaseDenominator: Int32) -> Int64? {
        rescale(value, from: AVRational(num: timeBaseNumerator, den: timeBaseDenominator), to: AVRational(num: 1, den: 1_000_000))
    }
}
