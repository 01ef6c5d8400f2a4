import Foundation
import GlassesMedia

/// A tightly packed NV12 video-range picture with a gradient that moves with `index`, like a camera frame (for the
/// frame-input tests, raw as sent or through the real HEVC encoder).
func gradientPicture(width: Int, height: Int, index: Int) -> RawVideoImage? {
    var bytes = [UInt8](repeating: 128, count: width * height * 3 / 2)
    for y in 0 ..< height {
        for x in 0 ..< width { bytes[y * width + x] = UInt8(16 + (x + y + 3 * index) % 200) }
    }
    return RawVideoImage(width: width, height: height, lumaBytesPerRow: width, chromaBytesPerRow: width, data: Data(bytes))
}
