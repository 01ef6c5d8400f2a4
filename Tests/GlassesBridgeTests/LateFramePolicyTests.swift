import Foundation
import GlassesMedia
import Testing
@testable import GlassesBridge

/// A file played in real time: a late frame waits a moment for room, and a skipped HEVC frame takes its dependants
/// up to the next keyframe with it, at the source.
@Suite("Late frames of a file in real time")
struct LateFramePolicyTests {
    private static let tolerance = Duration.milliseconds(250)

    @Test("a frame with room is pushed, one without waits until its due time plus the tolerance")
    func waitsBeforeSkipping() {
        var policy = LateFramePolicy(tolerance: Self.tolerance)
        #expect(policy.frameDue(.predicted, due: .milliseconds(500), room: 1) == .push)
        #expect(policy.frameDue(.predicted, due: .milliseconds(542), room: 0) == .waitForRoom(until: .milliseconds(792)))
        // Room came in time: pushed, and nothing after it is held back.
        #expect(policy.waitEnded(.predicted, gotRoom: true) == .push)
        #expect(!policy.awaitingKeyframe)
        #expect(policy.frameDue(.predicted, due: .milliseconds(583), room: 2) == .push)
    }

    @Test("a skipped HEVC frame skips every frame up to the next keyframe as awaitingKeyframe")
    func skippedPredictedFrameSkipsItsDependants() {
        var policy = LateFramePolicy(tolerance: Self.tolerance)
        _ = policy.frameDue(.predicted, due: .milliseconds(500), room: 0)
        #expect(policy.waitEnded(.predicted, gotRoom: false) == .skip(.late))
        #expect(policy.awaitingKeyframe)
        // Room again, but these frames predict from the one that was skipped: never decoded into damage.
        #expect(policy.frameDue(.predicted, due: .milliseconds(542), room: 3) == .skip(.awaitingKeyframe))
        #expect(policy.frameDue(.predicted, due: .milliseconds(583), room: 3) == .skip(.awaitingKeyframe))
        #expect(policy.frameDue(.keyframe, due: .milliseconds(625), room: 3) == .push)
        #expect(!policy.awaitingKeyframe)
        #expect(policy.frameDue(.predicted, due: .milliseconds(667), room: 3) == .push)
    }

    @Test("a keyframe skipped for lateness takes the frames after it along; a keyframe that waits may still wait")
    func skippedKeyframe() {
        var policy = LateFramePolicy(tolerance: Self.tolerance)
        _ = policy.frameDue(.keyframe, due: .seconds(1), room: 0)
        #expect(policy.waitEnded(.keyframe, gotRoom: false) == .skip(.late))
        #expect(policy.frameDue(.predicted, due: .milliseconds(1042), room: 1) == .skip(.awaitingKeyframe))
        // The next keyframe ends the skipping, but without room it waits like any other frame.
        #expect(policy.frameDue(.keyframe, due: .seconds(2), room: 0) == .waitForRoom(until: .milliseconds(2250)))
        #expect(!policy.awaitingKeyframe)
        #expect(policy.waitEnded(.keyframe, gotRoom: false) == .skip(.late))
        #expect(policy.awaitingKeyframe)
    }

    @Test("a raw frame skipped for lateness costs only itself")
    func skippedRawFrame() {
        var policy = LateFramePolicy(tolerance: Self.tolerance)
        _ = policy.frameDue(.independent, due: .milliseconds(500), room: 0)
        #expect(policy.waitEnded(.independent, gotRoom: false) == .skip(.late))
        #expect(!policy.awaitingKeyframe)
        #expect(policy.frameDue(.independent, due: .milliseconds(542), room: 1) == .push)
    }

    @Test("an HEVC frame waits up to the longer encoded tolerance; a raw frame up to the tolerance")
    func hevcWaitsLonger() {
        var policy = LateFramePolicy(tolerance: Self.tolerance, encodedTolerance: .milliseconds(500))
        #expect(policy.frameDue(.predicted, due: .milliseconds(500), room: 0) == .waitForRoom(until: .seconds(1)))
        #expect(policy.waitEnded(.predicted, gotRoom: true) == .push)
        #expect(policy.frameDue(.keyframe, due: .seconds(1), room: 0) == .waitForRoom(until: .milliseconds(1500)))
        #expect(policy.waitEnded(.keyframe, gotRoom: true) == .push)
        #expect(policy.frameDue(.independent, due: .seconds(2), room: 0) == .waitForRoom(until: .milliseconds(2250)))
        // Never shorter than the tolerance.
        var shorter = LateFramePolicy(tolerance: Self.tolerance, encodedTolerance: .milliseconds(100))
        #expect(shorter.encodedTolerance == Self.tolerance)
        #expect(shorter.frameDue(.predicted, due: .milliseconds(500), room: 0) == .waitForRoom(until: .milliseconds(750)))
    }

    @Test("a negative tolerance counts as none: the wait ends at the frame's own time")
    func negativeTolerance() {
        var policy = LateFramePolicy(tolerance: .milliseconds(-40))
        #expect(policy.tolerance == .zero)
        #expect(policy.frameDue(.predicted, due: .milliseconds(500), room: 0) == .waitForRoom(until: .milliseconds(500)))
    }

    @Test("how frames depend on earlier ones follows their content")
    func dependenceOfFrames() {
        let configuration = HEVCCodecConfiguration(
            videoParameterSets: [], sequenceParameterSets: [], pictureParameterSets: [], width: 4, height: 2)
        func hevc(_ key: Bool) -> VideoFrame {
            VideoFrame(presentationTimeUs: 0,
                       content: .hevc(HEVCSample(data: Data([0, 0, 0, 1, 0x26]), isKeyframe: key, codecConfiguration: configuration)))
        }
        let image = RawVideoImage(width: 4, height: 2, lumaBytesPerRow: 4, chromaBytesPerRow: 4, data: Data(count: 12))!
        #expect(LateFramePolicy.Dependence(of: hevc(true)) == .keyframe)
        #expect(LateFramePolicy.Dependence(of: hevc(false)) == .predicted)
        #expect(LateFramePolicy.Dependence(of: VideoFrame(presentationTimeUs: 0, content: .raw(image))) == .independent)
    }
}
