import Foundation

extension RawVideoImage {
    /// The image as a `420v` ``PixelBuffer`` that shares ``data``'s bytes: custom input reads the received frame
    /// itself, with no copy in between.
    public func pixelBufferView() -> PixelBuffer {
        PixelBuffer(format: .nv12VideoRange, width: width, height: height, planes: layout.planes, sharing: data)
    }
}
