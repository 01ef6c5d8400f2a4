import Foundation

/// What the glasses' camera shows.
public enum CameraFeed: Sendable {
    /// The rendered person (the default): known vitals, ground truth available.
    case rendered
    /// The rendered scene with this image as the face (pulse applied to its skin-coloured pixels).
    case faceImage(FaceImage)
    /// A solid frame of one luma value (a covered lens, a test pattern).
    case solid(luma: UInt8)
    /// Frames of a video file instead of the rendered person, looping (see ``VideoFileFeed``); the file must have
    /// the stream's resolution, and there is no ground truth.
    case videoFile(VideoFileFeed)

    /// Whether the glasses' ground truth describes what this feed shows (only the rendered person, with or
    /// without an image face).
    public var hasGroundTruth: Bool {
        switch self {
        case .rendered, .faceImage: true
        case .solid, .videoFile: false
        }
    }
}
