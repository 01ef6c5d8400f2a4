import Foundation
import Testing

@testable import WearablesKit

/// DAT 1.0's camera audio on the host's side: audio asked for in the configuration, delivered beside the frames, and
/// audio the glasses should not have sent counted and reported once.
@Suite("Camera audio in a stream")
struct AudioStreamTests {
    static let mono16k = StreamConfiguration(videoCodec: .raw, audioCodec: .pcm(sampleRate: .rate16000, numberOfChannels: 1),
                                             resolution: .low, frameRate: 15)

    static func sample(_ pts: Int64, rate: AudioSampleRate = .rate16000, channels: Int = 1, frames: Int = 320) -> AudioSample {
        AudioSample(presentationTimeUs: pts, sampleRate: rate,
                    channels: (0 ..< channels).map { c in (0 ..< frames).map { Float($0 + c * 1000) / 65536 } })
    }

    @Test("audio asked for arrives as AudioFrames, samples and time intact; the start carries the codec")
    func delivered() throws {
        let rig = try Rig()
        let (_, _, stream) = try rig.streaming(Self.mono16k)
        #expect(rig.device.sent.contains { if case .startStream(let c, _) = $0 { c.audioCodec == Self.mono16k.audioCodec } else { false } })
        let frames = Recorder<AudioFrame>()
        let token = stream.audioFramePublisher.listen(frames.callback)
        rig.device.deliver(.audioSample(Self.sample(40_000)))
        rig.device.deliver(.audioSample(Self.sample(60_000)))
        rig.run()
        #expect(frames.values.count == 2)
        let first = try #require(frames.values.first)
        #expect(first.presentationTimeUs == 40_000)
        #expect(first.pcmBuffer.frameLength == 320)
        #expect(first.pcmBuffer.format.sampleRate == 16_000 && first.pcmBuffer.format.channelCount == 1)
        #expect(first.pcmBuffer.samples(channel: 0) == (0 ..< 320).map { Float($0) / 65536 })
        #expect(first.pcmBuffer.floatChannelData?[0][319] == Float(319) / 65536)
        #expect(stream.sampleCounters.audioDelivered == 2)
        _ = token
    }

    @Test("audio of another rate or channel count, or malformed: rejected, audioStreamingError once; the video goes on")
    func rejected() throws {
        let rig = try Rig()
        let (_, _, stream) = try rig.streaming(Self.mono16k)
        let frames = Recorder<AudioFrame>()
        let errors = Recorder<StreamError>()
        let tokens = [stream.audioFramePublisher.listen(frames.callback), stream.errorPublisher.listen(errors.callback)]
        rig.device.deliver(.audioSample(Self.sample(0, rate: .rate48000)))
        rig.device.deliver(.audioSample(Self.sample(20_000, channels: 2)))
        rig.device.deliver(.audioSample(AudioSample(presentationTimeUs: 40_000, sampleRate: .rate16000, channels: 1, payload: Data([1, 2, 3]))))
        rig.device.deliver(.audioSample(Self.sample(60_000)))
        rig.run()
        #expect(frames.values.map(\.presentationTimeUs) == [60_000])
        #expect(errors.values == [.audioStreamingError])
        #expect(stream.sampleCounters.audioRejected == 3)
        #expect(stream.state == .streaming)
        _ = tokens
    }

    @Test("audio not asked for, or outside starting and streaming, is discarded")
    func discarded() throws {
        let rig = try Rig()
        let (_, camera, stream) = try rig.streaming(StreamConfiguration(videoCodec: .raw, resolution: .low, frameRate: 15))
        let frames = Recorder<AudioFrame>()
        let token = stream.audioFramePublisher.listen(frames.callback)
        rig.device.deliver(.audioSample(Self.sample(0)))
        rig.run()
        #expect(frames.values.isEmpty)
        #expect(stream.sampleCounters.audioDiscarded == 1)
        camera.stop()
        rig.run()
        _ = token

        let rig2 = try Rig()
        let (_, camera2) = try rig2.camera(Self.mono16k)
        rig2.device.deliver(.audioSample(Self.sample(0)))
        rig2.run()
        #expect(camera2.stream.sampleCounters.audioDiscarded == 1)
    }

    @Test("AudioSample checks: channels, whole frames, at most a second at 48 kHz; interleaving round trips")
    func sampleChecks() {
        #expect(AudioSample(presentationTimeUs: 0, sampleRate: .rate16000, channels: 0, payload: Data()).problem != nil)
        #expect(AudioSample(presentationTimeUs: 0, sampleRate: .rate16000, channels: 9, payload: Data(count: 36)).problem != nil)
        #expect(AudioSample(presentationTimeUs: 0, sampleRate: .rate16000, channels: 2, payload: Data(count: 12)).problem != nil)
        #expect(AudioSample(presentationTimeUs: 0, sampleRate: .rate48000, channels: 1, payload: Data(count: 4 * 48_001)).problem != nil)
        #expect(AudioSample(presentationTimeUs: 0, sampleRate: .rate48000, channels: 1, payload: Data(count: 4 * 48_000)).problem == nil)
        let stereo: [[Float]] = [[1, 2, 3], [-1, -2, -3]]
        let packed = AudioSample(presentationTimeUs: 5, sampleRate: .rate44100, channels: stereo)
        #expect(packed.payload.count == 24)
        #expect(packed.payload.prefix(4) == Data([0, 0, 0x80, 0x3F]))  // 1.0 little-endian
        #expect(packed.deinterleaved() == stereo)
        #expect(AudioSampleRate.rate44100.hertz == 44_100 && AudioSampleRate.rate16000.rawValue == 0)
    }
}
