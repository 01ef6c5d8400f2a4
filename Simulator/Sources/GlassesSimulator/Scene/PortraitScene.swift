import Foundation

/// A real photograph of a person, with where its face is, to render in place of the drawn person at a chosen size.
///
/// The photograph is scaled so that its face box is ``faceWidth`` of the frame width and placed with the face where
/// the drawn person's face would be; outside the photograph the room is drawn as usual. The pulse modulates the
/// skin-coloured pixels of the face and neck; breathing lifts the part of the photograph below the chin (and the
/// head by a quarter as much, as in the drawn scene), scaled with the person; the wearer's head motion moves
/// everything. This is what glasses see of someone a metre or two away: a real face, small in the frame.
public struct PortraitPhoto: Sendable, Hashable {
    /// The photograph.
    public let image: FaceImage
    /// The face's box in the photograph's pixels (as a frontal-face detector draws it: brows to chin, cheek to cheek).
    public let faceBox: PixelRect
    /// The face box's width in the frame, as a fraction of the frame width (0.2 is 100 px at 504 wide).
    public let faceWidth: Double

    /// Creates a placement; nil when the face box is empty or not inside the image, or the width is not in 0.02...0.9.
    public init?(image: FaceImage, faceBox: PixelRect, faceWidth: Double) {
        guard faceBox.width > 4, faceBox.height > 4, faceBox.x >= 0, faceBox.y >= 0,
              faceBox.x + faceBox.width <= image.width, faceBox.y + faceBox.height <= image.height,
              faceWidth.isFinite, (0.02...0.9).contains(faceWidth) else { return nil }
        self.image = image
        self.faceBox = faceBox
        self.faceWidth = faceWidth
    }
}

/// The shading of a portrait scene in canvas pixels (see ``PortraitPhoto``).
struct PortraitArtwork {
    let photo: PortraitPhoto
    let room: SceneArtwork
    let width: Int, margin: Int
    /// Frame pixels per photograph pixel.
    let scale: Float
    /// The face box's centre in the photograph and in the frame.
    let photoCentre: (Float, Float), frameCentre: (Float, Float)
    /// The face box in frame pixels (float).
    let face: (x: Float, y: Float, w: Float, h: Float)

    init(photo: PortraitPhoto, room: SceneArtwork, width: Int, margin: Int) {
        self.photo = photo
        self.room = room
        self.width = width
        self.margin = margin
        let fw = Float(photo.faceWidth) * Float(width)
        scale = fw / Float(photo.faceBox.width)
        photoCentre = (Float(photo.faceBox.x) + Float(photo.faceBox.width) / 2, Float(photo.faceBox.y) + Float(photo.faceBox.height) / 2)
        // The face where the drawn person's face is: centred across, 0.58 frame widths down.
        frameCentre = (0.5 * Float(width), 0.58 * Float(width))
        let fh = Float(photo.faceBox.height) * scale
        face = (frameCentre.0 - fw / 2, frameCentre.1 - fh / 2, fw, fh)
    }

    /// The face box in frame pixels.
    func faceBox() -> (Int, Int, Int, Int) {
        (Int(face.x.rounded()), Int(face.y.rounded()), Int(face.w.rounded()), Int(face.h.rounded()))
    }

    /// Forehead and both cheeks inside the face box (frame pixels).
    func skinBoxes() -> [(Int, Int, Int, Int)] {
        func part(_ x0: Float, _ y0: Float, _ x1: Float, _ y1: Float) -> (Int, Int, Int, Int) {
            (Int(face.x + x0 * face.w), Int(face.y + y0 * face.h), max(2, Int((x1 - x0) * face.w)), max(2, Int((y1 - y0) * face.h)))
        }
        return [part(0.32, 0.06, 0.68, 0.2), part(0.2, 0.55, 0.36, 0.7), part(0.64, 0.55, 0.8, 0.7)]
    }

    /// The layer boxes in canvas pixels: head (x0, y0, x1, y1) and the top of the body.
    func headBounds() -> (Int, Int, Int, Int) {
        let x0 = Int(face.x - 0.45 * face.w) + margin, x1 = Int(face.x + 1.45 * face.w) + margin + 2
        let y0 = Int(face.y - 0.75 * face.h) + margin, y1 = Int(face.y + 1.2 * face.h) + margin + 2
        return (x0, y0, x1, y1)
    }

    /// The top row of the body layer in canvas pixels (a little above the chin).
    func bodyTop() -> Int { Int(face.y + 1.0 * face.h) + margin - 4 }

    /// The photograph at frame position (x, y) (pixel centres), bilinear; nil outside it. Also how far inside it is
    /// (in frame pixels) for feathering its border.
    private func sample(_ x: Float, _ y: Float) -> (r: Float, g: Float, b: Float, inside: Float)? {
        let u = photoCentre.0 + (x - frameCentre.0) / scale - 0.5
        let v = photoCentre.1 + (y - frameCentre.1) / scale - 0.5
        let img = photo.image
        let maxU = Float(img.width - 1), maxV = Float(img.height - 1)
        guard u >= -0.5, v >= -0.5, u <= maxU + 0.5, v <= maxV + 0.5 else { return nil }
        let cu = min(max(u, 0), maxU), cv = min(max(v, 0), maxV)
        let iu = min(Int(cu), img.width - 2 < 0 ? 0 : img.width - 2), iv = min(Int(cv), img.height - 2 < 0 ? 0 : img.height - 2)
        let fu = min(max(cu - Float(iu), 0), 1), fv = min(max(cv - Float(iv), 0), 1)
        let ju = min(iu + 1, img.width - 1), jv = min(iv + 1, img.height - 1)
        func px(_ a: Int, _ b: Int, _ c: Int) -> Float { Float(img.rgb[(b * img.width + a) * 3 + c]) / 255 }
        func mix(_ c: Int) -> Float {
            (px(iu, iv, c) * (1 - fu) + px(ju, iv, c) * fu) * (1 - fv) + (px(iu, jv, c) * (1 - fu) + px(ju, jv, c) * fu) * fv
        }
        let edge = min(u + 0.5, maxU + 0.5 - u, v + 0.5, maxV + 0.5 - v) * scale
        return (mix(0), mix(1), mix(2), edge)
    }

    /// Skin classifier in YCbCr (a common rule of thumb), as the drawn scene uses for a face image.
    private static func isSkin(_ r: Float, _ g: Float, _ b: Float) -> Bool {
        let cb = 128 + 255 * (-0.168736 * r - 0.331264 * g + 0.5 * b)
        let cr = 128 + 255 * (0.5 * r - 0.418688 * g - 0.081312 * b)
        return cb >= 77 && cb <= 127 && cr >= 133 && cr <= 173
    }

    @inline(__always) private func frame(_ cx: Int, _ cy: Int) -> (Float, Float) {
        (Float(cx - margin) + 0.5, Float(cy - margin) + 0.5)
    }

    func background(_ cx: Int, _ cy: Int) -> ScenePixel {
        let wall = room.background(cx, cy)
        let (x, y) = frame(cx, cy)
        guard let p = sample(x, y) else { return wall }
        let a = min(max(p.inside, 0), 1)
        return ScenePixel(r: p.r * a + wall.r * (1 - a), g: p.g * a + wall.g * (1 - a), b: p.b * a + wall.b * (1 - a), alpha: 1, pulse: 0)
    }

    func head(_ cx: Int, _ cy: Int) -> ScenePixel {
        let (x, y) = frame(cx, cy)
        let fcx = face.x + face.w / 2, fcy = face.y + face.h / 2
        // The head: an ellipse round the face box with room for hair, fading over 2 px.
        let nx = (x - fcx) / (0.78 * face.w), ny = (y - (fcy - 0.1 * face.h)) / (0.95 * face.h)
        let d = ((nx * nx + ny * ny).squareRoot() - 1) * 0.78 * face.w
        let cover = min(max(0.5 - d / 2, 0), 1)
        guard cover > 0, let p = sample(x, y) else { return .clear }
        // Pulse where the face is skin: inside an ellipse a little smaller than the face box, and the forehead.
        let sx = (x - fcx) / (0.5 * face.w), sy = (y - fcy) / (0.62 * face.h)
        let inFace = sx * sx + sy * sy < 1
        let pulse: Float = inFace && Self.isSkin(p.r, p.g, p.b) ? 1 : 0
        return ScenePixel(r: p.r, g: p.g, b: p.b, alpha: cover * min(max(p.inside, 0), 1), pulse: pulse)
    }

    func body(_ cx: Int, _ cy: Int) -> ScenePixel {
        let (x, y) = frame(cx, cy)
        let fcx = face.x + face.w / 2
        let top = face.y + 1.05 * face.h
        let half = 1.9 * face.w
        let cover = min(max(y - top, 0) / 3, 1) * min(max(half - abs(x - fcx), 0) / 3, 1)
        guard cover > 0, let p = sample(x, y) else { return .clear }
        let neck = abs(x - fcx) < 0.35 * face.w && y < top + 0.5 * face.h
        let pulse: Float = neck && Self.isSkin(p.r, p.g, p.b) ? 0.8 : 0
        return ScenePixel(r: p.r, g: p.g, b: p.b, alpha: cover * min(max(p.inside, 0), 1), pulse: pulse)
    }
}
