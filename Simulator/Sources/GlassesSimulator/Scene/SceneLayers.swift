import Foundation

/// One pre-rendered layer of the scene (background, body or head) at a given output size, in linear BT.601
/// YCbCr with premultiplied alpha, plus per-pixel pulse coefficients. Built once per size; immutable after.
// @unchecked: the buffers are written once in init, only read afterwards, and freed in deinit.
final class SceneLayer: @unchecked Sendable {
    /// Origin of the stored box in canvas coordinates (even), and its size.
    let x0: Int, y0: Int, width: Int, height: Int
    /// Premultiplied linear luma (0...1), luma pulse coefficient and alpha, `width * height`.
    let luma: UnsafeMutablePointer<Float>, lumaPulse: UnsafeMutablePointer<Float>, alpha: UnsafeMutablePointer<Float>
    /// Per luma row: first and one-past-last column with non-zero alpha (empty rows: 0, 0).
    let rowStart: UnsafeMutablePointer<Int32>, rowEnd: UnsafeMutablePointer<Int32>
    /// Chroma box (half size): premultiplied Cb, Cr (−0.5...0.5), pulse coefficients and alpha.
    let cWidth: Int, cHeight: Int
    let cb: UnsafeMutablePointer<Float>, cr: UnsafeMutablePointer<Float>, cbPulse: UnsafeMutablePointer<Float>,
        crPulse: UnsafeMutablePointer<Float>, cAlpha: UnsafeMutablePointer<Float>
    let cRowStart: UnsafeMutablePointer<Int32>, cRowEnd: UnsafeMutablePointer<Int32>

    /// Copies an array into a buffer this layer owns.
    private static func own<T>(_ array: [T]) -> UnsafeMutablePointer<T> {
        let pointer = UnsafeMutablePointer<T>.allocate(capacity: max(array.count, 1))
        array.withUnsafeBufferPointer { source in
            if let base = source.baseAddress { pointer.initialize(from: base, count: array.count) }
        }
        return pointer
    }

    deinit {
        for p in [luma, lumaPulse, alpha, cb, cr, cbPulse, crPulse, cAlpha] { p.deallocate() }
        for p in [rowStart, rowEnd, cRowStart, cRowEnd] { p.deallocate() }
    }
    /// Number of luma pixels whose pulse coefficient is non-zero (skin).
    let skinPixelCount: Int

    @_optimize(speed)
    init(x0: Int, y0: Int, width: Int, height: Int, shade: (Int, Int) -> ScenePixel, signature: (Float, Float, Float)) {
        self.x0 = x0
        self.y0 = y0
        self.width = width
        self.height = height
        let n = width * height
        var r = [Float](repeating: 0, count: n), g = r, b = r, a = r, p = r
        for y in 0..<height {
            for x in 0..<width {
                let px = shade(x0 + x, y0 + y)
                let i = y * width + x
                r[i] = px.r * px.alpha
                g[i] = px.g * px.alpha
                b[i] = px.b * px.alpha
                a[i] = px.alpha
                p[i] = px.pulse * px.alpha
            }
        }
        let (ur, ug, ub) = signature
        var luma = [Float](repeating: 0, count: n), lumaPulse = luma
        var rowStart = [Int32](repeating: 0, count: height), rowEnd = rowStart
        var skin = 0
        for y in 0..<height {
            var first = -1, last = -1
            for x in 0..<width {
                let i = y * width + x
                luma[i] = 0.299 * r[i] + 0.587 * g[i] + 0.114 * b[i]
                lumaPulse[i] = p[i] * (0.299 * r[i] * ur + 0.587 * g[i] * ug + 0.114 * b[i] * ub)
                if a[i] > 0 {
                    if first < 0 { first = x }
                    last = x
                }
                if p[i] > 0 { skin += 1 }
            }
            if first >= 0 {
                rowStart[y] = Int32(first)
                rowEnd[y] = Int32(last + 1)
            }
        }
        self.luma = Self.own(luma)
        self.lumaPulse = Self.own(lumaPulse)
        self.alpha = Self.own(a)
        self.rowStart = Self.own(rowStart)
        self.rowEnd = Self.own(rowEnd)
        self.skinPixelCount = skin
        let cw = width / 2, ch = height / 2
        self.cWidth = cw
        self.cHeight = ch
        var cb = [Float](repeating: 0, count: cw * ch), cr = cb, cbp = cb, crp = cb, ca = cb
        var cStart = [Int32](repeating: 0, count: ch), cEnd = cStart
        for y in 0..<ch {
            var first = -1, last = -1
            for x in 0..<cw {
                var sr: Float = 0, sg: Float = 0, sb: Float = 0, sa: Float = 0, spr: Float = 0, spg: Float = 0, spb: Float = 0
                for dy in 0..<2 {
                    for dx in 0..<2 {
                        let i = (2 * y + dy) * width + 2 * x + dx
                        sr += r[i]; sg += g[i]; sb += b[i]; sa += a[i]
                        spr += p[i] * r[i] * ur; spg += p[i] * g[i] * ug; spb += p[i] * b[i] * ub
                    }
                }
                let j = y * cw + x
                cb[j] = 0.25 * (-0.168736 * sr - 0.331264 * sg + 0.5 * sb)
                cr[j] = 0.25 * (0.5 * sr - 0.418688 * sg - 0.081312 * sb)
                cbp[j] = 0.25 * (-0.168736 * spr - 0.331264 * spg + 0.5 * spb)
                crp[j] = 0.25 * (0.5 * spr - 0.418688 * spg - 0.081312 * spb)
                ca[j] = 0.25 * sa
                if ca[j] > 0 {
                    if first < 0 { first = x }
                    last = x
                }
            }
            if first >= 0 {
                cStart[y] = Int32(first)
                cEnd[y] = Int32(last + 1)
            }
        }
        self.cb = Self.own(cb)
        self.cr = Self.own(cr)
        self.cbPulse = Self.own(cbp)
        self.crPulse = Self.own(crp)
        self.cAlpha = Self.own(ca)
        self.cRowStart = Self.own(cStart)
        self.cRowEnd = Self.own(cEnd)
    }
}

/// What the scene's shading functions return for one pixel.
struct ScenePixel {
    var r: Float, g: Float, b: Float
    /// Coverage 0...1.
    var alpha: Float
    /// How strongly the pulse shows here (0 = not skin, 1 = nominal skin).
    var pulse: Float

    static let clear = ScenePixel(r: 0, g: 0, b: 0, alpha: 0, pulse: 0)
}

/// Smooth 2-D value noise from a seeded lattice: static texture for skin, cloth and walls.
struct ValueNoise: Sendable {
    private let lattice: [Float]
    private static let size = 64

    init(seed: UInt64, stream: UInt64) {
        var random = SeededRandom(seed: seed, stream: stream)
        lattice = (0..<(Self.size * Self.size)).map { _ in Float(random.unit() * 2 - 1) }
    }

    /// Noise in about −1...1 at (x, y) in lattice cells.
    func value(_ x: Float, _ y: Float) -> Float {
        let fx = x.rounded(.down), fy = y.rounded(.down)
        let ix = Int(fx) & (Self.size - 1), iy = Int(fy) & (Self.size - 1)
        let jx = (ix + 1) & (Self.size - 1), jy = (iy + 1) & (Self.size - 1)
        var tx = x - fx, ty = y - fy
        tx = tx * tx * (3 - 2 * tx)
        ty = ty * ty * (3 - 2 * ty)
        let a = lattice[iy * Self.size + ix], b = lattice[iy * Self.size + jx]
        let c = lattice[jy * Self.size + ix], d = lattice[jy * Self.size + jx]
        return (a + (b - a) * tx) * (1 - ty) + (c + (d - c) * tx) * ty
    }

    /// Two octaves.
    func fractal(_ x: Float, _ y: Float) -> Float {
        0.67 * value(x, y) + 0.33 * value(2.03 * x + 17, 2.03 * y + 5)
    }
}
