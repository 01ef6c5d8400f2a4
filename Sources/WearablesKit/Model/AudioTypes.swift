import Foundation

// DAT 1.0's camera audio (experimental): audio is "an experimental extension of Camera Stream, not a separate
// capability", asked for in the stream's configuration and delivered beside its frames
// (`shared/reference/dat-1.0-extras.md` §2; docs/DAT-ON-LINUX.md).

/// The sample rates the glasses' microphones offer: DAT 1.0's `AudioSampleRate` (raw values as DAT declares them:
/// the cases' positions, not hertz; read ``hertz``).
public enum AudioSampleRate: UInt, Sendable, Hashable, CaseIterable, Codable {
    case rate16000, rate44100, rate48000

    /// The rate of `hertz` samples per second, if it is one of DAT's.
    public init?(hertz: UInt) {
        guard let rate = Self.allCases.first(where: { $0.hertz == hertz }) else { return nil }
        self = rate
    }

    /// Samples per second per channel.
    public var hertz: UInt {
        switch self {
        case .rate16000: 16_000
        case .rate44100: 44_100
        case .rate48000: 48_000
        }
    }
}

/// How decoded audio is delivered with a camera stream: DAT 1.0's `AudioCodec`.
public enum AudioCodec: Sendable, Hashable, Codable {
    /// PCM (Float32, native endian) at a sample rate with a number of channels. Glasses refuse a channel count their
    /// microphones cannot give (the simulated glasses: 1 or 2) with ``StreamError/audioStreamingError``.
    case pcm(sampleRate: AudioSampleRate, numberOfChannels: UInt32)

    /// The sample rate.
    public var sampleRate: AudioSampleRate {
        switch self { case .pcm(let rate, _): rate }
    }

    /// The number of channels.
    public var numberOfChannels: UInt32 {
        switch self { case .pcm(_, let channels): channels }
    }
}

/// The format of an ``AudioPCMBuffer``: the members of `AVAudioFormat` a reader of DAT's buffers uses.
public struct AudioPCMFormat: Sendable, Hashable {
    /// Samples per second per channel.
    public let sampleRate: Double
    /// Channels.
    public let channelCount: UInt32
    /// Always false: channels are held apart, as ``AudioPCMBuffer/floatChannelData`` gives them.
    public let isInterleaved: Bool

    /// Creates a format.
    public init(sampleRate: Double, channelCount: UInt32) {
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        self.isInterleaved = false
    }
}

/// Float32 PCM, one buffer per channel: WearablesKit's stand-in for the `AVAudioPCMBuffer` DAT delivers (there is no
/// AVFAudio on Linux), with the members a reader uses: ``frameLength``, ``format``, ``floatChannelData`` and
/// ``stride``. Immutable, as DAT asks ("do not mutate the delivered PCM buffer").
public final class AudioPCMBuffer: @unchecked Sendable {
    /// The buffer's format.
    public let format: AudioPCMFormat
    /// Valid frames (samples per channel).
    public let frameLength: UInt32
    /// Samples between one frame and the next in a channel's buffer: 1 (channels are not interleaved).
    public let stride: Int = 1
    /// One pointer per channel (``AudioPCMFormat/channelCount`` of them), each to ``frameLength`` samples.
    private let channelPointers: UnsafeMutablePointer<UnsafeMutablePointer<Float>>

    /// Creates a buffer from one array of samples per channel (all the same length, at least one channel).
    public init?(sampleRate: Double, channels samples: [[Float]]) {
        guard let first = samples.first, samples.allSatisfy({ $0.count == first.count }),
              first.count <= UInt32.max, sampleRate > 0 else { return nil }
        format = AudioPCMFormat(sampleRate: sampleRate, channelCount: UInt32(samples.count))
        frameLength = UInt32(first.count)
        channelPointers = .allocate(capacity: samples.count)
        for (index, channel) in samples.enumerated() {
            let pointer = UnsafeMutablePointer<Float>.allocate(capacity: max(1, channel.count))
            pointer.initialize(from: channel, count: channel.count)
            (channelPointers + index).initialize(to: pointer)
        }
    }

    deinit {
        for index in 0 ..< Int(format.channelCount) { channelPointers[index].deallocate() }
        channelPointers.deallocate()
    }

    /// One pointer per channel to its ``frameLength`` samples, as `AVAudioPCMBuffer.floatChannelData` (never nil here:
    /// the samples are always Float32). Valid while the buffer lives; read it, do not write it.
    public var floatChannelData: UnsafePointer<UnsafeMutablePointer<Float>>? { UnsafePointer(channelPointers) }

    /// Channel `index`'s samples, copied (a Linux convenience).
    public func samples(channel index: Int) -> [Float] {
        guard index >= 0, index < Int(format.channelCount) else { return [] }
        return Array(UnsafeBufferPointer(start: channelPointers[index], count: Int(frameLength)))
    }
}

/// Audio from the glasses' microphones, with the time to align it with the video: DAT 1.0's `AudioFrame`.
public struct AudioFrame: @unchecked Sendable {
    /// The samples.
    public let pcmBuffer: AudioPCMBuffer
    /// When the first sample was taken, in microseconds on the glasses' clock: the clock of
    /// `VideoFrame.presentationTimeUs` (DAT's `presentationTimeStamp` is a `CMTime` "for synchronizing audio with
    /// video"; there is no CoreMedia on Linux, so it is given as ``VideoFrame``'s time is).
    public let presentationTimeUs: Int64

    /// Creates a frame.
    public init(pcmBuffer: AudioPCMBuffer, presentationTimeUs: Int64) {
        self.pcmBuffer = pcmBuffer
        self.presentationTimeUs = presentationTimeUs
    }
}

/// One piece of audio on the link, before WearablesKit turns it into an ``AudioFrame``.
public struct AudioSample: Sendable, Hashable {
    /// The time of the first frame, in microseconds on the device's clock (that of the video samples).
    public var presentationTimeUs: Int64
    /// The sample rate.
    public var sampleRate: AudioSampleRate
    /// Channels (interleaved in ``payload``).
    public var channels: UInt8
    /// Float32 samples, interleaved by channel, little-endian: `frames × channels × 4` bytes.
    public var payload: Data

    /// The most frames one sample may carry (one second at 48 kHz).
    public static let maximumFrames = 48_000
    /// The most channels a sample may carry.
    public static let maximumChannels: UInt8 = 8

    /// Creates an audio sample.
    public init(presentationTimeUs: Int64, sampleRate: AudioSampleRate, channels: UInt8, payload: Data) {
        self.presentationTimeUs = presentationTimeUs
        self.sampleRate = sampleRate
        self.channels = channels
        self.payload = payload
    }

    /// Packs per-channel samples (all the same length) into a sample's interleaved little-endian payload.
    public init(presentationTimeUs: Int64, sampleRate: AudioSampleRate, channels samples: [[Float]]) {
        var payload = Data(capacity: samples.count * (samples.first?.count ?? 0) * 4)
        let frames = samples.map(\.count).min() ?? 0
        for frame in 0 ..< frames {
            for channel in samples {
                withUnsafeBytes(of: channel[frame].bitPattern.littleEndian) { payload.append(contentsOf: $0) }
            }
        }
        self.init(presentationTimeUs: presentationTimeUs, sampleRate: sampleRate, channels: UInt8(clamping: samples.count),
                  payload: payload)
    }

    /// Why this sample cannot be turned into audio (nil when it can): no channels or too many, a payload that is not
    /// whole frames, or more than ``maximumFrames``.
    public var problem: String? {
        guard channels >= 1, channels <= Self.maximumChannels else {
            return "an audio sample with \(channels) channels (1…\(Self.maximumChannels))"
        }
        let frameBytes = Int(channels) * 4
        guard payload.count % frameBytes == 0 else {
            return "an audio payload of \(payload.count) bytes is not whole \(channels)-channel Float32 frames"
        }
        guard payload.count / frameBytes <= Self.maximumFrames else {
            return "an audio sample of \(payload.count / frameBytes) frames (at most \(Self.maximumFrames))"
        }
        return nil
    }

    /// The samples, one array per channel; nil when ``problem`` says why not.
    public func deinterleaved() -> [[Float]]? {
        guard problem == nil else { return nil }
        let count = Int(channels), frames = payload.count / (count * 4)
        var result = [[Float]](repeating: [Float](repeating: 0, count: frames), count: count)
        payload.withUnsafeBytes { raw in
            for frame in 0 ..< frames {
                for channel in 0 ..< count {
                    let bits = raw.loadUnaligned(fromByteOffset: (frame * count + channel) * 4, as: UInt32.self)
                    result[channel][frame] = Float(bitPattern: UInt32(littleEndian: bits))
                }
            }
        }
        return result
    }
}
