/// An 8-bit grayscale image owned in memory: the face detector's working picture.
public struct GrayImage: Sendable, Hashable {
    /// Width in pixels.
    public let width: Int
    /// Height in pixels.
    public let height: Int
    /// Row-major pixels, `width * height` of them.
    public var pixels: [UInt8]

    /// Creates an image; `pixels` must hold `width * height` values.
    public init(width: Int, height: Int, pixels: [UInt8]) {
        precondition(width >= 0 && height >= 0 && pixels.count == width * height, "gray image size mismatch")
        self.width = width
        self.height = height
        self.pixels = pixels
    }

    /// The luma of a frame (or of a region of it), averaged down by an integer `factor` (1 keeps the size).
    public init(downsampling view: VitalsPixelView, factor: Int, region: VitalsRect? = nil) {
        let f = max(1, factor)
        let r = (region ?? VitalsRect(x: 0, y: 0, width: view.width, height: view.height)).clamped(width: view.width, height: view.height)
        let w = r.width / f, h = r.height / f
        var out = [UInt8](repeating: 0, count: w * h)
        // Average a 2×2 subsample of each f×f cell: cheap and enough against aliasing for detection.
        let s = max(1, f / 2)
        let offsets = f >= 2 ? [(0, 0), (s, 0), (0, s), (s, s)] : [(0, 0)]
        let n = offsets.count
        for y in 0 ..< h {
            for x in 0 ..< w {
                var sum = 0
                for (dx, dy) in offsets { sum += view.luma(r.x + x * f + dx, r.y + y * f + dy) }
                out[y * w + x] = UInt8(sum / n)
            }
        }
        self.init(width: w, height: h, pixels: out)
    }

    /// A bilinear resize to `newWidth`×`newHeight`.
    public func resized(width newWidth: Int, height newHeight: Int) -> GrayImage {
        var out = [UInt8](repeating: 0, count: newWidth * newHeight)
        let sx = Double(width) / Double(newWidth), sy = Double(height) / Double(newHeight)
        // The columns' sources and weights are the same on every row: worked out once.
        var x0s = [Int](repeating: 0, count: newWidth), x1s = x0s
        var wxs = [Double](repeating: 0, count: newWidth)
        for x in 0 ..< newWidth {
            let fx = max(0, (Double(x) + 0.5) * sx - 0.5)
            x0s[x] = min(Int(fx), width - 1)
            x1s[x] = min(x0s[x] + 1, width - 1)
            wxs[x] = fx - Double(x0s[x])
        }
        pixels.withUnsafeBufferPointer { src in
            out.withUnsafeMutableBufferPointer { out in
                for y in 0 ..< newHeight {
                    let fy = max(0, (Double(y) + 0.5) * sy - 0.5)
                    let y0 = min(Int(fy), height - 1), y1 = min(y0 + 1, height - 1)
                    let wy = fy - Double(y0)
                    let top = y0 * width, bottom = y1 * width, row = y * newWidth
                    for x in 0 ..< newWidth {
                        let x0 = x0s[x], x1 = x1s[x], wx = wxs[x]
                        let t = Double(src[top + x0]) * (1 - wx) + Double(src[top + x1]) * wx
                        let b = Double(src[bottom + x0]) * (1 - wx) + Double(src[bottom + x1]) * wx
                        out[row + x] = UInt8(min(255, max(0, (t * (1 - wy) + b * wy).rounded())))
                    }
                }
            }
        }
        return GrayImage(width: newWidth, height: newHeight, pixels: out)
    }
}
