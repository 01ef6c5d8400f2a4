/// An orientation fix the SDK applies to every custom-input frame before processing.
///
/// Raw values match SmartSpectra's `FrameTransform` on every platform. Pick the one transform that makes the pixels
/// upright; the SDK never infers orientation from metadata, so do not rotate the pixels yourself as well.
public enum FrameTransform: Int, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Pixels are used as submitted.
    case none = 0
    /// Rotates a quarter turn clockwise (width and height swap).
    case rotate90CW = 1
    /// Rotates a quarter turn counter-clockwise (width and height swap).
    case rotate90CCW = 2
    /// Rotates a half turn.
    case rotate180 = 3
    /// Flips left and right (mirror across the vertical axis).
    case mirrorHorizontal = 4
    /// Flips top and bottom (mirror across the horizontal axis).
    case mirrorVertical = 5

    /// Whether the transform swaps width and height.
    public var swapsDimensions: Bool { self == .rotate90CW || self == .rotate90CCW }

    /// The size of a frame after the transform, given its size before.
    public func transformedSize(width: Int, height: Int) -> (width: Int, height: Int) {
        swapsDimensions ? (height, width) : (width, height)
    }

    /// The case name, e.g. `rotate90CW`.
    public var description: String {
        switch self {
        case .none: "none"
        case .rotate90CW: "rotate90CW"
        case .rotate90CCW: "rotate90CCW"
        case .rotate180: "rotate180"
        case .mirrorHorizontal: "mirrorHorizontal"
        case .mirrorVertical: "mirrorVertical"
        }
    }
}
