// The relay's own vocabulary between its DAT client (which sees only the DAT 1.0 surface, on Linux through
// WearablesKit and on iOS through Meta's MWDATCore/MWDATCamera) and its link server (which speaks the link
// protocol through WearablesKit's message types). Foundation only, so it compiles unchanged on both sides; DAT
// enum values travel as their case names (`String(describing:)`), which both sides spell the same way.
import Foundation

/// What the host asked for, as the relay's DAT client carries it out.
public enum RelayCommand: Sendable, Hashable {
    /// Silent permission query (`Wearables.checkPermissionStatus`); `permission` is a DAT case name (`camera`).
    case checkPermission(permission: String, requestID: UInt32)
    /// Permission request (`Wearables.requestPermission`; on a phone this switches to the Meta AI app).
    case requestPermission(permission: String, requestID: UInt32)
    /// Create and start a device session (one per device; at least ``RelayRules/sessionRestartSpacingUs`` after the
    /// last one stopped).
    case startSession
    /// Stop the camera and the session.
    case stopSession
    /// Add the camera with this configuration and start its stream (stopping a camera already there first);
    /// `generation` is the host's number for this start, echoed in the stream events that follow (nil: none).
    case startStream(RelayStreamSettings, generation: UInt32? = nil)
    /// Stop the camera (it cascades to its stream), so a later start adds a new one; `generation` as for a start.
    case stopStream(generation: UInt32? = nil)
    /// Capture a photo mid-stream (`Stream.capturePhoto(format:)`); `format` is a DAT case name (`jpeg`, `heic`).
    case capturePhoto(format: String, requestID: UInt32)
    /// Start DAT's Motion (the IMU) at `rate`, a `MotionSamplingRate` case name (`hz5` … `hz60`): added to the
    /// started session first (`DeviceSession.addMotion(configuration:)`), or started again at the same rate.
    case startMotion(rate: String)
    /// Stop Motion (`Motion.stop()`: it can start again).
    case stopMotion
}

/// A stream configuration by DAT case names: codec (`raw`, `hvc1`), resolution (`high`, `medium`, `low`), rate.
public struct RelayStreamSettings: Sendable, Hashable {
    /// `raw` or `hvc1`.
    public var codec: String
    /// `high`, `medium` or `low`.
    public var resolution: String
    /// Frames per second (2, 7, 15, 24 or 30).
    public var frameRate: UInt
    /// The audio asked for with the video (DAT 1.0's camera audio), or nil for none.
    public var audio: RelayAudioSettings?

    /// Creates settings.
    public init(codec: String, resolution: String, frameRate: UInt, audio: RelayAudioSettings? = nil) {
        self.codec = codec
        self.resolution = resolution
        self.frameRate = frameRate
        self.audio = audio
    }
}

/// PCM audio asked for with a stream: DAT's `AudioCodec.pcm(sampleRate:numberOfChannels:)`, the rate in hertz.
public struct RelayAudioSettings: Sendable, Hashable {
    /// 16000, 44100 or 48000.
    public var sampleRate: UInt
    /// Channels.
    public var channels: UInt32

    /// Creates audio settings.
    public init(sampleRate: UInt, channels: UInt32) {
        self.sampleRate = sampleRate
        self.channels = channels
    }
}

/// One of DAT's `AudioFrame`s, read: Float32 samples per channel, the rate in hertz, and the presentation time in
/// microseconds on the clock DAT gives the video frames' (DAT: "for synchronizing audio with video").
public struct RelayAudioFrame: Sendable, Hashable {
    /// Microseconds.
    public var presentationTimeUs: Int64
    /// Samples per second per channel.
    public var sampleRate: UInt
    /// One array per channel, all the same length.
    public var channels: [[Float]]

    /// Creates a frame.
    public init(presentationTimeUs: Int64, sampleRate: UInt, channels: [[Float]]) {
        self.presentationTimeUs = presentationTimeUs
        self.sampleRate = sampleRate
        self.channels = channels
    }
}

/// Who the glasses are, as DAT's `Device` tells it.
public struct RelayDeviceInfo: Sendable, Hashable {
    /// DAT's device identifier.
    public var identifier: String
    /// The device's name.
    public var name: String
    /// The device's UUID.
    public var uuid: UUID
    /// DAT's `DeviceType` case name (`rayBanMeta`, …).
    public var deviceType: String

    /// Creates device info.
    public init(identifier: String, name: String, uuid: UUID, deviceType: String) {
        self.identifier = identifier
        self.name = name
        self.uuid = uuid
        self.deviceType = deviceType
    }
}

/// DAT's `DeviceState`, by case names.
public struct RelayDeviceState: Sendable, Hashable {
    /// `disconnected`, `connecting` or `connected`.
    public var linkState: String
    /// `undefined`, `compatible`, `deviceUpdateRequired` or `sdkUpdateRequired`.
    public var compatibility: String
    /// Battery percentage, when known.
    public var batteryLevel: Int?
    /// `unknown`, `charging` or `notCharging`.
    public var chargingState: String
    /// `unknown`, `doffed` or `donned`.
    public var donState: String
    /// `unknown`, `closed` or `open`.
    public var hingeState: String
    /// `unknown`, `none`, `light`, … `shutdown`.
    public var thermalLevel: String

    /// Creates a device state.
    public init(linkState: String, compatibility: String, batteryLevel: Int?, chargingState: String, donState: String,
                hingeState: String, thermalLevel: String) {
        self.linkState = linkState
        self.compatibility = compatibility
        self.batteryLevel = batteryLevel
        self.chargingState = chargingState
        self.donState = donState
        self.hingeState = hingeState
        self.thermalLevel = thermalLevel
    }
}

/// HEVC parameter sets of a stream (NAL units without start codes or length prefixes) and the coded size.
public struct RelayParameterSets: Sendable, Hashable {
    /// Video parameter sets.
    public var vps: [Data]
    /// Sequence parameter sets.
    public var sps: [Data]
    /// Picture parameter sets.
    public var pps: [Data]
    /// Width in pixels.
    public var width: Int
    /// Height in pixels.
    public var height: Int

    /// Creates parameter sets.
    public init(vps: [Data], sps: [Data], pps: [Data], width: Int, height: Int) {
        self.vps = vps
        self.sps = sps
        self.pps = pps
        self.width = width
        self.height = height
    }
}

/// One video frame as DAT delivered it, in the link protocol's two layouts.
public struct RelayVideoFrame: Sendable, Hashable {
    /// What the frame holds.
    public enum Content: Sendable, Hashable {
        /// An HEVC access unit of 4-byte length-prefixed NAL units (the `hvc1` sample layout), passed on byte for
        /// byte, with the parameter sets it decodes with.
        case hevc(accessUnit: Data, isKeyframe: Bool, parameterSets: RelayParameterSets)
        /// NV12 video range: luma plane, then interleaved CbCr, with these strides.
        case nv12(width: Int, height: Int, lumaBytesPerRow: Int, chromaBytesPerRow: Int, data: Data)
    }

    /// The frame's presentation time in microseconds, on the glasses' clock as DAT reports it.
    public var presentationTimeUs: Int64
    /// The frame.
    public var content: Content
    /// When the relay received it from DAT, in microseconds on the relay's clock (set by the DAT client).
    public var receivedUs: Int64 = 0
    /// When the glasses captured it, in microseconds on the relay's clock, where the platform can tell (the Linux
    /// adapter reads WearablesKit's frame timing); nil where it cannot, and the receive time stands in for it.
    public var captureUs: Int64?

    /// Creates a frame.
    public init(presentationTimeUs: Int64, content: Content) {
        self.presentationTimeUs = presentationTimeUs
        self.content = content
    }
}

/// A session-level change DAT reported.
public enum RelaySessionEvent: Sendable, Hashable {
    /// The session is started.
    case started
    /// The device paused the session (tap, doff, another experience).
    case paused
    /// A paused session is started again.
    case resumed
    /// The session stopped (terminal in DAT); `reason` is what DAT said.
    case ended(reason: String)
}

/// A stream-level change DAT reported.
public enum RelayStreamEvent: Sendable, Hashable {
    /// The camera is powering up.
    case starting(RelayStreamSettings)
    /// Frames flow.
    case streaming(RelayStreamSettings)
    /// Frames are paused (tap, photo capture, doff).
    case paused
    /// The stream stopped.
    case stopped
}

/// What the relay's DAT client reports, in order.
public enum RelayEvent: Sendable, Hashable {
    /// A device is there (the first one DAT lists).
    case deviceAvailable(RelayDeviceInfo)
    /// DAT lists no device.
    case deviceUnavailable
    /// The device's state changed (delivered at once on subscription, then on every change).
    case deviceState(RelayDeviceState)
    /// The answer to a permission query or request.
    case permission(permission: String, granted: Bool, requestID: UInt32)
    /// A session change.
    case session(RelaySessionEvent)
    /// A stream change, with the generation of the host's latest start or stop (nil when it carried none).
    case stream(RelayStreamEvent, generation: UInt32? = nil)
    /// A stream error: DAT's `StreamError` case name (`hingesClosed`, …) and its `localizedDescription`.
    case fault(name: String, message: String)
    /// A video frame.
    case video(RelayVideoFrame)
    /// A captured photo for the request that asked for it; `format` is a DAT case name.
    case photo(Data, format: String, requestID: UInt32)
    /// A change of DAT's Motion.
    case motion(RelayMotionEvent)
    /// IMU samples, oldest first.
    case motionSamples([RelayMotionSample])
    /// Audio DAT delivered with the stream (when the host's start asked for it).
    case audio(RelayAudioFrame)
}

/// A change of DAT's Motion, as the host hears it.
public enum RelayMotionEvent: Sendable, Hashable {
    /// Samples flow at this rate (a `MotionSamplingRate` case name).
    case started(rate: String)
    /// Motion stopped (asked, or DAT stopped it: a photo transfer does).
    case stopped
    /// Motion cannot be used: no started session, no IMU on these glasses (DAT's `addMotion` answered nil), or DAT
    /// refused (`sensorUnavailable`).
    case unavailable
}

/// One of DAT's `MotionSample`s, field for field: accelerometer m/s², gyroscope rad/s, magnetometer µT, the
/// orientation as a quaternion (x, y, z, w); every sensor field optional, as in DAT.
public struct RelayMotionSample: Sendable, Hashable {
    /// Nanoseconds on the glasses' monotonic clock.
    public var timestampNs: Int64
    /// Acceleration (x, y, z).
    public var accelerometer: SIMD3<Float>?
    /// Rotation rate (x, y, z).
    public var gyroscope: SIMD3<Float>?
    /// Magnetic field (x, y, z).
    public var magnetometer: SIMD3<Float>?
    /// Orientation (x, y, z, w).
    public var orientation: SIMD4<Float>?
    /// DAT's `MotionSource` case name (`glasses`, `neuralBand`, `unknown`).
    public var source: String

    /// Creates a sample.
    public init(timestampNs: Int64, accelerometer: SIMD3<Float>?, gyroscope: SIMD3<Float>?, magnetometer: SIMD3<Float>?,
                orientation: SIMD4<Float>?, source: String) {
        self.timestampNs = timestampNs
        self.accelerometer = accelerometer
        self.gyroscope = gyroscope
        self.magnetometer = magnetometer
        self.orientation = orientation
        self.source = source
    }
}

/// An error DAT reported to the relay: DAT's `StreamError` case name (`hingesClosed`, …, or `internalError` where
/// the relay had to name it) and DAT's `localizedDescription`.
public struct RelayDATError: Sendable, Hashable, CustomStringConvertible {
    /// The case name.
    public var name: String
    /// DAT's description.
    public var message: String

    /// Creates an error.
    public init(name: String, message: String) {
        self.name = name
        self.message = message
    }

    /// `NAME: MESSAGE`.
    public var description: String { "\(name): \(message)" }
}

/// The rules the relay keeps, from DAT's documentation.
public enum RelayRules {
    /// The least time between a session stopping and the next one starting: 2 s.
    public static let sessionRestartSpacingUs: Int64 = 2_000_000
}

/// The relay's clock: microseconds on one monotonic time line, and one-shot timers on it.
public protocol RelayClock: Sendable {
    /// Microseconds since the clock's epoch.
    var nowUs: Int64 { get }
    /// Runs `action` once, after `delayUs` microseconds (at once for zero or less, but never inside this call).
    func schedule(afterUs delayUs: Int64, _ action: @escaping @Sendable () -> Void)
}
