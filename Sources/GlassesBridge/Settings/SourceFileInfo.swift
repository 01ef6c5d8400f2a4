import Foundation
import GlassesMedia
import GlassesVideo

/// What a run needs to know of a file source before it plays, read once from its header or container.
public struct SourceFileInfo: Sendable, Hashable {
    /// The file's playing time in seconds, where it can be told without reading it through: Y4M files (from their
    /// size and frame rate), MP4 and Matroska (from the container). Nil for bare HEVC or H.264 streams. For the
    /// live line.
    public var durationSeconds: Double?
    /// The frame rate the file declares (``VideoFileReader/declaredFrameRate``): what the frame-rate table judges a
    /// recording by. Nil for bare HEVC or H.264 streams (no timing in them).
    public var frameRate: Double?

    /// Reads what `path` declares; nil for a file that cannot be opened (the run itself says why).
    public init?(path: String) {
        guard let reader = try? VideoFileReader(path: path) else { return nil }
        durationSeconds = reader.durationSeconds
        frameRate = reader.declaredFrameRate
    }
}

extension BridgeSettings {
    /// Whether `--video-out` (YUV4MPEG2) can hold frames submitted as `format`: NV12 yes, BGRA no (Y4M has no RGB
    /// layout). Checked before a run so that it is refused up front.
    public static func videoOutCanHold(_ format: SubmitPixelFormat) -> Bool {
        Y4MWriter.canWrite(format == .bgra ? .bgra32 : .nv12VideoRange)
    }
}
