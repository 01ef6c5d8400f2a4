import Foundation
@testable import VitalsEngine

/// An RGB picture loaded from a PPM fixture, with the compositing helpers the detector tests need.
struct RGBPicture {
    var width: Int
    var height: Int
    /// Row-major RGB bytes.
    var rgb: [UInt8]

    init(width: Int, height: Int, fill: (UInt8, UInt8, UInt8) = (90, 110, 100)) {
        self.width = width
        self.height = height
        rgb = [UInt8](repeating: 0, count: width * height * 3)
        for i in 0 ..< width * height {
            rgb[3 * i] = fill.0; rgb[3 * i + 1] = fill.1; rgb[3 * i + 2] = fill.2
        }
    }

    /// Loads `Fixtures/NAME` (binary P6, maxval 255).
    static func fixture(_ name: String) throws -> RGBPicture {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/\(name)")
        let data = [UInt8](try Data(contentsOf: url))
        var fields: [String] = []
        var i = 0
        while fields.count < 4 {
            while i < data.count, data[i] == 0x20 || data[i] == 0x0A || data[i] == 0x0D || data[i] == 0x09 { i += 1 }
            var token = ""
            while i < data.count, !(data[i] == 0x20 || data[i] == 0x0A || data[i] == 0x0D || data[i] == 0x09) {
                token.append(Character(UnicodeScalar(data[i]))); i += 1
            }
            fields.append(token)
        }
        i += 1
        guard fields[0] == "P6", let w = Int(fields[1]), let h = Int(fields[2]), fields[3] == "255", data.count - i >= w * h * 3 else {
            throw CocoaError(.fileReadCorruptFile)
        }
        var picture = RGBPicture(width: w, height: h)
        picture.rgb = Array(data[i ..< i + w * h * 3])
        return picture
    }

    /// A bilinear resize.
    func resized(width nw: Int, height nh: Int) -> RGBPicture {
        var out = RGBPicture(width: nw, height: nh)
        for y in 0 ..< nh {
            let fy = max(0, (Double(y) + 0.5) * Double(height) / Double(nh) - 0.5)
            let y0 = min(Int(fy), height - 1), y1 = min(y0 + 1, height - 1), wy = fy - Double(y0)
            for x in 0 ..< nw {
                let fx = max(0, (Double(x) + 0.5) * Double(width) / Double(nw) - 0.5)
                let x0 = min(Int(fx), width - 1), x1 = min(x0 + 1, width - 1), wx = fx - Double(x0)
                for c in 0 ..< 3 {
                    let a = Double(rgb[(y0 * width + x0) * 3 + c]) * (1 - wx) + Double(rgb[(y0 * width + x1) * 3 + c]) * wx
                    let b = Double(rgb[(y1 * width + x0) * 3 + c]) * (1 - wx) + Double(rgb[(y1 * width + x1) * 3 + c]) * wx
                    out.rgb[(y * nw + x) * 3 + c] = UInt8(min(255, max(0, (a * (1 - wy) + b * wy).rounded())))
                }
            }
        }
        return out
    }

    /// A crop.
    func cropped(_ r: VitalsRect) -> RGBPicture {
        var out = RGBPicture(width: r.width, height: r.height)
        for y in 0 ..< r.height {
            for x in 0 ..< r.width {
                for c in 0 ..< 3 { out.rgb[(y * r.width + x) * 3 + c] = rgb[((y + r.y) * width + x + r.x) * 3 + c] }
            }
        }
        return out
    }

    /// Pastes `other` with its top-left corner at (x, y), clipped.
    mutating func paste(_ other: RGBPicture, x ox: Int, y oy: Int) {
        for y in 0 ..< other.height where y + oy >= 0 && y + oy < height {
            for x in 0 ..< other.width where x + ox >= 0 && x + ox < width {
                for c in 0 ..< 3 { rgb[((y + oy) * width + x + ox) * 3 + c] = other.rgb[(y * other.width + x) * 3 + c] }
            }
        }
    }

    /// Multiplies every channel by `gain` (clipped).
    func scaled(by gain: Double) -> RGBPicture {
        var out = self
        out.rgb = rgb.map { UInt8(min(255, max(0, (Double($0) * gain).rounded()))) }
        return out
    }

    /// BT.601 luma.
    var gray: GrayImage {
        var px = [UInt8](repeating: 0, count: width * height)
        for i in 0 ..< width * height {
            let r = Int(rgb[3 * i]), g = Int(rgb[3 * i + 1]), b = Int(rgb[3 * i + 2])
            px[i] = UInt8((r * 77 + g * 150 + b * 29) >> 8)
        }
        return GrayImage(width: width, height: height, pixels: px)
    }

    /// BGRA bytes (tight rows).
    var bgra: [UInt8] {
        var out = [UInt8](repeating: 255, count: width * height * 4)
        for i in 0 ..< width * height {
            out[4 * i] = rgb[3 * i + 2]; out[4 * i + 1] = rgb[3 * i + 1]; out[4 * i + 2] = rgb[3 * i]
        }
        return out
    }

    /// Calls `body` with a BGRA view of the picture.
    func withView<R>(_ body: (VitalsPixelView) throws -> R) throws -> R {
        let bytes = bgra
        return try bytes.withUnsafeBufferPointer { p in
            let view = try VitalsPixelView(format: .bgra, width: width, height: height, plane0: p.baseAddress!, bytesPerRow0: width * 4)
            return try body(view)
        }
    }
}

/// The centre of the face in the 256×256 astronaut fixture (checked by eye: the face spans about x 85–136, y 30–81).
let astronautFaceCenter = (x: 110.0, y: 55.0)
