internal import CFFmpeg
import Foundation
import GlassesMedia

/// Decodes an H.264 track of a file (phones record H.264) with libavcodec's `h264` decoder into raw NV12
/// video-range images, the form a device's `.raw` frames take, so that H.264 files play through the same path as
/// Y4M: ``VideoFrameDecoder`` then wraps or converts them like any raw frame. Pictures come out in presentation
/// order with their timestamps in the stream's time base. Each picture's size is checked against
/// ``VideoFileLimits`` before it is converted.
final class H264FileDecoder {
    /// A decoded picture.
    struct Picture {
        /// Its presentation time in the stream's time base (`AV_NOPTS_VALUE` when it has none).
        var pts: Int64
        var image: RawVideoImage
        /// The capture time a publisher stamped into it (``CaptureTimeSEI``), in µs on its wall clock.
        var captureWallUs: Int64?
    }

    private let context: CodecContextHandle
    private let frame: FrameHandle
    private let converter: FrameConverter
    private let path: String

    /// Opens the decoder for a stream.
    /// - Throws: `.codecUnavailable` when this FFmpeg has no H.264 decoder, `.setupFailed` when it cannot open.
    init(parameters: UnsafePointer<AVCodecParameters>, timeBase: AVRational, path: String) throws(VideoCodecError) {
        guard let codec = avcodec_find_decoder(AV_CODEC_ID_H264) else {
            throw VideoCodecError(
                code: .codecUnavailable,
                message: "\(path) is H.264 and this FFmpeg build has no H.264 decoder; convert it to HEVC: "
                    + "ffmpeg -i \(path) -c:v libx265 -pix_fmt yuv420p out.mp4",
                context: ["path": path]
            )
        }
        self.path = path
        context = try CodecContextHandle(codec: codec)
        frame = try FrameHandle()
        converter = FrameConverter(pool: PixelBufferPool(maximumIdleBuffers: 2), rowAlignment: 1)
        let copied = avcodec_parameters_to_context(context.pointer, parameters)
        guard copied >= 0 else {
            throw VideoCodecError.ffmpeg(.setupFailed, "cannot set up the H.264 decoder for \(path)", copied,
                                         context: ["path": path])
        }
        context.pointer.pointee.pkt_timebase = timeBase
        context.pointer.pointee.thread_count = 1
        // An in-band parameter set for a larger picture is refused by libavcodec before it allocates the picture.
        context.pointer.pointee.max_pixels = Int64(VideoFileLimits.maximumPixels)
        let opened = avcodec_open2(context.pointer, codec, nil)
        guard opened >= 0 else {
            throw VideoCodecError.ffmpeg(.setupFailed, "cannot open the H.264 decoder for \(path)", opened,
                                         context: ["path": path])
        }
    }

    /// Sends a packet (nil: the end of the stream, drain) and returns the pictures ready now, each with its
    /// presentation time in the stream's time base (`AV_NOPTS_VALUE` when it has none).
    /// - Throws: `.fileLimitExceeded` for a picture outside the limits, `.unsupportedFile` for a picture of odd size,
    ///   `.decodeFailed` when libavcodec fails for a reason other than damaged data.
    func decode(_ packet: UnsafeMutablePointer<AVPacket>?, frameIndex: Int) throws(VideoCodecError) -> [Picture] {
        let sent = avcodec_send_packet(context.pointer, packet)
        // Damaged data is skipped as the HEVC path skips it; EOF means the decoder was already drained.
        if sent < 0, sent != FFmpegResult.endOfFile, sent != cffmpeg_averror(EINVAL), sent != FFmpegResult.invalidData {
            throw VideoCodecError.ffmpeg(.decodeFailed, "cannot decode frame \(frameIndex + 1) of \(path)", sent,
                                         context: ["path": path, "frame": "\(frameIndex)"])
        }
        var output: [Picture] = []
        let picture = frame.pointer
        while true {
            let received = avcodec_receive_frame(context.pointer, picture)
            if received == FFmpegResult.again || received == FFmpegResult.endOfFile { break }
            guard received >= 0 else {
                if received == FFmpegResult.invalidData { continue }
                throw VideoCodecError.ffmpeg(.decodeFailed, "cannot decode frame \(frameIndex + 1) of \(path)", received,
                                             context: ["path": path, "frame": "\(frameIndex)"])
            }
            defer { av_frame_unref(picture) }
            let width = Int(picture.pointee.width), height = Int(picture.pointee.height)
            try VideoFileLimits.checkSize(width: width, height: height, path: path, what: "the H.264 stream")
            guard width % 2 == 0, height % 2 == 0 else {
                throw VideoCodecError(
                    code: .unsupportedFile,
                    message: "\(path) has H.264 pictures of \(width)×\(height); only even sizes play as a device "
                        + "(crop it: ffmpeg -i \(path) -vf crop=trunc(iw/2)*2:trunc(ih/2)*2 -c:v libx265 out.mp4)",
                    context: ["path": path, "frame": "\(frameIndex)"]
                )
            }
            let buffer = try converter.convert(picture, to: .nv12VideoRange)
            var data = Data(capacity: width * height * 3 / 2)
            for (index, rows) in [height, height / 2].enumerated() {
                let stride = buffer.planes[index].bytesPerRow
                buffer.withUnsafeBytes(ofPlane: index) { plane in
                    for row in 0 ..< rows {
                        let start = row * stride
                        data.append(contentsOf: UnsafeRawBufferPointer(rebasing: plane[start ..< start + width]))
                    }
                }
            }
            guard let image = RawVideoImage(width: width, height: height, lumaBytesPerRow: width, chromaBytesPerRow: width,
                                            data: data)
            else {
                throw VideoCodecError(code: .decodeFailed, message: "an H.264 picture of \(path) did not convert",
                                      context: ["path": path, "frame": "\(frameIndex)"])
            }
            var time = picture.pointee.best_effort_timestamp
            if time == FFmpegResult.noTimestamp { time = picture.pointee.pts }
            var captured: Int64?
            for index in 0 ..< Int(max(0, picture.pointee.nb_side_data)) where captured == nil {
                guard let side = picture.pointee.side_data[index], side.pointee.type == AV_FRAME_DATA_SEI_UNREGISTERED,
                      let bytes = side.pointee.data else { continue }
                captured = CaptureTimeSEI.captureWallUs(inUnregisteredPayload: UnsafeRawBufferPointer(start: bytes, count: Int(side.pointee.size)))
            }
            output.append(Picture(pts: time, image: image, captureWallUs: captured))
        }
        return output
    }
}
