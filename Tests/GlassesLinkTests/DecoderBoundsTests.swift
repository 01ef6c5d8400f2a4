import Foundation
import Testing
import WearablesKit

@testable import GlassesLink
@testable import GlassesLinkCore

/// The decoder's work, memory and copies stay bounded whatever a peer sends (issue #19).
@Suite("Link decoder bounds")
struct DecoderBoundsTests {
    let encoder = LinkFrameEncoder()

    private func frames(_ outputs: [LinkFrameDecoder.Output]) -> [LinkFrame] {
        outputs.compactMap { if case .frame(let frame) = $0 { frame } else { nil } }
    }

    private func failures(_ outputs: [LinkFrameDecoder.Output]) -> [LinkError] {
        outputs.compactMap { if case .failure(let error) = $0 { error } else { nil } }
    }

    /// A 20-byte header with a valid header CRC that announces `length` body bytes of `type` (frame CRC zero).
    static func header(type: UInt8, length: UInt32) -> [UInt8] {
        var bytes = LinkWireFormat.magic + [LinkWireFormat.version, type, 0, 0]
        withUnsafeBytes(of: length.bigEndian) { bytes.append(contentsOf: $0) }
        withUnsafeBytes(of: CRC32.checksum(bytes).bigEndian) { bytes.append(contentsOf: $0) }
        bytes += [0, 0, 0, 0]
        return bytes
    }

    /// Feeds `bytes` in chunks of `size`; returns every output.
    static func feed(_ decoder: inout LinkFrameDecoder, _ bytes: [UInt8], chunk size: Int) -> [LinkFrameDecoder.Output] {
        var outputs: [LinkFrameDecoder.Output] = []
        var offset = 0
        while offset < bytes.count {
            let end = min(bytes.count, offset + size)
            outputs += bytes[offset..<end].withUnsafeBytes { decoder.decode($0) }
            offset = end
        }
        return outputs
    }

    @Test("headers that each announce 8 MiB, sent 20 bytes at a time, cost CRC work linear in the bytes received")
    func crcWorkIsLinear() {
        // 8.65 MB of headers, each with a valid header CRC announcing the largest video sample: before the fix,
        // every 20 bytes after the first 8 MiB cost 8 MiB of CRC (55 s of one core for this input).
        let header = Self.header(type: LinkMessageType.videoSample.rawValue, length: UInt32(LinkWireFormat.maxPayloadSize))
        var decoder = LinkFrameDecoder()
        var fed = 0
        var outputs: [LinkFrameDecoder.Output] = []
        while fed < 8_650_000, !decoder.hasFailed {
            outputs += header.withUnsafeBytes { decoder.decode($0) }
            fed += header.count
            // Each received byte is checksummed at most once as body, plus 16 header bytes per frame.
            guard decoder.checksummedByteCount <= UInt64(fed) + 64 else {
                Issue.record("\(decoder.checksummedByteCount) bytes of CRC work for \(fed) bytes received")
                break
            }
            guard decoder.bufferedByteCount <= decoder.maximumBufferSize else {
                Issue.record("\(decoder.bufferedByteCount) bytes buffered, limit \(decoder.maximumBufferSize)")
                break
            }
        }
        #expect(fed >= 8_650_000)
        #expect(frames(outputs).isEmpty)
        #expect(decoder.statistics.checksumFailures == 1)
    }

    @Test("a control message header announcing 1 MiB is rejected before any body is buffered")
    func controlMessageTooLarge() {
        for type in [LinkMessageType.frameCredit, .hostHeartbeat, .deviceHeartbeat, .deviceState, .goodbye] {
            var decoder = LinkFrameDecoder()
            let outputs = decoder.decode(Self.header(type: type.rawValue, length: 1 << 20) + [UInt8](repeating: 7, count: 100))
            #expect(failures(outputs).map(\.code) == [.protocolViolation], "\(type)")
            #expect(decoder.bufferedByteCount == 0, "\(type)")
            #expect(decoder.checksummedByteCount <= 12, "\(type)")
        }
    }

    @Test("a 1.3 MB raw frame with a bad body CRC between two good frames loses only itself")
    func corruptLargeFrame() throws {
        let width = 1040
        let height = 840
        var generator = SplitMix(seed: 42)
        let payload = Data((0..<(width * height * 3 / 2)).map { _ in UInt8(truncatingIfNeeded: generator.next()) })
        let raw = DeviceMessage.videoSample(
            VideoSample(
                presentationTimeUs: 1, isKeyframe: true,
                format: .nv12(width: width, height: height, lumaBytesPerRow: width, chromaBytesPerRow: width),
                payload: payload))
        let before = LinkFrame.device(.videoSample(Fixtures.sample(0)))
        let after = LinkFrame.device(.heartbeat(sequence: 9, droppedFrames: 0))
        var corrupt = try encoder.encode(.device(raw))
        #expect(corrupt.count > 1_300_000)
        corrupt[corrupt.count / 2] ^= 0x40
        let stream = try encoder.encode(before) + corrupt + encoder.encode(after)
        for chunk in [stream.count, 65_536, 1_000] {
            var decoder = LinkFrameDecoder()
            let outputs = Self.feed(&decoder, stream, chunk: chunk)
            #expect(failures(outputs).isEmpty, "chunk \(chunk)")
            #expect(frames(outputs) == [before, after], "chunk \(chunk)")
            #expect(decoder.statistics.checksumFailures == 1, "chunk \(chunk)")
            #expect(decoder.statistics.garbageBytesSkipped == 0, "chunk \(chunk)")
            #expect(decoder.bufferedByteCount == 0, "chunk \(chunk)")
            #expect(!decoder.hasFailed)
        }
    }

    @Test("after a corrupt frame, real garbage still counts against the garbage limit")
    func garbageAfterCorruptFrame() throws {
        var corrupt = try encoder.encode(.device(.videoSample(Fixtures.sample(1, size: 5000))))
        corrupt[100] ^= 1
        var decoder = LinkFrameDecoder(maxConsecutiveGarbage: 1000)
        let outputs = decoder.decode(corrupt + [UInt8](repeating: 0xAA, count: 1500))
        #expect(failures(outputs).map(\.code) == [.protocolViolation])
    }

    @Test("the blobs of one frame are views of one received buffer, not copies")
    func blobsShareStorage() throws {
        let vps = Data(repeating: 0x11, count: 1000)
        let sps = Data(repeating: 0x22, count: 1000)
        let pps = Data(repeating: 0x33, count: 1000)
        let configuration = DeviceMessage.codecConfiguration(
            HEVCCodecConfiguration(
                videoParameterSets: [vps], sequenceParameterSets: [sps], pictureParameterSets: [pps],
                width: 64, height: 64))
        let bytes = try encoder.encode(.device(configuration))
        for chunk in [bytes.count, 7] {
            var decoder = LinkFrameDecoder()
            let decoded = frames(Self.feed(&decoder, bytes, chunk: chunk))
            guard case .device(.codecConfiguration(let got)) = decoded.first,
                let first = got.videoParameterSets.first, let second = got.sequenceParameterSets.first
            else {
                Issue.record("expected a codec configuration, got \(decoded)")
                continue
            }
            #expect(decoded == [.device(configuration)])
            let a = first.withUnsafeBytes { Int(bitPattern: $0.baseAddress) }
            let b = second.withUnsafeBytes { Int(bitPattern: $0.baseAddress) }
            // The SPS follows the VPS, the SPS array's 2-byte count and its own 4-byte length, in the same buffer.
            #expect(b - a == 1006, "chunk \(chunk)")
            #expect(first.startIndex == 0 && second.startIndex == 0)
        }
    }

    @Test("a shared payload behaves as an independent value: mutating it changes nothing else")
    func sharedPayloadIsAValue() throws {
        let message = DeviceMessage.codecConfiguration(
            HEVCCodecConfiguration(
                videoParameterSets: [Data(repeating: 1, count: 300)], sequenceParameterSets: [Data(repeating: 2, count: 300)],
                pictureParameterSets: [], width: 8, height: 8))
        let bytes = try encoder.encode(.device(message))
        var decoder = LinkFrameDecoder()
        guard case .device(.codecConfiguration(let got)) = frames(decoder.decode(bytes)).first,
            var vps = got.videoParameterSets.first, let sps = got.sequenceParameterSets.first
        else {
            Issue.record("expected a codec configuration")
            return
        }
        vps.append(contentsOf: [UInt8](repeating: 9, count: 5000))
        vps[0] = 0xEE
        #expect(sps == Data(repeating: 2, count: 300))
        #expect(got.videoParameterSets.first == Data(repeating: 1, count: 300))
        #expect(vps.count == 5300)
        // The next frame gets storage of its own.
        let again = frames(decoder.decode(bytes))
        #expect(again == [.device(message)])
        #expect(got.sequenceParameterSets.first == Data(repeating: 2, count: 300))
    }

    @Test("every type is held to its own limit: the limit itself is accepted, one byte more is rejected at the header")
    func perTypeLimits() {
        for type in LinkMessageType.allCases {
            let limit = LinkWireFormat.maxBodySize(of: type)
            switch type {
            case .videoSample, .photo, .photoChunk, .audioSample: #expect(limit == LinkWireFormat.maxPayloadSize)
            case .codecConfiguration: #expect(limit == LinkWireFormat.maxCodecConfigurationBodySize)
            default: #expect(limit == LinkWireFormat.maxControlBodySize)
            }
            var atLimit = LinkFrameDecoder()
            #expect(atLimit.decode(Self.header(type: type.rawValue, length: UInt32(limit))).isEmpty, "\(type)")
            var beyond = LinkFrameDecoder()
            let outputs = beyond.decode(Self.header(type: type.rawValue, length: UInt32(limit + 1)))
            #expect(failures(outputs).map(\.code) == [.protocolViolation], "\(type)")
            #expect(beyond.bufferedByteCount == 0)
        }
        // A smaller link limit lowers every type's limit with it.
        #expect(LinkWireFormat.maxBodySize(of: .deviceState, maxPayloadSize: 100) == 100)
        // Unknown types may be as large as the link allows; their bodies are checksummed, not kept.
        var unknown = LinkFrameDecoder()
        #expect(unknown.decode(Self.header(type: 0x55, length: UInt32(LinkWireFormat.maxPayloadSize))).isEmpty)
        _ = unknown.decode([UInt8](repeating: 0, count: 1 << 20))
        #expect(unknown.bufferedByteCount == 0)
        #expect(unknown.statistics.peakBufferedBytes <= LinkWireFormat.headerSize)
    }

    @Test("the encoder refuses a control message beyond its type's limit, so the peer never has to")
    func encoderPerTypeLimit() {
        let long = String(repeating: "x", count: LinkWireFormat.maxControlBodySize)
        #expect(throws: LinkError.self) { try LinkFrameEncoder().encode(.device(.fault(.internalError, message: long))) }
        #expect(throws: Never.self) {
            try LinkFrameEncoder().encode(.device(.fault(.internalError, message: String(long.dropFirst(100)))))
        }
    }

    @Test("corrupt frames in a row beyond the limit close the link; a valid frame between them resets the count")
    func consecutiveCorruptFrames() throws {
        var corrupt = try encoder.encode(.device(.heartbeat(sequence: 1, droppedFrames: 0)))
        corrupt[corrupt.count - 1] ^= 1
        let good = try encoder.encode(.device(.heartbeat(sequence: 2, droppedFrames: 0)))
        var tolerant = LinkFrameDecoder(maxConsecutiveCorruptFrames: 3)
        let mixed = Array([[UInt8]](repeating: corrupt + corrupt + corrupt + good, count: 10).joined())
        let out = tolerant.decode(mixed)
        #expect(failures(out).isEmpty)
        #expect(frames(out).count == 10)
        #expect(tolerant.statistics.corruptFramesSkipped == 30)
        var strict = LinkFrameDecoder(maxConsecutiveCorruptFrames: 3)
        let failed = strict.decode(Array([[UInt8]](repeating: corrupt, count: 4).joined()) + good)
        #expect(failures(failed).map(\.code) == [.protocolViolation])
        #expect(frames(failed).isEmpty)
    }

    @Test("a decoder copied mid-frame and fed differently keeps each copy's frame its own")
    func copiedMidFrame() throws {
        let a = try encoder.encode(.device(.videoSample(Fixtures.sample(1, size: 4000))))
        var original = LinkFrameDecoder()
        #expect(original.decode(Array(a.prefix(2000))).isEmpty)
        var copy = original
        var tampered = Array(a.dropFirst(2000))
        tampered[100] ^= 0xFF
        #expect(frames(copy.decode(tampered)).isEmpty)
        #expect(copy.statistics.corruptFramesSkipped == 1)
        #expect(frames(original.decode(Array(a.dropFirst(2000)))) == [.device(.videoSample(Fixtures.sample(1, size: 4000)))])
    }

    @Test("an NV12 sample whose dimensions or strides exceed its payload is malformed at the link, not a trap later")
    func absurdStrides() throws {
        let absurd: [VideoSampleFormat] = [
            .nv12(width: 2, height: 0xFFFF_FFFE, lumaBytesPerRow: 0xFFFF_FFFF, chromaBytesPerRow: 0xFFFF_FFFF),
            .nv12(width: 4, height: 4, lumaBytesPerRow: 1 << 31, chromaBytesPerRow: 4),
            .nv12(width: 100, height: 100, lumaBytesPerRow: 100, chromaBytesPerRow: 100),
        ]
        for format in absurd {
            let sample = VideoSample(presentationTimeUs: 0, isKeyframe: true, format: format, payload: Data(count: 64))
            var decoder = LinkFrameDecoder()
            let next = LinkFrame.device(.heartbeat(sequence: 1, droppedFrames: 0))
            let out = frames(decoder.decode(try encoder.encode(.device(.videoSample(sample))) + encoder.encode(next)))
            #expect(out == [next], "\(format)")
            #expect(decoder.statistics.malformedFramesSkipped == 1)
            #expect(decoder.lastMalformedReason?.contains("cannot fit") == true)
        }
        // Geometry inside the payload still passes; whether the planes fit is the camera's check.
        let fits = VideoSample(
            presentationTimeUs: 0, isKeyframe: true, format: .nv12(width: 4, height: 4, lumaBytesPerRow: 8, chromaBytesPerRow: 8),
            payload: Data(count: 48))
        var decoder = LinkFrameDecoder()
        #expect(frames(decoder.decode(try encoder.encode(.device(.videoSample(fits))))) == [.device(.videoSample(fits))])
    }

    @Test("the committed fuzz seed corpus replays cleanly through the decoder")
    func fuzzCorpusReplays() throws {
        let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Fuzz/LinkDecoder/corpus")
        let files = try FileManager.default.contentsOfDirectory(at: corpus, includingPropertiesForKeys: nil)
        #expect(files.count >= 20)
        #expect(files.contains { $0.lastPathComponent.hasPrefix("regression-") })
        var decodedFrames = 0
        for file in files {
            let bytes = [UInt8](try Data(contentsOf: file))
            guard bytes.count >= 2 else { continue }
            if bytes[0] & 1 == 1 {
                // A body of one type, read directly (as the fuzz target does); raw geometry stays within the payload.
                guard let type = LinkMessageType(rawValue: bytes[1]) else { continue }
                let body = Array(bytes.dropFirst(2))
                let decoded = body.withUnsafeBytes { raw -> LinkFrame? in
                    var reader = ByteReader(raw)
                    return try? MessageBodies.decode(type, &reader)
                }
                if case .device(.videoSample(let sample)) = decoded,
                    case .nv12(let width, let height, let luma, let chroma) = sample.format
                {
                    #expect(max(width, height, luma, chroma) <= sample.payload.count, "\(file.lastPathComponent)")
                }
                continue
            }
            var decoder = LinkFrameDecoder()
            let outputs = Self.feed(&decoder, Array(bytes.dropFirst(2)), chunk: 1 + Int(bytes[1]))
            #expect(failures(outputs).count <= 1, "\(file.lastPathComponent)")
            #expect(decoder.statistics.peakBufferedBytes <= decoder.maximumBufferSize)
            decodedFrames += frames(outputs).count
        }
        #expect(decodedFrames > 20)
    }
}
