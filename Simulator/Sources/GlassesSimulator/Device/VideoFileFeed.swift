import Foundation
import GlassesVideo
#if canImport(Glibc)
import Glibc
#endif
import GlassesMedia
import Synchronization
import WearablesKit

/// A video file played as the glasses' camera, one file frame per streamed frame, looping at the end.
///
/// - Y4M (8-bit 4:2:0, video range) frames are used as they are; HEVC (Annex B, MP4, Matroska) is decoded through
///   ``GlassesVideo/VideoFrameDecoder`` to NV12 video range. Every frame is a tightly packed NV12 image of the file's
///   size.
/// - The file's own timing is ignored: the glasses keep their frame rate and clock, and take the next file frame on
///   each tick (a 30 fps file streamed at 15 fps plays at double speed).
/// - At the end of the file, playback starts again from the first frame.
/// - The file's size must be the stream's configured resolution; the glasses refuse a mismatch rather than scale.
/// - The pixels come from the file, so there is no ground truth: ``SimulatedGlasses/hasGroundTruth`` is false
///   while this feed is in use.
///
/// - With `passthrough` (HEVC files only), an hvc1 stream sends the file's own samples as they are, with their
///   parameter sets, instead of decoding and encoding them again: glasses with a hardware encoder, whose host sees
///   real HEVC while the simulator spends almost nothing per frame (the streams benchmark runs many such glasses in
///   one process). The samples keep the glasses' frame clock and timestamps. A stream start, and credit drops on the
///   link (the host lost a reference), resume at the file's next keyframe, since a file cannot be told to make one;
///   the samples passed over meanwhile count in ``samplesSkippedToKeyframe``. A raw stream, and photos, still get
///   decoded frames (from the decoding position, which passthrough does not move).
///
/// One playback position is shared by everyone holding the feed: give each pair of glasses its own instance.
public final class VideoFileFeed: Sendable {
    /// The file played.
    public let path: String
    /// The file's picture width.
    public let width: Int
    /// The file's picture height.
    public let height: Int
    /// Whether the file is Y4M (raw) or HEVC (decoded).
    public let isHEVC: Bool

    private struct Player {
        var reader: VideoFileReader
        var decoder: VideoFrameDecoder?
        var pending: [RawVideoImage] = []
        var last: RawVideoImage?
        var framesDelivered = 0
        var loops = 0
    }

    private let player: Mutex<Player>

    /// Whether an hvc1 stream sends the file's samples as they are (see the type's notes).
    public let passthrough: Bool

    private struct Passthrough {
        var reader: VideoFileReader
        var awaitingKeyframe = true
        var sentConfiguration: HEVCCodecConfiguration?
        var samplesDelivered = 0
        var skippedToKeyframe = 0
        var loops = 0
    }

    private let passthroughPlayer: Mutex<Passthrough?>

    /// Opens a video file and checks that it yields a frame.
    /// - Throws: ``SimulatorError`` `invalidFeed` when the file cannot be read, is not HEVC, H.264 or 8-bit 4:2:0
    ///   video-range Y4M, has an odd size, or holds no decodable frame. The message names the file once, and says
    ///   which formats play only when the file's format is the problem.
    ///
    /// - Parameter passthrough: send an HEVC file's samples as they are on an hvc1 stream (refused for Y4M and
    ///   H.264, whose samples are not HEVC).
    public init(path: String, passthrough: Bool = false) throws(SimulatorError) {
        try Self.checkReadable(path)
        let reader: VideoFileReader
        do { reader = try VideoFileReader(path: path) } catch {
            throw Self.error(error, path)
        }
        let hevc: Bool
        switch reader.kind {
        case .y4m:
            hevc = false
            let fullRange: Bool
            do { fullRange = try Y4MReader(path: path).header.fullRange } catch {
                throw Self.error(error, path)
            }
            if fullRange {
                throw Self.error("the Y4M feed \(path) is full range; the glasses send video range (convert it first)", path)
            }
        case .hevc:
            hevc = true
        }
        guard reader.width > 0, reader.height > 0, reader.width % 2 == 0, reader.height % 2 == 0 else {
            throw Self.error("the video feed \(path) is \(reader.width)x\(reader.height); NV12 needs an even, non-zero size", path)
        }
        var decoder: VideoFrameDecoder?
        if hevc {
            do { decoder = try VideoFrameDecoder(outputFormat: .nv12VideoRange) } catch {
                throw Self.error("cannot open an HEVC decoder for \(path): \(error.message)", path)
            }
        }
        self.path = path
        self.width = reader.width
        self.height = reader.height
        self.isHEVC = hevc
        if passthrough {
            guard hevc else {
                throw Self.error("the video feed \(path) is Y4M: only an HEVC file's samples can be passed through", path)
            }
            // An H.264 file is read as decoded pictures (VideoFileReader decodes it): it has no samples to pass.
            guard reader.codec == "hevc" else {
                let codec = reader.codec == "h264" ? "H.264" : reader.codec
                throw Self.error("the video feed \(path) is \(codec) video: only an HEVC file's samples can be passed through", path)
            }
            do { passthroughPlayer = Mutex(Passthrough(reader: try VideoFileReader(path: path))) } catch {
                throw Self.error(error, path)
            }
        } else {
            passthroughPlayer = Mutex(nil)
        }
        self.passthrough = passthrough
        var first = Player(reader: reader, decoder: decoder)
        // Decode the first frame now, so that a file that cannot play fails here and not mid-stream.
        let image = try Self.nextImage(&first, path: path, width: reader.width, height: reader.height)
        first.pending.insert(image, at: 0)
        player = Mutex(first)
    }

    /// Frames handed out so far.
    public var framesDelivered: Int { player.withLock { $0.framesDelivered } }
    /// How many times playback has wrapped to the start of the file.
    public var loopCount: Int { player.withLock { $0.loops } }

    /// Samples sent as they are so far (passthrough only).
    public var samplesDelivered: Int { passthroughPlayer.withLock { $0?.samplesDelivered ?? 0 } }
    /// Samples passed over to resume at a keyframe after a stream start or credit drops (passthrough only).
    public var samplesSkippedToKeyframe: Int { passthroughPlayer.withLock { $0?.skippedToKeyframe ?? 0 } }
    /// How many times passthrough has wrapped to the start of the file.
    public var passthroughLoopCount: Int { passthroughPlayer.withLock { $0?.loops ?? 0 } }

    /// The file's next sample as it is, for an hvc1 stream (passthrough only), wrapping to the start at the end.
    ///
    /// - Parameter resync: the host needs a keyframe (a stream start, or credit drops since the last sample): the
    ///   samples before the file's next keyframe are passed over.
    /// - Returns: the sample, and whether its codec configuration must be sent before it (a keyframe after a resync,
    ///   or parameter sets that changed).
    /// - Throws: ``SimulatorError`` `invalidFeed` when the feed is not a passthrough feed, or the file cannot be read
    ///   any more or holds no keyframe.
    public func nextSample(resync: Bool) throws(SimulatorError) -> (sample: HEVCSample, sendConfiguration: Bool) {
        let path = path
        return try passthroughPlayer.withLock { player throws(SimulatorError) -> (sample: HEVCSample, sendConfiguration: Bool) in
            guard var p = player else {
                throw Self.error("the video feed \(path) was not opened to pass its samples through", path)
            }
            defer { player = p }
            if resync { p.awaitingKeyframe = true }
            var reopened = false
            while true {
                let frame: VideoFrame?
                do throws(VideoCodecError) { frame = try p.reader.nextFrame() } catch {
                    throw Self.error(error, path)
                }
                guard let frame else {
                    // End of file: start again (at most once per call, so a file without a keyframe cannot spin).
                    guard !reopened else { throw Self.error("the video feed \(path) holds no keyframe to start from", path) }
                    reopened = true
                    do throws(VideoCodecError) { p.reader = try VideoFileReader(path: path) } catch {
                        throw Self.error(error, path)
                    }
                    p.loops += 1
                    continue
                }
                guard case .hevc(let sample) = frame.content else {
                    throw Self.error("the video feed \(path) yielded a raw frame from an HEVC file", path)
                }
                if p.awaitingKeyframe && !sample.isKeyframe {
                    p.skippedToKeyframe += 1
                    continue
                }
                let sendConfiguration = sample.isKeyframe
                    && (p.awaitingKeyframe || sample.codecConfiguration != p.sentConfiguration)
                if sendConfiguration { p.sentConfiguration = sample.codecConfiguration }
                p.awaitingKeyframe = false
                p.samplesDelivered += 1
                return (sample, sendConfiguration)
            }
        }
    }

    /// Throws unless the file's size is `width`×`height` (the stream's configured resolution).
    /// - Throws: ``SimulatorError`` `invalidFeed` naming both sizes.
    public func checkSize(width: Int, height: Int) throws(SimulatorError) {
        guard width == self.width, height == self.height else {
            throw SimulatorError(.invalidFeed,
                                 "the video feed \(path) is \(self.width)x\(self.height) but the stream is \(width)x\(height); "
                                     + "the glasses do not scale a file feed (use a file of the stream's resolution)",
                                 context: ["file": path, "feedSize": "\(self.width)x\(self.height)",
                                           "streamSize": "\(width)x\(height)"])
        }
    }

    /// The next frame (NV12 video range, the file's size), wrapping to the start at the end of the file.
    /// - Throws: ``SimulatorError`` `invalidFeed` when the file cannot be read or decoded any more.
    public func nextImage() throws(SimulatorError) -> RawVideoImage {
        let path = path, width = width, height = height
        return try player.withLock { p throws(SimulatorError) -> RawVideoImage in
            let image = try Self.nextImage(&p, path: path, width: width, height: height)
            p.last = image
            p.framesDelivered += 1
            return image
        }
    }

    /// The frame most recently handed out (for photos), or the next one when none was yet.
    /// - Throws: ``SimulatorError`` `invalidFeed` when the file cannot be read or decoded any more.
    public func currentImage() throws(SimulatorError) -> RawVideoImage {
        if let last = player.withLock({ $0.last }) { return last }
        return try nextImage()
    }

    // Reads until one picture is ready; at the end of the file drains the decoder and reopens the file once.
    private static func nextImage(_ p: inout Player, path: String, width: Int, height: Int) throws(SimulatorError) -> RawVideoImage {
        var reopened = false
        while p.pending.isEmpty {
            let frame: VideoFrame?
            do { frame = try p.reader.nextFrame() } catch {
                throw Self.error(error, path)
            }
            if let frame {
                if let decoder = p.decoder {
                    let decoded: [DecodedVideoFrame]
                    do { decoded = try decoder.decode(frame) } catch {
                        throw Self.error(error, path, lead: "cannot decode the video feed")
                    }
                    for picture in decoded { p.pending.append(try image(from: picture.pixelBuffer, path: path)) }
                } else if case .raw(let raw) = frame.content {
                    p.pending.append(raw)
                } else {
                    throw Self.error("the video feed \(path) yielded an HEVC sample from a raw file", path)
                }
                continue
            }
            // End of file: drain, then start again (at most once per call, so an empty file cannot spin).
            if let decoder = p.decoder {
                let drained = (try? decoder.flush()) ?? []
                for decoded in drained { p.pending.append(try image(from: decoded.pixelBuffer, path: path)) }
                if !p.pending.isEmpty { break }
            }
            guard !reopened else {
                throw Self.error("the video feed \(path) holds no playable frame", path)
            }
            reopened = true
            do { p.reader = try VideoFileReader(path: path) } catch {
                throw Self.error(error, path)
            }
            p.loops += 1
        }
        let image = p.pending.removeFirst()
        guard image.width == width, image.height == height else {
            throw Self.error("the video feed \(path) changes size mid-file (\(width)x\(height) to \(image.width)x\(image.height))", path)
        }
        return image
    }

    private static func image(from buffer: PixelBuffer, path: String) throws(SimulatorError) -> RawVideoImage {
        guard buffer.format == .nv12VideoRange, let i420 = ChromaRepacking.i420Data(from: buffer),
              let image = ChromaRepacking.rawImage(fromI420: i420, width: buffer.width, height: buffer.height)
        else {
            throw Self.error("the decoder returned a \(buffer.format) \(buffer.width)x\(buffer.height) picture for \(path), not NV12 video range", path)
        }
        return image
    }

    private static func error(_ message: String, _ path: String) -> SimulatorError {
        SimulatorError(.invalidFeed, message, context: ["file": path])
    }

    /// The formats a feed plays, added to a refusal only when the file's kind is the problem.
    public static let formatHint = "(use HEVC in Annex B, MP4 or Matroska, H.264, or 4:2:0 Y4M)"

    /// A reader's or decoder's error as the feed's: the file named once, and the formats that play only when the
    /// file is of a kind this does not read (not for a size, rate, truncation or timestamp problem, nor when the
    /// message already says what plays: the `ffmpeg` command that converts it, or "4:2:0" for a Y4M file).
    private static func error(_ error: VideoCodecError, _ path: String, lead: String = "the video feed") -> SimulatorError {
        var message = naming(path, error.message, lead: lead)
        if error.code == .unsupportedFile && !error.message.contains("ffmpeg -i") && !error.message.contains("4:2:0") {
            message += " \(formatHint)"
        }
        var context = error.context
        context["file"] = path
        return SimulatorError(.invalidFeed, message, context: context)
    }

    /// `message` (a reader's, which mostly names the file already: "x.y4m is truncated: …", "x.y4m: the Y4M frame
    /// rate …") led by `lead`, with the file named once: "the video feed x.y4m is truncated: …".
    static func naming(_ path: String, _ message: String, lead: String) -> String {
        if message.hasPrefix(path + ": ") { return "\(lead) \(path): \(message.dropFirst(path.count + 2))" }
        if message.hasPrefix(path + " ") { return "\(lead) \(message)" }
        if message.contains(path) { return message }
        return "\(lead) \(path): \(message)"
    }

    /// Throws unless `path` is a regular file this process may read, saying what it is instead.
    private static func checkReadable(_ path: String) throws(SimulatorError) {
        var status = stat()
        guard stat(path, &status) == 0 else {
            throw error("cannot read the video feed \(path): \(String(cString: strerror(errno)).lowercased())", path)
        }
        switch status.st_mode & S_IFMT {
        case S_IFREG: break
        case S_IFDIR: throw error("the video feed \(path) is a folder, not a video file", path)
        default: throw error("the video feed \(path) is not a regular file (a pipe or a device): play a recording from a file", path)
        }
        guard access(path, R_OK) == 0 else {
            throw error("cannot read the video feed \(path): \(String(cString: strerror(errno)).lowercased())", path)
        }
    }
}
