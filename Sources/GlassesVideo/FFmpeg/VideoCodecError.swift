internal import CFFmpeg

/// An error from the video core: what went wrong, in words, with the FFmpeg error behind it when there is one.
public struct VideoCodecError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure, stable for callers to switch on.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        /// The raw name of the code.
        public let rawValue: String
        private init(_ rawValue: String) { self.rawValue = rawValue }

        /// The FFmpeg build lacks a codec, muxer or demuxer this needs (e.g. libx265).
        public static let codecUnavailable = Code("codecUnavailable")
        /// An argument was out of range or inconsistent (size, frame rate, format).
        public static let invalidArgument = Code("invalidArgument")
        /// FFmpeg failed to allocate or open a context.
        public static let setupFailed = Code("setupFailed")
        /// The encoder rejected a frame or failed to produce a packet.
        public static let encodeFailed = Code("encodeFailed")
        /// The decoder failed in a way that is not recoverable by skipping to the next keyframe.
        public static let decodeFailed = Code("decodeFailed")
        /// Nothing has decoded for longer than the configured stall time: the Linux stand-in for DAT's
        /// `videoStreamingError`.
        public static let videoStreamingError = Code("videoStreamingError")
        /// The pixel format asked for is not one this module produces.
        public static let unsupportedPixelFormat = Code("unsupportedPixelFormat")
        /// A file could not be opened, read or written.
        public static let fileError = Code("fileError")
        /// A file's content is not a format this module reads (or is malformed).
        public static let unsupportedFile = Code("unsupportedFile")

        /// The code's name.
        public var description: String { rawValue }
    }

    /// The kind of failure.
    public var code: Code
    /// What happened, for a person.
    public var message: String
    /// The FFmpeg return code behind the failure, if any (a negative AVERROR value).
    public var ffmpegCode: Int32?
    /// FFmpeg's text for ``ffmpegCode`` (from `av_strerror`), if any.
    public var ffmpegMessage: String?

    /// Creates an error.
    public init(code: Code, message: String, ffmpegCode: Int32? = nil, ffmpegMessage: String? = nil) {
        self.code = code
        self.message = message
        self.ffmpegCode = ffmpegCode
        self.ffmpegMessage = ffmpegMessage
    }

    /// One line: code, message and the FFmpeg text.
    public var description: String {
        var text = "\(code): \(message)"
        if let ffmpegCode {
            text += " (FFmpeg \(ffmpegCode): \(ffmpegMessage ?? "unknown"))"
        }
        return text
    }

    /// Builds an error from an FFmpeg return code.
    static func ffmpeg(_ code: Code, _ message: String, _ result: Int32) -> VideoCodecError {
        VideoCodecError(code: code, message: message, ffmpegCode: result, ffmpegMessage: FFmpegResult.text(result))
    }
}

/// Helpers around FFmpeg's integer return codes.
enum FFmpegResult {
    static let again: Int32 = cffmpeg_averror_eagain()
    static let endOfFile: Int32 = cffmpeg_averror_eof()
    static let noTimestamp: Int64 = cffmpeg_nopts_value()

    /// FFmpeg's text for an error code.
    static func text(_ code: Int32) -> String {
        var buffer = [CChar](repeating: 0, count: 128)
        buffer.withUnsafeMutableBufferPointer { cffmpeg_strerror(code, $0.baseAddress, $0.count) }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
