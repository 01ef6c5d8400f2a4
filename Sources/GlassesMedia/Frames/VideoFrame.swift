import Foundation

/// The parameter sets an HEVC decoder needs before the first sample: the Linux stand-in for the
/// `CMVideoFormatDescription` of an `.hvc1` `CMSampleBuffer`.
public struct HEVCCodecConfiguration: Sendable, Hashable {
    /// Video parameter sets (NAL units without start codes or length prefixes).
    public var videoParameterSets: [Data]
    /// Sequence parameter sets.
    public var sequenceParameterSets: [Data]
    /// Picture parameter sets.
    public var pictureParameterSets: [Data]
    /// Coded width in pixels.
    public var width: Int
    /// Coded height in pixels.
    public var height: Int

    /// Creates a codec configuration.
    public init(videoParameterSets: [Data], sequenceParameterSets: [Data], pictureParameterSets: [Data], width: Int, height: Int) {
        self.videoParameterSets = videoParameterSets
        self.sequenceParameterSets = sequenceParameterSets
        self.pictureParameterSets = pictureParameterSets
        self.width = width
        self.height = height
    }
}

/// One compressed HEVC access unit as the glasses send it for `.hvc1`.
public struct HEVCSample: Sendable, Hashable {
    /// NAL units, each preceded by a 4-byte big-endian length (the `hvc1` sample layout).
    public var data: Data
    /// Whether this sample starts a new coded video sequence (IRAP picture).
    public var isKeyframe: Bool
    /// The parameter sets in force for this sample.
    public var codecConfiguration: HEVCCodecConfiguration

    /// Creates a sample.
    public init(data: Data, isKeyframe: Bool, codecConfiguration: HEVCCodecConfiguration) {
        self.data = data
        self.isKeyframe = isKeyframe
        self.codecConfiguration = codecConfiguration
    }
}

/// One decoded NV12 video-range ("420v") image as the glasses send it for `.raw`.
public struct RawVideoImage: Sendable, Hashable {
    /// Width in pixels (even).
    public private(set) var width: Int
    /// Height in pixels (even).
    public private(set) var height: Int
    /// Bytes per row of the luma plane (at least `width`).
    public private(set) var lumaBytesPerRow: Int
    /// Bytes per row of the interleaved CbCr plane (at least `width`).
    public private(set) var chromaBytesPerRow: Int
    /// The luma plane followed directly by the chroma plane:
    /// `lumaBytesPerRow * height + chromaBytesPerRow * height / 2` bytes.
    public private(set) var data: Data

    /// Creates a raw image, checking that the planes fit in `data`.
    /// - Returns: nil when a size is odd or non-positive, a stride is smaller than the width, or `data` is too short.
    ///   Every figure may come from a device, so the layout is computed with checked arithmetic (``NV12Layout``):
    ///   strides whose products overflow are refused, never a trap.
    public init?(width: Int, height: Int, lumaBytesPerRow: Int, chromaBytesPerRow: Int, data: Data) {
        guard width > 0, height > 0, width % 2 == 0, height % 2 == 0,
              let layout = NV12Layout(
                width: width, height: height, lumaBytesPerRow: lumaBytesPerRow, chromaBytesPerRow: chromaBytesPerRow),
              data.count >= layout.byteCount
        else { return nil }
        self.width = width
        self.height = height
        self.lumaBytesPerRow = lumaBytesPerRow
        self.chromaBytesPerRow = chromaBytesPerRow
        self.data = data
    }

    /// Where the planes lie in ``data`` (always computable: the initializer checked it).
    public var layout: NV12Layout {
        // The initializer refused every geometry for which this fails.
        NV12Layout(width: width, height: height, lumaBytesPerRow: lumaBytesPerRow, chromaBytesPerRow: chromaBytesPerRow)!
    }
}

/// When a frame was captured, sent and received, all on the host's link clock in microseconds: what end-to-end
/// latency is measured from (capture → `sendFrame` accepted) and the part of it spent on the link (sent → received).
///
/// Only times the host end of the link mapped onto its own clock become a `FrameTiming` (a sample whose clocks are
/// not yet related carries none), so any two of these figures, and the host's scheduler time, may be subtracted.
public struct FrameTiming: Sendable, Hashable {
    /// When the frame was captured (the sender's estimate, mapped onto the host clock).
    public var captureUs: Int64
    /// When the sender handed it to the link (mapped onto the host clock).
    public var sentUs: Int64
    /// When the host end of the link received it.
    public var receivedUs: Int64

    /// Creates frame timing.
    public init(captureUs: Int64, sentUs: Int64, receivedUs: Int64) {
        self.captureUs = captureUs
        self.sentUs = sentUs
        self.receivedUs = receivedUs
    }
}

/// A video frame from the glasses: the Linux stand-in for DAT's `VideoFrame` and its `CMSampleBuffer`.
///
/// `presentationTimeUs` plays the part of `CMSampleBufferGetPresentationTimeStamp`, in microseconds on the
/// device's clock; `content` holds what the sample buffer's data buffer (`.hvc1`) or image buffer (`.raw`) holds.
public struct VideoFrame: Sendable, Hashable {
    /// What a frame carries.
    public enum Content: Sendable, Hashable {
        /// A decoded NV12 video-range image (`.raw`).
        case raw(RawVideoImage)
        /// A compressed HEVC sample (`.hvc1`).
        case hevc(HEVCSample)
    }

    /// Presentation time in microseconds on the device's clock.
    public var presentationTimeUs: Int64
    /// The image or sample.
    public var content: Content
    /// Capture, send and receive times on the host's clock, when the link measured them (nil for files and for
    /// senders that do not stamp samples).
    public var timing: FrameTiming?

    /// Creates a video frame.
    public init(presentationTimeUs: Int64, content: Content, timing: FrameTiming? = nil) {
        self.presentationTimeUs = presentationTimeUs
        self.content = content
        self.timing = timing
    }

    /// Whether the frame is compressed (`.hvc1`).
    public var isCompressed: Bool {
        if case .hevc = content { return true }
        return false
    }
}
