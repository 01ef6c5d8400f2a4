import Foundation
import GlassesMedia
import Testing
import WearablesKit
@testable import GlassesBridge

/// The hand-off's accounting at the run's end: frames after `.finish` are outside the run.
@Suite("Frame hand-off")
struct FrameHandoffTests {
    private static func frame(_ index: Int) -> VideoFrame {
        let configuration = HEVCCodecConfiguration(
            videoParameterSets: [], sequenceParameterSets: [], pictureParameterSets: [], width: 504, height: 896)
        return VideoFrame(
            presentationTimeUs: Int64(index) * 41_667,
            content: .hevc(HEVCSample(data: Data([0, 0, 1]), isKeyframe: index == 0, codecConfiguration: configuration)))
    }

    @Test("glasses sending HEVC get half a second of places; raw frames, files and streams the frame capacity")
    func placesFollowTheCodec() throws {
        func settings(_ codec: VideoCodec, fps: UInt) throws -> BridgeSettings {
            try BridgeSettings(streamConfiguration: StreamConfiguration.validated(
                videoCodec: codec, resolution: .medium, frameRate: fps))
        }
        #expect(try settings(.hvc1, fps: 24).handoffPlaces(glasses: true) == 12)
        #expect(try settings(.hvc1, fps: 30).handoffPlaces(glasses: true) == 15)
        #expect(try settings(.hvc1, fps: 24).handoffPlaces(glasses: false) == 3)
        #expect(try settings(.raw, fps: 24).handoffPlaces(glasses: true) == 3)
        var custom = try settings(.hvc1, fps: 2)
        #expect(custom.handoffPlaces(glasses: true) == 3, "never fewer than frameCapacity")
        custom.encodedBacklog = .seconds(3600)
        #expect(custom.handoffPlaces(glasses: true) == 120, "at most 120")
        custom.encodedBacklog = .milliseconds(-5)
        custom.frameCapacity = 0
        #expect(custom.handoffPlaces(glasses: true) == 1)
        // An unvalidated configuration's frame rate may be any UInt: bounded, never a trap.
        var absurd = BridgeSettings(streamConfiguration: StreamConfiguration(videoCodec: .hvc1, resolution: .medium,
                                                                             frameRate: UInt.max))
        #expect(absurd.handoffPlaces(glasses: true) == 120)
        absurd.encodedBacklog = .seconds(Int64.max)
        #expect(absurd.handoffPlaces(glasses: true) == 120)
    }

    @Test("a frame pushed after the run's end is neither received nor dropped")
    func frameAfterFinishIsNotCounted() {
        let counters = BridgeCounters()
        let handoff = FrameHandoff(frameCapacity: 3, counters: counters)
        handoff.push(Self.frame(0), hostUs: 0)
        handoff.push(control: .finish)
        // A real-time source that was between its last check and its push when the run's duration ended.
        handoff.push(Self.frame(1), hostUs: 41_667)
        let accounting = counters.snapshot.accounting
        #expect(accounting.received == 1)
        #expect(accounting.dropped == 0)
        // The worker still gets the frame from before the end, then the end itself, and nothing after it.
        guard case .frame(let first, _) = handoff.next() else {
            Issue.record("the frame pushed before the end was not handed over")
            return
        }
        #expect(first.presentationTimeUs == 0)
        guard case .finish = handoff.next() else {
            Issue.record("the end was not handed over after the frame")
            return
        }
    }

    @Test("a full hand-off still drops its oldest frame as late before the end")
    func fullHandoffDropsOldestAsLate() {
        let counters = BridgeCounters()
        let handoff = FrameHandoff(frameCapacity: 2, counters: counters)
        for index in 0..<3 { handoff.push(Self.frame(index), hostUs: Int64(index) * 41_667) }
        let accounting = counters.snapshot.accounting
        #expect(accounting.received == 3)
        #expect(accounting.droppedByReason[.late] == 1)
        guard case .frame(let oldest, _) = handoff.next() else {
            Issue.record("no frame was handed over")
            return
        }
        #expect(oldest.presentationTimeUs == 41_667)
    }

    @Test("a source waiting for room gets it when the worker takes a frame, and gives up at its deadline or the end")
    func waitForRoomUntilDeadline() {
        let counters = BridgeCounters()
        let handoff = FrameHandoff(frameCapacity: 1, counters: counters)
        #expect(handoff.waitForRoom(until: .now))
        handoff.push(Self.frame(0), hostUs: 0)
        // Full, and the deadline has passed: no wait at all.
        #expect(!handoff.waitForRoom(until: .now - .milliseconds(1)))
        // Full until the worker takes the frame, on another thread; the deadline is far enough to be no bound.
        let taker = Thread { _ = handoff.next() }
        taker.start()
        #expect(handoff.waitForRoom(until: .now + .seconds(60)))
        handoff.done()
        handoff.push(Self.frame(1), hostUs: 41_667)
        // Full at the run's end: a frame pushed now would not be taken, so there is no room to wait for.
        handoff.push(control: .finish)
        #expect(!handoff.waitForRoom(until: .now + .seconds(60)))
        #expect(counters.snapshot.accounting.dropped == 0)
    }
}
