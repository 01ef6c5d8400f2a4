import Foundation

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
/// As in DAT 1.0, creating a configuration never throws, so DAT code written without `try` compiles unchanged.
/// The frame rate must still be one the glasses support (2, 7, 15, 24 or 30): it is never rounded. A configuration
/// with any other rate is refused where DAT code handles errors, when the camera is added:
/// ``DeviceSession/addCamera(config:)`` throws ``DeviceSessionError/unexpectedError(description:)`` with the
/// message of ``StreamConfigurationError`` (see ``DeviceSessionError/unsupportedStreamConfiguration(_:)``).
/// To check early, call ``validate()``, read ``isSupported``, or build with
/// ``validated(videoCodec:resolution:frameRate:)``, which throw or answer before any session exists.
public struct StreamConfiguration: Sendable, Hashable, Codable {
    /// The frame rates the glasses support.
    public static let supportedFrameRates: [UInt] = [2, 7, 15, 24, 30]

    /// The video codec.
    public let videoCodec: VideoCodec
    /// The resolution.
    public let resolution: StreamingResolution
    /// Frames per second; one of ``supportedFrameRates`` for the configuration to be usable.
    public let frameRate: UInt
    /// The audio delivered with the video (DAT 1.0's camera audio, experimental; ``Stream/audioFramePublisher``), or
    /// nil for none.
    public let audioCodec: AudioCodec?

    /// Creates a configuration, as DAT's `StreamConfiguration(videoCodec:resolution:frameRate:)` does: no checks.
    ///
    /// An unsupported `frameRate` is kept as given (never rounded) and refused later by
    /// ``DeviceSession/addCamera(config:)``; use ``validate()`` or ``validated(videoCodec:resolution:frameRate:)``
    /// to find out at once.
    public init(videoCodec: VideoCodec = .raw, resolution: StreamingResolution = .medium, frameRate: UInt = 30) {
        self.videoCodec = videoCodec
        self.resolution = resolution
        self.frameRate = frameRate
        self.audioCodec = nil
    }

    /// Creates a configuration with audio, as DAT 1.0's `StreamConfiguration(videoCodec:audioCodec:resolution:frameRate:)`
    /// does (nil: no audio). No checks, as above.
    public init(videoCodec: VideoCodec = .raw, audioCodec: AudioCodec?, resolution: StreamingResolution = .medium,
                frameRate: UInt = 30) {
        self.videoCodec = videoCodec
        self.resolution = resolution
        self.frameRate = frameRate
        self.audioCodec = audioCodec
    }

    /// The default configuration: `.raw`, `.medium` (504 × 896), 30 fps.
    public init() {
        self.init(videoCodec: .raw, resolution: .medium, frameRate: 30)
    }

    /// Creates a configuration and checks it at once: the throwing form for code that wants the error early.
    /// - Throws: ``StreamConfigurationError`` when `frameRate` is not one of ``supportedFrameRates``.
    public static func validated(
        videoCodec: VideoCodec = .raw, resolution: StreamingResolution = .medium, frameRate: UInt = 30
    ) throws(StreamConfigurationError) -> StreamConfiguration {
        let configuration = StreamConfiguration(videoCodec: videoCodec, resolution: resolution, frameRate: frameRate)
        try configuration.validate()
        return configuration
    }

    /// Whether the glasses can stream this configuration (its frame rate is one of ``supportedFrameRates``).
    public var isSupported: Bool { Self.supportedFrameRates.contains(frameRate) }

    /// Checks that the glasses can stream this configuration.
    /// - Throws: ``StreamConfigurationError`` when ``frameRate`` is not one of ``supportedFrameRates``.
    public func validate() throws(StreamConfigurationError) {
        guard isSupported else { throw StreamConfigurationError(frameRate: frameRate) }
    }
}

/// A stream configuration asked for a frame rate the glasses do not support.
///
/// Thrown by ``StreamConfiguration/validate()`` and ``StreamConfiguration/validated(videoCodec:resolution:frameRate:)``;
/// ``DeviceSession/addCamera(config:)`` reports the same message as a ``DeviceSessionError``.
public struct StreamConfigurationError: Error, Sendable, Hashable, CustomStringConvertible, LocalizedError {
    /// The rejected frame rate.
    public let frameRate: UInt

    /// Creates the error for a rejected frame rate.
    public init(frameRate: UInt) {
        self.frameRate = frameRate
    }

    /// A message a person can act on.
    public var message: String {
        "Unsupported frame rate \(frameRate) fps: the glasses stream at 2, 7, 15, 24 or 30 fps."
    }

    /// Same as ``message``.
    public var description: String { message }

    /// Same as ``message``, so `localizedDescription` is the message.
    public var errorDescription: String? { message }
}
