import Foundation

// Skin sampling: the mean colour of the forehead and cheeks, and of the background beside the head.
extension VitalsEngine {
    /// How far (px) the tracked position may move before it drags the skin regions along (see `skinPosition`).
    private static let skinPlay = 1.0

    /// The skin's mean colour this frame: forehead and both cheeks, clear of the eyes and the mouth, at the tracked
    /// sub-pixel position moved through its play filter (`skinPosition`); the same region by region (see
    /// ``SkinParts``), nil when a region is outside the frame; and the position it was sampled at.
    func sampleSkin(_ view: VitalsPixelView, box: VitalsRect) -> (rgb: RGB, parts: SkinParts?, position: (x: Double, y: Double)) {
        func follow(_ current: Double, _ target: Double) -> Double {
            let d = target - current
            return abs(d) <= Self.skinPlay ? current : target - (d > 0 ? Self.skinPlay : -Self.skinPlay)
        }
        skinPosition = (follow(skinPosition.x, subpixel.x), follow(skinPosition.y, subpixel.y))
        let (rgb, parts) = Self.skinColour(view, box: box, position: skinPosition)
        return (rgb, parts, skinPosition)
    }

    /// The skin's mean colour in `view` with the regions of `box` placed at the sub-pixel `position` (bilinear blend
    /// of the four integer placements, so that slow motion does not step the averages), and region by region (nil
    /// when a region is outside the frame).
    static func skinColour(_ view: VitalsPixelView, box: VitalsRect, position: (x: Double, y: Double)) -> (rgb: RGB, parts: SkinParts?) {
        let rois = skinRegions(of: box)
        var rgb = RGB(r: 0, g: 0, b: 0)
        var weight = 0.0
        var colours: [RGB] = [], areas: [Double] = []
        let fx = position.x - position.x.rounded(.down), fy = position.y - position.y.rounded(.down)
        for roi in rois {
            let base = VitalsRect(x: roi.x - box.x + Int(position.x.rounded(.down)),
                                  y: roi.y - box.y + Int(position.y.rounded(.down)), width: roi.width, height: roi.height)
            let r = base.clamped(width: view.width - 1, height: view.height - 1)
            guard r.width > 2, r.height > 2 else { continue }
            let step = max(1, min(r.width, r.height) / 24)
            var m = RGB(r: 0, g: 0, b: 0)
            for (dx, dy, w) in [(0, 0, (1 - fx) * (1 - fy)), (1, 0, fx * (1 - fy)), (0, 1, (1 - fx) * fy), (1, 1, fx * fy)] where w > 0.001 {
                let v = view.meanRGB(VitalsRect(x: r.x + dx, y: r.y + dy, width: r.width, height: r.height), step: step)
                m.r += v.r * w; m.g += v.g * w; m.b += v.b * w
            }
            let a = Double(r.width * r.height)
            rgb.r += m.r * a; rgb.g += m.g * a; rgb.b += m.b * a
            weight += a
            colours.append(m)
            areas.append(a)
        }
        let parts = colours.count == rois.count && weight > 0 ? SkinParts(colours: colours, shares: areas.map { $0 / weight }) : nil
        if weight > 0 { rgb.r /= weight; rgb.g /= weight; rgb.b /= weight }
        return (rgb, parts)
    }

    /// The area-weighted mean colour of `regions` (each clamped to the frame; slivers under 8 px skipped), sampled
    /// on a grid of about 24 points across each region's shorter side; nil when none is left.
    static func meanColour(of regions: [VitalsRect], in view: VitalsPixelView) -> RGB? {
        var sum = RGB(r: 0, g: 0, b: 0), area = 0.0
        for region in regions {
            let r = region.clamped(width: view.width, height: view.height)
            guard r.width >= 8, r.height >= 8 else { continue }
            let m = view.meanRGB(r, step: max(2, min(r.width, r.height) / 24))
            let a = Double(r.width * r.height)
            sum.r += m.r * a; sum.g += m.g * a; sum.b += m.b * a; area += a
        }
        return area > 0 ? RGB(r: sum.r / area, g: sum.g / area, b: sum.b / area) : nil
    }

    /// Forehead and both cheeks inside a Viola–Jones face box (eyes sit at ~40 % of its height, the mouth ~78 %),
    /// sized to the face: a large face gets the compact regions (14 % of the box, well clear of the eyes, brows and
    /// the face's edge, where motion would slide shading through them), a small one the wide regions (32 % of the
    /// box), because there the camera's and the codec's noise in too few pixels is what limits the pulse and the
    /// beat times. Widths from ``wideSkinBelow`` down get the wide regions, from ``compactSkinFrom`` up the compact
    /// ones, and the regions move linearly between.
    static func skinRegions(of box: VitalsRect) -> [VitalsRect] {
        let span = Double(compactSkinFrom - wideSkinBelow)
        return skinRegions(of: box, wide: min(1, max(0, Double(compactSkinFrom - box.width) / span)))
    }

    /// The skin regions inside `box` at a given width between the compact regions (`wide` 0) and the wide ones (1).
    static func skinRegions(of box: VitalsRect, wide: Double) -> [VitalsRect] {
        func part(_ compact: (Double, Double, Double, Double), _ wider: (Double, Double, Double, Double)) -> VitalsRect {
            let x0 = compact.0 + wide * (wider.0 - compact.0), y0 = compact.1 + wide * (wider.1 - compact.1)
            let x1 = compact.2 + wide * (wider.2 - compact.2), y1 = compact.3 + wide * (wider.3 - compact.3)
            return VitalsRect(x: box.x + Int(x0 * Double(box.width)), y: box.y + Int(y0 * Double(box.height)),
                              width: Int((x1 - x0) * Double(box.width)), height: Int((y1 - y0) * Double(box.height)))
        }
        return [part((0.30, 0.06, 0.70, 0.22), (0.20, 0.03, 0.80, 0.26)),
                part((0.16, 0.50, 0.36, 0.70), (0.10, 0.45, 0.40, 0.76)),
                part((0.64, 0.50, 0.84, 0.70), (0.60, 0.45, 0.90, 0.76))]
    }

    /// Face widths (px) up to which the skin regions are the wide ones: the real-photograph faces measured at
    /// 153–171 px time their beats better with them (docs/VITALS-ENGINE.md, *Skin regions sized to the face*).
    static let wideSkinBelow = 170
    /// Face widths (px) from which the skin regions are the compact ones: the simulator's moving 200 px faces lose
    /// HRV accuracy with the wide ones.
    static let compactSkinFrom = 200
}
