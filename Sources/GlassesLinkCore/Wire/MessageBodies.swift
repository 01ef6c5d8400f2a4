import Foundation
import WearablesKit

/// The wire codes of every enum the messages carry (index = code; see `docs/PROTOCOL.md`, never reorder).
enum WireCodes {
    static let linkState = WireEnum<LinkState>(name: "link state", cases: [.disconnected, .connecting, .connected])
    static let compatibility = WireEnum<Compatibility>(
        name: "compatibility", cases: [.undefined, .compatible, .deviceUpdateRequired, .sdkUpdateRequired])
    static let charging = WireEnum<ChargingState>(name: "charging state", cases: [.unknown, .charging, .notCharging])
    static let don = WireEnum<DonState>(name: "don state", cases: [.unknown, .doffed, .donned])
    static let hinge = WireEnum<HingeState>(name: "hinge state", cases: [.unknown, .closed, .open])
    static let thermal = WireEnum<ThermalLevel>(
        name: "thermal level",
        cases: [.unknown, .none, .light, .moderate, .severe, .critical, .emergency, .shutdown])
    /// Code 4 was `simulated` before DeviceType followed DAT 1.0; it now reads as `rayBanMeta`, what simulated
    /// glasses report (the first index of a value is its code, so `rayBanMeta` is still sent as 1).
    static let deviceType = WireEnum<DeviceType>(
        name: "device type",
        cases: [
            .unknown, .rayBanMeta, .oakleyMetaHSTN, .metaRayBanDisplay, .rayBanMeta, .oakleyMetaVanguard,
            .rayBanMetaOptics, .metaGlasses,
        ])
    static let permission = WireEnum<Permission>(name: "permission", cases: [.camera, .microphone])
    static let permissionStatus = WireEnum<PermissionStatus>(name: "permission status", cases: [.granted, .denied])
    static let photoFormat = WireEnum<PhotoCaptureFormat>(name: "photo format", cases: [.heic, .jpeg])
    static let codec = WireEnum<VideoCodec>(name: "video codec", cases: [.raw, .hvc1])
    static let resolution = WireEnum<StreamingResolution>(name: "resolution", cases: [.high, .medium, .low])
    static let fault = WireEnum<DeviceStreamFault>(
        name: "fault",
        cases: [
            .internalError, .videoStreamingError, .permissionDenied, .hingesClosed, .thermalHot, .batteryLow,
            .peakPowerLimit, .photoCaptureFailed, .audioStreamingError,
        ])
    static let motionRate = WireEnum<MotionSamplingRate>(
        name: "motion sampling rate", cases: [.hz5, .hz10, .hz15, .hz24, .hz30, .hz60])
    static let motionSource = WireEnum<MotionSource>(name: "motion source", cases: [.unknown, .glasses, .neuralBand])
    static let photoResolution = WireEnum<PhotoResolution>(name: "photo resolution", cases: [.small, .medium, .large, .full])
    static let audioRate = WireEnum<AudioSampleRate>(name: "audio sample rate", cases: [.rate16000, .rate44100, .rate48000])
    static let photoQuality = WireEnum<PhotoQuality>(name: "photo quality", cases: [.low, .medium, .high])
    static let photoFailure = WireEnum<DevicePhotoFailure>(
        name: "photo failure",
        cases: [.captureFailure, .sessionSetupFailed, .busy, .serviceUnavailable, .permissionDenied, .deviceHealthCritical])
    static let errorCode = WireEnum<LinkError.Code>(
        name: "close reason",
        cases: [.connectionLost, .heartbeatTimeout, .protocolViolation, .unavailable, .incompatible, .closedLocally])
}

/// Encodes and decodes message bodies (everything after the frame header).
enum MessageBodies {
    // MARK: Encoding

    static func encode(_ frame: LinkFrame, into w: inout ByteWriter) -> LinkMessageType {
        switch frame {
        case .host(let message): return encode(message, into: &w)
        case .device(let message): return encode(message, into: &w)
        case .goodbye(let error):
            WireCodes.errorCode.write(error.code, to: &w)
            w.string(error.message)
            return .goodbye
        case .pair(let version, let token):
            w.u16(version)
            w.bool(token != nil)
            if let token { w.string(token) }
            return .pair
        }
    }

    private static func encode(_ message: HostMessage, into w: inout ByteWriter) -> LinkMessageType {
        switch message {
        case .hello(let version, let token):
            w.u16(version)
            w.bool(token != nil)
            if let token { w.string(token) }
            return .hostHello
        case .checkPermission(let permission, let requestID):
            WireCodes.permission.write(permission, to: &w)
            w.u32(requestID)
            return .checkPermission
        case .requestPermission(let permission, let requestID):
            WireCodes.permission.write(permission, to: &w)
            w.u32(requestID)
            return .requestPermission
        case .startSession: return .startSession
        case .stopSession: return .stopSession
        case .startStream(let configuration, let generation):
            write(configuration, into: &w)
            if let audio = configuration.audioCodec {
                // Appended after the generation (written out, present or not): `opt<{E(AudioSampleRate), u32 channels}>`.
                w.bool(generation != nil)
                if let generation { w.u32(generation) }
                w.bool(true)
                WireCodes.audioRate.write(audio.sampleRate, to: &w)
                w.u32(audio.numberOfChannels)
            } else {
                writeTrailing(generation, into: &w)
            }
            return .startStream
        case .stopStream(let generation):
            writeTrailing(generation, into: &w)
            return .stopStream
        case .capturePhoto(let format, let requestID):
            WireCodes.photoFormat.write(format, to: &w)
            w.u32(requestID)
            return .capturePhoto
        case .frameCredit(let credit):
            w.u32(credit)
            return .frameCredit
        case .heartbeat(let sequence, let hostClockUs):
            w.u32(sequence)
            // Trailing, optional (protocol 1 evolution): `opt<i64>` host clock.
            if let hostClockUs {
                w.bool(true)
                w.i64(hostClockUs)
            }
            return .hostHeartbeat
        case .startMotion(let rate):
            WireCodes.motionRate.write(rate, to: &w)
            return .startMotion
        case .stopMotion:
            return .stopMotion
        case .startPhoto:
            return .startPhoto
        case .stopPhoto:
            return .stopPhoto
        case .standalonePhoto(let resolution, let quality, let requestID):
            WireCodes.photoResolution.write(resolution, to: &w)
            WireCodes.photoQuality.write(quality, to: &w)
            w.u32(requestID)
            return .standalonePhoto
        }
    }

    private static func encode(_ message: DeviceMessage, into w: inout ByteWriter) -> LinkMessageType {
        switch message {
        case .hello(let info):
            w.string(info.identifier)
            w.string(info.name)
            withUnsafeBytes(of: info.uuid.uuid) { w.bytes.append(contentsOf: $0) }
            WireCodes.deviceType.write(info.deviceType, to: &w)
            w.string(info.firmwareVersion)
            w.array(info.supportedCodecs) { WireCodes.codec.write($1, to: &$0) }
            w.array(info.supportedResolutions) { WireCodes.resolution.write($1, to: &$0) }
            w.array(info.supportedFrameRates) { $0.u32(UInt32(clamping: $1)) }
            w.array(info.supportedPhotoFormats) { WireCodes.photoFormat.write($1, to: &$0) }
            w.u16(info.protocolVersion)
            // Trailing (protocol 1 evolution): `bool` has an IMU; absent (read as no IMU) from older devices.
            w.bool(info.hasIMU)
            // Trailing (after the IMU flag): `bool` offers standalone photos; absent (read as no) from older devices.
            w.bool(info.hasStandalonePhoto)
            return .deviceHello
        case .deviceState(let state):
            WireCodes.linkState.write(state.linkState, to: &w)
            WireCodes.compatibility.write(state.compatibility, to: &w)
            w.bool(state.batteryLevel != nil)
            if let level = state.batteryLevel { w.i64(Int64(level)) }
            WireCodes.charging.write(state.chargingState, to: &w)
            WireCodes.don.write(state.donState, to: &w)
            WireCodes.hinge.write(state.hingeState, to: &w)
            WireCodes.thermal.write(state.thermalLevel, to: &w)
            return .deviceState
        case .permission(let permission, let status, let requestID):
            WireCodes.permission.write(permission, to: &w)
            WireCodes.permissionStatus.write(status, to: &w)
            w.u32(requestID)
            return .permission
        case .session(let event):
            switch event {
            case .started: w.u8(0)
            case .paused: w.u8(1)
            case .resumed: w.u8(2)
            case .ended(let reason):
                w.u8(3)
                w.string(reason)
            }
            return .session
        case .stream(let event, let generation):
            switch event {
            case .starting(let configuration):
                w.u8(0)
                write(configuration, into: &w)
            case .streaming(let configuration):
                w.u8(1)
                write(configuration, into: &w)
            case .paused: w.u8(2)
            case .stopped: w.u8(3)
            }
            writeTrailing(generation, into: &w)
            return .stream
        case .codecConfiguration(let configuration):
            w.array(configuration.videoParameterSets) { $0.blob($1) }
            w.array(configuration.sequenceParameterSets) { $0.blob($1) }
            w.array(configuration.pictureParameterSets) { $0.blob($1) }
            w.count32(configuration.width)
            w.count32(configuration.height)
            return .codecConfiguration
        case .videoSample(let sample):
            w.i64(sample.presentationTimeUs)
            w.bool(sample.isKeyframe)
            switch sample.format {
            case .hevc:
                w.u8(0)
            case .nv12(let width, let height, let lumaBytesPerRow, let chromaBytesPerRow):
                w.u8(1)
                w.count32(width)
                w.count32(height)
                w.count32(lumaBytesPerRow)
                w.count32(chromaBytesPerRow)
            }
            w.blob(sample.payload)
            // Trailing, optional: `opt<{captureUs i64, sentUs i64}>` (receivedUs is the host's, never sent).
            if let timing = sample.timing {
                w.bool(true)
                w.i64(timing.captureUs)
                w.i64(timing.sentUs)
            }
            return .videoSample
        case .photo(let photo, let requestID):
            w.u32(requestID)
            WireCodes.photoFormat.write(photo.format, to: &w)
            w.blob(photo.data)
            return .photo
        case .fault(let fault, let message):
            WireCodes.fault.write(fault, to: &w)
            w.string(message)
            return .fault
        case .heartbeat(let sequence, let dropped, let clock):
            w.u32(sequence)
            w.u64(dropped)
            // Trailing, optional: `opt<{echoHostClockUs i64, receivedUs i64, sentUs i64}>`.
            if let clock {
                w.bool(true)
                w.i64(clock.echoHostClockUs)
                w.i64(clock.receivedUs)
                w.i64(clock.sentUs)
            }
            return .deviceHeartbeat
        case .motion(let event):
            switch event {
            case .started(let rate):
                w.u8(0)
                WireCodes.motionRate.write(rate, to: &w)
            case .stopped: w.u8(1)
            case .unavailable: w.u8(2)
            }
            return .motion
        case .motionSamples(let samples):
            w.array(samples) { write($1, into: &$0) }
            return .motionSamples
        case .photoCapability(let event):
            switch event {
            case .started: w.u8(0)
            case .stopped: w.u8(1)
            case .unavailable(let failure, let message):
                w.u8(2)
                WireCodes.photoFailure.write(failure, to: &w)
                w.string(message)
            case .captureFailed(let requestID, let failure, let message):
                w.u8(3)
                w.u32(requestID)
                WireCodes.photoFailure.write(failure, to: &w)
                w.string(message)
            }
            return .photoCapability
        case .audioSample(let sample):
            w.i64(sample.presentationTimeUs)
            WireCodes.audioRate.write(sample.sampleRate, to: &w)
            w.u8(sample.channels)
            w.blob(sample.payload)
            return .audioSample
        case .photoChunk(let chunk):
            w.u32(chunk.requestID)
            w.u64(chunk.totalBytes)
            w.u64(chunk.offset)
            w.bool(chunk.metadata != nil)
            if let metadata = chunk.metadata { w.blob(metadata) }
            w.blob(chunk.bytes)
            return .photoChunk
        }
    }

    /// A motion sample: `i64` timestamp, `u8` source, `u8` presence bits (accelerometer 1, gyroscope 2,
    /// magnetometer 4, orientation 8), then the present fields as big-endian IEEE 754 `f32`s (x y z, and w last).
    private static func write(_ sample: MotionSample, into w: inout ByteWriter) {
        w.i64(sample.timestampNs)
        WireCodes.motionSource.write(sample.source, to: &w)
        var bits: UInt8 = 0
        if sample.accelerometer != nil { bits |= 1 }
        if sample.gyroscope != nil { bits |= 2 }
        if sample.magnetometer != nil { bits |= 4 }
        if sample.orientation != nil { bits |= 8 }
        w.u8(bits)
        for v in [sample.accelerometer, sample.gyroscope, sample.magnetometer].compactMap({ $0 }) {
            for f in [v.x, v.y, v.z] { w.u32(f.bitPattern) }
        }
        if let q = sample.orientation {
            for f in [q.x, q.y, q.z, q.w] { w.u32(f.bitPattern) }
        }
    }

    private static func readMotionSample(_ r: inout ByteReader) throws(BodyDecodingError) -> MotionSample {
        let timestamp = try r.i64("motion timestamp")
        let source = try WireCodes.motionSource.read(from: &r)
        let bits = try r.u8("motion fields")
        guard bits & ~0x0F == 0 else { throw BodyDecodingError(reason: "unknown motion fields \(bits)") }
        func vector(_ r: inout ByteReader, _ what: String) throws(BodyDecodingError) -> Vector3 {
            Vector3(
                x: Float(bitPattern: try r.u32(what)), y: Float(bitPattern: try r.u32(what)),
                z: Float(bitPattern: try r.u32(what)))
        }
        let accelerometer = bits & 1 != 0 ? try vector(&r, "accelerometer") : nil
        let gyroscope = bits & 2 != 0 ? try vector(&r, "gyroscope") : nil
        let magnetometer = bits & 4 != 0 ? try vector(&r, "magnetometer") : nil
        var orientation: Quaternion?
        if bits & 8 != 0 {
            orientation = Quaternion(
                x: Float(bitPattern: try r.u32("orientation")), y: Float(bitPattern: try r.u32("orientation")),
                z: Float(bitPattern: try r.u32("orientation")), w: Float(bitPattern: try r.u32("orientation")))
        }
        return MotionSample(
            timestampNs: timestamp, accelerometer: accelerometer, gyroscope: gyroscope, magnetometer: magnetometer,
            orientation: orientation, source: source)
    }

    /// A stream generation, appended (protocol 1 evolution) as `opt<u32>`; nothing at all when there is none, as an
    /// older sender's body.
    private static func writeTrailing(_ generation: UInt32?, into w: inout ByteWriter) {
        guard let generation else { return }
        w.bool(true)
        w.u32(generation)
    }

    private static func write(_ configuration: StreamConfiguration, into w: inout ByteWriter) {
        WireCodes.codec.write(configuration.videoCodec, to: &w)
        WireCodes.resolution.write(configuration.resolution, to: &w)
        w.u16(UInt16(clamping: configuration.frameRate))
    }

    // MARK: Decoding

    /// Decodes a body of a known type; trailing bytes are ignored (later versions may append fields).
    static func decode(_ type: LinkMessageType, _ r: inout ByteReader) throws(BodyDecodingError) -> LinkFrame {
        switch type {
        case .hostHello:
            let version = try r.u16("protocol version")
            let token: String? = try r.bool("token flag") ? try r.string("pairing token") : nil
            return .host(.hello(protocolVersion: version, pairingToken: token))
        case .checkPermission:
            let permission = try WireCodes.permission.read(from: &r)
            return .host(.checkPermission(permission, requestID: try r.u32("request ID")))
        case .requestPermission:
            let permission = try WireCodes.permission.read(from: &r)
            return .host(.requestPermission(permission, requestID: try r.u32("request ID")))
        case .startSession: return .host(.startSession)
        case .stopSession: return .host(.stopSession)
        case .startStream:
            let configuration = try readConfiguration(&r)
            let generation = try readGeneration(&r)
            let audio: AudioCodec? = try readTrailingOptional(&r, "audio flag") { (r: inout ByteReader) throws(BodyDecodingError) in
                let rate = try WireCodes.audioRate.read(from: &r)
                return .pcm(sampleRate: rate, numberOfChannels: try r.u32("audio channels"))
            }
            guard let audio else { return .host(.startStream(configuration, generation: generation)) }
            return .host(.startStream(
                StreamConfiguration(videoCodec: configuration.videoCodec, audioCodec: audio, resolution: configuration.resolution,
                                    frameRate: configuration.frameRate),
                generation: generation))
        case .stopStream: return .host(.stopStream(generation: try readGeneration(&r)))
        case .capturePhoto:
            let format = try WireCodes.photoFormat.read(from: &r)
            return .host(.capturePhoto(format, requestID: try r.u32("request ID")))
        case .frameCredit: return .host(.frameCredit(try r.u32("credit")))
        case .hostHeartbeat:
            let sequence = try r.u32("sequence")
            let clock: Int64? = try readTrailingOptional(&r, "host clock flag") {
                (r: inout ByteReader) throws(BodyDecodingError) in try r.i64("host clock")
            }
            return .host(.heartbeat(sequence: sequence, hostClockUs: clock))
        case .deviceHello:
            let identifier = try r.string("identifier")
            let name = try r.string("name")
            var uuidBytes: [UInt8] = []
            for _ in 0..<16 { uuidBytes.append(try r.u8("uuid")) }
            let uuid = UUID(uuid: uuidBytes.withUnsafeBytes { $0.loadUnaligned(as: uuid_t.self) })
            let deviceType = try WireCodes.deviceType.read(from: &r)
            let firmware = try r.string("firmware version")
            let codecs = try r.array("codecs") { (r: inout ByteReader) throws(BodyDecodingError) in
                try WireCodes.codec.read(from: &r)
            }
            let resolutions = try r.array("resolutions") { (r: inout ByteReader) throws(BodyDecodingError) in
                try WireCodes.resolution.read(from: &r)
            }
            let rates = try r.array("frame rates") { (r: inout ByteReader) throws(BodyDecodingError) in
                UInt(try r.u32("frame rate"))
            }
            let photoFormats = try r.array("photo formats") { (r: inout ByteReader) throws(BodyDecodingError) in
                try WireCodes.photoFormat.read(from: &r)
            }
            let version = try r.u16("protocol version")
            let hasIMU = try readTrailingOptional(&r, "IMU flag") { (_: inout ByteReader) throws(BodyDecodingError) in
                true
            } ?? false
            let hasPhoto = try readTrailingOptional(&r, "standalone photo flag") {
                (_: inout ByteReader) throws(BodyDecodingError) in true
            } ?? false
            return .device(
                .hello(
                    DeviceInfo(
                        identifier: identifier, name: name, uuid: uuid, deviceType: deviceType,
                        firmwareVersion: firmware,
                        supportedCodecs: codecs, supportedResolutions: resolutions, supportedFrameRates: rates,
                        supportedPhotoFormats: photoFormats, protocolVersion: version, hasIMU: hasIMU,
                        hasStandalonePhoto: hasPhoto)))
        case .deviceState:
            let link = try WireCodes.linkState.read(from: &r)
            let compatibility = try WireCodes.compatibility.read(from: &r)
            let battery: Int? = try r.bool("battery flag") ? Int(truncatingIfNeeded: try r.i64("battery")) : nil
            return .device(
                .deviceState(
                    DeviceState(
                        linkState: link, compatibility: compatibility, batteryLevel: battery,
                        chargingState: try WireCodes.charging.read(from: &r),
                        donState: try WireCodes.don.read(from: &r),
                        hingeState: try WireCodes.hinge.read(from: &r),
                        thermalLevel: try WireCodes.thermal.read(from: &r))))
        case .permission:
            let permission = try WireCodes.permission.read(from: &r)
            let status = try WireCodes.permissionStatus.read(from: &r)
            return .device(.permission(permission, status, requestID: try r.u32("request ID")))
        case .session:
            switch try r.u8("session event") {
            case 0: return .device(.session(.started))
            case 1: return .device(.session(.paused))
            case 2: return .device(.session(.resumed))
            case 3: return .device(.session(.ended(reason: try r.string("reason"))))
            case let other: throw BodyDecodingError(reason: "unknown session event \(other)")
            }
        case .stream:
            let event: DeviceStreamEvent
            switch try r.u8("stream event") {
            case 0: event = .starting(try readConfiguration(&r))
            case 1: event = .streaming(try readConfiguration(&r))
            case 2: event = .paused
            case 3: event = .stopped
            case let other: throw BodyDecodingError(reason: "unknown stream event \(other)")
            }
            return .device(.stream(event, generation: try readGeneration(&r)))
        case .codecConfiguration:
            let read: (inout ByteReader) throws(BodyDecodingError) -> Data = {
                (r: inout ByteReader) throws(BodyDecodingError) in
                try r.blob("parameter set")
            }
            let vps = try r.array("VPS", read)
            let sps = try r.array("SPS", read)
            let pps = try r.array("PPS", read)
            let width = Int(try r.u32("width"))
            let height = Int(try r.u32("height"))
            return .device(
                .codecConfiguration(
                    HEVCCodecConfiguration(
                        videoParameterSets: vps, sequenceParameterSets: sps, pictureParameterSets: pps,
                        width: width, height: height)))
        case .videoSample:
            let pts = try r.i64("presentation time")
            let keyframe = try r.bool("keyframe flag")
            let format: VideoSampleFormat
            switch try r.u8("sample format") {
            case 0: format = .hevc
            case 1:
                format = .nv12(
                    width: Int(try r.u32("width")), height: Int(try r.u32("height")),
                    lumaBytesPerRow: Int(try r.u32("luma stride")), chromaBytesPerRow: Int(try r.u32("chroma stride")))
            case let other: throw BodyDecodingError(reason: "unknown sample format \(other)")
            }
            let payload = try r.blob("sample payload")
            if case .nv12(let width, let height, let luma, let chroma) = format {
                // No dimension or stride can exceed the payload's byte count in a frame that fits it; rejecting those
                // here keeps every later plane-size product far from overflow (each factor is at most 8 MiB).
                guard max(width, height, luma, chroma) <= payload.count else {
                    throw BodyDecodingError(
                        reason:
                            "NV12 sample \(width)x\(height) (strides \(luma)/\(chroma)) cannot fit its \(payload.count)-byte payload"
                    )
                }
            }
            let timing: SampleTiming? = try readTrailingOptional(&r, "timing flag") {
                (r: inout ByteReader) throws(BodyDecodingError) in
                SampleTiming(captureUs: try r.i64("capture time"), sentUs: try r.i64("sent time"))
            }
            return .device(
                .videoSample(
                    VideoSample(
                        presentationTimeUs: pts, isKeyframe: keyframe, format: format, payload: payload,
                        timing: timing)))
        case .photo:
            let requestID = try r.u32("request ID")
            let format = try WireCodes.photoFormat.read(from: &r)
            return .device(.photo(PhotoData(data: try r.blob("photo"), format: format), requestID: requestID))
        case .fault:
            let fault = try WireCodes.fault.read(from: &r)
            return .device(.fault(fault, message: try r.string("fault message")))
        case .deviceHeartbeat:
            let sequence = try r.u32("sequence")
            let dropped = try r.u64("dropped frames")
            let clock: ClockEcho? = try readTrailingOptional(&r, "clock echo flag") {
                (r: inout ByteReader) throws(BodyDecodingError) in
                ClockEcho(
                    echoHostClockUs: try r.i64("echoed host clock"), receivedUs: try r.i64("echo received time"),
                    sentUs: try r.i64("echo sent time"))
            }
            return .device(.heartbeat(sequence: sequence, droppedFrames: dropped, clock: clock))
        case .startMotion: return .host(.startMotion(try WireCodes.motionRate.read(from: &r)))
        case .stopMotion: return .host(.stopMotion)
        case .motion:
            switch try r.u8("motion event") {
            case 0: return .device(.motion(.started(try WireCodes.motionRate.read(from: &r))))
            case 1: return .device(.motion(.stopped))
            case 2: return .device(.motion(.unavailable))
            case let other: throw BodyDecodingError(reason: "unknown motion event \(other)")
            }
        case .motionSamples:
            return .device(.motionSamples(try r.array("motion samples", readMotionSample)))
        case .audioSample:
            let pts = try r.i64("audio presentation time")
            let rate = try WireCodes.audioRate.read(from: &r)
            let channels = try r.u8("audio channels")
            let sample = AudioSample(presentationTimeUs: pts, sampleRate: rate, channels: channels, payload: try r.blob("audio payload"))
            if let problem = sample.problem { throw BodyDecodingError(reason: problem) }
            return .device(.audioSample(sample))
        case .startPhoto: return .host(.startPhoto)
        case .stopPhoto: return .host(.stopPhoto)
        case .standalonePhoto:
            let resolution = try WireCodes.photoResolution.read(from: &r)
            let quality = try WireCodes.photoQuality.read(from: &r)
            return .host(.standalonePhoto(resolution, quality, requestID: try r.u32("request ID")))
        case .photoCapability:
            switch try r.u8("photo event") {
            case 0: return .device(.photoCapability(.started))
            case 1: return .device(.photoCapability(.stopped))
            case 2:
                let failure = try WireCodes.photoFailure.read(from: &r)
                return .device(.photoCapability(.unavailable(failure, message: try r.string("photo failure message"))))
            case 3:
                let requestID = try r.u32("request ID")
                let failure = try WireCodes.photoFailure.read(from: &r)
                return .device(.photoCapability(.captureFailed(
                    requestID: requestID, failure, message: try r.string("photo failure message"))))
            case let other: throw BodyDecodingError(reason: "unknown photo event \(other)")
            }
        case .photoChunk:
            let requestID = try r.u32("request ID")
            let total = try r.u64("photo size")
            let offset = try r.u64("photo offset")
            let metadata: Data? = try r.bool("metadata flag") ? try r.blob("photo metadata") : nil
            let bytes = try r.blob("photo bytes")
            // The numbers are the glasses'; the transfer's rules (size, order, bounds) are WearablesKit's to check,
            // but no sum here may overflow.
            guard offset <= total, UInt64(bytes.count) <= total - offset else {
                throw BodyDecodingError(reason: "photo chunk of \(bytes.count) bytes at \(offset) passes its \(total)-byte size")
            }
            return .device(.photoChunk(PhotoChunk(requestID: requestID, totalBytes: total, offset: offset, bytes: bytes,
                                                  metadata: metadata)))
        case .goodbye:
            let code = try WireCodes.errorCode.read(from: &r)
            return .goodbye(LinkError(code, try r.string("reason")))
        case .pair:
            let version = try r.u16("protocol version")
            let token: String? = try r.bool("token flag") ? try r.string("pairing token") : nil
            return .pair(protocolVersion: version, pairingToken: token)
        }
    }

    /// A field appended after protocol 1's first bodies: absent (nil) when the body ends before it, as bodies of
    /// older senders do; otherwise an `opt<T>` that must be well formed.
    private static func readTrailingOptional<T>(
        _ r: inout ByteReader, _ what: String, _ read: (inout ByteReader) throws(BodyDecodingError) -> T
    ) throws(BodyDecodingError) -> T? {
        guard r.remaining > 0, try r.bool(what) else { return nil }
        return try read(&r)
    }

    /// The appended `opt<u32>` stream generation of `startStream`, `stopStream` and `stream` bodies.
    private static func readGeneration(_ r: inout ByteReader) throws(BodyDecodingError) -> UInt32? {
        try readTrailingOptional(&r, "stream generation flag") { (r: inout ByteReader) throws(BodyDecodingError) in
            try r.u32("stream generation")
        }
    }

    private static func readConfiguration(_ r: inout ByteReader) throws(BodyDecodingError) -> StreamConfiguration {
        let codec = try WireCodes.codec.read(from: &r)
        let resolution = try WireCodes.resolution.read(from: &r)
        let rate = UInt(try r.u16("frame rate"))
        do {
            return try StreamConfiguration.validated(videoCodec: codec, resolution: resolution, frameRate: rate)
        } catch {
            throw BodyDecodingError(reason: error.description)
        }
    }
}
