import Foundation
import Synchronization
import Testing
import WearablesKit
@testable import GlassesSimulator

/// DAT 1.0's camera audio through WearablesKit, from the simulated glasses' microphone, in virtual time.
@Suite("Camera audio: WearablesKit and the simulated glasses", .serialized)
struct AudioTests {
    final class Rig: Sendable {
        let scheduler = ManualScheduler()
        let host: WearablesHost
        let glasses: SimulatedGlasses
        let session: DeviceSession
        let stream: WearablesKit.Stream
        let audio = Collected<AudioFrame>()
        let token: Mutex<(any AnyListenerToken)?>

        init(_ configuration: StreamConfiguration, profile: SubjectProfile = SubjectProfile(seed: 41)) throws {
            host = try WearablesHost(scheduler: scheduler)
            let kit = SimulatorKit(scheduler: scheduler, liveness: .disabled)
            glasses = try kit.pairGlasses(with: host.wearables, profile: profile)
            scheduler.advance(by: .milliseconds(10))
            session = try host.wearables.createSession(deviceSelector: SpecificDeviceSelector(device: glasses.info.identifier))
            try session.start()
            scheduler.advance(by: .milliseconds(10))
            let camera = try #require(try session.addCamera(config: configuration))
            stream = camera.stream
            // Listen before start(), as DAT's audio skill says.
            let audio = self.audio
            token = Mutex(stream.audioFramePublisher.listen { audio.append($0) })
            let t = [stream.videoFramePublisher.listen { [frames = host.frames] in frames.append($0) },
                     stream.errorPublisher.listen { [errors = host.errors] in errors.append($0) }]
            host.tokens.withLock { $0 += t }
            stream.start()
        }

        func run(_ seconds: Double) { scheduler.advance(by: .milliseconds(Int64(seconds * 1000))) }
    }

    static func audio(_ rate: AudioSampleRate, _ channels: UInt32, fps: UInt = 2) -> StreamConfiguration {
        StreamConfiguration(videoCodec: .raw, audioCodec: .pcm(sampleRate: rate, numberOfChannels: channels), resolution: .low,
                            frameRate: fps)
    }

    @Test("audio beside the video: 20 ms frames at the rate and channels asked for, on the video's clock",
          arguments: [(AudioSampleRate.rate16000, UInt32(1)), (.rate48000, 2), (.rate44100, 1)])
    func beside(rate: AudioSampleRate, channels: UInt32) throws {
        let rig = try Rig(Self.audio(rate, channels, fps: 15))
        rig.run(2)
        #expect(rig.stream.state == .streaming)
        let frames = rig.audio.values
        #expect(frames.count >= 99 && frames.count <= 101, "\(frames.count)")
        #expect(frames.allSatisfy { $0.pcmBuffer.frameLength == UInt32(rate.hertz / 50) && $0.pcmBuffer.format.channelCount == channels
            && $0.pcmBuffer.format.sampleRate == Double(rate.hertz) })
        #expect(zip(frames, frames.dropFirst()).allSatisfy { $1.presentationTimeUs - $0.presentationTimeUs == 20_000 })
        // The first audio and the first video frame start together on one clock.
        let firstVideo = try #require(rig.host.frames.values.first)
        #expect(frames.first?.presentationTimeUs == firstVideo.presentationTimeUs)
        #expect(rig.host.frames.values.count >= 29)
        #expect(rig.host.errors.values.isEmpty)
        #expect(rig.stream.sampleCounters.audioDelivered == UInt64(frames.count))
    }

    @Test("the breathing in the audio: the loudness's rhythm is the subject's breathing rate (ground truth) within 1/min")
    func breathingInTheAudio() throws {
        for (seed, rate) in [(UInt64(42), 12.0), (43, 18.0)] {
            var profile = SubjectProfile(seed: seed)
            profile.breathingRate = rate
            let rig = try Rig(Self.audio(.rate16000, 1), profile: profile)
            rig.run(40)
            let frames = rig.audio.values
            #expect(frames.count >= 1990)
            // Loudness: the RMS of each 20 ms frame (50 a second); its spectrum from 6 to 40 per minute.
            let loudness = frames.map { frame -> Double in
                let s = frame.pcmBuffer.samples(channel: 0)
                return (s.reduce(0) { $0 + Double($1 * $1) } / Double(max(1, s.count))).squareRoot()
            }
            let mean = loudness.reduce(0, +) / Double(loudness.count)
            func power(_ perMinute: Double) -> Double {
                var re = 0.0, im = 0.0
                for (i, v) in loudness.enumerated() {
                    let phase = 2 * Double.pi * perMinute / 60 * Double(i) / 50
                    re += (v - mean) * cos(phase)
                    im += (v - mean) * sin(phase)
                }
                return re * re + im * im
            }
            let candidates = stride(from: 6.0, through: 40.0, by: 0.1)
            let peak = candidates.max { power($0) < power($1) }!
            let truth = try #require(rig.glasses.scene.groundTruth(through: 40).meanBreathingRate(in: 0 ... 40))
            #expect(abs(peak - truth) <= 1, "seed \(seed): the audio says \(peak)/min, the truth \(truth)/min")
        }
    }

    @Test("a channel count the microphones cannot give: audioStreamingError, the video streams on without audio")
    func unsupportedChannels() throws {
        let rig = try Rig(Self.audio(.rate16000, 3, fps: 15))
        rig.run(1)
        #expect(rig.host.errors.values == [.audioStreamingError])
        #expect(rig.stream.state == .streaming)
        #expect(rig.host.frames.values.count >= 14)
        #expect(rig.audio.values.isEmpty)
    }

    @Test("no audio asked for: none sent; a pause stops the microphone with the frames, the resume restarts it")
    func noAudioAndPauses() throws {
        let none = try Rig(StreamConfiguration(videoCodec: .raw, resolution: .low, frameRate: 15))
        none.run(1)
        #expect(none.audio.values.isEmpty)
        #expect(none.stream.sampleCounters.audioDiscarded == 0)

        let rig = try Rig(Self.audio(.rate16000, 1))
        rig.run(1)
        let before = rig.audio.values.count
        rig.glasses.tap()
        rig.run(1)
        #expect(rig.stream.state == .paused)
        let paused = rig.audio.values.count
        #expect(paused - before <= 1)
        rig.glasses.tap()
        rig.run(1)
        #expect(rig.stream.state == .streaming)
        #expect(rig.audio.values.count - paused >= 49)
    }

    @Test("the same subject and time give the same audio bytes")
    func deterministic() throws {
        let scheduler = ManualScheduler()
        let a = try SimulatedGlasses(profile: SubjectProfile(seed: 44), scheduler: scheduler)
        let b = try SimulatedGlasses(profile: SubjectProfile(seed: 44), scheduler: scheduler)
        let codec = AudioCodec.pcm(sampleRate: .rate16000, numberOfChannels: 2)
        #expect(a.audioSample(codec, at: .seconds(3)) == b.audioSample(codec, at: .seconds(3)))
        #expect(a.audioSample(codec, at: .seconds(3)) != a.audioSample(codec, at: .milliseconds(3020)))
    }
}
