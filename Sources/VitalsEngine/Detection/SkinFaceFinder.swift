/// A fallback face finder for pictures the Haar cascade does not recognise (drawn or stylised faces, strong
/// rotation): the largest skin-coloured blob (YCbCr rule) that is face-shaped (roughly elliptical, taller than
/// wide, mostly filled) and has non-skin holes (eyes) in its upper half. The neck is cut where the blob narrows.
struct SkinFaceFinder {
    /// Sampling step in frame pixels.
    let step: Int

    /// The face box in frame pixels, or nil.
    func find(in view: VitalsPixelView) -> VitalsRect? {
        let gw = view.width / step, gh = view.height / step
        guard gw > 8, gh > 8 else { return nil }
        var skin = [Bool](repeating: false, count: gw * gh)
        for gy in 0 ..< gh {
            for gx in 0 ..< gw {
                let (cb, cr) = chroma(view, gx * step, gy * step)
                skin[gy * gw + gx] = cb >= 77 && cb <= 127 && cr >= 133 && cr <= 173
            }
        }
        // Erode once (a pixel stays skin only with all four neighbours skin) so thin bridges to skin-coloured
        // surroundings break.
        var eroded = skin
        for gy in 1 ..< gh - 1 {
            for gx in 1 ..< gw - 1 {
                let i = gy * gw + gx
                eroded[i] = skin[i] && skin[i - 1] && skin[i + 1] && skin[i - gw] && skin[i + gw]
            }
        }
        for gx in 0 ..< gw { eroded[gx] = false; eroded[(gh - 1) * gw + gx] = false }
        for gy in 0 ..< gh { eroded[gy * gw] = false; eroded[gy * gw + gw - 1] = false }
        skin = eroded
        // Largest 4-connected component.
        var label = [Int32](repeating: -1, count: gw * gh)
        var best: (count: Int, id: Int32) = (0, -1)
        var stack: [Int] = []
        var next: Int32 = 0
        for start in 0 ..< gw * gh where skin[start] && label[start] < 0 {
            var count = 0
            stack.append(start)
            label[start] = next
            while let i = stack.popLast() {
                count += 1
                let x = i % gw, y = i / gw
                if x > 0, skin[i - 1], label[i - 1] < 0 { label[i - 1] = next; stack.append(i - 1) }
                if x + 1 < gw, skin[i + 1], label[i + 1] < 0 { label[i + 1] = next; stack.append(i + 1) }
                if y > 0, skin[i - gw], label[i - gw] < 0 { label[i - gw] = next; stack.append(i - gw) }
                if y + 1 < gh, skin[i + gw], label[i + gw] < 0 { label[i + gw] = next; stack.append(i + gw) }
            }
            if count > best.count { best = (count, next) }
            next += 1
        }
        guard best.count >= 40 else { return nil }
        // Row extents of the blob; the face ends where the blob narrows to a neck.
        var rows: [(y: Int, x0: Int, x1: Int, n: Int)] = []
        for y in 0 ..< gh {
            var x0 = gw, x1 = -1, n = 0
            for x in 0 ..< gw where label[y * gw + x] == best.id { x0 = min(x0, x); x1 = max(x1, x); n += 1 }
            if n > 0 { rows.append((y, x0, x1, n)) }
        }
        guard let widest = rows.map({ $0.x1 - $0.x0 + 1 }).max(), widest >= 6 else { return nil }
        let top = rows[0].y
        var bottom = top
        var x0 = gw, x1 = 0
        var seenWide = false
        for r in rows {
            let w = r.x1 - r.x0 + 1
            if w >= widest * 7 / 10 { seenWide = true }
            if seenWide, w < widest * 6 / 10 { break }
            bottom = r.y
            x0 = min(x0, r.x0); x1 = max(x1, r.x1)
        }
        let bw = x1 - x0 + 1, bh = bottom - top + 1
        guard bh >= bw * 9 / 10, bh <= bw * 2 else { return nil }
        // Filled like an ellipse, with holes (eyes, brows) in the upper half.
        var inside = 0, holes = 0
        for y in top ... bottom {
            for x in x0 ... x1 {
                let nx = (Double(x - x0) + 0.5) / Double(bw) * 2 - 1, ny = (Double(y - top) + 0.5) / Double(bh) * 2 - 1
                guard nx * nx + ny * ny < 0.8 else { continue }
                inside += 1
                if label[y * gw + x] != best.id, ny < 0.2, ny > -0.6 { holes += 1 }
            }
        }
        guard inside > 0 else { return nil }
        let fill = Double(best.count) / Double(max(bw * bh, 1))
        guard fill > 0.5, holes >= 2, Double(holes) / Double(inside) < 0.25 else { return nil }
        // The eye line: the row in the upper part with the most non-skin gaps between skin on both sides.
        var eyeRow = -1, eyeScore = 0, eyeX0 = x0, eyeX1 = x1
        for r in rows where r.y > top + bh / 6 && r.y < top + bh * 2 / 3 {
            var gaps = 0
            for x in r.x0 ... r.x1 where label[r.y * gw + x] != best.id { gaps += 1 }
            if gaps > eyeScore { eyeScore = gaps; eyeRow = r.y; eyeX0 = r.x0; eyeX1 = r.x1 }
        }
        guard eyeRow >= 0, eyeScore >= 2 else { return nil }
        // A box with a Viola–Jones box's proportions: square, eyes at 40 % of its height, 90 % of the face's width.
        let faceWidth = Double((eyeX1 - eyeX0 + 1) * step)
        let side = 0.9 * faceWidth
        let cx = (Double(eyeX0 + eyeX1 + 1) / 2) * Double(step)
        let ey = (Double(eyeRow) + 0.5) * Double(step)
        return VitalsRect(x: Int(cx - side / 2), y: Int(ey - 0.4 * side), width: Int(side), height: Int(side))
    }

    private func chroma(_ view: VitalsPixelView, _ x: Int, _ y: Int) -> (Double, Double) {
        switch view.format {
        case .bgra:
            let p = view.plane0 + y * view.bytesPerRow0 + x * 4
            let b = Double(p[0]), g = Double(p[1]), r = Double(p[2])
            return (128 - 0.168736 * r - 0.331264 * g + 0.5 * b, 128 + 0.5 * r - 0.418688 * g - 0.081312 * b)
        case .nv12FullRange, .nv12VideoRange:
            let p = view.plane1! + (y / 2) * view.bytesPerRow1 + (x / 2) * 2
            var cb = Double(p[0]) - 128, cr = Double(p[1]) - 128
            if view.format == .nv12VideoRange { cb *= 255 / 224; cr *= 255 / 224 }
            return (128 + cb, 128 + cr)
        }
    }
}
