// Added to the stand-in MWDATCamera (Tests/GlassesRelayTests/DATSurface/MWDATCamera.swift) when AppleSurfaceTests
// builds it beside the stand-in CoreMedia: the one member the DAT surface test leaves out because it needs CoreMedia.
// Source: ../shared/reference/dat-sdk.md §1 ("public struct VideoFrame : Sendable { var sampleBuffer: CMSampleBuffer
// { get } …") and §1's note: "Use `CMSampleBufferGetPresentationTimeStamp(frame.sampleBuffer)`".
import CoreMedia

extension VideoFrame {
    public var sampleBuffer: CMSampleBuffer { fatalError("surface only") }
}
