internal import CFFmpeg
import Foundation
import GlassesMedia

/// Writes HEVC samples to a file the ffmpeg CLI (and ``VideoFileReader``) plays: raw Annex B, MP4 or Matroska; or
/// as MPEG-TS to a file or a network URL (`srt://…`, `udp://…`: `glasses-sim --publish`).
///
/// Every keyframe is written with the parameter sets of its sample's configuration in front of it (in band), so a
/// stream whose parameter sets or picture size change stays decodable. MP4 and Matroska are written by libavformat
/// with the first configuration as the track's codec private data (hvcC) and timestamps in microseconds; the
/// container's declared size is the first configuration's. Annex B has no timestamps. Blocking file I/O: use it off
/// the cooperative pool. Call ``finish()`` to complete the file (MP4 is unreadable without it).
public final class HEVCFileWriter {
    /// The container written.
    public enum Container: String, Sendable, Hashable, CaseIterable {
        /// Raw Annex B byte stream (`.hevc`, `.h265`, `.265`).
        case annexB
        /// ISO base media / MP4 (`.mp4`, `.mov`).
        case mp4
        /// Matroska (`.mkv`).
        case matroska
        /// MPEG-TS (`.ts`, and what is published to an `srt://` or `udp://` URL).
        case mpegts

        /// The container a file name's extension implies (Annex B for unknown extensions); MPEG-TS for an `srt://`
        /// or `udp://` URL.
        public init(path: String) {
            let lower = path.lowercased()
            if lower.hasPrefix("srt://") || lower.hasPrefix("udp://") {
                self = .mpegts
                return
            }
            switch URL(fileURLWithPath: path).pathExtension.lowercased() {
            case "ts", "m2ts": self = .mpegts
            case "mp4", "mov", "m4v": self = .mp4
            case "mkv", "webm": self = .matroska
            default: self = .annexB
            }
        }
    }

    /// The container being written.
    public let container: Container
    /// Samples written so far.
    public private(set) var samplesWritten = 0

    private let path: String
    private var annexBHandle: FileHandle?
    private var output: FormatOutputHandle?
    private let packet: PacketHandle
    private var finished = false
    /// Whether the container's header is written: only then may its trailer be (libavformat writes through a
    /// null pointer when asked for the trailer of a header that failed, on a full disk for one).
    private var headerWritten = false
    private var lastTimeUs: Int64?
    /// The packet waiting for the next one's time, which gives its duration (so the file's duration includes the
    /// last frame).
    private var held: (bytes: Data, timeUs: Int64, isKeyframe: Bool)?
    private var lastDurationUs: Int64?
    /// The duration given to the last frame when the file holds only one (a 30 fps frame).
    static let defaultFrameDurationUs: Int64 = 33_333
    /// `hvc1` as a little-endian FourCC (`MKTAG('h','v','c','1')`).
    static let hvc1Tag: UInt32 = UInt32(UInt8(ascii: "h")) | UInt32(UInt8(ascii: "v")) << 8
        | UInt32(UInt8(ascii: "c")) << 16 | UInt32(UInt8(ascii: "1")) << 24

    /// Creates the file.
    /// - Parameters:
    ///   - path: the file to create (replaced if it exists).
    ///   - codecConfiguration: the parameter sets and size of the first samples.
    ///   - container: the container; by default from the file's extension.
    /// - Throws: `.invalidArgument` for a configuration without parameter sets, `.fileError`/`.setupFailed` from
    ///   libavformat.
    public init(path: String, codecConfiguration: HEVCCodecConfiguration, container: Container? = nil) throws(VideoCodecError) {
        guard !codecConfiguration.sequenceParameterSets.isEmpty, !codecConfiguration.pictureParameterSets.isEmpty else {
            throw VideoCodecError(code: .invalidArgument, message: "HEVC file writer needs a configuration with SPS and PPS")
        }
        self.path = path
        self.container = container ?? Container(path: path)
        packet = try PacketHandle()
        switch self.container {
        case .annexB:
            guard FileManager.default.createFile(atPath: path, contents: nil),
                  let handle = FileHandle(forWritingAtPath: path)
            else { throw VideoCodecError(code: .fileError, message: "cannot create \(path)") }
            annexBHandle = handle
        case .mp4, .matroska, .mpegts:
            let formatName = switch self.container {
            case .mp4: "mp4"
            case .mpegts: "mpegts"
            default: "matroska"
            }
            let muxer = try FormatOutputHandle(path: path, formatName: formatName)
            output = muxer
            guard let stream = avformat_new_stream(muxer.pointer, nil) else {
                throw VideoCodecError(code: .setupFailed, message: "cannot add a video stream to \(path)")
            }
            stream.pointee.time_base = AVRational(num: 1, den: 1_000_000)
            let parameters = stream.pointee.codecpar!
            parameters.pointee.codec_type = AVMEDIA_TYPE_VIDEO
            parameters.pointee.codec_id = AV_CODEC_ID_HEVC
            // MP4 tags the track `hvc1` (parameter sets in the sample entry), which Apple's players require; they
            // refuse libavformat's default `hev1`. Matroska has no such tag.
            parameters.pointee.codec_tag = self.container == .mp4 ? Self.hvc1Tag : 0
            parameters.pointee.width = Int32(codecConfiguration.width)
            parameters.pointee.height = Int32(codecConfiguration.height)
            let header = HEVCNALUnits.annexB(HEVCNALUnits.parameterSets(of: codecConfiguration))
            let padding = Int(AV_INPUT_BUFFER_PADDING_SIZE)
            guard let extradata = av_mallocz(header.count + padding) else {
                throw VideoCodecError(code: .setupFailed, message: "cannot allocate codec private data")
            }
            header.withUnsafeBytes { extradata.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
            parameters.pointee.extradata = extradata.assumingMemoryBound(to: UInt8.self)
            parameters.pointee.extradata_size = Int32(header.count)
            let written = avformat_write_header(muxer.pointer, nil)
            guard written >= 0 else {
                throw VideoCodecError.ffmpeg(.fileError, "cannot write the \(self.container) header of \(path)", written)
            }
            headerWritten = true
        }
    }

    deinit {
        if !finished { try? finish() }
    }

    /// Appends a sample (4-byte length-prefixed NAL units) with its presentation time.
    /// - Throws: `.invalidArgument` for a malformed sample or a time not after the previous one (MP4/Matroska),
    ///   `.fileError` when writing fails.
    public func write(_ sample: HEVCSample, presentationTimeUs: Int64) throws(VideoCodecError) {
        guard !finished else { throw VideoCodecError(code: .invalidArgument, message: "HEVC file writer already finished") }
        guard let units = HEVCNALUnits.splitLengthPrefixed(sample.data) else {
            throw VideoCodecError(code: .invalidArgument, message: "sample \(samplesWritten) has broken NAL lengths")
        }
        var stream: [Data] = []
        if sample.isKeyframe { stream = HEVCNALUnits.parameterSets(of: sample.codecConfiguration) }
        stream += units
        let bytes = HEVCNALUnits.annexB(stream)
        if let annexBHandle {
            do { try annexBHandle.write(contentsOf: bytes) } catch {
                throw VideoCodecError(code: .fileError, message: "cannot write \(path): \(error)")
            }
        } else if output != nil {
            if let lastTimeUs, presentationTimeUs <= lastTimeUs {
                throw VideoCodecError(code: .invalidArgument, message: "sample time \(presentationTimeUs) µs is not after \(lastTimeUs) µs")
            }
            if let held {
                let interval = presentationTimeUs - held.timeUs
                try writePacket(held, durationUs: interval)
                // The shortest interval is the frame interval (a longer one is a pause): the last frame's duration.
                lastDurationUs = min(lastDurationUs ?? interval, interval)
            }
            held = (bytes, presentationTimeUs, sample.isKeyframe)
        }
        lastTimeUs = presentationTimeUs
        samplesWritten += 1
    }

    /// Appends a sample from ``HEVCEncoder`` with the encoder's configuration.
    public func write(_ sample: EncodedHEVCSample, codecConfiguration: HEVCCodecConfiguration) throws(VideoCodecError) {
        try write(HEVCSample(data: sample.data, isKeyframe: sample.isKeyframe, codecConfiguration: codecConfiguration),
                  presentationTimeUs: sample.presentationTimeUs)
    }

    /// Writes one packet to the muxer with its duration (MP4 and Matroska only).
    private func writePacket(_ held: (bytes: Data, timeUs: Int64, isKeyframe: Bool), durationUs: Int64) throws(VideoCodecError) {
        guard let output else { return }
        let allocated = av_new_packet(packet.pointer, Int32(held.bytes.count))
        guard allocated >= 0 else { throw VideoCodecError.ffmpeg(.fileError, "cannot allocate a packet", allocated) }
        held.bytes.withUnsafeBytes {
            UnsafeMutableRawPointer(packet.pointer.pointee.data).copyMemory(from: $0.baseAddress!, byteCount: $0.count)
        }
        let stream = output.pointer.pointee.streams[0]!
        let microseconds = AVRational(num: 1, den: 1_000_000)
        let time = av_rescale_q(held.timeUs, microseconds, stream.pointee.time_base)
        packet.pointer.pointee.pts = time
        packet.pointer.pointee.dts = time
        packet.pointer.pointee.duration = av_rescale_q(max(1, durationUs), microseconds, stream.pointee.time_base)
        packet.pointer.pointee.stream_index = 0
        packet.pointer.pointee.flags = held.isKeyframe ? AV_PKT_FLAG_KEY : 0
        let written = av_write_frame(output.pointer, packet.pointer)
        av_packet_unref(packet.pointer)
        guard written >= 0 else { throw VideoCodecError.ffmpeg(.fileError, "cannot write a packet to \(path)", written) }
    }

    /// Completes and closes the file. Further writes fail.
    public func finish() throws(VideoCodecError) {
        guard !finished else { return }
        finished = true
        if let annexBHandle {
            do { try annexBHandle.close() } catch {
                throw VideoCodecError(code: .fileError, message: "cannot close \(path): \(error)")
            }
        }
        if let output {
            guard headerWritten else {
                // Nothing was muxed: close the file and leave it as it is.
                avio_closep(&output.pointer.pointee.pb)
                return
            }
            if let held {
                self.held = nil
                try writePacket(held, durationUs: lastDurationUs ?? Self.defaultFrameDurationUs)
            }
            let trailer = av_write_trailer(output.pointer)
            avio_closep(&output.pointer.pointee.pb)
            guard trailer >= 0 else { throw VideoCodecError.ffmpeg(.fileError, "cannot finish \(path)", trailer) }
        }
    }
}
