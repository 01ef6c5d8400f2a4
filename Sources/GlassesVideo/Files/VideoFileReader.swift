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
/// - Y4M 8-bit 4:2:0 (any chroma siting): each frame becomes a `.raw` NV12 image (chroma interleaved, values
///   unchanged), timed by the header's frame rate. Files marked full range are passed through unchanged.
///
/// Reading blocks on file I/O: use it off the cooperative pool, one thread at a time.
public final class VideoFileReader {
    /// What kind of file this is.
    public enum Kind: Sendable, Hashable {
        /// HEVC through libavformat (Annex B, MP4, Matroska, …), with the demuxer's name.
        case hevc(container: String)
        /// YUV4MPEG2.
        case y4m
    }

    /// What kind of file this is.
    public let kind: Kind
    /// The picture size the file declares first.
    public let width: Int
    /// The picture height the file declares first.
    public let height: Int

    private let y4m: Y4MReader?
    private let input: FormatInputHandle?
    private let packet: PacketHandle?
    private var streamIndex: Int32 = 0
    private var timeBase = AVRational(num: 1, den: 1_000_000)
    private var lengthSize = 4
    private var configuration: HEVCCodecConfiguration
    private var frameIndex = 0
    private var lastTimeUs: Int64?
    private var frameDurationUs: Int64
    private var isAnnexB = false

    /// Opens a file.
    /// - Parameters:
    ///   - path: the file.
    ///   - annexBFrameRate: frames per second assumed for Annex B files, which carry no timing (default 30).
    /// - Throws: `.fileError` when it cannot be opened, `.unsupportedFile` when it holds no HEVC video and is not Y4M.
    public init(path: String, annexBFrameRate: Int = 30) throws(VideoCodecError) {
        let rate = max(1, annexBFrameRate)
        frameDurationUs = 1_000_000 / Int64(rate)
        if Self.isY4M(path: path) {
            let reader = try Y4MReader(path: path)
            guard reader.header.layout == .yuv420, reader.header.width % 2 == 0, reader.header.height % 2 == 0 else {
                throw VideoCodecError(code: .unsupportedFile, message: "\(path): only even-sized 4:2:0 Y4M plays as a device")
            }
            y4m = reader
            input = nil
            packet = nil
            kind = .y4m
            width = reader.header.width
            height = reader.header.height
            configuration = HEVCCodecConfiguration(videoParameterSets: [], sequenceParameterSets: [],
                                                   pictureParameterSets: [], width: width, height: height)
            return
        }
        y4m = nil
        let opened = try FormatInputHandle(path: path, options: ["framerate": "\(rate)"])
        input = opened
        packet = try PacketHandle()
        let context = opened.pointer
        let probed = avformat_find_stream_info(context, nil)
        guard probed >= 0 else { throw VideoCodecError.ffmpeg(.unsupportedFile, "cannot read \(path)", probed) }
        let best = av_find_best_stream(context, AVMEDIA_TYPE_VIDEO, -1, -1, nil, 0)
        guard best >= 0, let stream = context.pointee.streams[Int(best)],
              stream.pointee.codecpar.pointee.codec_id == AV_CODEC_ID_HEVC
        else {
            throw VideoCodecError(code: .unsupportedFile, message: "\(path) holds no HEVC video stream (and is not Y4M)")
        }
        streamIndex = best
        timeBase = stream.pointee.time_base
        let parameters = stream.pointee.codecpar.pointee
        width = Int(parameters.width)
        height = Int(parameters.height)
        let containerName = context.pointee.iformat.map { String(cString: $0.pointee.name) } ?? "unknown"
        kind = .hevc(container: containerName)
        isAnnexB = containerName == "hevc"
        if stream.pointee.avg_frame_rate.num > 0, stream.pointee.avg_frame_rate.den > 0 {
            frameDurationUs = Int64(stream.pointee.avg_frame_rate.den) * 1_000_000 / Int64(stream.pointee.avg_frame_rate.num)
        }
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
        updateSize()
    }

    private static func isY4M(path: String) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? handle.close() }
        let start = (try? handle.read(upToCount: 10)) ?? Data()
        return start == Data("YUV4MPEG2 ".utf8)
    }

    /// The next frame in file order, or nil at the end.
    /// - Throws: `.unsupportedFile` for a malformed file, `.fileError` for a read error.
    public func nextFrame() throws(VideoCodecError) -> VideoFrame? {
        if let y4m {
            guard let payload = try y4m.nextFramePayload() else { return nil }
            let time = y4m.presentationTimeUs(ofFrame: frameIndex)
            frameIndex += 1
            guard let image = ChromaRepacking.rawImage(fromI420: payload, width: width, height: height) else {
                throw VideoCodecError(code: .unsupportedFile, message: "Y4M frame \(frameIndex) has a bad size")
            }
            return VideoFrame(presentationTimeUs: time, content: .raw(image))
        }
        guard let input, let packet else { return nil }
        while true {
            av_packet_unref(packet.pointer)
            let read = av_read_frame(input.pointer, packet.pointer)
            if read == FFmpegResult.endOfFile { return nil }
            guard read >= 0 else { throw VideoCodecError.ffmpeg(.fileError, "cannot read a packet", read) }
            guard packet.pointer.pointee.stream_index == streamIndex, packet.pointer.pointee.size > 0 else { continue }
            let bytes = Data(bytes: packet.pointer.pointee.data, count: Int(packet.pointer.pointee.size))
            let isFlaggedKey = packet.pointer.pointee.flags & AV_PKT_FLAG_KEY != 0
            let time = isAnnexB
                ? Int64(frameIndex) * frameDurationUs
                : timestamp(pts: packet.pointer.pointee.pts, dts: packet.pointer.pointee.dts)
            av_packet_unref(packet.pointer)
            let units: [Data]
            if lengthSize == 0 {
                units = HEVCNALUnits.splitAnnexB(bytes)
            } else {
                guard let split = HEVCNALUnits.splitLengthPrefixed(bytes, lengthSize: lengthSize) else {
                    throw VideoCodecError(code: .unsupportedFile, message: "packet \(frameIndex) has broken NAL lengths")
                }
                units = split
            }
            let parameterSets = units.filter { HEVCNALUnits.isParameterSet(type: HEVCNALUnits.type(of: $0) ?? 0) }
            if !parameterSets.isEmpty {
                configuration = HEVCNALUnits.configuration(parameterSets: parameterSets, width: width, height: height)
                updateSize()
            }
            let rest = units.filter { !HEVCNALUnits.isParameterSet(type: HEVCNALUnits.type(of: $0) ?? 0) }
            guard !rest.isEmpty else { continue }
            let isKeyframe = isFlaggedKey
                || rest.contains { HEVCNALUnits.isRandomAccessPoint(type: HEVCNALUnits.type(of: $0) ?? 0) }
            frameIndex += 1
            let sample = HEVCSample(data: HEVCNALUnits.lengthPrefixed(rest), isKeyframe: isKeyframe,
                                    codecConfiguration: configuration)
            return VideoFrame(presentationTimeUs: time, content: .hevc(sample))
        }
    }

    private func updateSize() {
        if let sps = configuration.sequenceParameterSets.first, let size = HEVCParameterSets.pictureSize(sequenceParameterSet: sps) {
            configuration.width = size.width
            configuration.height = size.height
        }
    }

    private func timestamp(pts: Int64, dts: Int64) -> Int64 {
        let raw = pts != FFmpegResult.noTimestamp ? pts : dts
        var time: Int64
        if raw != FFmpegResult.noTimestamp {
            time = av_rescale_q(raw, timeBase, AVRational(num: 1, den: 1_000_000))
        } else {
            time = (lastTimeUs ?? -frameDurationUs) + frameDurationUs
        }
        if pts == FFmpegResult.noTimestamp, let lastTimeUs, time <= lastTimeUs { time = lastTimeUs + frameDurationUs }
        lastTimeUs = time
        return time
    }
}
