import Foundation
import WearablesKit

// DAT 1.0's camera audio: while a stream that asked for audio streams, the microphone sends Float32 PCM every
// 20 ms on the frames' clock: the room's hiss and the subject's breathing, whose airflow follows the ground truth.
extension SimulatedGlasses {
    /// The length of one audio sample on the link.
    static let audioChunk: Duration = .milliseconds(20)
    /// The room's noise floor (standard deviation of the samples, full scale 1).
    static let roomNoiseLevel: Float = 0.004
    /// Airflow noise at the fastest inhalation (standard deviation); exhalation is 0.4 of it.
    static let breathNoiseLevel: Float = 0.12

    /// Starts the microphone for the streaming period `generation` (it stops with the frames).
    func startAudio(_ codec: AudioCodec, generation: UInt64, start: Duration) {
        log("audio \(codec.sampleRate.hertz) Hz, \(codec.numberOfChannels) channel(s)")
        scheduler.schedule(after: .zero) { [weak self] in
            self?.audioTick(codec, generation: generation, start: start, index: 0)
        }
    }

    private func audioTick(_ codec: AudioCodec, generation: UInt64, start: Duration, index: Int) {
        let link = state.withLock { s -> (any HostLink)? in
            s.frameGeneration == generation ? s.link : nil
        }
        guard let link else { return }
        let due = start + Self.audioChunk * index
        let elapsed = due - epoch
        link.send(.audioSample(audioSample(codec, at: elapsed)))
        let next = start + Self.audioChunk * (index + 1)
        scheduler.schedule(after: next - scheduler.now) { [weak self] in
            self?.audioTick(codec, generation: generation, start: start, index: index + 1)
        }
    }

    /// The 20 ms of audio that starts `elapsed` after the glasses were created: the same bytes for the same time,
    /// codec and subject.
    ///
    /// The sound of breathing is airflow noise whose loudness follows the breathing signal's slope (the ground
    /// truth's `breathingSignal`, normalised by its rate): inhalation at full level, exhalation at 0.4, so the
    /// loudness's fundamental is the breathing rate. High-passed white noise (a first difference) stands in for the
    /// hiss of air; the room adds a constant floor.
    public func audioSample(_ codec: AudioCodec, at elapsed: Duration) -> AudioSample {
        let t0 = Self.seconds(elapsed)
        let rate = Int(codec.sampleRate.hertz)
        let frames = rate / 50
        let dt = 0.02
        let breathsPerSecond = max(0.05, scene.profile.breathingRate / 60)
        let slope = (scene.breathingSignal(at: t0 + dt) - scene.breathingSignal(at: max(0, t0 - dt))) / (2 * dt)
        let airflow = slope / (2 * Double.pi * breathsPerSecond)
        let level = Self.breathNoiseLevel * Float(min(1, max(0, airflow)) + 0.4 * min(1, max(0, -airflow)))
        let chunkIndex = UInt64(max(0, (elapsed / Self.audioChunk).rounded(.down)))
        var channels: [[Float]] = []
        for channel in 0 ..< Int(codec.numberOfChannels) {
            var random = SeededRandom(seed: scene.profile.seed, stream: 0xA0D1_0000 &+ chunkIndex &* 8 &+ UInt64(channel))
            var previous = Float(random.gaussian())
            var samples = [Float](repeating: 0, count: frames)
            for i in 0 ..< frames {
                let white = Float(random.gaussian())
                let hiss = (white - previous) * 0.7071
                previous = white
                samples[i] = max(-1, min(1, level * hiss + Self.roomNoiseLevel * Float(random.gaussian())))
            }
            channels.append(samples)
        }
        let us = elapsed.components.seconds * 1_000_000 + elapsed.components.attoseconds / 1_000_000_000_000
        return AudioSample(presentationTimeUs: us, sampleRate: codec.sampleRate, channels: channels)
    }
}
