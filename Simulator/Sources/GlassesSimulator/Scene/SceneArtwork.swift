import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// An RGB image used as the simulated person's face (loaded from a PPM file, or from any decoded image).
public struct FaceImage: Sendable, Hashable {
    /// Width in pixels.
    public let width: Int
    /// Height in pixels.
    public let height: Int
    /// Packed 8-bit RGB, `width * height * 3` bytes.
    public let rgb: [UInt8]

    /// Creates an image; nil when the sizes do not match the bytes.
    public init?(width: Int, height: Int, rgb: [UInt8]) {
        guard width > 0, height > 0, rgb.count == width * height * 3 else { return nil }
        self.width = width
        self.height = height
        self.rgb = rgb
    }

    /// The largest face image's width and height, in pixels.
    public static let maximumSide = 8192

    /// Loads a binary PPM (P6, maxval 255) file of at most ``maximumSide`` pixels a side, from a file or a pipe.
    ///
    /// The header is read first and its size checked; then exactly the pixels it declares are read (a 8192×8192
    /// image is 192 MiB), so a file's size never decides how much is held.
    /// - Throws: ``SimulatorError`` `invalidFeed` when the file cannot be read (with the system's reason), is a
    ///   folder or a device, is not a PPM this reader handles, is larger than ``maximumSide`` a side, or ends
    ///   before its pixels do. Messages name the file as `url` gives it (its relative path).
    public init(ppmFile url: URL) throws(SimulatorError) {
        let name = url.relativePath
        func failure(_ message: String) -> SimulatorError {
            SimulatorError(.invalidFeed, message, context: ["file": name])
        }
        func reason(_ code: Int32) -> String { String(cString: strerror(code)).lowercased() }
        let descriptor = open(url.path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw failure("cannot read the face image \(name): \(reason(errno))") }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw failure("cannot read the face image \(name): \(reason(errno))") }
        switch status.st_mode & S_IFMT {
        case S_IFREG, S_IFIFO: break  // a file, or a pipe (`--face <(convert … ppm:-)`)
        case S_IFDIR: throw failure("the face image \(name) is a folder, not a PPM file")
        default: throw failure("the face image \(name) is not a regular file (a device): give a PPM file")
        }
        var reader = DescriptorReader(descriptor: descriptor, name: name)
        let notPPM = "the face image \(name) is not a binary PPM (P6, maxval 255)"
        // The header: four tokens, with comments, in at most a few KiB.
        func token() throws(SimulatorError) -> String? {
            var text = ""
            while true {
                guard let byte = try reader.next(failure) else { return text.isEmpty ? nil : text }
                if byte == UInt8(ascii: "#") && text.isEmpty {
                    while let c = try reader.next(failure), c != 10 {}
                } else if [9, 10, 13, 32].contains(byte) {
                    if !text.isEmpty { return text }
                } else {
                    text.append(Character(UnicodeScalar(byte)))
                    if text.count > 16 { return nil }
                }
                if reader.consumed > 4096 { return nil }
            }
        }
        guard try token() == "P6", let w = try token().flatMap({ Int($0) }), let h = try token().flatMap({ Int($0) }),
              let maxval = try token().flatMap({ Int($0) }), maxval == 255, w > 0, h > 0
        else { throw failure(notPPM) }
        // The whitespace after maxval ended its token; the pixels follow.
        guard w <= Self.maximumSide, h <= Self.maximumSide else {
            throw failure("the face image \(name) is \(w)×\(h); a face image may be at most \(Self.maximumSide)×\(Self.maximumSide) pixels")
        }
        let count = w * h * 3
        let rgb = try reader.read(count, failure) { got in
            "the face image \(name) is truncated: it has \(got) of its \(count) pixel bytes (\(w)×\(h) RGB)"
        }
        self.width = w
        self.height = h
        self.rgb = rgb
    }
}

/// Reads a file descriptor in chunks, for ``FaceImage/init(ppmFile:)``.
private struct DescriptorReader {
    let descriptor: Int32
    /// The file's name, for messages.
    let name: String
    private var buffer = [UInt8](repeating: 0, count: 64 * 1024)
    private var start = 0, end = 0
    /// Bytes handed out so far.
    private(set) var consumed = 0

    init(descriptor: Int32, name: String) {
        self.descriptor = descriptor
        self.name = name
    }

    /// Refills the buffer; false at the end of the file.
    private mutating func fill(_ failure: (String) -> SimulatorError) throws(SimulatorError) -> Bool {
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw failure("cannot read the face image \(name): \(String(cString: strerror(errno)).lowercased())")
            }
            start = 0
            end = count
            return count > 0
        }
    }

    /// The next byte, or nil at the end of the file.
    mutating func next(_ failure: (String) -> SimulatorError) throws(SimulatorError) -> UInt8? {
        if start == end, try !fill(failure) { return nil }
        consumed += 1
        defer { start += 1 }
        return buffer[start]
    }

    /// Exactly `count` bytes; `truncated(got)` says why when the file ends first.
    mutating func read(_ count: Int, _ failure: (String) -> SimulatorError,
                       truncated: (Int) -> String) throws(SimulatorError) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(count)
        while out.count < count {
            if start == end, try !fill(failure) { throw failure(truncated(out.count)) }
            let take = min(count - out.count, end - start)
            out.append(contentsOf: buffer[start..<(start + take)])
            start += take
            consumed += take
        }
        return out
    }
}

/// The procedural person and room: shading functions in canvas pixels for each layer.
struct SceneArtwork {
    let width: Int, height: Int, margin: Int
    let skin: (Float, Float, Float)
    let hair: (Float, Float, Float)
    let cloth: (Float, Float, Float)
    let wall: (Float, Float, Float)
    let eye: (Float, Float, Float)
    let face: FaceImage?
    let noise: ValueNoise
    let fine: ValueNoise

    static let skinTones: [(Float, Float, Float)] = [
        (0.85, 0.64, 0.52), (0.76, 0.55, 0.42), (0.62, 0.43, 0.31), (0.45, 0.30, 0.21), (0.92, 0.73, 0.62),
    ]
    static let hairColours: [(Float, Float, Float)] = [(0.10, 0.07, 0.05), (0.30, 0.20, 0.11), (0.55, 0.42, 0.25), (0.05, 0.05, 0.05)]
    static let clothColours: [(Float, Float, Float)] = [(0.20, 0.28, 0.45), (0.55, 0.15, 0.15), (0.25, 0.40, 0.25), (0.35, 0.35, 0.38)]
    static let wallColours: [(Float, Float, Float)] = [(0.78, 0.74, 0.66), (0.62, 0.66, 0.70), (0.70, 0.72, 0.64)]
    static let eyeColours: [(Float, Float, Float)] = [(0.25, 0.15, 0.08), (0.20, 0.35, 0.55), (0.30, 0.40, 0.25)]

    init(width: Int, height: Int, margin: Int, profile: SubjectProfile, face: FaceImage?) {
        self.width = width
        self.height = height
        self.margin = margin
        var random = SeededRandom(seed: profile.seed, stream: 10)
        func pick(_ list: [(Float, Float, Float)]) -> (Float, Float, Float) { list[Int(random.next() % UInt64(list.count))] }
        let tone = pick(Self.skinTones)
        if let s = profile.skinTone {
            skin = (Float(s.r), Float(s.g), Float(s.b))
        } else {
            skin = tone
        }
        hair = pick(Self.hairColours)
        cloth = pick(Self.clothColours)
        wall = pick(Self.wallColours)
        eye = pick(Self.eyeColours)
        self.face = face
        noise = ValueNoise(seed: profile.seed, stream: 11)
        fine = ValueNoise(seed: profile.seed, stream: 12)
    }

    /// Canvas pixel to scene units (frame width = 1), pixel centre.
    @inline(__always) private func unit(_ cx: Int, _ cy: Int) -> (Float, Float) {
        let s = 1 / Float(width)
        return ((Float(cx - margin) + 0.5) * s, (Float(cy - margin) + 0.5) * s)
    }

    /// Edge coverage from a signed distance in scene units (negative inside).
    @inline(__always) private func coverage(_ d: Float) -> Float {
        min(max(0.5 - d * Float(width), 0), 1)
    }

    /// Smoothstep from 0 at `e0` to 1 at `e1`.
    @inline(__always) private func smooth(_ e0: Float, _ e1: Float, _ v: Float) -> Float {
        let t = min(max((v - e0) / (e1 - e0), 0), 1)
        return t * t * (3 - 2 * t)
    }

    /// Signed distance (approximate) to an axis-aligned ellipse, scene units.
    @inline(__always) private func ellipse(_ x: Float, _ y: Float, _ cx: Float, _ cy: Float, _ a: Float, _ b: Float) -> Float {
        let nx = (x - cx) / a, ny = (y - cy) / b
        let r = (nx * nx + ny * ny).squareRoot()
        return (r - 1) * min(a, b)
    }

    // Geometry, scene units (width = 1).
    static let faceX: Float = 0.5, faceY: Float = 0.62, faceA: Float = 0.19, faceB: Float = 0.25
    static let eyeY: Float = 0.60, eyeDX: Float = 0.075

    /// Face box in frame pixels at zero motion: x, y, width, height.
    func faceBox() -> (Int, Int, Int, Int) {
        let w = Float(width)
        return (Int((Self.faceX - Self.faceA) * w), Int((Self.faceY - Self.faceB) * w),
                Int(2 * Self.faceA * w), Int(2 * Self.faceB * w))
    }

    /// A box on the forehead and a box on each cheek that are skin at zero motion (frame pixels).
    func skinBoxes() -> [(Int, Int, Int, Int)] {
        let w = Float(width)
        func box(_ x: Float, _ y: Float, _ bw: Float, _ bh: Float) -> (Int, Int, Int, Int) {
            (Int(x * w), Int(y * w), max(2, Int(bw * w)), max(2, Int(bh * w)))
        }
        return [box(0.42, 0.49, 0.16, 0.05), box(0.37, 0.645, 0.07, 0.06), box(0.56, 0.645, 0.07, 0.06)]
    }

    func background(_ cx: Int, _ cy: Int) -> ScenePixel {
        let (x, y) = unit(cx, cy)
        let aspect = Float(height) / Float(width)
        var shade: Float = 0.85 + 0.15 * (1 - y / aspect) + 0.05 * noise.fractal(x * 6, y * 6) + 0.02 * fine.value(x * 60, y * 60)
        var (r, g, b) = wall
        // A framed picture on the wall, upper left.
        if x > 0.06, x < 0.30, y > 0.15, y < 0.45 {
            let inner = x > 0.08 && x < 0.28 && y > 0.17 && y < 0.43
            if inner {
                r = 0.3 + 0.2 * noise.value(x * 20, y * 20); g = 0.45; b = 0.55 + 0.1 * noise.value(y * 9, x * 9)
            } else { r = 0.25; g = 0.18; b = 0.12 }
        }
        // A door frame on the right.
        if x > 0.86, x < 0.90 { shade *= 0.7 }
        if x >= 0.90 { r *= 0.9; g *= 0.88; b *= 0.85 }
        return ScenePixel(r: r * shade, g: g * shade, b: b * shade, alpha: 1, pulse: 0)
    }

    func body(_ cx: Int, _ cy: Int) -> ScenePixel {
        let (x, y) = unit(cx, cy)
        let dx = abs(x - 0.5)
        // Neck: skin column under the head, shaded darker (in the head's shadow).
        let neckHalf: Float = 0.085 + max(0, y - 0.98) * 0.3
        let neckD = max(dx - neckHalf, 0.80 - y)
        // Torso in clothing: shoulders slope from the neck base outwards.
        let top: Float = 1.0 + 0.9 * max(0, dx - 0.09) * max(0, dx - 0.09) + 0.05 * max(0, dx - 0.09)
        let vNeck = y < 1.13 && dx < 0.075 - (y - 1.0) * 0.6
        let torsoD = top - y
        var result = ScenePixel.clear
        let neckCover = coverage(neckD)
        if neckCover > 0 {
            let shade: Float = 0.72 + 0.1 * min(1, (y - 0.8) * 4) - 0.25 * dx / neckHalf * dx / neckHalf
            let t = 1 + 0.03 * noise.fractal(x * 30, y * 30) + 0.015 * fine.value(x * 160, y * 160)
            result = ScenePixel(r: skin.0 * shade * t, g: skin.1 * shade * t, b: skin.2 * shade * t, alpha: neckCover, pulse: 0.8)
        }
        let torsoCover = vNeck ? 0 : coverage(torsoD)
        if torsoCover > 0 {
            // Vertical drapes (no blotches that could read as eyes and mouth to a face detector).
            let fold: Float = 1 + 0.06 * noise.fractal(x * 14, y * 2) + 0.02 * fine.value(x * 120, y * 10)
            let side: Float = 1 - 0.35 * dx * dx * 4
            let s = fold * side * 0.95
            let cloth = ScenePixel(r: cloth.0 * s, g: cloth.1 * s, b: cloth.2 * s, alpha: 1, pulse: 0)
            result = blend(cloth, over: result, coverage: torsoCover)
        }
        return result
    }

    @inline(__always) private func blend(_ top: ScenePixel, over bottom: ScenePixel, coverage c: Float) -> ScenePixel {
        let a = c + bottom.alpha * (1 - c)
        guard a > 0 else { return .clear }
        func mix(_ t: Float, _ u: Float) -> Float { (t * c + u * bottom.alpha * (1 - c)) / a }
        return ScenePixel(r: mix(top.r, bottom.r), g: mix(top.g, bottom.g), b: mix(top.b, bottom.b), alpha: a,
                          pulse: mix(top.pulse, bottom.pulse))
    }

    func head(_ cx: Int, _ cy: Int) -> ScenePixel {
        let (x, y) = unit(cx, cy)
        let fx = Self.faceX, fy = Self.faceY, fa = Self.faceA, fb = Self.faceB
        var result = ScenePixel.clear
        // Ears behind the face.
        let earD = min(ellipse(x, y, fx - fa, fy + 0.01, 0.03, 0.055), ellipse(x, y, fx + fa, fy + 0.01, 0.03, 0.055))
        let earCover = coverage(earD)
        if earCover > 0 {
            let s: Float = 0.8
            result = ScenePixel(r: skin.0 * s, g: skin.1 * s, b: skin.2 * s, alpha: earCover, pulse: 0.9)
        }
        // Hair mass behind and above the face.
        let hairD = ellipse(x, y, fx, fy - 0.055, fa + 0.03, fb + 0.005)
        let hairCover = coverage(hairD) * (y < fy + 0.02 ? 1 : 0)
        if hairCover > 0 {
            let strands: Float = 1 + 0.25 * fine.value(x * 300, y * 25) + 0.1 * noise.value(x * 20, y * 20)
            let h = ScenePixel(r: hair.0 * strands, g: hair.1 * strands, b: hair.2 * strands, alpha: 1, pulse: 0)
            result = blend(h, over: result, coverage: hairCover)
        }
        // Face.
        let faceD = ellipse(x, y, fx, fy, fa, fb)
        let faceCover = coverage(faceD)
        if faceCover > 0 {
            var f = faceSkin(x, y)
            // Hair fringe over the forehead.
            let nx = (x - fx) / fa
            let hairline = fy - fb + 0.04 + 0.08 * nx * nx
            if y < hairline {
                let edge = min(max((hairline - y) * Float(width) * 0.5, 0), 1)
                let strands: Float = 1 + 0.25 * fine.value(x * 300, y * 25)
                let h = ScenePixel(r: hair.0 * strands, g: hair.1 * strands, b: hair.2 * strands, alpha: 1, pulse: 0)
                f = blend(h, over: f, coverage: edge)
            }
            result = blend(f, over: result, coverage: faceCover)
        }
        return result
    }

    /// The face interior: from the face image if any, else procedural features.
    private func faceSkin(_ x: Float, _ y: Float) -> ScenePixel {
        let fx = Self.faceX, fy = Self.faceY, fa = Self.faceA, fb = Self.faceB
        if let face {
            // Aspect-fill the image into the face's bounding box.
            let u = (x - (fx - fa)) / (2 * fa), v = (y - (fy - fb)) / (2 * fb)
            let ix = min(max(Int(u * Float(face.width)), 0), face.width - 1)
            let iy = min(max(Int(v * Float(face.height)), 0), face.height - 1)
            let k = (iy * face.width + ix) * 3
            let r = Float(face.rgb[k]) / 255, g = Float(face.rgb[k + 1]) / 255, b = Float(face.rgb[k + 2]) / 255
            // Skin classifier in YCbCr (a common rule of thumb): pulse only where the image looks like skin.
            let cb = 128 + 255 * (-0.168736 * r - 0.331264 * g + 0.5 * b)
            let cr = 128 + 255 * (0.5 * r - 0.418688 * g - 0.081312 * b)
            let isSkin = cb >= 77 && cb <= 127 && cr >= 133 && cr <= 173
            return ScenePixel(r: r, g: g, b: b, alpha: 1, pulse: isSkin ? 1 : 0)
        }
        let nx = (x - fx) / fa, ny = (y - fy) / fb
        let r2 = nx * nx + ny * ny
        var shade: Float = 0.78 + 0.22 * max(0, 1 - r2).squareRoot() - 0.05 * nx
        // Outline: the sides of the face turn away from the light.
        shade *= 1 - 0.22 * smooth(0.74, 1.0, abs(nx))
        let texture: Float = 1 + 0.035 * noise.fractal(x * 25, y * 25) + 0.018 * fine.value(x * 220, y * 220)
        shade *= texture
        // Relief multiplier: the dark band across the eyes (sockets under the brow ridge), a lighter nose bridge and
        // shadows beside the nose. All of it stays clear of the forehead and cheek boxes (``skinBoxes()``).
        var relief: Float = 1
        for side: Float in [-1, 1] {
            let sx = (x - (fx + side * Self.eyeDX)) / 0.058, sy = (y - (Self.eyeY - 0.004)) / 0.031
            relief *= 1 - 0.40 * (1 - smooth(0.3, 1.0, (sx * sx + sy * sy).squareRoot()))
        }
        let bridge = (1 - smooth(0.006, 0.016, abs(x - fx))) * smooth(0.56, 0.585, y) * (1 - smooth(0.675, 0.69, y))
        relief *= 1 + 0.12 * bridge
        let noseSide = (1 - smooth(0.004, 0.012, abs(abs(x - fx) - 0.024))) * smooth(0.60, 0.635, y) * (1 - smooth(0.685, 0.70, y))
        relief *= 1 - (x > fx ? 0.20 : 0.10) * noseSide
        shade *= relief
        // Spatial pulse strength: stronger on forehead and cheeks, weaker at the rim.
        var pulse: Float = 0.75 + 0.35 * max(0, 1 - r2)
        var (r, g, b) = (skin.0 * shade, skin.1 * shade, skin.2 * shade)
        // Nostrils.
        if ellipse(x, y, fx - 0.022, 0.695, 0.012, 0.006) < 0 || ellipse(x, y, fx + 0.022, 0.695, 0.012, 0.006) < 0 {
            r *= 0.55; g *= 0.5; b *= 0.5
        }
        // Lips, darker than the skin around them, with a dark line where they meet.
        let lipD = ellipse(x, y, fx, 0.745, 0.055, 0.016)
        let lipCover = coverage(lipD)
        if lipCover > 0 {
            let lr = skin.0 * 0.78 * shade, lg = skin.1 * 0.52 * shade, lb = skin.2 * 0.55 * shade
            r = r + (lr - r) * lipCover; g = g + (lg - g) * lipCover; b = b + (lb - b) * lipCover
            pulse = pulse * (1 - lipCover) + 0.6 * lipCover
        }
        let mouthLine = (1 - smooth(0.0015, 0.0045, abs(y - 0.745 - 0.004 * (abs(x - fx) / 0.05) * (abs(x - fx) / 0.05))))
            * (1 - smooth(0.045, 0.056, abs(x - fx)))
        if mouthLine > 0 {
            let k = 1 - 0.65 * mouthLine
            r *= k; g *= k; b *= k
            pulse *= 1 - mouthLine
        }
        // Eyebrows: darker than the hair when the hair is light, never lighter than a third of the skin.
        let brow = (min(hair.0, skin.0 * 0.32), min(hair.1, skin.1 * 0.32), min(hair.2, skin.2 * 0.32))
        for side: Float in [-1, 1] {
            let bx = fx + side * Self.eyeDX
            let u = (x - bx) / 0.055
            if abs(u) < 1 {
                let browY = Self.eyeY - 0.038 - 0.007 * (1 - u * u)
                let half: Float = 0.0075 * (1 - 0.45 * u * u)
                let c = (1 - smooth(half - 0.002, half + 0.001, abs(y - browY))) * (1 - smooth(0.85, 1.0, abs(u)))
                if c > 0 {
                    r += (brow.0 - r) * c; g += (brow.1 - g) * c; b += (brow.2 - b) * c
                    pulse *= 1 - c
                }
            }
            // Eye: a dim sclera, a large dark iris and pupil, and a dark upper lid line (lashes).
            let eyeD = ellipse(x, y, bx, Self.eyeY, 0.034, 0.013)
            let eyeCover = coverage(eyeD)
            if eyeCover > 0 {
                let irisR = ((x - bx) * (x - bx) + (y - Self.eyeY) * (y - Self.eyeY)).squareRoot()
                let light = shade / max(relief, 0.01)
                var (er, eg, eb): (Float, Float, Float) = (0.62 * light, 0.59 * light, 0.57 * light)
                if irisR < 0.0125 { (er, eg, eb) = (eye.0 * 0.55, eye.1 * 0.55, eye.2 * 0.55) }
                if irisR < 0.0055 { (er, eg, eb) = (0.02, 0.02, 0.02) }
                if y < Self.eyeY, eyeD > -0.0035 { (er, eg, eb) = (0.04, 0.03, 0.03) }
                r = r + (er - r) * eyeCover; g = g + (eg - g) * eyeCover; b = b + (eb - b) * eyeCover
                pulse *= 1 - eyeCover
            }
        }
        return ScenePixel(r: r, g: g, b: b, alpha: 1, pulse: pulse)
    }
}
