/// A borrowed, read-only view of one video frame: the engine's own pixel type, valid only inside the
/// `withUnsafe…` scope that produced its pointers.
///
/// BGRA has one plane; NV12 has a luma plane and an interleaved CbCr plane at half resolution.
public struct VitalsPixelView {
    /// The pixel layouts the engine reads.
    public enum Format: Sendable, Hashable {
        /// 32-bit BGRA, one plane.
        case bgra
        /// NV12 with video-range levels (luma 16–235, chroma 16–240).
        case nv12VideoRange
        /// NV12 with full-range levels (0–255).
        case nv12FullRange
    }

    /// The pixel layout.
    public let format: Format
    /// Width in pixels.
    public let width: Int
    /// Height in pixels.
    public let height: Int
    /// First plane (BGRA pixels or NV12 luma).
    public let plane0: UnsafePointer<UInt8>
    /// Bytes per row of the first plane.
    public let bytesPerRow0: Int
    /// Second plane (NV12 interleaved CbCr), nil for BGRA.
    public let plane1: UnsafePointer<UInt8>?
    /// Bytes per row of the second plane.
    public let bytesPerRow1: Int

    /// Creates a view; fails when the geometry is inconsistent (missing chroma plane, strides too small, empty frame).
    public init(
        format: Format, width: Int, height: Int,
        plane0: UnsafePointer<UInt8>, bytesPerRow0: Int,
        plane1: UnsafePointer<UInt8>? = nil, bytesPerRow1: Int = 0
    ) throws(VitalsEngineError) {
        guard width > 0, height > 0 else {
            throw VitalsEngineError(code: .invalidFrame, message: "The frame is empty.", context: "\(width)×\(height)")
        }
        switch format {
        case .bgra:
            guard bytesPerRow0 >= width * 4 else {
                throw VitalsEngineError(code: .invalidFrame, message: "BGRA rows are shorter than the width.",
                                        context: "bytesPerRow \(bytesPerRow0) for width \(width)")
            }
        case .nv12VideoRange, .nv12FullRange:
            guard plane1 != nil, bytesPerRow0 >= width, bytesPerRow1 >= (width + 1) / 2 * 2 else {
                throw VitalsEngineError(code: .invalidFrame, message: "NV12 needs a luma and a chroma plane with full rows.",
                                        context: "luma stride \(bytesPerRow0), chroma stride \(bytesPerRow1), width \(width)")
            }
        }
        self.format = format
        self.width = width
        self.height = height
        self.plane0 = plane0
        self.bytesPerRow0 = bytesPerRow0
        self.plane1 = plane1
        self.bytesPerRow1 = bytesPerRow1
    }

    /// The luma (or BGRA-derived luma) of one pixel, 0–255 in the frame's own range.
    @inline(__always)
    func luma(_ x: Int, _ y: Int) -> Int {
        if format == .bgra {
            let p = plane0 + y * bytesPerRow0 + x * 4
            // BT.601 luma from B, G, R in fixed point.
            return (Int(p[0]) * 29 + Int(p[1]) * 150 + Int(p[2]) * 77) >> 8
        }
        return Int(plane0[y * bytesPerRow0 + x])
    }

    /// Mean RGB (0–255, full range) over a rectangle, sampling every `step`-th pixel in both directions.
    ///
    /// For NV12 the means of Y, Cb and Cr are taken first and converted once (the conversion is linear).
    func meanRGB(_ rect: VitalsRect, step: Int) -> RGB {
        let r = rect.clamped(width: width, height: height)
        guard r.width > 0, r.height > 0 else { return RGB(r: 0, g: 0, b: 0) }
        var count = 0
        switch format {
        case .bgra:
            var sb = 0, sg = 0, sr = 0
            var y = r.y
            while y < r.maxY {
                var p = plane0 + y * bytesPerRow0 + r.x * 4
                var x = r.x
                while x < r.maxX {
                    sb += Int(p[0]); sg += Int(p[1]); sr += Int(p[2])
                    count += 1
                    x += step
                    p += 4 * step
                }
                y += step
            }
            let n = Double(max(count, 1))
            return RGB(r: Double(sr) / n, g: Double(sg) / n, b: Double(sb) / n)
        case .nv12VideoRange, .nv12FullRange:
            var sy = 0
            var y = r.y
            while y < r.maxY {
                let row = plane0 + y * bytesPerRow0
                var x = r.x
                while x < r.maxX {
                    sy += Int(row[x])
                    count += 1
                    x += step
                }
                y += step
            }
            var scb = 0, scr = 0, ccount = 0
            let cstep = max(1, step / 2)
            var cy = r.y / 2
            let cMaxY = (r.maxY + 1) / 2, cMaxX = (r.maxX + 1) / 2
            let chroma = plane1!
            while cy < cMaxY {
                let row = chroma + cy * bytesPerRow1
                var cx = r.x / 2
                while cx < cMaxX {
                    scb += Int(row[2 * cx]); scr += Int(row[2 * cx + 1])
                    ccount += 1
                    cx += cstep
                }
                cy += cstep
            }
            let yMean = Double(sy) / Double(max(count, 1))
            let cb = Double(scb) / Double(max(ccount, 1)) - 128
            let cr = Double(scr) / Double(max(ccount, 1)) - 128
            return ColorConversion.rgb(y: yMean, cb: cb, cr: cr, fullRange: format == .nv12FullRange)
        }
    }
}

/// An RGB triple of means, 0–255.
struct RGB: Sendable, Hashable {
    var r: Double
    var g: Double
    var b: Double

    /// BT.601 luma, 0.299 R + 0.587 G + 0.114 B.
    var luma: Double { 0.299 * r + 0.587 * g + 0.114 * b }
}

/// BT.601 Y'CbCr → R'G'B' on means.
enum ColorConversion {
    static func rgb(y: Double, cb: Double, cr: Double, fullRange: Bool) -> RGB {
        if fullRange {
            return RGB(r: y + 1.402 * cr, g: y - 0.344136 * cb - 0.714136 * cr, b: y + 1.772 * cb)
        }
        let yy = (y - 16) * 255.0 / 219.0
        let k = 255.0 / 224.0
        return RGB(r: yy + 1.402 * k * cr, g: yy - 0.344136 * k * cb - 0.714136 * k * cr, b: yy + 1.772 * k * cb)
    }
}

/// An integer rectangle in pixels.
public struct VitalsRect: Sendable, Hashable, CustomStringConvertible {
    /// Left edge.
    public var x: Int
    /// Top edge.
    public var y: Int
    /// Width.
    public var width: Int
    /// Height.
    public var height: Int

    /// Creates a rectangle.
    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    /// One past the right edge.
    public var maxX: Int { x + width }
    /// One past the bottom edge.
    public var maxY: Int { y + height }
    /// `x,y wxh`.
    public var description: String { "(\(x),\(y) \(width)×\(height))" }

    /// The part of the rectangle inside a `width`×`height` frame.
    public func clamped(width w: Int, height h: Int) -> VitalsRect {
        let x0 = min(max(x, 0), w), y0 = min(max(y, 0), h)
        let x1 = min(max(maxX, 0), w), y1 = min(max(maxY, 0), h)
        return VitalsRect(x: x0, y: y0, width: x1 - x0, height: y1 - y0)
    }

    /// Intersection area over union area.
    public func overlap(_ other: VitalsRect) -> Double {
        let ix = max(0, min(maxX, other.maxX) - max(x, other.x))
        let iy = max(0, min(maxY, other.maxY) - max(y, other.y))
        let inter = Double(ix * iy)
        let union = Double(width * height + other.width * other.height) - inter
        return union > 0 ? inter / union : 0
    }
}
