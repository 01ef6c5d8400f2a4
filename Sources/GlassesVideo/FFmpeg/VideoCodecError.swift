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
        /// A file ends before its own structure says it should (a cut-off download or a recording that was not
        /// finished): the data read so far was good, but the file is incomplete. The message says "truncated".
        public static let truncatedFile = Code("truncatedFile")
        /// A number in a file (picture size, frame rate, timestamp, frame count) is outside the limits this module
        /// documents (see ``VideoFileLimits``); nothing was allocated or computed from it.
        public static let fileLimitExceeded = Code("fileLimitExceeded")
        /// A file's timestamps cannot be played: they go backwards, stop increasing, or jump by more than
        /// ``VideoFileLimits/maximumFrameGapUs`` (typically a track whose timescale is 0 or 1).
        public static let brokenTimestamps = Code("brokenTimestamps")

        /// A network stream sent nothing for longer than allowed, or no publisher came within the connect timeout.
        public static let streamTimedOut = Code("streamTimedOut")
        /// A blocking network call was cancelled because the run is stopping.
        public static let streamCancelled = Code("streamCancelled")
        /// The address cannot be listened on (in use, not this machine's, or a privileged port).
        public static let streamCannotListen = Code("streamCannotListen")
        /// A publisher was turned away (a stream key other than the configured one).
        public static let streamRefused = Code("streamRefused")

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
    /// Where it happened, for logs and tools: for file errors `path`, and where known `frame` (0-based index of the
    /// frame in file order), `offset` (byte offset) or `limit` (the limit that was exceeded).
    public var context: [String: String]

    /// Creates an error.
    public init(
        code: Code, message: String, ffmpegCode: Int32? = nil, ffmpegMessage: String? = nil,
        context: [String: String] = [:]
    ) {
        self.code = code
        self.message = message
        self.ffmpegCode = ffmpegCode
        self.ffmpegMessage = ffmpegMessage
        self.context = context
    }

    /// One line: code, message and FFmpeg's words for its error (never the raw error number, which stays in
    /// ``ffmpegCode`` for programs).
    public var description: String {
        "\(code): \(reason)"
    }

    /// The message with FFmpeg's words for its error, for a person ("cannot write a packet to a.mp4 (no space
    /// left on device)").
    public var reason: String {
        var text = message
        if ffmpegCode != nil, let ffmpegMessage, !ffmpegMessage.isEmpty, !message.contains(ffmpegMessage) {
            text += " (\(ffmpegMessage.prefix(1).lowercased() + ffmpegMessage.dropFirst()))"
        }
        return text
    }

    /// Builds an error from an FFmpeg return code.
    static func ffmpeg(_ code: Code, _ message: String, _ result: Int32, context: [String: String] = [:]) -> VideoCodecError {
        VideoCodecError(code: code, message: message, ffmpegCode: result, ffmpegMessage: FFmpegResult.text(result),
                        context: context)
    }
}

/// Helpers around FFmpeg's integer return codes.
enum FFmpegResult {
    static let again: Int32 = cffmpeg_averror_eagain()
    static let endOfFile: Int32 = cffmpeg_averror_eof()
    static let noTimestamp: Int64 = cffmpeg_nopts_value()
    /// AVERROR_INVALIDDATA, `FFERRTAG('I','N','D','A')` (a macro Swift does not import).
    static let invalidData: Int32 = -Int32(0x41_44_4E_49)

    /// FFmpeg's text for an error code, in words: `av_strerror`'s text, or "unexpected error" when FFmpeg has
    /// none (its fallback text is the bare number, which means nothing to a person).
    static func text(_ code: Int32) -> String {
        var buffer = [CChar](repeating: 0, count: 128)
        buffer.withUnsafeMutableBufferPointer { cffmpeg_strerror(code, $0.baseAddress, $0.count) }
        let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        if text.isEmpty || text.contains("Error number") || text.allSatisfy({ $0.isNumber || $0 == "-" }) {
            return "unexpected error"
        }
        return text
    }
}
