// libFuzzer target: the link frame decoder and the message bodies (built by `Scripts/fuzz LinkDecoder SECONDS`).
//
// Compiled into one executable together with GlassesLink's wire sources (see target.conf), so it reaches their
// internal types directly. Every property below that does not hold traps, and libFuzzer reports the input.
import Foundation
import WearablesKit

#if canImport(Glibc)
    import Glibc
#endif

/// One fuzz input. The first byte picks what is fuzzed:
/// - even: the bytes after the first two form a stream fed to a ``LinkFrameDecoder`` in chunks whose sizes follow
///   from the second byte; a small decoder limit (odd second byte) reaches the limits quickly; with bit 1 of the first
///   byte set, the CRCs of every header-shaped run are repaired first, so that mutated bodies get past the checksums;
/// - odd: the bytes after the first two are the body of a frame of the type in the second byte, read by
///   ``MessageBodies`` from a plain buffer and from frame storage (the two must agree).
@_cdecl("LLVMFuzzerTestOneInput")
public func linkDecoderFuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = UnsafeRawBufferPointer(start: data, count: size)
    guard input.count >= 2 else { return 0 }
    let rest = UnsafeRawBufferPointer(rebasing: input[2...])
    if input[0] & 1 == 0 {
        if input[0] & 2 == 0 {
            LinkDecoderFuzz.stream(rest, control: input[1])
        } else {
            var repaired = Array(rest)
            LinkDecoderFuzz.repairCRCs(&repaired)
            repaired.withUnsafeBytes { LinkDecoderFuzz.stream($0, control: input[1]) }
        }
    } else {
        LinkDecoderFuzz.body(rest, typeCode: input[1])
    }
    return 0
}

/// Writes the seed corpus and exits when `LINK_FUZZ_WRITE_SEEDS` names a directory (`Scripts/fuzz --seeds`).
@_cdecl("LLVMFuzzerInitialize")
public func linkDecoderFuzzInitialize(
    _ argc: UnsafeMutablePointer<CInt>?, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>?
) -> CInt {
    guard let directory = getenv("LINK_FUZZ_WRITE_SEEDS") else { return 0 }
    let written: Bool = {
        do {
            try LinkDecoderFuzz.writeSeeds(to: URL(fileURLWithPath: String(cString: directory)))
            return true
        } catch {
            FileHandle.standardError.write(Data("cannot write seeds: \(error)\n".utf8))
            return false
        }
    }()
    exit(written ? 0 : 1)
}

enum LinkDecoderFuzz {
    /// Checks a property; a failure traps with a message (libFuzzer saves the input).
    static func check(_ condition: Bool, _ message: @autoclosure () -> String) {
        if !condition { fatalError("property failed: \(message())") }
    }

    static func stream(_ bytes: UnsafeRawBufferPointer, control: UInt8) {
        let small = control & 1 == 1
        var decoder =
            small
            ? LinkFrameDecoder(maxPayloadSize: 512, maxConsecutiveGarbage: 256, maxConsecutiveCorruptFrames: 2)
            : LinkFrameDecoder()
        // Chunk sizes: all at once, one byte at a time, or a repeating pattern from the control byte.
        let pattern = Int(control >> 1)
        var offset = 0
        var step = 0
        var failures = 0, lost = 0
        var outputsAfterFailure = 0
        var frames: [LinkFrame] = []
        while offset < bytes.count {
            let size: Int
            switch pattern {
            case 0: size = bytes.count
            case 1: size = 1
            default: size = 1 + (pattern &* (step &+ 3)) % 97
            }
            step += 1
            let end = min(bytes.count, offset + size)
            let hadFailed = decoder.hasFailed
            let outputs = decoder.decode(UnsafeRawBufferPointer(rebasing: bytes[offset..<end]))
            offset = end
            if hadFailed { outputsAfterFailure += outputs.count }
            for output in outputs {
                switch output {
                case .frame(let frame): frames.append(frame)
                case .lost: lost += 1
                case .failure: failures += 1
                }
            }
            check(
                decoder.bufferedByteCount <= decoder.maximumBufferSize,
                "buffered \(decoder.bufferedByteCount) > \(decoder.maximumBufferSize)")
        }
        check(failures <= 1, "\(failures) failures")
        // Every lost frame was skipped and counted: a bad body CRC or an unreadable body.
        let skipped = decoder.statistics.corruptFramesSkipped + decoder.statistics.malformedFramesSkipped
        check(UInt64(lost) <= skipped, "\(lost) lost frames reported, \(skipped) skipped")
        check(outputsAfterFailure == 0, "output after failure")
        check(decoder.statistics.peakBufferedBytes <= decoder.maximumBufferSize, "peak beyond the limit")
        // Linear work: each byte is checksummed at most a few times (12 header bytes per magic candidate at most
        // 4 bytes apart, once as body), plus 16 header bytes per accepted frame.
        let bound = UInt64(bytes.count) * 4 + 16 * (decoder.statistics.framesDecoded + decoder.statistics.corruptFramesSkipped) + 64
        check(decoder.checksummedByteCount <= bound, "\(decoder.checksummedByteCount) CRC bytes for \(bytes.count) input")
        let statistics = decoder.statistics
        check(
            statistics.garbageBytesSkipped <= UInt64(bytes.count),
            "skipped \(statistics.garbageBytesSkipped) of \(bytes.count)")
        check(UInt64(frames.count) <= statistics.framesDecoded, "more frames than decoded")
        // Whatever decoded re-encodes and decodes to itself.
        let encoder = LinkFrameEncoder(maxPayloadSize: decoder.maxPayloadSize)
        for frame in frames {
            checkRawGeometry(frame)
            let encoded: [UInt8]
            do throws(LinkError) {
                encoded = try encoder.encode(frame)
            } catch {
                check(false, "a decoded frame does not encode: \(error)")
                return
            }
            var again = LinkFrameDecoder(maxPayloadSize: decoder.maxPayloadSize)
            let outputs = again.decode(encoded)
            check(outputs == [.frame(frame)], "round trip changed \(frame) into \(outputs)")
        }
        clockSync(frames, control: control)
    }

    /// What a host end does with the latency fields it decoded (PROTOCOL.md 7.5): echoes feed its clock sync, sample
    /// times are mapped. Every figure is the fuzzer's; none may trap, and the estimate must keep its invariants.
    static func clockSync(_ frames: [LinkFrame], control: UInt8) {
        var sync = LinkClockSync()
        var echoes: UInt64 = 0
        for frame in frames {
            switch frame {
            case .device(.heartbeat(let sequence, _, let echo?)):
                // Half the inputs: a host that did send the echoed clock; the host receives it `sequence` µs later.
                if control & 2 == 0 { sync.noteSent(hostClockUs: echo.echoHostClockUs) }
                let t3 = echo.echoHostClockUs.addingReportingOverflow(Int64(sequence))
                guard !t3.overflow else { continue }
                echoes += 1
                let offsetBefore = sync.offsetUs
                let rejection = sync.receive(echo, atUs: t3.partialValue)
                if rejection != nil { check(sync.offsetUs == offsetBefore, "a rejected echo moved the offset") }
                check(sync.accepted + sync.rejected == echoes, "echoes not all counted")
                if let best = sync.best {
                    check(best.roundTripUs >= 0 && best.roundTripUs <= LinkClockSync.maximumRoundTripUs, "round trip \(best)")
                    check(sync.offsetUs == best.offsetUs, "offset not from the best exchange")
                }
            case .host(.heartbeat(_, let hostClockUs?)):
                sync.noteSent(hostClockUs: hostClockUs)
            case .device(.videoSample(let sample)):
                guard let timing = sample.timing else { continue }
                check(timing.receivedUs == nil, "a decoded sample carries the host's receive time")
                let mapped = sync.map(timing, receivedUs: timing.sentUs)
                let offset = sync.offsetUs ?? 0
                let capture = timing.captureUs.subtractingReportingOverflow(offset)
                let sent = timing.sentUs.subtractingReportingOverflow(offset)
                if sync.offsetUs != nil, timing.captureUs <= timing.sentUs, !capture.overflow, !sent.overflow {
                    check(
                        mapped == SampleTiming(
                            captureUs: capture.partialValue, sentUs: sent.partialValue, receivedUs: timing.sentUs),
                        "mapping")
                } else {
                    check(mapped.receivedUs == nil && mapped.captureUs == timing.captureUs, "unmapped times changed")
                }
            default:
                break
            }
        }
    }

    /// Gives every run that starts with the magic and holds a whole header valid CRCs (the frame CRC over as much of
    /// the announced body as there is).
    static func repairCRCs(_ bytes: inout [UInt8]) {
        let headerSize = LinkWireFormat.headerSize
        var index = 0
        while index + headerSize <= bytes.count {
            guard Array(bytes[index..<index + 4]) == LinkWireFormat.magic else {
                index += 1
                continue
            }
            let length = Int(bytes[index + 8]) << 24 | Int(bytes[index + 9]) << 16 | Int(bytes[index + 10]) << 8
                | Int(bytes[index + 11])
            let header = CRC32.checksum(bytes[index..<index + 12])
            withUnsafeBytes(of: header.bigEndian) { bytes.replaceSubrange(index + 12..<index + 16, with: $0) }
            let bodyEnd = index + headerSize + min(length, bytes.count - index - headerSize)
            var frame = CRC32()
            frame.update(bytes[index..<index + 16])
            frame.update(bytes[(index + headerSize)..<bodyEnd])
            withUnsafeBytes(of: frame.value.bigEndian) { bytes.replaceSubrange(index + 16..<index + 20, with: $0) }
            index = bodyEnd
        }
    }

    /// What the camera does next with a decoded raw sample must not trap either (a link-edge limit guards it).
    static func checkRawGeometry(_ frame: LinkFrame) {
        guard case .device(.videoSample(let sample)) = frame,
            case .nv12(let width, let height, let luma, let chroma) = sample.format
        else { return }
        _ = RawVideoImage(width: width, height: height, lumaBytesPerRow: luma, chromaBytesPerRow: chroma, data: sample.payload)
        check(max(width, height, luma, chroma) <= sample.payload.count, "NV12 geometry beyond its payload")
    }

    static func body(_ bytes: UnsafeRawBufferPointer, typeCode: UInt8) {
        guard let type = LinkMessageType(rawValue: typeCode) else { return }
        var plain = ByteReader(bytes)
        let fromPlain = Result { () throws(BodyDecodingError) in try MessageBodies.decode(type, &plain) }
        let storage = FrameStorage(capacity: bytes.count)
        storage.write(bytes, at: 0)
        var shared = ByteReader(storage.bytes(count: bytes.count), owner: storage)
        let fromStorage = Result { () throws(BodyDecodingError) in try MessageBodies.decode(type, &shared) }
        switch (fromPlain, fromStorage) {
        case (.success(let a), .success(let b)):
            check(a == b, "plain and shared readers disagree")
            checkRawGeometry(a)
            check(plain.offset == shared.offset && plain.offset <= bytes.count, "offsets")
        case (.failure(let a), .failure(let b)):
            check(a.reason == b.reason, "different reasons")
        default:
            check(false, "one reader failed, the other did not")
        }
    }

    /// A seed per message kind, a stream of all of them, and a few hostile shapes.
    static func writeSeeds(to directory: URL) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let configuration = StreamConfiguration()
        let messages: [LinkFrame] = [
            .host(.hello(protocolVersion: linkProtocolVersion, pairingToken: "token")),
            .host(.checkPermission(.camera, requestID: 1)), .host(.requestPermission(.microphone, requestID: 2)),
            .host(.startSession), .host(.stopSession), .host(.startStream(configuration)), .host(.stopStream()),
            .host(.capturePhoto(.jpeg, requestID: 3)), .host(.frameCredit(8)), .host(.heartbeat(sequence: 4)),
            .host(.heartbeat(sequence: 6, hostClockUs: 1_000_000)),
            .device(.hello(DeviceInfo(identifier: "sim", name: "Glasses", firmwareVersion: "1.0"))),
            .device(.deviceState(DeviceState(batteryLevel: 50))),
            .device(.permission(.camera, .granted, requestID: 1)),
            .device(.session(.ended(reason: "doffed"))), .device(.stream(.streaming(configuration))),
            .device(
                .codecConfiguration(
                    HEVCCodecConfiguration(
                        videoParameterSets: [Data([0x40, 0x01, 0x0C, 0x01])],
                        sequenceParameterSets: [Data([0x42, 0x01, 0x01])], pictureParameterSets: [Data([0x44, 0x01])],
                        width: 504, height: 896))),
            .device(
                .videoSample(
                    VideoSample(
                        presentationTimeUs: 33_333, isKeyframe: true,
                        format: .nv12(width: 4, height: 2, lumaBytesPerRow: 4, chromaBytesPerRow: 4),
                        payload: Data(repeating: 0x80, count: 12)))),
            .device(.videoSample(VideoSample(presentationTimeUs: 0, isKeyframe: false, format: .hevc, payload: Data([0, 0, 0, 1, 0x26])))),
            .device(.photo(PhotoData(data: Data([0xFF, 0xD8, 0xFF, 0xD9]), format: .jpeg), requestID: 3)),
            .device(.fault(.thermalHot, message: "hot")), .device(.heartbeat(sequence: 5, droppedFrames: 2)),
            .device(
                .heartbeat(
                    sequence: 20_000, droppedFrames: 0,
                    clock: ClockEcho(echoHostClockUs: 1_000_000, receivedUs: 7_001_000, sentUs: 7_011_000))),
            .device(
                .videoSample(
                    VideoSample(
                        presentationTimeUs: 66_666, isKeyframe: true, format: .hevc, payload: Data([0, 0, 0, 1, 0x26]),
                        timing: SampleTiming(captureUs: 7_020_000, sentUs: 7_030_000)))),
            .goodbye(LinkError(.protocolViolation, "bye")),
        ]
        let encoder = LinkFrameEncoder()
        var all: [UInt8] = []
        for (index, message) in messages.enumerated() {
            let frame = try encoder.encode(message)
            all += frame
            // A stream seed (whole, then bytewise) and a body seed.
            try write([0, 0] + frame, "stream-\(index)-whole", to: directory)
            try write([2, 3] + frame, "stream-\(index)-bytewise-small", to: directory)
            try write([1, frame[5]] + Array(frame.dropFirst(LinkWireFormat.headerSize)), "body-\(index)", to: directory)
        }
        try write([0, 14] + all, "stream-all", to: directory)
        try write([2, 0] + all, "stream-all-repaired", to: directory)
        var corrupt = try encoder.encode(messages[17])
        corrupt[corrupt.count - 1] ^= 1
        try write([0, 9] + corrupt + all.prefix(200), "stream-corrupt-frame", to: directory)
        try write([0, 0] + Array("GLNKGLNKGLN".utf8) + all.prefix(60), "stream-magic-garbage", to: directory)
    }

    private static func write(_ bytes: [UInt8], _ name: String, to directory: URL) throws {
        try Data(bytes).write(to: directory.appendingPathComponent(name))
    }
}
