import Foundation
import Testing
import WearablesKit

@testable import GlassesLink
@testable import GlassesLinkCore

/// The latency fields appended to protocol 1 bodies (PROTOCOL.md 3.1, 4, 7.5): compatible in both directions.
@Suite("Latency fields on the wire")
struct LatencyWireTests {
    static let timing = SampleTiming(captureUs: 1_000_000, sentUs: 1_040_000)
    static let echo = ClockEcho(echoHostClockUs: 5_000_000, receivedUs: 9_000_123, sentUs: 9_500_000)

    static func body(_ frame: LinkFrame) -> (LinkMessageType, [UInt8]) {
        var writer = ByteWriter()
        let type = MessageBodies.encode(frame, into: &writer)
        return (type, writer.bytes)
    }

    static func decode(_ type: LinkMessageType, _ bytes: [UInt8]) throws -> LinkFrame {
        try bytes.withUnsafeBytes { raw in
            var reader = ByteReader(raw)
            return try MessageBodies.decode(type, &reader)
        }
    }

    /// Checks that every frame's body decodes to the frame, and that the whole frame (header, body, checksum) does
    /// through the link's own encoder and decoder.
    static func expectRoundTrips(_ frames: [LinkFrame], sourceLocation: SourceLocation = #_sourceLocation) throws {
        for frame in frames {
            let (type, bytes) = body(frame)
            #expect(try decode(type, bytes) == frame, "\(frame)", sourceLocation: sourceLocation)
            let encoded = try LinkFrameEncoder().encode(frame)
            var decoder = LinkFrameDecoder()
            let decoded = decoder.decode(encoded).compactMap { output -> LinkFrame? in
                if case .frame(let f) = output { f } else { nil }
            }
            #expect(decoded == [frame], sourceLocation: sourceLocation)
        }
    }

    /// Each message with its new field, and the same message as a protocol 1 sender wrote it before the field.
    static let pairs: [(new: LinkFrame, old: LinkFrame, suffix: [UInt8])] = [
        (
            .device(.videoSample(VideoSample(
                presentationTimeUs: 7, isKeyframe: true, format: .hevc, payload: Data([9, 9]), timing: timing))),
            .device(.videoSample(VideoSample(presentationTimeUs: 7, isKeyframe: true, format: .hevc, payload: Data([9, 9])))),
            [1] + be(1_000_000) + be(1_040_000)
        ),
        (
            .host(.heartbeat(sequence: 3, hostClockUs: 5_000_000)), .host(.heartbeat(sequence: 3)),
            [1] + be(5_000_000)
        ),
        (
            .device(.heartbeat(sequence: 4, droppedFrames: 2, clock: echo)),
            .device(.heartbeat(sequence: 4, droppedFrames: 2)),
            [1] + be(5_000_000) + be(9_000_123) + be(9_500_000)
        ),
    ]

    static func be(_ value: Int64) -> [UInt8] { withUnsafeBytes(of: value.bigEndian) { Array($0) } }

    @Test("the new field is exactly a trailing opt<…> after the old body, which is unchanged")
    func layout() throws {
        for pair in Self.pairs {
            let (newType, newBytes) = Self.body(pair.new)
            let (oldType, oldBytes) = Self.body(pair.old)
            #expect(newType == oldType)
            // Old decoders ignore trailing bytes, so they read the old message out of the new body.
            #expect(newBytes == oldBytes + pair.suffix, "\(pair.new)")
        }
    }

    @Test("new bodies round trip with and without the field; old bodies (without it) still decode")
    func roundTrips() throws {
        for pair in Self.pairs {
            let (type, newBytes) = Self.body(pair.new)
            #expect(try Self.decode(type, newBytes) == pair.new)
            let (_, oldBytes) = Self.body(pair.old)
            #expect(try Self.decode(type, oldBytes) == pair.old)
            // An explicit "absent" flag reads as absent too.
            #expect(try Self.decode(type, oldBytes + [0]) == pair.old)
            // Fields appended by a later version after ours are ignored.
            #expect(try Self.decode(type, newBytes + [0xEE, 0x01]) == pair.new)
        }
    }

    @Test("a present field that is cut short or has a bad flag makes the body malformed")
    func malformed() {
        for pair in Self.pairs {
            let (type, newBytes) = Self.body(pair.new)
            let (_, oldBytes) = Self.body(pair.old)
            #expect(throws: BodyDecodingError.self) { try Self.decode(type, Array(newBytes.dropLast())) }
            #expect(throws: BodyDecodingError.self) { try Self.decode(type, oldBytes + [2]) }
            #expect(throws: BodyDecodingError.self) { try Self.decode(type, oldBytes + [1]) }
        }
    }

    @Test("receivedUs is the host's: never sent, so a decoded sample has none")
    func receivedIsNotSent() throws {
        var stamped = Self.timing
        stamped.receivedUs = 77
        let frame = LinkFrame.device(.videoSample(VideoSample(
            presentationTimeUs: 1, isKeyframe: true, format: .hevc, payload: Data(), timing: stamped)))
        let (type, bytes) = Self.body(frame)
        guard case .device(.videoSample(let sample)) = try Self.decode(type, bytes) else {
            Issue.record("not a sample")
            return
        }
        #expect(sample.timing == Self.timing)
        #expect(sample.timing?.isOnHostClock == false)
    }
}
