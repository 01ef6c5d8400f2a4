import Foundation
import Testing
import WearablesKit

@testable import GlassesLink
@testable import GlassesLinkCore

/// The stream generation appended to `startStream`, `stopStream` and `stream` bodies (PROTOCOL.md 4, 7.6): an
/// `opt<u32>` after the old body, absent in an older sender's body, malformed when present but bad.
@Suite("Stream generations on the wire")
struct StreamGenerationWireTests {
    static let configuration = try! StreamConfiguration.validated(videoCodec: .hvc1, resolution: .medium, frameRate: 15)

    /// Each message with a generation, the same message as an older sender wrote it, and the bytes between them.
    static let pairs: [(new: LinkFrame, old: LinkFrame, suffix: [UInt8])] = [
        (.host(.startStream(configuration, generation: 5)), .host(.startStream(configuration)), [1, 0, 0, 0, 5]),
        (.host(.stopStream(generation: 0x0102_0304)), .host(.stopStream()), [1, 1, 2, 3, 4]),
        (.device(.stream(.starting(configuration), generation: 9)), .device(.stream(.starting(configuration))),
         [1, 0, 0, 0, 9]),
        (.device(.stream(.streaming(configuration), generation: .max)), .device(.stream(.streaming(configuration))),
         [1, 0xFF, 0xFF, 0xFF, 0xFF]),
        (.device(.stream(.paused, generation: 0)), .device(.stream(.paused)), [1, 0, 0, 0, 0]),
        (.device(.stream(.stopped, generation: 256)), .device(.stream(.stopped)), [1, 0, 0, 1, 0]),
    ]

    @Test("the generation is exactly a trailing opt<u32> after the old body, which is unchanged")
    func layout() {
        for pair in Self.pairs {
            let (newType, newBytes) = LatencyWireTests.body(pair.new)
            let (oldType, oldBytes) = LatencyWireTests.body(pair.old)
            #expect(newType == oldType)
            #expect(newBytes == oldBytes + pair.suffix, "\(pair.new)")
        }
        // The old bodies themselves: no byte for an absent generation.
        #expect(LatencyWireTests.body(.host(.stopStream())).1.isEmpty)
        #expect(LatencyWireTests.body(.device(.stream(.stopped))).1 == [3])
    }

    @Test("bodies round trip with the generation; an older sender's body (without it) decodes as absent")
    func roundTrips() throws {
        for pair in Self.pairs {
            let (type, newBytes) = LatencyWireTests.body(pair.new)
            #expect(try LatencyWireTests.decode(type, newBytes) == pair.new)
            let (_, oldBytes) = LatencyWireTests.body(pair.old)
            #expect(try LatencyWireTests.decode(type, oldBytes) == pair.old)
            // An explicit "absent" flag reads as absent too.
            #expect(try LatencyWireTests.decode(type, oldBytes + [0]) == pair.old)
            // Fields a later version appends after ours are ignored (a start's ours end with the audio codec's
            // opt, PROTOCOL.md 7.9: absent here).
            let ours: [UInt8] = type == .startStream ? [0] : []
            #expect(try LatencyWireTests.decode(type, newBytes + ours + [0xEE, 0x01]) == pair.new)
        }
    }

    @Test("a generation cut short, or a bad present flag, is a typed error")
    func malformedField() {
        for pair in Self.pairs {
            let (type, newBytes) = LatencyWireTests.body(pair.new)
            let (_, oldBytes) = LatencyWireTests.body(pair.old)
            for cut in 1...4 {
                #expect(throws: BodyDecodingError.self) { try LatencyWireTests.decode(type, Array(newBytes.dropLast(cut))) }
            }
            #expect(throws: BodyDecodingError.self) { try LatencyWireTests.decode(type, oldBytes + [2, 0, 0, 0, 1]) }
            #expect(throws: BodyDecodingError.self) { try LatencyWireTests.decode(type, oldBytes + [0xFF]) }
        }
    }

    @Test("on a link, a frame with a bad generation is skipped and counted; the next frame decodes")
    func malformedFrameIsSkipped() throws {
        let encoder = LinkFrameEncoder()
        var bad = try encoder.encode(.device(.stream(.stopped, generation: 1)))
        bad[LinkWireFormat.headerSize + 1] = 7  // the present flag: not a bool
        LinkCodecTests.refreshCRCs(&bad)
        var truncated = try encoder.encode(.host(.stopStream(generation: 1)))
        truncated.removeLast(2)
        truncated[11] -= 2  // the length, so the frame is whole but its body ends inside the generation
        LinkCodecTests.refreshCRCs(&truncated)
        let next = try encoder.encode(.device(.stream(.paused, generation: 2)))
        var decoder = LinkFrameDecoder()
        let outputs = decoder.decode(bad + truncated + next)
        let frames = outputs.compactMap { output -> LinkFrame? in
            if case .frame(let frame) = output { frame } else { nil }
        }
        #expect(frames == [.device(.stream(.paused, generation: 2))])
        #expect(decoder.statistics.malformedFramesSkipped == 2)
        #expect(!decoder.hasFailed)
    }
}
