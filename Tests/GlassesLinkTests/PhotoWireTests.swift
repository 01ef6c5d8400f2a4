import Foundation
import Testing
import WearablesKit

@testable import GlassesLink
@testable import GlassesLinkCore

/// DAT 1.0's standalone photo on the wire (PROTOCOL.md 4, 6, 7.8): five message types added inside protocol 1, and
/// the "offers standalone photos" bool appended to the device hello after the IMU's.
@Suite("Standalone photo on the wire")
struct PhotoWireTests {
    static let chunk = PhotoChunk(requestID: 7, totalBytes: 10, offset: 0, bytes: Data([1, 2, 3, 4]),
                                  metadata: Data(#"{"width":3024}"#.utf8))

    static let frames: [LinkFrame] = [
        .host(.startPhoto), .host(.stopPhoto),
        .host(.standalonePhoto(.full, .high, requestID: 1)), .host(.standalonePhoto(.small, .low, requestID: .max)),
        .device(.photoCapability(.started)), .device(.photoCapability(.stopped)),
        .device(.photoCapability(.unavailable(.permissionDenied, message: "denied"))),
        .device(.photoCapability(.captureFailed(requestID: 3, .busy, message: "busy"))),
        .device(.photoChunk(chunk)),
        .device(.photoChunk(PhotoChunk(requestID: 7, totalBytes: 10, offset: 4, bytes: Data([5, 6, 7, 8, 9, 10])))),
        .device(.photoChunk(PhotoChunk(requestID: 0, totalBytes: 0, offset: 0, bytes: Data()))),
    ]

    @Test("every standalone photo message round trips, bit for bit")
    func roundTrips() throws {
        try LatencyWireTests.expectRoundTrips(Self.frames)
        #expect(LatencyWireTests.body(.host(.startPhoto)).0 == .startPhoto)
        #expect(LatencyWireTests.body(.device(.photoChunk(Self.chunk))).0 == .photoChunk)
    }

    @Test("malformed photo bodies are typed errors: unknown codes, truncation, bytes past the announced size")
    func malformed() {
        #expect(throws: BodyDecodingError.self) { try LatencyWireTests.decode(.standalonePhoto, [4, 0, 0, 0, 0, 1]) }
        #expect(throws: BodyDecodingError.self) { try LatencyWireTests.decode(.standalonePhoto, [0, 3, 0, 0, 0, 1]) }
        #expect(throws: BodyDecodingError.self) { try LatencyWireTests.decode(.photoCapability, [4]) }
        #expect(throws: BodyDecodingError.self) { try LatencyWireTests.decode(.photoCapability, [2, 9]) }
        let (_, bytes) = LatencyWireTests.body(.device(.photoChunk(Self.chunk)))
        #expect(throws: BodyDecodingError.self) { try LatencyWireTests.decode(.photoChunk, Array(bytes.dropLast())) }
        // Four bytes at offset 8 of a 10-byte photo, and an offset past the size: refused before any sum overflows.
        for (offset, total) in [(UInt64(8), UInt64(10)), (11, 10), (.max, .max - 1), (1, .max)] {
            var b = ByteWriter()
            b.u32(1); b.u64(total); b.u64(offset); b.bool(false); b.blob(Data([1, 2, 3, 4]))
            if offset <= total, 4 <= total - offset {
                #expect(throws: Never.self) { try LatencyWireTests.decode(.photoChunk, b.bytes) }
            } else {
                #expect(throws: BodyDecodingError.self) { try LatencyWireTests.decode(.photoChunk, b.bytes) }
            }
        }
    }

    @Test("the hello's standalone photo flag: after the IMU's; older hellos read as no standalone photo")
    func helloFlag() throws {
        let uuid = UUID(uuid: (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15))
        let with = DeviceInfo(identifier: "g", name: "G", uuid: uuid, hasIMU: true, hasStandalonePhoto: true)
        var without = with
        without.hasStandalonePhoto = false
        let (type, bytes) = LatencyWireTests.body(.device(.hello(with)))
        #expect(bytes.suffix(2) == [1, 1])
        #expect(try LatencyWireTests.decode(type, bytes) == .device(.hello(with)))
        // A hello that ends after the IMU flag (the version before this one) offers no standalone photo.
        #expect(try LatencyWireTests.decode(type, Array(bytes.dropLast())) == .device(.hello(without)))
    }
}

/// DAT 1.0's camera audio on the wire (PROTOCOL.md 4, 7.9): the codec appended to `startStream`, `audioSample`, and
/// the `audioStreamingError` fault.
@Suite("Camera audio on the wire")
struct AudioWireTests {
    static let audio = StreamConfiguration(videoCodec: .hvc1, audioCodec: .pcm(sampleRate: .rate48000, numberOfChannels: 2),
                                           resolution: .medium, frameRate: 24)

    @Test("startStream with audio, with and without a generation; audioSample; the fault: round trips")
    func roundTrips() throws {
        let frames: [LinkFrame] = [
            .host(.startStream(Self.audio, generation: 7)), .host(.startStream(Self.audio, generation: nil)),
            .host(.startStream(StreamConfiguration(videoCodec: .raw, resolution: .low, frameRate: 15), generation: 3)),
            .device(.audioSample(AudioSample(presentationTimeUs: -1, sampleRate: .rate16000, channels: [[0.5, -0.25]]))),
            .device(.audioSample(AudioSample(presentationTimeUs: 20_000, sampleRate: .rate44100, channels: [[1], [-1]]))),
            .device(.fault(.audioStreamingError, message: "no")),
        ]
        try LatencyWireTests.expectRoundTrips(frames)
        // A start without audio is laid out as before (an older device reads it unchanged).
        let (_, plain) = LatencyWireTests.body(.host(.startStream(StreamConfiguration(videoCodec: .raw, resolution: .low, frameRate: 15), generation: nil)))
        #expect(plain.count == 4)
    }

    @Test("malformed audio bodies are typed errors: no channels, partial frames, an unknown rate, over a second")
    func malformed() {
        func body(_ rate: UInt8, _ channels: UInt8, _ payload: Int) -> [UInt8] {
            var w = ByteWriter()
            w.i64(0); w.u8(rate); w.u8(channels); w.blob(Data(count: payload))
            return w.bytes
        }
        #expect(throws: Never.self) { try LatencyWireTests.decode(.audioSample, body(0, 1, 1280)) }
        #expect(throws: BodyDecodingError.self) { try LatencyWireTests.decode(.audioSample, body(0, 0, 0)) }
        #expect(throws: BodyDecodingError.self) { try LatencyWireTests.decode(.audioSample, body(0, 2, 12)) }
        #expect(throws: BodyDecodingError.self) { try LatencyWireTests.decode(.audioSample, body(3, 1, 4)) }
        #expect(throws: BodyDecodingError.self) { try LatencyWireTests.decode(.audioSample, body(2, 1, 4 * 48_001)) }
    }
}
