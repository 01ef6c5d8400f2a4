internal import CFFmpeg
import Foundation
import GlassesMedia
import Synchronization

/// What to open: a network stream URL as libavformat takes it, and how to speak of it.
public struct NetworkStreamRequest: Sendable, Hashable {
    /// The URL libavformat opens (it may hold a secret: never printed).
    public var url: String
    /// The stream as messages name it, secrets left out.
    public var label: String
    /// The demuxer to use (`mpegts`), or nil to let the protocol choose (RTMP: FLV).
    public var format: String?
    /// libavformat options (protocol and demuxer), e.g. `listen`, `passphrase`, `localaddr`.
    public var options: [String: String]
    /// For an RTMP listener: the stream key a publisher must publish to (the last part of the URL's path).
    public var rtmpStreamKey: String?

    /// Creates a request.
    public init(url: String, label: String, format: String?, options: [String: String], rtmpStreamKey: String? = nil) {
        self.url = url
        self.label = label
        self.format = format
        self.options = options
        self.rtmpStreamKey = rtmpStreamKey
    }
}

/// Cancels a ``NetworkStreamReader``'s blocking calls from any thread: its open (listening for a publisher) and
/// its reads. Once stopped it stays stopped; a reader opened with it fails at once with `.streamCancelled`.
public final class NetworkStreamInterrupt: Sendable {
    let handle = InterruptHandle()

    /// Creates an interrupt that has not fired.
    public init() {}

    /// Ends the blocking call under way, and every later one.
    public func stop() { handle.stop() }

    /// Whether ``stop()`` was called.
    public var isStopped: Bool { handle.isStopped }
}

/// Reads a live network stream (RTMP, SRT, RTSP, UDP MPEG-TS through libavformat) as a pair of glasses would send it: a
/// sequence of ``WearablesKit/VideoFrame``s stamped with the stream's presentation times in microseconds.
///
/// - HEVC: each packet becomes an `.hevc` sample of 4-byte length-prefixed NAL units; in-band parameter sets
///   (MPEG-TS repeats them at each keyframe) go into the sample's configuration, which follows a change of picture
///   size. The pipeline's decoder starts again at the keyframe that brings new parameter sets.
/// - H.264 (what RTMP/FLV carries in FFmpeg 5.1): decoded here into `.raw` NV12 images, in presentation order,
///   as ``VideoFileReader`` does for H.264 files; libswscale's context follows each picture's size.
/// - Other tracks (audio) are read past and ignored.
///
/// Every number from the stream is checked before it is used: picture sizes against ``VideoFileLimits`` (an HEVC
/// parameter set or H.264 picture beyond them ends the stream with `.fileLimitExceeded`, before anything is
/// allocated for it; libavcodec's `max_pixels` refuses larger H.264 pictures first), packet sizes against
/// ``maximumPacketBytes`` (a larger packet is skipped), timestamps without overflow (a time that does not fit, or
/// a jump of more than ``maximumJumpUs`` forward or 2 s back, is reported through ``lastFrameStartsNewTimeline``,
/// so that the pipeline's timestamp mapper starts a new timeline instead of waiting for or dropping the frames).
///
/// Reading blocks on the network: use it off the cooperative pool, on one thread at a time. Every blocking call
/// can be cancelled through its ``NetworkStreamInterrupt`` and ends at its deadline.
public final class NetworkStreamReader {
    /// The largest packet read; a larger one is skipped (a 720×1280 HEVC keyframe at 2 Mbit/s is about 100 kB).
    public static let maximumPacketBytes = 8 << 20
    /// How far a frame's time may jump forward before the stream counts as restarted: 10 s.
    public static let maximumJumpUs: Int64 = 10_000_000
    /// How far back a frame's time may go before the stream counts as restarted (beyond B-frame reordering): 2 s.
    public static let maximumBackUs: Int64 = 2_000_000
    /// The longest the stream's analysis after a publisher arrived may take.
    public static let probeTimeout: Duration = .seconds(10)

    /// The video codec as libavcodec names it: `hevc` or `h264`.
    public let codec: String
    /// The demuxer's name (`flv`, `mpegts`).
    public let container: String
    /// The picture size the stream declared first.
    public let width: Int
    /// The picture height the stream declared first.
    public let height: Int
    /// Whether the stream also carries audio (read past, ignored).
    public let hasAudio: Bool
    /// Whether the frame ``nextFrame(readTimeout:)`` returned last starts a new timeline: its time jumped (the
    /// publisher restarted, or its timestamps are broken).
    public private(set) var lastFrameStartsNewTimeline = false
    /// The picture size of the frame ``nextFrame(readTimeout:)`` returned last (for HEVC, what its parameter sets
    /// declare).
    public private(set) var pictureSize: (width: Int, height: Int) = (0, 0)
    /// The capture time the publisher stamped into the frame ``nextFrame(readTimeout:)`` returned last
    /// (``CaptureTimeSEI``), in microseconds on the publisher's wall clock; nil when it stamped none.
    public private(set) var lastFrameCaptureWallUs: Int64?
    /// Packets skipped because they were larger than ``maximumPacketBytes``.
    public private(set) var oversizedPackets = 0

    private let request: NetworkStreamRequest
    // Declared before `input` so that it is released after it: the context's callback points into it.
    private let interrupt: NetworkStreamInterrupt
    private let input: FormatInputHandle
    private let packet: PacketHandle
    private let h264: H264FileDecoder?
    private var pendingImages: [H264FileDecoder.Picture] = []
    private let streamIndex: Int32
    private let timeBase: AVRational
    private var lengthSize = 4
    private var configuration: HEVCCodecConfiguration
    private var frameIndex = 0
    private var lastTimeUs: Int64?
    private var frameDurationUs: Int64 = 33_333
    private var endOfInput = false

    /// Opens the stream: listens for a publisher (RTMP, SRT listener), dials one (SRT caller) or binds the port
    /// (UDP) and waits for data, then reads enough to know the video track.
    /// - Parameter openTimeout: how long to wait for a publisher (or for data); nil waits until stopped.
    /// - Throws: `.streamTimedOut` when no publisher came in time, `.streamCancelled` when stopped, `.streamRefused`
    ///   for an RTMP publish to another stream key, `.unsupportedFile` for a stream with no HEVC or H.264 video,
    ///   `.fileLimitExceeded` for a picture size out of range, `.fileError` for other failures (in FFmpeg's words).
    public init(request: NetworkStreamRequest, interrupt: NetworkStreamInterrupt, openTimeout: Duration?) throws(VideoCodecError) {
        self.request = request
        self.interrupt = interrupt
        let label = request.label
        let context: [String: String] = ["path": label]
        interrupt.handle.setDeadline(after: openTimeout)
        let watch = request.rtmpStreamKey.map { RTMPStreamKeyWatch.register(key: $0) }
        defer { if let watch { RTMPStreamKeyWatch.unregister(watch) } }
        let opened: FormatInputHandle
        do {
            opened = try FormatInputHandle(url: request.url, format: request.format, options: request.options, interrupt: interrupt.handle)
        } catch {
            throw Self.blockingError(error, interrupt: interrupt, label: label, waiting: "no publisher came")
        }
        // The MPEG-TS demuxer opens "successfully" when its reads were interrupted (it keeps what it found, nothing):
        // the deadline or a stop that ended the wait is told here, before the analysis gets a deadline of its own.
        if interrupt.isStopped || interrupt.handle.timedOut {
            throw Self.blockingError(VideoCodecError(code: .fileError, message: "cannot open the stream"), interrupt: interrupt,
                                     label: label, waiting: "no publisher came")
        }
        if let watch, RTMPStreamKeyWatch.mismatches(watch) > 0 {
            // libavformat's RTMP listener only logs a publish to another key, and would go on serving it.
            throw VideoCodecError(code: .streamRefused,
                                  message: "refused a publisher on \(label): it published to a stream key other than the configured one",
                                  context: context)
        }
        input = opened
        packet = try PacketHandle()
        let format = opened.pointer
        interrupt.handle.setDeadline(after: Self.probeTimeout)
        let probed = avformat_find_stream_info(format, nil)
        guard probed >= 0 else {
            throw Self.blockingError(.ffmpeg(.unsupportedFile, "cannot read the stream of \(label)", probed, context: context),
                                     interrupt: interrupt, label: label, waiting: "the publisher sent too little to read")
        }
        container = format.pointee.iformat.map { String(cString: $0.pointee.name) } ?? "unknown"
        var audio = false
        for index in 0 ..< Int(format.pointee.nb_streams) {
            if let stream = format.pointee.streams[index], stream.pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_AUDIO { audio = true }
        }
        hasAudio = audio
        let best = av_find_best_stream(format, AVMEDIA_TYPE_VIDEO, -1, -1, nil, 0)
        guard best >= 0, let stream = format.pointee.streams[Int(best)] else {
            throw VideoCodecError(code: .unsupportedFile, message: "\(label) carries no video", context: context)
        }
        let codecID = stream.pointee.codecpar.pointee.codec_id
        guard codecID == AV_CODEC_ID_HEVC || codecID == AV_CODEC_ID_H264 else {
            let name = avcodec_get_name(codecID).map { String(cString: $0) } ?? "an unknown codec"
            throw VideoCodecError(code: .unsupportedFile,
                                  message: "\(label) carries \(name) video; this takes H.264 or HEVC (set the app's codec to H.264 or H.265)",
                                  context: context)
        }
        streamIndex = best
        timeBase = stream.pointee.time_base
        guard timeBase.num > 0, timeBase.den > 0 else {
            throw VideoCodecError(code: .brokenTimestamps, message: "\(label): its video track has no usable timescale", context: context)
        }
        let parameters = stream.pointee.codecpar.pointee
        width = Int(parameters.width)
        height = Int(parameters.height)
        try VideoFileLimits.checkSize(width: width, height: height, path: label, what: "its video track")
        let average = stream.pointee.avg_frame_rate
        if average.num > 0, average.den > 0,
           Int64(average.num) >= Int64(VideoFileLimits.minimumFrameRate) * Int64(average.den),
           Int64(average.num) <= Int64(VideoFileLimits.maximumFrameRate) * Int64(average.den) {
            frameDurationUs = Int64(average.den) * 1_000_000 / Int64(average.num)
        }
        if codecID == AV_CODEC_ID_H264 {
            codec = "h264"
            h264 = try H264FileDecoder(parameters: stream.pointee.codecpar, timeBase: timeBase, path: label)
            configuration = HEVCCodecConfiguration(videoParameterSets: [], sequenceParameterSets: [],
                                                   pictureParameterSets: [], width: width, height: height)
            return
        }
        codec = "hevc"
        h264 = nil
        var units: [Data] = []
        lengthSize = 0
        if let extradata = parameters.extradata, parameters.extradata_size > 0,
           Int(parameters.extradata_size) <= Self.maximumPacketBytes {
            let record = Data(bytes: extradata, count: Int(parameters.extradata_size))
            if let hvcc = HEVCParameterSets.parseHVCC(record) {
                lengthSize = hvcc.lengthSize
                units = hvcc.units
            } else {
                units = HEVCNALUnits.splitAnnexB(record)
            }
        }
        configuration = HEVCNALUnits.configuration(parameterSets: units, width: width, height: height)
        try updateSize()
    }

    /// A failed blocking call in the user's terms: cancelled, timed out (`waiting` says what did not happen), or
    /// FFmpeg's reason.
    private static func blockingError(
        _ error: VideoCodecError, interrupt: NetworkStreamInterrupt, label: String, waiting: String
    ) -> VideoCodecError {
        let context = ["path": label]
        if interrupt.isStopped {
            return VideoCodecError(code: .streamCancelled, message: "stopped while waiting on \(label)", context: context)
        }
        if interrupt.handle.timedOut || error.ffmpegCode == cffmpeg_averror(ETIMEDOUT) {
            return VideoCodecError(code: .streamTimedOut, message: "\(waiting) on \(label) in time", context: context)
        }
        if let code = error.ffmpegCode, [EADDRINUSE, EADDRNOTAVAIL, EACCES].map(cffmpeg_averror).contains(code) {
            return VideoCodecError(code: .streamCannotListen,
                                   message: "cannot listen on \(label): \(FFmpegResult.text(code).prefix(1).lowercased() + FFmpegResult.text(code).dropFirst())",
                                   ffmpegCode: code, ffmpegMessage: error.ffmpegMessage, context: context)
        }
        let reason = error.ffmpegMessage.map { ": \($0.prefix(1).lowercased() + $0.dropFirst())" } ?? ""
        return VideoCodecError(code: error.code == .fileError ? .fileError : error.code, message: "\(error.message) \(label)\(reason)"
                                   .replacingOccurrences(of: "cannot open the stream \(label)", with: "cannot open \(label)"),
                               ffmpegCode: error.ffmpegCode, ffmpegMessage: error.ffmpegMessage, context: context)
    }

    /// The next video frame, or nil when the publisher ended the stream.
    /// - Parameter readTimeout: how long a read may wait for data before the stream counts as silent.
    /// - Throws: `.streamTimedOut` when nothing arrived for `readTimeout`, `.streamCancelled` when stopped,
    ///   `.fileLimitExceeded` for a picture size out of range, `.fileError` for a broken connection.
    public func nextFrame(readTimeout: Duration) throws(VideoCodecError) -> VideoFrame? {
        lastFrameStartsNewTimeline = false
        lastFrameCaptureWallUs = nil
        let label = request.label
        while true {
            if !pendingImages.isEmpty {
                let next = pendingImages.removeFirst()
                let image = next.image
                let time = stamp(pts: next.pts, dts: FFmpegResult.noTimestamp)
                frameIndex += 1
                pictureSize = (image.width, image.height)
                lastFrameCaptureWallUs = next.captureWallUs
                return VideoFrame(presentationTimeUs: time, content: .raw(image))
            }
            if endOfInput { return nil }
            av_packet_unref(packet.pointer)
            interrupt.handle.setDeadline(after: readTimeout)
            let read = av_read_frame(input.pointer, packet.pointer)
            if read < 0 {
                if interrupt.isStopped {
                    throw VideoCodecError(code: .streamCancelled, message: "stopped reading \(label)", context: ["path": label])
                }
                if interrupt.handle.timedOut || read == cffmpeg_averror(ETIMEDOUT) {
                    throw VideoCodecError(code: .streamTimedOut,
                                          message: "nothing arrived from \(label) for \(Self.seconds(readTimeout))",
                                          context: ["path": label])
                }
                endOfInput = true
                if let h264 { pendingImages += try h264.decode(nil, frameIndex: frameIndex) }
                if read == FFmpegResult.endOfFile { continue }
                if !pendingImages.isEmpty { continue }
                throw VideoCodecError.ffmpeg(.fileError, "the connection from \(label) ended", read, context: ["path": label])
            }
            guard packet.pointer.pointee.stream_index == streamIndex else { continue }  // audio: ignored
            let size = Int(packet.pointer.pointee.size)
            guard size > 0 else { continue }
            guard size <= Self.maximumPacketBytes else {
                oversizedPackets += 1
                continue
            }
            if let h264 {
                pendingImages += try h264.decode(packet.pointer, frameIndex: frameIndex)
                continue
            }
            let bytes = Data(bytes: packet.pointer.pointee.data, count: size)
            let isFlaggedKey = packet.pointer.pointee.flags & AV_PKT_FLAG_KEY != 0
            let pts = packet.pointer.pointee.pts, dts = packet.pointer.pointee.dts
            av_packet_unref(packet.pointer)
            let units: [Data]
            if lengthSize == 0 {
                units = HEVCNALUnits.splitAnnexB(bytes)
            } else {
                guard let split = HEVCNALUnits.splitLengthPrefixed(bytes, lengthSize: lengthSize) else { continue }
                units = split
            }
            let parameterSets = units.filter { HEVCNALUnits.isParameterSet(type: HEVCNALUnits.type(of: $0) ?? 0) }
            if !parameterSets.isEmpty {
                let updated = HEVCNALUnits.configuration(parameterSets: parameterSets, width: configuration.width, height: configuration.height)
                if updated != configuration {
                    configuration = updated
                    try updateSize()
                }
            }
            let rest = units.filter { !HEVCNALUnits.isParameterSet(type: HEVCNALUnits.type(of: $0) ?? 0) }
            guard !rest.isEmpty else { continue }
            lastFrameCaptureWallUs = rest.lazy.compactMap { CaptureTimeSEI.captureWallUs(inNALUnit: $0, codec: .hevc) }.first
            let time = stamp(pts: pts, dts: dts)
            let isKeyframe = isFlaggedKey
                || rest.contains { HEVCNALUnits.isRandomAccessPoint(type: HEVCNALUnits.type(of: $0) ?? 0) }
            frameIndex += 1
            pictureSize = (configuration.width, configuration.height)
            let sample = HEVCSample(data: HEVCNALUnits.lengthPrefixed(rest), isKeyframe: isKeyframe,
                                    codecConfiguration: configuration)
            return VideoFrame(presentationTimeUs: time, content: .hevc(sample))
        }
    }

    /// Checks the picture size new HEVC parameter sets declare, before anything is decoded at that size.
    private func updateSize() throws(VideoCodecError) {
        if let sps = configuration.sequenceParameterSets.first, let size = HEVCParameterSets.pictureSize(sequenceParameterSet: sps) {
            try VideoFileLimits.checkSize(width: size.width, height: size.height, path: request.label, what: "its HEVC parameter set")
            configuration.width = size.width
            configuration.height = size.height
        }
    }

    /// A frame's time in microseconds: its PTS (else DTS, else the last time plus a frame), computed without
    /// overflow. A time that cannot be computed, or that jumps, continues from the last one and marks the frame as
    /// the start of a new timeline.
    private func stamp(pts: Int64, dts: Int64) -> Int64 {
        let raw = pts != FFmpegResult.noTimestamp ? pts : dts
        let next = (lastTimeUs ?? -frameDurationUs).addingReportingOverflow(frameDurationUs)
        var time = next.overflow ? 0 : next.partialValue
        if raw != FFmpegResult.noTimestamp,
           let scaled = VideoFileReader.rescale(raw, from: timeBase, to: AVRational(num: 1, den: 1_000_000)),
           abs(scaled) <= VideoFileLimits.maximumTimestampUs {
            time = scaled
            if let lastTimeUs {
                let step = time - lastTimeUs  // both within ±maximumTimestampUs: no overflow
                if step > Self.maximumJumpUs || step < -Self.maximumBackUs { lastFrameStartsNewTimeline = true }
            }
        }
        if lastFrameStartsNewTimeline || time > (lastTimeUs ?? Int64.min) { lastTimeUs = time }
        return time
    }

    private static func seconds(_ duration: Duration) -> String {
        let value = duration.inSeconds
        return value.rounded() == value ? "\(Int(value)) s" : String(format: "%.1f s", value)
    }
}

/// The RTMP listeners waiting for a publisher, by the stream key each expects, and how many publishes to another
/// key libavformat reported for each (through the log hook in the C shim: its listener only logs them).
enum RTMPStreamKeyWatch {
    private struct Entry {
        let key: String
        var mismatches: Int
    }

    private static let entries = Mutex<(next: UInt64, byID: [UInt64: Entry])>((0, [:]))
    private static let hookInstalled = Mutex(false)

    /// Starts watching for publishes that miss `key`.
    static func register(key: String) -> UInt64 {
        let install = hookInstalled.withLock { installed in
            defer { installed = true }
            return !installed
        }
        if install {
            FFmpegLogging.configureOnce()
            cffmpeg_set_rtmp_mismatch_hook { expected in
                guard let expected else { return }
                RTMPStreamKeyWatch.mismatch(expected: String(cString: expected))
            }
        }
        return entries.withLock { state in
            state.next += 1
            state.byID[state.next] = Entry(key: key, mismatches: 0)
            return state.next
        }
    }

    /// Publishes to another key seen by the listener registered as `id`.
    static func mismatches(_ id: UInt64) -> Int {
        entries.withLock { $0.byID[id]?.mismatches ?? 0 }
    }

    /// Stops watching.
    static func unregister(_ id: UInt64) {
        _ = entries.withLock { $0.byID.removeValue(forKey: id) }
    }

    private static func mismatch(expected: String) {
        entries.withLock { state in
            for (id, entry) in state.byID where entry.key == expected { state.byID[id]?.mismatches += 1 }
        }
    }
}
