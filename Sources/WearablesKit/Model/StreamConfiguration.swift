/// The video codec a stream delivers: decoded NV12 frames or compressed HEVC samples.
public enum VideoCodec: String, Sendable, Hashable, CaseIterable, Codable {
    /// Decoded frames, NV12 video range ("420v"), as DAT's `.raw` delivers them.
    case raw
    /// Compressed HEVC samples (length-prefixed NAL units plus codec configuration), as DAT's `.hvc1` delivers them.
    case hvc1
}

/// The size of a video frame in pixels.
public struct VideoFrameSize: Sendable, Hashable, Codable, CustomStringConvertible {
    /// Width in pixels.
    public let width: UInt
    /// Height in pixels.
    public let height: UInt

    /// Creates a frame size.
    public init(width: UInt, height: UInt) {
        self.width = width
        self.height = height
    }

    /// `WIDTHxHEIGHT`.
    public var description: String { "\(width)x\(height)" }
}

/// The streaming resolutions the glasses offer, all portrait.
public enum StreamingResolution: String, Sendable, Hashable, CaseIterable, Codable {
    /// 720 × 1280.
    case high
    /// 504 × 896.
    case medium
    /// 360 × 640.
    case low

    /// The frame size of this resolution.
    public var videoFrameSize: VideoFrameSize {
        switch self {
        case .high: VideoFrameSize(width: 720, height: 1280)
        case .medium: VideoFrameSize(width: 504, height: 896)
        case .low: VideoFrameSize(width: 360, height: 640)
        }
    }

    /// The resolution with exactly this size, if any.
    public init?(size: VideoFrameSize) {
        guard let match = Self.allCases.first(where: { $0.videoFrameSize == size }) else { return nil }
        self = match
    }
}

/// What a camera stream delivers: codec, resolution and frame rate.
///
/// Frame rates are limited to the values the glasses support (2, 7, 15, 24 and 30); anything else is rejected
/// with ``StreamConfigurationError``, never rounded.
public struct StreamConfiguration: Sendable, Hashable, Codable {
    /// The frame rates the glasses support.
    public static let supportedFrameRates: [UInt] = [2, 7, 15, 24, 30]

    /// The video codec.
    public let videoCodec: VideoCodec
    /// The resolution.
    public let resolution: StreamingResolution
    /// Frames per second; one of ``supportedFrameRates``.
    public let frameRate: UInt

    /// Creates a configuration, rejecting unsupported frame rates.
    /// - Throws: ``StreamConfigurationError`` when `frameRate` is not one of ``supportedFrameRates``.
    public init(videoCodec: VideoCodec = .raw, resolution: StreamingResolution = .medium, frameRate: UInt = 30) throws(StreamConfigurationError) {
        guard Self.supportedFrameRates.contains(frameRate) else {
            throw StreamConfigurationError(frameRate: frameRate)
        }
        self.videoCodec = videoCodec
        self.resolution = resolution
        self.frameRate = frameRate
    }

    /// The default configuration: `.raw`, `.medium` (504 × 896), 30 fps.
    public init() {
        self.videoCodec = .raw
        self.resolution = .medium
        self.frameRate = 30
    }
}

/// A stream configuration asked for a frame rate the glasses do not support.
public struct StreamConfigurationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The rejected frame rate.
    public let frameRate: UInt

    /// A message a person can act on.
    public var description: String {
        "Unsupported frame rate \(frameRate) fps: the glasses stream at 2, 7, 15, 24 or 30 fps."
    }
}
