import Foundation

/// The version of the link protocol this build speaks (see `docs/PROTOCOL.md`).
public let linkProtocolVersion: UInt16 = 1

/// What a device tells the host about itself when a link opens.
public struct DeviceInfo: Sendable, Hashable {
    /// Stable identifier of the device.
    public var identifier: DeviceIdentifier
    /// Human-readable name.
    public var name: String
    /// The device's UUID.
    public var uuid: UUID
    /// The kind of glasses.
    public var deviceType: DeviceType
    /// Firmware version string.
    public var firmwareVersion: String
    /// Codecs the camera can stream.
    public var supportedCodecs: [VideoCodec]
    /// Resolutions the camera can stream.
    public var supportedResolutions: [StreamingResolution]
    /// Frame rates the camera can stream.
    public var supportedFrameRates: [UInt]
    /// Photo formats the camera can capture.
    public var supportedPhotoFormats: [PhotoCaptureFormat]
    /// The link protocol version the device speaks.
    public var protocolVersion: UInt16
    /// Whether the device has an IMU it can stream (``HostMessage/startMotion(_:)``). False by default, and for every
    /// device that does not say (an older peer, or a link whose wire does not carry it): WearablesKit then never
    /// asks it for motion, and ``DeviceSession/addMotion(configuration:)`` returns nil.
    public var hasIMU: Bool
    /// Whether the device offers DAT 1.0's standalone photo (``HostMessage/startPhoto``). False by default, and for
    /// every device that does not say: ``Photo/start()`` then reports ``PhotoError/serviceUnavailable`` without
    /// asking it.
    public var hasStandalonePhoto: Bool

    /// Creates device info.
    public init(
        identifier: DeviceIdentifier,
        name: String,
        uuid: UUID = UUID(),
        deviceType: DeviceType = .simulated,
        firmwareVersion: String = "1.0",
        supportedCodecs: [VideoCodec] = VideoCodec.allCases,
        supportedResolutions: [StreamingResolution] = StreamingResolution.allCases,
        supportedFrameRates: [UInt] = StreamConfiguration.supportedFrameRates,
        supportedPhotoFormats: [PhotoCaptureFormat] = [.jpeg],
        protocolVersion: UInt16 = linkProtocolVersion,
        hasIMU: Bool = false,
        hasStandalonePhoto: Bool = false
    ) {
        self.identifier = identifier
        self.name = name
        self.uuid = uuid
        self.deviceType = deviceType
        self.firmwareVersion = firmwareVersion
        self.supportedCodecs = supportedCodecs
        self.supportedResolutions = supportedResolutions
        self.supportedFrameRates = supportedFrameRates
        self.supportedPhotoFormats = supportedPhotoFormats
        self.protocolVersion = protocolVersion
        self.hasIMU = hasIMU
        self.hasStandalonePhoto = hasStandalonePhoto
    }
}

/// Why the device refused or failed a standalone photo (``DevicePhotoEvent``); WearablesKit maps these to
/// ``PhotoError``.
public enum DevicePhotoFailure: String, Sendable, Hashable, CaseIterable {
    case captureFailure, sessionSetupFailed, busy, serviceUnavailable, permissionDenied, deviceHealthCritical
}

/// A standalone photo capability's state or a capture's failure, as the device reports it (answering
/// ``HostMessage/startPhoto``, ``HostMessage/stopPhoto`` and ``HostMessage/standalonePhoto(_:_:requestID:)``, or on
/// its own).
public enum DevicePhotoEvent: Sendable, Hashable {
    /// The capability is started: captures may be asked for.
    case started
    /// The capability stopped (answer to `stopPhoto`, or the device stopped it).
    case stopped
    /// The capability could not start; it is stopped.
    case unavailable(DevicePhotoFailure, message: String)
    /// The capture `requestID` failed.
    case captureFailed(requestID: UInt32, DevicePhotoFailure, message: String)
}

/// A piece of a standalone photo on its way to the host. A photo travels as chunks in order, each at the offset
/// where the one before ended; the first (offset 0) announces the total and carries the metadata.
public struct PhotoChunk: Sendable, Hashable {
    /// The capture this belongs to.
    public var requestID: UInt32
    /// The whole photo's size in bytes.
    public var totalBytes: UInt64
    /// Where these bytes start in the photo.
    public var offset: UInt64
    /// The bytes.
    public var bytes: Data
    /// The capture's metadata (first chunk only; nil elsewhere or when there is none).
    public var metadata: Data?

    /// Creates a chunk.
    public init(requestID: UInt32, totalBytes: UInt64, offset: UInt64, bytes: Data, metadata: Data? = nil) {
        self.requestID = requestID
        self.totalBytes = totalBytes
        self.offset = offset
        self.bytes = bytes
        self.metadata = metadata
    }
}

/// A motion (IMU) state the device reports, answering ``HostMessage/startMotion(_:)`` and
/// ``HostMessage/stopMotion`` or on its own (the session ended, a photo took the sensor).
public enum DeviceMotionEvent: Sendable, Hashable {
    /// Samples are flowing at this rate.
    case started(MotionSamplingRate)
    /// The IMU stopped (answer to `stopMotion`, or the device stopped it).
    case stopped
    /// The IMU cannot be used now (no session, no sensor); it is stopped.
    case unavailable
}

/// A session-level event the device reports.
public enum DeviceSessionEvent: Sendable, Hashable {
    /// The device accepted the session.
    case started
    /// The device paused the session (tap, doff, another experience).
    case paused
    /// The device resumed a paused session.
    case resumed
    /// The device ended the session; `reason` is a short human-readable text.
    case ended(reason: String)
}

/// A stream-level state the device reports.
public enum DeviceStreamEvent: Sendable, Hashable {
    /// The camera is powering up for the requested configuration.
    case starting(StreamConfiguration)
    /// Frames are flowing (also sent after a pause ends).
    case streaming(StreamConfiguration)
    /// Frames are paused (tap, photo capture, doff).
    case paused
    /// The camera stopped.
    case stopped
}

/// Stream generations: the number a host gives each `startStream` it sends, so that it can tell a device's answer to
/// the current start or stop from a late answer to an earlier one (`docs/PROTOCOL.md`, 7.6).
public enum StreamGeneration {
    /// The generation after `generation`: one more, wrapping from `UInt32.max` to 1 (0 is never used).
    public static func next(after generation: UInt32) -> UInt32 {
        generation == .max ? 1 : generation + 1
    }
}

/// A fault the device reports for a stream; WearablesKit maps these to `StreamError`.
public enum DeviceStreamFault: String, Sendable, Hashable, CaseIterable {
    case internalError, videoStreamingError, permissionDenied, hingesClosed, thermalHot, batteryLow,
         peakPowerLimit, photoCaptureFailed
    /// The glasses cannot deliver the audio asked for (the video goes on).
    case audioStreamingError
}

/// The wire layout of a video sample.
public enum VideoSampleFormat: Sendable, Hashable {
    /// HEVC access unit: 4-byte big-endian length-prefixed NAL units.
    case hevc
    /// NV12 video range, luma plane then interleaved chroma plane, with the given geometry.
    case nv12(width: Int, height: Int, lumaBytesPerRow: Int, chromaBytesPerRow: Int)
}

/// When a video sample was captured, handed to the link and received, for end-to-end latency.
///
/// The sender fills ``captureUs`` and ``sentUs`` on its *link clock* (the clock of its link end's
/// ``EventScheduler``, see ``LinkClockReading``). The host end of the link sets ``receivedUs`` and, in the same step,
/// maps ``captureUs`` and ``sentUs`` onto its own link clock with the offset it measured by heartbeat exchange
/// (`docs/PROTOCOL.md`, 7.5). So: `receivedUs != nil` means all three are host-clock times; `receivedUs == nil` means
/// the two others are still on the sender's clock and must not be compared with any host time.
public struct SampleTiming: Sendable, Hashable {
    /// When the frame was captured, in microseconds (the sender's best estimate, e.g. a relay's).
    public var captureUs: Int64
    /// When the sender handed the sample to its link end, in microseconds.
    public var sentUs: Int64
    /// When the host end received the sample, on the host's link clock; nil until then (or while the clocks are
    /// not yet related).
    public var receivedUs: Int64?

    /// Creates sample timing.
    public init(captureUs: Int64, sentUs: Int64, receivedUs: Int64? = nil) {
        self.captureUs = captureUs
        self.sentUs = sentUs
        self.receivedUs = receivedUs
    }

    /// Whether all three times are on the host's clock (the host end mapped them).
    public var isOnHostClock: Bool { receivedUs != nil }
}

/// One video sample on the link, before WearablesKit turns it into a ``VideoFrame``.
public struct VideoSample: Sendable, Hashable {
    /// Presentation time in microseconds on the device's clock.
    public var presentationTimeUs: Int64
    /// Whether the sample is a keyframe (always true for raw).
    public var isKeyframe: Bool
    /// Layout of `payload`.
    public var format: VideoSampleFormat
    /// The sample bytes.
    public var payload: Data
    /// Capture, send and receive times for latency; nil when the sender does not measure them.
    public var timing: SampleTiming?

    /// Creates a video sample.
    public init(
        presentationTimeUs: Int64, isKeyframe: Bool, format: VideoSampleFormat, payload: Data,
        timing: SampleTiming? = nil
    ) {
        self.presentationTimeUs = presentationTimeUs
        self.isKeyframe = isKeyframe
        self.format = format
        self.payload = payload
        self.timing = timing
    }
}

/// What a device heartbeat echoes of the most recent host heartbeat it received, so the host can relate the two
/// link clocks (NTP style: `t0` host send, `t1` device receive, `t2` device send; the host notes `t3` on receipt).
public struct ClockEcho: Sendable, Hashable {
    /// `t0`: the host clock value the host heartbeat carried, in microseconds.
    public var echoHostClockUs: Int64
    /// `t1`: when the device received that heartbeat, on the device's link clock, in microseconds.
    public var receivedUs: Int64
    /// `t2`: when the device sent this heartbeat, on the device's link clock, in microseconds.
    public var sentUs: Int64

    /// Creates an echo.
    public init(echoHostClockUs: Int64, receivedUs: Int64, sentUs: Int64) {
        self.echoHostClockUs = echoHostClockUs
        self.receivedUs = receivedUs
        self.sentUs = sentUs
    }
}

/// A message from the host to the device.
public enum HostMessage: Sendable, Hashable {
    /// First message on a link: the host's protocol version and, for non-loopback TCP, the pairing token.
    case hello(protocolVersion: UInt16, pairingToken: String?)
    /// Silent permission query.
    case checkPermission(Permission, requestID: UInt32)
    /// Permission request (the user answers on the device side).
    case requestPermission(Permission, requestID: UInt32)
    /// Open a device session.
    case startSession
    /// Close the device session (and any stream).
    case stopSession
    /// Start the camera stream with a configuration. `generation` numbers this start (``StreamGeneration``); the
    /// device echoes it in the stream events that follow. nil from a sender that does not number its starts.
    case startStream(StreamConfiguration, generation: UInt32? = nil)
    /// Stop the camera stream; `generation` is that of the start being stopped (nil: not numbered).
    case stopStream(generation: UInt32? = nil)
    /// Capture a still photo during the stream.
    case capturePhoto(PhotoCaptureFormat, requestID: UInt32)
    /// Flow control: the host can take this many more video samples.
    case frameCredit(UInt32)
    /// Liveness; `hostClockUs` is the host's link clock when sent, for the device to echo (``ClockEcho``).
    case heartbeat(sequence: UInt32, hostClockUs: Int64? = nil)
    /// Start sampling the IMU at a rate (sent only to a device whose hello said ``DeviceInfo/hasIMU``).
    case startMotion(MotionSamplingRate)
    /// Stop sampling the IMU.
    case stopMotion
    /// Start the standalone photo capability (sent only to a device whose hello said
    /// ``DeviceInfo/hasStandalonePhoto``).
    case startPhoto
    /// Stop the standalone photo capability.
    case stopPhoto
    /// Take a standalone photo (the capability must be started).
    case standalonePhoto(PhotoResolution, PhotoQuality, requestID: UInt32)
}

/// A message from the device to the host.
public enum DeviceMessage: Sendable, Hashable {
    /// First message on a link: who the device is.
    case hello(DeviceInfo)
    /// The device's state changed (also sent once after hello).
    case deviceState(DeviceState)
    /// The answer to a permission query or request.
    case permission(Permission, PermissionStatus, requestID: UInt32)
    /// A session-level event.
    case session(DeviceSessionEvent)
    /// A stream-level state change; `generation` echoes that of the latest `startStream` or `stopStream` the
    /// device received (nil from a device that does not echo it, or before any).
    case stream(DeviceStreamEvent, generation: UInt32? = nil)
    /// HEVC parameter sets for the samples that follow.
    case codecConfiguration(HEVCCodecConfiguration)
    /// A video sample.
    case videoSample(VideoSample)
    /// A captured photo (`requestID` from ``HostMessage/capturePhoto(_:requestID:)``).
    case photo(PhotoData, requestID: UInt32)
    /// A stream fault with a human-readable message.
    case fault(DeviceStreamFault, message: String)
    /// Liveness; also carries how many video samples the device dropped so far for lack of credit and, in `clock`,
    /// the echo of the most recent host heartbeat that carried a clock.
    case heartbeat(sequence: UInt32, droppedFrames: UInt64, clock: ClockEcho? = nil)
    /// The IMU's state changed.
    case motion(DeviceMotionEvent)
    /// IMU samples, oldest first (one or more per message).
    case motionSamples([MotionSample])
    /// The standalone photo capability's state changed, or a capture failed.
    case photoCapability(DevicePhotoEvent)
    /// A piece of a standalone photo.
    case photoChunk(PhotoChunk)
    /// Audio for a stream whose configuration asked for it (``StreamConfiguration/audioCodec``).
    case audioSample(AudioSample)
}
