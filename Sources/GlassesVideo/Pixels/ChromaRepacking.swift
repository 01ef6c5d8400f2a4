import Foundation
import GlassesMedia

/// Lossless repacking between NV12 (interleaved CbCr) and I420 / yuv420p (separate Cb and Cr planes).
///
/// These copy samples only; no value changes, so a round trip is exact.
public enum ChromaRepacking {
    /// Splits interleaved CbCr rows into separate Cb and Cr planes.
    /// - Parameters:
    ///   - width: chroma samples per row (half the picture width, rounded up).
    ///   - height: chroma rows.
    @inline(__always)
    static func deinterleave(
        source: UnsafeRawPointer, sourceStride: Int,
        cb: UnsafeMutableRawPointer, cbStride: Int, cr: UnsafeMutableRawPointer, crStride: Int,
        width: Int, height: Int
    ) {
        for row in 0 ..< height {
            let input = (source + row * sourceStride).assumingMemoryBound(to: UInt8.self)
            let outB = (cb + row * cbStride).assumingMemoryBound(to: UInt8.self)
            let outR = (cr + row * crStride).assumingMemoryBound(to: UInt8.self)
            for column in 0 ..< width {
                outB[column] = input[2 * column]
                outR[column] = input[2 * column + 1]
            }
        }
    }

    /// Interleaves separate Cb and Cr planes into CbCr rows.
    @inline(__always)
    static func interleave(
        cb: UnsafeRawPointer, cbStride: Int, cr: UnsafeRawPointer, crStride: Int,
        destination: UnsafeMutableRawPointer, destinationStride: Int, width: Int, height: Int
    ) {
        for row in 0 ..< height {
            let inB = (cb + row * cbStride).assumingMemoryBound(to: UInt8.self)
            let inR = (cr + row * crStride).assumingMemoryBound(to: UInt8.self)
            let output = (destination + row * destinationStride).assumingMemoryBound(to: UInt8.self)
            for column in 0 ..< width {
                output[2 * column] = inB[column]
                output[2 * column + 1] = inR[column]
            }
        }
    }

    /// Copies `height` rows of `width` bytes between strided planes.
    @inline(__always)
    static func copyPlane(
        source: UnsafeRawPointer, sourceStride: Int, destination: UnsafeMutableRawPointer, destinationStride: Int,
        width: Int, height: Int
    ) {
        if sourceStride == destinationStride, sourceStride == width {
            destination.copyMemory(from: source, byteCount: width * height)
            return
        }
        for row in 0 ..< height {
            (destination + row * destinationStride).copyMemory(from: source + row * sourceStride, byteCount: width)
        }
    }

    /// Repacks an NV12 pixel buffer (either range) into tightly packed I420 (Y, then Cb, then Cr planes), the
    /// layout `ffmpeg -pix_fmt yuv420p` writes. Returns nil for a buffer that is not NV12.
    public static func i420Data(from buffer: PixelBuffer) -> Data? {
        guard buffer.format.isNV12, buffer.planes.count == 2 else { return nil }
        let width = buffer.width, height = buffer.height
        let chromaWidth = (width + 1) / 2, chromaHeight = (height + 1) / 2
        let lumaPlane = buffer.planes[0], chromaPlane = buffer.planes[1]
        var out = Data(count: width * height + 2 * chromaWidth * chromaHeight)
        out.withUnsafeMutableBytes { target in
            let base = target.baseAddress!
            buffer.withUnsafeReadOnlyStorage { storage in
                let source = storage.baseAddress!
                copyPlane(source: source + lumaPlane.offset, sourceStride: lumaPlane.bytesPerRow,
                          destination: base, destinationStride: width, width: width, height: height)
                deinterleave(source: source + chromaPlane.offset, sourceStride: chromaPlane.bytesPerRow,
                             cb: base + width * height, cbStride: chromaWidth,
                             cr: base + width * height + chromaWidth * chromaHeight, crStride: chromaWidth,
                             width: chromaWidth, height: chromaHeight)
            }
        }
        return out
    }

    /// Repacks a raw NV12 image into tightly packed I420.
    public static func i420Data(from image: RawVideoImage) -> Data {
        let width = image.width, height = image.height
        let chromaWidth = width / 2, chromaHeight = height / 2
        var out = Data(count: width * height + 2 * chromaWidth * chromaHeight)
        out.withUnsafeMutableBytes { target in
            let base = target.baseAddress!
            image.data.withUnsafeBytes { source in
                let start = source.baseAddress!
                copyPlane(source: start, sourceStride: image.lumaBytesPerRow,
                          destination: base, destinationStride: width, width: width, height: height)
                deinterleave(source: start + image.lumaBytesPerRow * height, sourceStride: image.chromaBytesPerRow,
                             cb: base + width * height, cbStride: chromaWidth,
                             cr: base + width * height + chromaWidth * chromaHeight, crStride: chromaWidth,
                             width: chromaWidth, height: chromaHeight)
            }
        }
        return out
    }

    /// Builds a tightly packed NV12 raw image from tightly packed I420 bytes.
    /// - Returns: nil when the size is odd or `i420` is too short.
    public static func rawImage(fromI420 i420: Data, width: Int, height: Int) -> RawVideoImage? {
        guard width > 0, height > 0, width % 2 == 0, height % 2 == 0 else { return nil }
        let chromaWidth = width / 2, chromaHeight = height / 2
        guard i420.count >= width * height + 2 * chromaWidth * chromaHeight else { return nil }
        var out = Data(count: width * height * 3 / 2)
        out.withUnsafeMutableBytes { target in
            let base = target.baseAddress!
            i420.withUnsafeBytes { source in
                let start = source.baseAddress!
                copyPlane(source: start, sourceStride: width, destination: base, destinationStride: width,
                          width: width, height: height)
                interleave(cb: start + width * height, cbStride: chromaWidth,
                           cr: start + width * height + chromaWidth * chromaHeight, crStride: chromaWidth,
                           destination: base + width * height, destinationStride: width,
                           width: chromaWidth, height: chromaHeight)
            }
        }
        return RawVideoImage(width: width, height: height, lumaBytesPerRow: width, chromaBytesPerRow: width, data: out)
    }
}
