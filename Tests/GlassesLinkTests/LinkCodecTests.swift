import Foundation
import Testing
import WearablesKit

@testable import GlassesLink
@testable import GlassesLinkCore

/// Every message case, with non-default values.
enum AllMessages {
    static let configuration = try! StreamConfiguration.validated(videoCodec: .hvc1, resolution: .low, frameRate: 24)

    static let host: [HostMessage] = [
        .hello(protocolVersion: linkProtocolVersion, pairingToken: nil),
        .hello(protocolVersion: 7, pairingToken: "s3cret-ü"),
        .checkPermission(.camera, requestID: 1),
        .requestPermission(.microphone, requestID: 0xFFFF_FFFF),
        .startSession,
        .stopSession,
        .startStream(configuration),
        .startStream(StreamConfiguration()),
        .stopStream(),
        .startStream(configuration, generation: 1),
        .startStream(StreamConfiguration(), generation: .max),
        .stopStream(generation: 0),
        .stopStream(generation: 0x8000_0001),
        .capturePhoto(.heic, requestID: 42),
        .capturePhoto(.jpeg, requestID: 43),
        .frameCredit(8),
        .heartbeat(sequence: 123_456),
        .heartbeat(sequence: 7, hostClockUs: 1_234_567),
        .heartbeat(sequence: 8, hostClockUs: .min),
    ]

    /// Computed, not stored: a stored static keeps its sample payloads until exit where LeakSanitizer cannot see
    /// the references (inside enum payloads), and reports them as leaks.
    static var device: [DeviceMessage] { [
        .hello(Fixtures.info),
        .hello(
            DeviceInfo(
                identifier: "", name: "Ray-Ban ✓", deviceType: .rayBanMeta, firmwareVersion: "",
                supportedCodecs: [], supportedResolutions: [.high], supportedFrameRates: [2, 30],
                supportedPhotoFormats: [.heic, .jpeg], protocolVersion: 9)),
        .deviceState(DeviceState()),
        .deviceState(
            DeviceState(
                linkState: .connecting, compatibility: .sdkUpdateRequired, batteryLevel: nil, chargingState: .charging,
                donState: .doffed, hingeState: .closed, thermalLevel: .emergency)),
        .deviceState(DeviceState(batteryLevel: -3, thermalLevel: .shutdown)),
        .permission(.camera, .granted, requestID: 5),
        .permission(.microphone, .denied, requestID: 6),
        .session(.started), .session(.paused), .session(.resumed), .session(.ended(reason: "doffed")),
        .stream(.starting(configuration)), .stream(.streaming(StreamConfiguration())), .stream(.paused),
        .stream(.stopped),
        .stream(.starting(configuration), generation: 2), .stream(.streaming(configuration), generation: .max),
        .stream(.paused, generation: 0), .stream(.stopped, generation: 17),
        .codecConfiguration(
            HEVCCodecConfiguration(
                videoParameterSets: [Data([0x40, 0x01, 0x0C])], sequenceParameterSets: [Data([0x42, 0x01]), Data()],
                pictureParameterSets: [Data([0x44, 0x01, 0xC1])], width: 360, height: 640)),
        .videoSample(Fixtures.sample(0)),
        .videoSample(
            VideoSample(
                presentationTimeUs: -5, isKeyframe: true,
                format: .nv12(width: 4, height: 2, lumaBytesPerRow: 8, chromaBytesPerRow: 8),
                payload: Data(repeating: 0x80, count: 24))),
        .videoSample(VideoSample(presentationTimeUs: .max, isKeyframe: false, format: .hevc, payload: Data())),
        .photo(PhotoData(data: Data([0xFF, 0xD8, 0xFF, 0xD9]), format: .jpeg), requestID: 9),
        .fault(.thermalHot, message: "too hot"),
        .fault(.photoCaptureFailed, message: ""),
        .heartbeat(sequence: 3, droppedFrames: 0xFFFF_FFFF_FFFF),
        .heartbeat(
            sequence: 4, droppedFrames: 1,
            clock: ClockEcho(echoHostClockUs: 1_000_000, receivedUs: -7, sentUs: .max)),
        .videoSample(
            VideoSample(
                presentationTimeUs: 99, isKeyframe: true, format: .hevc, payload: Data([1, 2, 3]),
                timing: SampleTiming(captureUs: -40, sentUs: .max))),
    ] }

    static let goodbyes: [LinkFrame] = [
        .goodbye(LinkError(.incompatible, "pairing failed")),
        .goodbye(LinkError(.closedLocally, "bye")),
        .goodbye(LinkError(.heartbeatTimeout, "silence")),
    ]

    static var frames: [LinkFrame] { host.map(LinkFrame.host) + device.map(LinkFrame.device) + goodbyes }

    static var fault: [DeviceMessage] { DeviceStreamFault.allCases.map { .fault($0, message: $0.rawValue) } }
}

@Suite("Link codec")
struct LinkCodecTests {
    let encoder = LinkFrameEncoder()

    private func frames(_ outputs: [LinkFrameDecoder.Output]) -> [LinkFrame] {
        outputs.compactMap { if case .frame(let frame) = $0 { frame } else { nil } }
    }

    @Test("CRC-32 matches the standard check value and a bytewise reference")
    func crc() {
        #expect(CRC32.checksum(Array("123456789".utf8)) == 0xCBF4_3926)
        #expect(CRC32.checksum([UInt8]()) == 0)
        var generator = SplitMix(seed: 1)
        for length in [1, 7, 8, 9, 63, 1000] {
            let bytes = (0..<length).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            var reference: UInt32 = 0xFFFF_FFFF
            for byte in bytes {
                reference ^= UInt32(byte)
                for _ in 0..<8 { reference = reference & 1 != 0 ? (reference >> 1) ^ 0xEDB8_8320 : reference >> 1 }
            }
            #expect(CRC32.checksum(bytes) == reference ^ 0xFFFF_FFFF)
            var split = CRC32()
            split.update(bytes.prefix(length / 3))
            split.update(bytes.dropFirst(length / 3))
            #expect(split.value == reference ^ 0xFFFF_FFFF)
        }
    }

    @Test(
        "every message survives a round trip", arguments: AllMessages.frames + AllMessages.fault.map(LinkFrame.device))
    func roundTrip(frame: LinkFrame) throws {
        let bytes = try encoder.encode(frame)
        var decoder = LinkFrameDecoder()
        #expect(frames(decoder.decode(bytes)) == [frame])
        #expect(decoder.bufferedByteCount == 0)
        #expect(decoder.statistics.garbageBytesSkipped == 0)
    }

    @Test("a stream of every message decodes the same fed one byte at a time or all at once")
    func incremental() throws {
        let all = AllMessages.frames
        let stream = try all.flatMap { try encoder.encode($0) }
        var whole = LinkFrameDecoder()
        #expect(frames(whole.decode(stream)) == all)
        var bytewise = LinkFrameDecoder()
        var collected: [LinkFrame] = []
        for byte in stream { collected += frames(bytewise.decode([byte])) }
        #expect(collected == all)
    }

    @Test("the header is 20 bytes: magic, version, type, flags, length, two CRCs")
    func headerLayout() throws {
        let bytes = try encoder.encode(.host(.frameCredit(0x0102_0304)))
        #expect(bytes.count == 24)
        #expect(Array(bytes[0..<4]) == Array("GLNK".utf8))
        #expect(bytes[4] == 1)
        #expect(bytes[5] == LinkMessageType.frameCredit.rawValue)
        #expect(Array(bytes[6..<8]) == [0, 0])
        #expect(Array(bytes[8..<12]) == [0, 0, 0, 4])
        #expect(Array(bytes[20..<24]) == [1, 2, 3, 4])
        let headerCRC = UInt32(bytes[12]) << 24 | UInt32(bytes[13]) << 16 | UInt32(bytes[14]) << 8 | UInt32(bytes[15])
        #expect(headerCRC == CRC32.checksum(bytes[0..<12]))
    }

    @Test("garbage before, between and after frames is skipped, counted, and sync is regained")
    func resync() throws {
        let a = try encoder.encode(.device(.session(.started)))
        let b = try encoder.encode(.device(.fault(.batteryLow, message: "low")))
        var corrupted = b
        corrupted[corrupted.count - 1] ^= 0x01
        let garbage: [UInt8] = [0x00, 0x47, 0x4C, 0x4E, 0x00, 0x47, 0x47, 0xFF] + Array("GLNK".utf8) + [1, 2, 3]
        let stream = garbage + a + garbage + corrupted + b + garbage
        var decoder = LinkFrameDecoder()
        let out = frames(decoder.decode(stream))
        #expect(out == [.device(.session(.started)), .device(.fault(.batteryLow, message: "low"))])
        #expect(decoder.statistics.checksumFailures >= 2)
        #expect(decoder.statistics.resynchronisations >= 3)
        // The corrupted frame has a valid header: it is skipped whole, as one corrupt frame, not as garbage.
        #expect(decoder.statistics.corruptFramesSkipped == 1)
        #expect(decoder.statistics.garbageBytesSkipped >= UInt64(2 * garbage.count))
        #expect(!decoder.hasFailed)
    }

    @Test("a frame of unknown type is skipped and the next one decodes")
    func unknownType() throws {
        var unknown = try encoder.encode(.host(.heartbeat(sequence: 1)))
        unknown[5] = 0x55
        LinkCodecTests.refreshCRCs(&unknown)
        let next = try encoder.encode(.host(.stopStream()))
        var decoder = LinkFrameDecoder()
        #expect(frames(decoder.decode(unknown + next)) == [.host(.stopStream())])
        #expect(decoder.statistics.unknownFramesSkipped == 1)
        #expect(decoder.statistics.garbageBytesSkipped == 0)
    }

    @Test("a known type with an unreadable body is skipped and counted")
    func malformedBody() throws {
        var bad = try encoder.encode(.host(.startStream(StreamConfiguration())))
        bad[LinkWireFormat.headerSize + 2] = 0  // frame rate high byte
        bad[LinkWireFormat.headerSize + 3] = 29  // 29 fps is not supported
        LinkCodecTests.refreshCRCs(&bad)
        var decoder = LinkFrameDecoder()
        #expect(frames(decoder.decode(bad + (try encoder.encode(.host(.stopSession))))) == [.host(.stopSession)])
        #expect(decoder.statistics.malformedFramesSkipped == 1)
        #expect(decoder.lastMalformedReason?.contains("29") == true)
    }

    @Test("an absurd length is an error, not an allocation")
    func absurdLength() throws {
        var frame = try encoder.encode(.host(.stopStream()))
        frame[8] = 0xFF
        frame[9] = 0xFF
        frame[10] = 0xFF
        frame[11] = 0xF0
        LinkCodecTests.refreshCRCs(&frame)
        var decoder = LinkFrameDecoder()
        let out = decoder.decode(frame + Array(repeating: 0, count: 100))
        #expect(out.count == 1)
        guard case .failure(let error) = out.first else {
            Issue.record("expected a failure")
            return
        }
        #expect(error.code == .protocolViolation)
        #expect(decoder.bufferedByteCount == 0)
        #expect(decoder.decode(try encoder.encode(.host(.stopStream()))).isEmpty)
    }

    @Test("another wire version is incompatible")
    func otherVersion() throws {
        var frame = try encoder.encode(.host(.stopStream()))
        frame[4] = 2
        LinkCodecTests.refreshCRCs(&frame)
        var decoder = LinkFrameDecoder()
        let out = decoder.decode(frame)
        guard case .failure(let error) = out.first else {
            Issue.record("expected a failure, got \(out)")
            return
        }
        #expect(error.code == .incompatible)
    }

    @Test("too much garbage in a row closes with protocolViolation")
    func garbageLimit() {
        var decoder = LinkFrameDecoder(maxConsecutiveGarbage: 1000)
        let out = decoder.decode([UInt8](repeating: 0xAA, count: 1500))
        #expect(out.count == 1)
        if case .failure(let error) = out.first {
            #expect(error.code == .protocolViolation)
        } else {
            Issue.record("expected a failure, got \(out)")
        }
    }

    @Test("the encoder refuses bodies beyond the limit")
    func encoderLimit() {
        let big = DeviceMessage.videoSample(
            VideoSample(
                presentationTimeUs: 0, isKeyframe: true, format: .hevc, payload: Data(count: 2000)))
        #expect(throws: LinkError.self) { try LinkFrameEncoder(maxPayloadSize: 1000).encode(.device(big)) }
    }

    @Test("fuzz: random bytes, truncations, bit flips and absurd lengths never crash, hang or grow the buffer")
    func fuzz() throws {
        var generator = SplitMix(seed: 0x5EED)
        let valid = try AllMessages.frames.map { try encoder.encode($0) }
        let maxPayload = 4096
        var decodedAnything = 0
        for round in 0..<4000 {
            var decoder = LinkFrameDecoder(maxPayloadSize: maxPayload, maxConsecutiveGarbage: 20_000)
            var input: [UInt8]
            switch round % 5 {
            case 0:  // random bytes
                input = (0..<Int(generator.next() % 3000)).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            case 1:  // valid frames, truncated
                input = valid.shuffled(using: &generator).prefix(6).flatMap { $0 }
                input = Array(input.prefix(Int(generator.next() % UInt64(input.count + 1))))
            case 2:  // valid frames with bit flips
                input = valid.shuffled(using: &generator).prefix(6).flatMap { $0 }
                for _ in 0..<(1 + generator.next() % 8) {
                    let index = Int(generator.next() % UInt64(input.count))
                    input[index] ^= UInt8(1) << (generator.next() % 8)
                }
            case 3:  // headers with absurd lengths (valid CRCs) mixed with frames
                var header = valid[Int(generator.next() % UInt64(valid.count))]
                let length = UInt32(truncatingIfNeeded: generator.next())
                withUnsafeBytes(of: length.bigEndian) { header.replaceSubrange(8..<12, with: $0) }
                LinkCodecTests.refreshCRCs(&header, headerOnly: true)
                input = header + valid[Int(generator.next() % UInt64(valid.count))]
            default:  // frames and random junk interleaved, random magic prefixes
                input = []
                for _ in 0..<6 {
                    if generator.next() % 2 == 0 { input += valid[Int(generator.next() % UInt64(valid.count))] }
                    input += Array("GLNK".utf8).prefix(Int(generator.next() % 5))
                    input += (0..<Int(generator.next() % 40)).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
                }
            }
            // Feed in random-sized chunks.
            var offset = 0
            var outputs: [LinkFrameDecoder.Output] = []
            while offset < input.count {
                let size = min(input.count - offset, 1 + Int(generator.next() % 700))
                outputs += decoder.decode(Array(input[offset..<offset + size]))
                offset += size
                #expect(decoder.bufferedByteCount <= decoder.maximumBufferSize)
            }
            #expect(outputs.filter { if case .failure = $0 { true } else { false } }.count <= 1)
            decodedAnything += outputs.count
        }
        #expect(decodedAnything > 1000)
    }

    /// Recomputes a frame's two CRCs after a test edited it.
    static func refreshCRCs(_ frame: inout [UInt8], headerOnly: Bool = false) {
        let header = CRC32.checksum(frame[0..<12])
        withUnsafeBytes(of: header.bigEndian) { frame.replaceSubrange(12..<16, with: $0) }
        guard !headerOnly else { return }
        var whole = CRC32()
        whole.update(frame[0..<16])
        whole.update(frame[20...])
        withUnsafeBytes(of: whole.value.bigEndian) { frame.replaceSubrange(16..<20, with: $0) }
    }
}

/// A small deterministic random generator for tests.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
