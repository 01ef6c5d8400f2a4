// Added to the stand-in MWDATCamera (Tests/GlassesRelayTests/DATSurface/MWDATCamera.swift) when AppleSurfaceTests
// builds it beside the stand-in CoreMedia: the one member the DAT surface test leaves out because it needs CoreMedia.
// Source: ../shared/reference/dat-sdk.md §1 ("public struct VideoFrame : Sendable { var sampleBuffer: CMSampleBuffer
// { get } …") and §1's note: "Use `CMSampleBufferGetPresentationTimeStamp(frame.sampleBuffer)`".
//
// And `AudioFrame`'s two members, which need AVFAudio and CoreMedia. Source: ../shared/reference/dat-1.0-extras.md §2
// ("public struct AudioFrame : @unchecked Sendable { public let pcmBuffer: AVAudioPCMBuffer; public let
// presentationTimeStamp: CMTime }").
import AVFAudio
import CoreMedia

extension VideoFrame {
    public var sampleBuffer: CMSampleBuffer { fatalError("surface only") }
}

extension AudioFrame {
    public var pcmBuffer: AVAudioPCMBuffer { fatalError("surface only") }
    public var presentationTimeStamp: CMTime { fatalError("surface only") }
}
