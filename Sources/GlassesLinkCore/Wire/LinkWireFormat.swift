/// Constants of the link's wire format (see `docs/PROTOCOL.md`).
public enum LinkWireFormat {
    /// The four bytes that start every frame: `GLNK`.
    public static let magic: [UInt8] = [0x47, 0x4C, 0x4E, 0x4B]
    /// The wire format version in every frame header.
    public static let version: UInt8 = 1
    /// Bytes in a frame header: magic 4, version 1, type 1, flags 2, length 4, header CRC 4, frame CRC 4.
    public static let headerSize = 20
    /// The largest payload a frame may carry by default: 8 MiB.
    public static let maxPayloadSize = 8 << 20
    /// Garbage bytes tolerated in a row (between valid frames) before the link is closed as a protocol violation.
    public static let maxConsecutiveGarbage = 256 << 10
    /// Frames with a valid header but a bad body CRC tolerated in a row (no valid frame between them) before the link
    /// is closed as a protocol violation; each one alone is skipped and counted.
    public static let maxConsecutiveCorruptFrames = 32
    /// The largest body of a control message (everything but video samples, photos and codec configurations).
    public static let maxControlBodySize = 64 << 10
    /// The largest body of a codec configuration (HEVC parameter sets are a few hundred bytes).
    public static let maxCodecConfigurationBodySize = 256 << 10

    /// The largest body a frame of `type` may announce, given the link's overall limit `maxPayloadSize`: video samples
    /// and photos up to `maxPayloadSize`, codec configurations up to ``maxCodecConfigurationBodySize``, every other
    /// known type up to ``maxControlBodySize`` (never more than `maxPayloadSize`). A type this version does not know
    /// (nil) may carry up to `maxPayloadSize`: it is skipped, and its body is not kept.
    public static func maxBodySize(of type: LinkMessageType?, maxPayloadSize: Int = maxPayloadSize) -> Int {
        let overall = max(0, maxPayloadSize)
        switch type {
        case .videoSample, .photo, .photoChunk, .audioSample, nil: return overall
        case .codecConfiguration: return min(overall, maxCodecConfigurationBodySize)
        default: return min(overall, maxControlBodySize)
        }
    }
}

/// The message type byte of a frame header.
public enum LinkMessageType: UInt8, Sendable, CaseIterable {
    // Host to device: 0x01–0x1F.
    /// ``HostMessage/hello(protocolVersion:pairingToken:)``.
    case hostHello = 0x01
    /// ``HostMessage/checkPermission(_:requestID:)``.
    case checkPermission = 0x02
    /// ``HostMessage/requestPermission(_:requestID:)``.
    case requestPermission = 0x03
    /// ``HostMessage/startSession``.
    case startSession = 0x04
    /// ``HostMessage/stopSession``.
    case stopSession = 0x05
    /// ``HostMessage/startStream(_:generation:)``.
    case startStream = 0x06
    /// ``HostMessage/stopStream(generation:)``.
    case stopStream = 0x07
    /// ``HostMessage/capturePhoto(_:requestID:)``.
    case capturePhoto = 0x08
    /// ``HostMessage/frameCredit(_:)``.
    case frameCredit = 0x09
    /// ``HostMessage/heartbeat(sequence:)``.
    case hostHeartbeat = 0x0A
    /// ``HostMessage/startMotion(_:)`` (sent only to a device whose hello announced an IMU).
    case startMotion = 0x0B
    /// ``HostMessage/stopMotion``.
    case stopMotion = 0x0C
    /// ``HostMessage/startPhoto`` (sent only to a device whose hello announced standalone photos).
    case startPhoto = 0x0D
    /// ``HostMessage/stopPhoto``.
    case stopPhoto = 0x0E
    /// ``HostMessage/standalonePhoto(_:_:requestID:)``.
    case standalonePhoto = 0x0F
    // Device to host: 0x21–0x3F.
    /// ``DeviceMessage/hello(_:)``.
    case deviceHello = 0x21
    /// ``DeviceMessage/deviceState(_:)``.
    case deviceState = 0x22
    /// ``DeviceMessage/permission(_:_:requestID:)``.
    case permission = 0x23
    /// ``DeviceMessage/session(_:)``.
    case session = 0x24
    /// ``DeviceMessage/stream(_:generation:)``.
    case stream = 0x25
    /// ``DeviceMessage/codecConfiguration(_:)``.
    case codecConfiguration = 0x26
    /// ``DeviceMessage/videoSample(_:)``.
    case videoSample = 0x27
    /// ``DeviceMessage/photo(_:requestID:)``.
    case photo = 0x28
    /// ``DeviceMessage/fault(_:message:)``.
    case fault = 0x29
    /// ``DeviceMessage/heartbeat(sequence:droppedFrames:)``.
    case deviceHeartbeat = 0x2A
    /// ``DeviceMessage/motion(_:)``.
    case motion = 0x2B
    /// ``DeviceMessage/motionSamples(_:)``.
    case motionSamples = 0x2C
    /// ``DeviceMessage/photoCapability(_:)``.
    case photoCapability = 0x2D
    /// ``DeviceMessage/photoChunk(_:)``.
    case photoChunk = 0x2E
    /// ``DeviceMessage/audioSample(_:)``.
    case audioSample = 0x2F
    // Either direction: 0x70–0x7F.
    /// ``LinkFrame/pair(protocolVersion:pairingToken:)``: a dialing device's first frame.
    case pair = 0x7E
    /// ``LinkFrame/goodbye(_:)``.
    case goodbye = 0x7F
}
