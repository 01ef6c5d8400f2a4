import GlassesMedia

/// Settings of a ``VideoFrameDecoder``.
public struct VideoDecoderOptions: Sendable, Hashable {
    /// libavcodec decoding threads. 1 (the default) decodes each sample before `decode` returns, with exact damage
    /// accounting; more threads use frame threading, which is faster on big frames but holds up to
    /// `threadCount - 1` pictures back (they come out of later calls or ``VideoFrameDecoder/flush()``) and makes
    /// the attribution of damage to a sample approximate.
    public var threadCount: Int
    /// Stream time without a single decoded picture after which `decode` throws `.videoStreamingError`, in µs.
    public var stallTimeoutUs: Int64
    /// Row alignment in bytes of the pixel buffers produced (64 suits SIMD; 1 gives tight rows).
    public var rowAlignment: Int
    /// Idle buffers the pool keeps for reuse.
    public var maximumIdleBuffers: Int

    /// Creates options; the defaults are single-threaded, a 2 s stall timeout, 64-byte rows and 8 idle buffers.
    public init(threadCount: Int = 1, stallTimeoutUs: Int64 = 2_000_000, rowAlignment: Int = 64, maximumIdleBuffers: Int = 8) {
        self.threadCount = threadCount
        self.stallTimeoutUs = stallTimeoutUs
        self.rowAlignment = rowAlignment
        self.maximumIdleBuffers = maximumIdleBuffers
    }
}

/// What a ``VideoFrameDecoder`` has done so far.
///
/// Single-threaded, every HEVC sample of a stream without reordering ends up in exactly one of
/// ``decodedPictures``, ``skippedUntilKeyframe`` or ``corrupt``.
public struct VideoDecoderStatistics: Sendable, Hashable {
    /// Video frames handed to `decode`.
    public var framesReceived = 0
    /// HEVC samples among them.
    public var hevcSamples = 0
    /// Raw NV12 images among them (all of which produce a buffer).
    public var rawImages = 0
    /// Pictures the HEVC decoder produced and this decoder handed out.
    public var decodedPictures = 0
    /// Samples dropped because decoding had to restart at a keyframe (after damage, at the start, or after a
    /// parameter-set change without a keyframe).
    public var skippedUntilKeyframe = 0
    /// Samples found damaged: malformed NAL framing, or libavcodec reported an error or a missing reference while
    /// decoding them. Each one makes the decoder wait for the next keyframe.
    public var corrupt = 0
    /// Changes of picture size or parameter sets taken.
    public var formatChanges = 0
    /// Times `.videoStreamingError` was thrown.
    public var stalls = 0

    /// Creates zeroed statistics.
    public init() {}
}

/// One picture ready for custom input.
public struct DecodedVideoFrame: Sendable {
    /// Presentation time in microseconds on the device's clock (from the sample or file).
    public var presentationTimeUs: Int64
    /// The picture, in the format asked for; pooled, so drop it when done.
    public var pixelBuffer: PixelBuffer

    /// Creates a decoded frame.
    public init(presentationTimeUs: Int64, pixelBuffer: PixelBuffer) {
        self.presentationTimeUs = presentationTimeUs
        self.pixelBuffer = pixelBuffer
    }
}
