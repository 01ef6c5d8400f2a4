import Foundation
import GlassesSimulator
import Testing
import WearablesKit

@testable import GlassesRelay

/// DAT 1.0's camera audio through the relay: the host's configuration carried to DAT's `StreamConfiguration`, and
/// DAT's audio frames passed on, sample for sample, on the video's clock.
@Suite("Relay core: DAT's camera audio forwarded", .serialized)
struct RelayAudioTests {
    static let stereo48k = StreamConfiguration(videoCodec: .raw, audioCodec: .pcm(sampleRate: .rate48000, numberOfChannels: 2),
                                               resolution: .low, frameRate: 15)

    @Test("the host's audio through the relay: every frame the glasses' microphone gave, its samples and time intact, beside the video")
    func forwarded() throws {
        let core = try RelayCore()
        let (_, camera) = try core.startStream(Self.stereo48k)
        let audio = Collected<AudioFrame>()
        let frames = Collected<VideoFrame>()
        let errors = Collected<StreamError>()
        let tokens = ListenerTokenBag()
        camera.stream.audioFramePublisher.listen { audio.append($0) }.store(in: tokens)
        camera.stream.videoFramePublisher.listen { frames.append($0) }.store(in: tokens)
        camera.stream.errorPublisher.listen { errors.append($0) }.store(in: tokens)
        core.advance(1)
        #expect(camera.stream.state == .streaming)
        #expect(errors.values.isEmpty, "\(errors.values)")
        let received = audio.values
        #expect(received.count >= 49, "\(received.count) frames in 1 s")
        #expect(frames.values.count >= 14)
        // Each is what the simulated glasses' microphone gives at its time, to the last bit.
        let codec = AudioCodec.pcm(sampleRate: .rate48000, numberOfChannels: 2)
        for frame in received {
            let truth = core.glasses.audioSample(codec, at: .microseconds(frame.presentationTimeUs))
            let got = AudioSample(presentationTimeUs: frame.presentationTimeUs, sampleRate: .rate48000,
                                  channels: [frame.pcmBuffer.samples(channel: 0), frame.pcmBuffer.samples(channel: 1)])
            #expect(got == truth, "audio at \(frame.presentationTimeUs) µs differs")
        }
        #expect(zip(received, received.dropFirst()).allSatisfy { $1.presentationTimeUs - $0.presentationTimeUs == 20_000 })
        #expect(core.client.counters.audioFramesForwarded == core.server.counters.audioSamplesSent)
        #expect(core.server.counters.audioSamplesSent >= UInt64(received.count))
    }

    @Test("a relay without an audio reader streams the video and tells the host audioStreamingError")
    func noAdapter() throws {
        let core = try RelayCore(audio: false)
        let session = try core.hostWearables.createSession(deviceSelector: AutoDeviceSelector(wearables: core.hostWearables))
        try session.start()
        core.advance(0.1)
        let camera = try #require(try session.addCamera(config: Self.stereo48k))
        let audio = Collected<AudioFrame>()
        let errors = Collected<StreamError>()
        let tokens = ListenerTokenBag()
        camera.stream.audioFramePublisher.listen { audio.append($0) }.store(in: tokens)
        camera.stream.errorPublisher.listen { errors.append($0) }.store(in: tokens)
        camera.stream.start()
        core.advance(1)
        #expect(camera.stream.state == .streaming)
        #expect(audio.values.isEmpty)
        #expect(core.client.counters.audioFramesForwarded == 0)
        #expect(errors.values == [.audioStreamingError], "\(errors.values)")
        #expect(core.server.counters.faultsSent == 1)
    }

    @Test("no audio asked for: none forwarded")
    func notAsked() throws {
        let core = try RelayCore()
        let (_, camera) = try core.startStream(try StreamConfiguration.validated(videoCodec: .raw, resolution: .low, frameRate: 15))
        core.advance(1)
        #expect(camera.stream.state == .streaming)
        #expect(core.client.counters.audioFramesForwarded == 0)
        #expect(camera.stream.sampleCounters.audioDiscarded == 0)
    }
}
