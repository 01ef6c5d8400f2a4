// Stand-in `AVFAudio` module: exactly the AVFAudio API that Sources/GlassesRelay/Adapter/
// RelayFrameAdapter+CoreMedia.swift reads from DAT's audio frames, each declaration copied from Apple's documentation
// (https://developer.apple.com/documentation/avfaudio/…, the page named beside it). Bodies only trap: type-checking
// on Linux only. Built by AppleSurfaceTests.

/// …/avfaudio/avaudioframecount: "typealias AVAudioFrameCount = UInt32".
public typealias AVAudioFrameCount = UInt32
/// …/avfaudio/avaudiochannelcount: "typealias AVAudioChannelCount = UInt32".
public typealias AVAudioChannelCount = UInt32

/// …/avfaudio/avaudioformat: "class AVAudioFormat".
open class AVAudioFormat: @unchecked Sendable {
    /// …/avaudioformat/samplerate: "var sampleRate: Double { get }".
    open var sampleRate: Double { fatalError("surface only") }
    /// …/avaudioformat/channelcount: "var channelCount: AVAudioChannelCount { get }".
    open var channelCount: AVAudioChannelCount { fatalError("surface only") }
    /// …/avaudioformat/isinterleaved: "var isInterleaved: Bool { get }".
    open var isInterleaved: Bool { fatalError("surface only") }
}

/// …/avfaudio/avaudiobuffer: "class AVAudioBuffer".
open class AVAudioBuffer: @unchecked Sendable {
    /// …/avaudiobuffer/format: "var format: AVAudioFormat { get }".
    open var format: AVAudioFormat { fatalError("surface only") }
}

/// …/avfaudio/avaudiopcmbuffer: "class AVAudioPCMBuffer" (a subclass of AVAudioBuffer for PCM audio formats).
open class AVAudioPCMBuffer: AVAudioBuffer, @unchecked Sendable {
    /// …/avaudiopcmbuffer/framelength: "var frameLength: AVAudioFrameCount { get set }".
    open var frameLength: AVAudioFrameCount {
        get { fatalError("surface only") }
        set { fatalError("surface only") }
    }
    /// …/avaudiopcmbuffer/stride: "var stride: Int { get }".
    open var stride: Int { fatalError("surface only") }
    /// …/avaudiopcmbuffer/floatchanneldata: "var floatChannelData: UnsafePointer<UnsafeMutablePointer<Float>>? { get }".
    open var floatChannelData: UnsafePointer<UnsafeMutablePointer<Float>>? { fatalError("surface only") }
}
