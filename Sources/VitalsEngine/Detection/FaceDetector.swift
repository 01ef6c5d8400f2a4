/// Finds upright frontal faces in a grayscale image with a ``HaarCascade`` (Viola–Jones: integral images, a scale
/// pyramid, a sliding window, early-rejecting stages, then grouping of overlapping hits).
public struct FaceDetector: Sendable {
    /// The cascade in use.
    public let cascade: HaarCascade
    /// Scale step of the pyramid (OpenCV's `scaleFactor`).
    public var scaleFactor: Double
    /// Hits a face needs from neighbouring windows to count (OpenCV's `minNeighbors`).
    public var minNeighbors: Int

    /// Creates a detector.
    public init(cascade: HaarCascade, scaleFactor: Double = 1.15, minNeighbors: Int = 3) {
        self.cascade = cascade
        self.scaleFactor = max(1.05, scaleFactor)
        self.minNeighbors = max(1, minNeighbors)
    }

    /// One detected face.
    public struct Detection: Sendable, Hashable {
        /// Where, in the image's pixels.
        public var rect: VitalsRect
        /// How many raw windows voted for it.
        public var neighbors: Int
    }

    /// Faces at least `minSize` pixels wide, largest first.
    public func detect(in image: GrayImage, minSize: Int = 0, maxSize: Int = .max) -> [Detection] {
        var raw: [VitalsRect] = []
        var scale = 1.0
        let ww = cascade.windowWidth, wh = cascade.windowHeight
        // Every level's integral image has the stride of the largest, so the stumps are laid out once per search,
        // and the integral images are allocated once, for the largest level.
        var workspace = Workspace()
        while true {
            let sw = Int(Double(image.width) / scale), sh = Int(Double(image.height) / scale)
            if sw < ww || sh < wh { break }
            let faceSize = Int(Double(ww) * scale)
            if faceSize > maxSize { break }
            if faceSize >= minSize {
                let level = scale == 1 ? image : image.resized(width: sw, height: sh)
                let step = scale > 2 ? 1 : 2
                if workspace.stride == 0 { workspace.prepare(for: self, width: image.width, height: image.height) }
                scan(level, step: step, workspace: &workspace) { x, y in
                    raw.append(VitalsRect(
                        x: Int((Double(x) * scale).rounded()), y: Int((Double(y) * scale).rounded()),
                        width: Int((Double(ww) * scale).rounded()), height: Int((Double(wh) * scale).rounded())))
                }
            }
            scale *= scaleFactor
        }
        return Self.group(raw, minNeighbors: minNeighbors)
    }

    /// What a scan needs besides the image: the stumps laid out for one integral-image row length, and integral
    /// images big enough for every image of at most the prepared size, kept from one scan to the next.
    struct Workspace {
        /// Row length of the integral images (the widest image's width + 1); 0 before ``prepare(for:width:height:)``.
        private(set) var stride = 0
        private(set) var rows = 0
        fileprivate var packed: [PackedStump] = []
        /// Whether every feature weight is a whole number (true of OpenCV's frontal-face cascades): the stumps are
        /// then evaluated in integers, which give the same values as the Float path (see ``scan``).
        fileprivate var integralWeights = false
        fileprivate var sum: [Int32] = []
        /// The integral image of squares, modulo 2³²: a window's sum of squares (at most 255² × its area, under 2³²)
        /// comes out exact from wrapping differences.
        fileprivate var squares: [UInt32] = []
        /// One row of pixels for ``integrate(width:height:row:)`` to fill.
        fileprivate var line: [UInt8] = []
        /// Width and height of the image last integrated.
        private(set) var width = 0, height = 0

        /// Makes room for images up to `width`×`height` (laying the stumps out again only when the row length grows).
        mutating func prepare(for detector: FaceDetector, width: Int, height: Int) {
            if width + 1 > stride {
                stride = width + 1
                packed = detector.packStumps(stride: stride)
                integralWeights = packed.allSatisfy { $0.integral }
                rows = 0
                line = [UInt8](repeating: 0, count: width)
            }
            if height + 1 > rows {
                rows = height + 1
                // Row 0 and column 0 stay zero: every scan writes the rest.
                sum = [Int32](repeating: 0, count: stride * rows)
                squares = [UInt32](repeating: 0, count: stride * rows)
            }
        }

        /// Builds the integral images of a `width`×`height` image (no larger than prepared for) whose rows `row`
        /// writes, one at a time, into the buffer it is given (`width` bytes).
        mutating func integrate(width w: Int, height h: Int, row: (Int, UnsafeMutablePointer<UInt8>) -> Void) {
            let iw = stride
            precondition(w < iw && h < rows, "pyramid level larger than its integral image")
            width = w
            height = h
            line.withUnsafeMutableBufferPointer { line in
                sum.withUnsafeMutableBufferPointer { sum in
                    squares.withUnsafeMutableBufferPointer { sq in
                        let px = line.baseAddress!, s = sum.baseAddress!, q = sq.baseAddress!
                        for y in 0 ..< h {
                            row(y, px)
                            var rowSum: Int32 = 0
                            var rowSq: UInt32 = 0
                            let sAbove = s + y * iw + 1, sHere = sAbove + iw
                            let qAbove = q + y * iw + 1, qHere = qAbove + iw
                            for x in 0 ..< w {
                                let v = UInt32(px[x])
                                rowSum &+= Int32(bitPattern: v)
                                rowSq &+= v &* v
                                sHere[x] = sAbove[x] &+ rowSum
                                qHere[x] = qAbove[x] &+ rowSq
                            }
                        }
                    }
                }
            }
        }
    }

    /// Every stump with its feature's corner offsets resolved for an integral image of row length `stride`, in
    /// stage order (the order of evaluation).
    fileprivate func packStumps(stride iw: Int) -> [PackedStump] {
        let stumps = cascade.stumps, features = cascade.features
        var packed = [PackedStump](repeating: PackedStump(), count: stumps.count)
        for (i, stump) in stumps.enumerated() {
            var p = PackedStump()
            p.threshold = stump.threshold
            p.left = stump.left
            p.right = stump.right
            let rects = features[stump.feature]
            func corners(_ r: HaarCascade.WeightedRect) -> (Int32, Int32, Int32, Int32) {
                (Int32(r.y * iw + r.x), Int32(r.y * iw + r.x + r.width),
                 Int32((r.y + r.height) * iw + r.x), Int32((r.y + r.height) * iw + r.x + r.width))
            }
            (p.a0, p.b0, p.c0, p.d0) = corners(rects[0]); p.w0 = rects[0].weight
            (p.a1, p.b1, p.c1, p.d1) = corners(rects[1]); p.w1 = rects[1].weight
            if rects.count > 2 { (p.a2, p.b2, p.c2, p.d2) = corners(rects[2]); p.w2 = rects[2].weight }
            // A missing third rectangle stays at offsets 0 (its sum is 0) with weight 0.
            let weights = [p.w0, p.w1, p.w2]
            p.integral = weights.allSatisfy { $0 == $0.rounded() && abs($0) <= 64 }
            if p.integral { (p.i0, p.i1, p.i2) = (Int32(p.w0), Int32(p.w1), Int32(p.w2)) }
            packed[i] = p
        }
        return packed
    }

    /// Evaluates every window position of one pyramid level (no larger than `workspace` was prepared for),
    /// building its integral images in the workspace first.
    /// - Parameters:
    ///   - minimumDeviation: windows whose luma varies less than this (standard deviation, 0–255) are rejected
    ///     before any stage: a flat patch, or one only the camera's noise varies, holds no eyes, brows or mouth.
    ///   - mask: which windows to evaluate at all (nil: every one).
    ///   - hit: called with the top-left corner of every window that passes every stage.
    /// - Returns: the windows evaluated (those the mask lets through, flat ones included).
    @discardableResult
    func scan(_ image: GrayImage, step: Int, workspace: inout Workspace, minimumDeviation: Double = 0,
              mask: WindowMask? = nil, hit: (Int, Int) -> Void) -> Int {
        let w = image.width
        image.pixels.withUnsafeBufferPointer { px in
            workspace.integrate(width: w, height: image.height) { y, row in
                row.update(from: px.baseAddress! + y * w, count: w)
            }
        }
        return scan(step: step, workspace: workspace, minimumDeviation: minimumDeviation, mask: mask, hit: hit)
    }

    /// Evaluates every window position of the image last integrated in `workspace`
    /// (``Workspace/integrate(width:height:row:)``).
    ///
    /// With whole-number feature weights (OpenCV's frontal-face cascades: −1, 2, 3) a stump's value is summed in
    /// integers and converted once: each rectangle sum is at most 255 × 24² and the weighted total under 2²⁴, so
    /// every Float product and sum of the general path is exact and both give the same value, bit for bit.
    ///
    /// - Parameter refineDepth: nil evaluates every window on the `step` grid. Otherwise the search is coarse to
    ///   fine: the windows on a grid twice as coarse are evaluated first, and a window of the `step` grid between
    ///   them only when one of its coarse neighbours (at most `step` away across and down) passed at least
    ///   `refineDepth` stages; the others are taken as rejected. Around a face the cascade's first stages pass at
    ///   every offset of a few pixels, so its hits are the same; on texture most windows fall at the first stages.
    /// - Returns: the windows decided (those the mask lets through, flat ones and those taken as rejected included).
    @discardableResult
    func scan(step: Int, workspace: Workspace, minimumDeviation: Double = 0,
              mask: WindowMask? = nil, refineDepth: Int? = nil, hit: (Int, Int) -> Void) -> Int {
        let w = workspace.width, h = workspace.height
        let iw = workspace.stride
        let stages = cascade.stages
        let stageEnds = stages.map { Int32($0.stumps.upperBound) }
        let stageThresholds = stages.map(\.threshold)
        let ww = cascade.windowWidth, wh = cascade.windowHeight
        guard w >= ww, h >= wh else { return 0 }
        let normArea = Double((ww - 2) * (wh - 2))
        // nf below is normArea × the window's standard deviation.
        let leastNorm = minimumDeviation * normArea
        let n0 = iw + 1, n1 = iw + ww - 1, n2 = (wh - 1) * iw + 1, n3 = (wh - 1) * iw + ww - 1
        let integral = workspace.integralWeights
        let stageCount = stages.count
        // Windows on the grid: origins 0, step, … up to the last that fits.
        let across = (w - ww) / step + 1, down = (h - wh) / step + 1
        // Whether the mask lets the windows with origins in columns x0...x1 and rows y0...y1 (grid indices) through:
        // any of them covers a changed cell.
        func changed(_ x0: Int, _ x1: Int, _ y0: Int, _ y1: Int) -> Bool {
            guard let m = mask else { return true }
            let top = Int(m.firstRow[y0 * step]) * m.stride, bottom = (Int(m.lastRow[y1 * step]) + 1) * m.stride
            let left = Int(m.firstColumn[x0 * step]), right = Int(m.lastColumn[x1 * step]) + 1
            return m.changes[bottom + right] &- m.changes[top + right] &- m.changes[bottom + left] &+ m.changes[top + left] != 0
        }
        return workspace.sum.withUnsafeBufferPointer { s in
            workspace.squares.withUnsafeBufferPointer { q in
                workspace.packed.withUnsafeBufferPointer { st in
                    stageEnds.withUnsafeBufferPointer { ends in
                        stageThresholds.withUnsafeBufferPointer { thresholds in
                            // The stages the window at (x, y) passes (stageCount: a hit).
                            func depth(_ x: Int, _ y: Int) -> Int {
                                let base = y * iw + x
                                let vs = Double(s[base + n3] &- s[base + n1] &- s[base + n2] &+ s[base + n0])
                                let vq = Double(q[base + n3] &- q[base + n1] &- q[base + n2] &+ q[base + n0])
                                var nf = normArea * vq - vs * vs
                                nf = nf > 0 ? nf.squareRoot() : 1
                                if nf < leastNorm { return 0 }
                                let nff = Float(nf)
                                let sp = s.baseAddress! + base
                                var si = 0
                                if integral {
                                    for stage in 0 ..< stageCount {
                                        let end = Int(ends[stage])
                                        var total: Float = 0
                                        while si < end {
                                            let p = st[si]
                                            // Rectangle sums of an integral image of at most 4096² 8-bit pixels
                                            // fit in Int32: no overflow to check.
                                            var value = p.i0 &* (sp[Int(p.d0)] &- sp[Int(p.b0)] &- sp[Int(p.c0)] &+ sp[Int(p.a0)])
                                            value &+= p.i1 &* (sp[Int(p.d1)] &- sp[Int(p.b1)] &- sp[Int(p.c1)] &+ sp[Int(p.a1)])
                                            if p.i2 != 0 {
                                                value &+= p.i2 &* (sp[Int(p.d2)] &- sp[Int(p.b2)] &- sp[Int(p.c2)] &+ sp[Int(p.a2)])
                                            }
                                            total += Float(value) < p.threshold * nff ? p.left : p.right
                                            si += 1
                                        }
                                        if total < thresholds[stage] { return stage }
                                    }
                                } else {
                                    for stage in 0 ..< stageCount {
                                        let end = Int(ends[stage])
                                        var total: Float = 0
                                        while si < end {
                                            let p = st[si]
                                            var value = p.w0 * Float(sp[Int(p.d0)] &- sp[Int(p.b0)] &- sp[Int(p.c0)] &+ sp[Int(p.a0)])
                                            value += p.w1 * Float(sp[Int(p.d1)] &- sp[Int(p.b1)] &- sp[Int(p.c1)] &+ sp[Int(p.a1)])
                                            if p.w2 != 0 {
                                                value += p.w2 * Float(sp[Int(p.d2)] &- sp[Int(p.b2)] &- sp[Int(p.c2)] &+ sp[Int(p.a2)])
                                            }
                                            total += value < p.threshold * nff ? p.left : p.right
                                            si += 1
                                        }
                                        if total < thresholds[stage] { return stage }
                                    }
                                }
                                return stageCount
                            }
                            var decided = 0
                            guard let refineDepth else {
                                for gy in 0 ..< down {
                                    for gx in 0 ..< across where changed(gx, gx, gy, gy) {
                                        decided += 1
                                        if depth(gx * step, gy * step) == stageCount { hit(gx * step, gy * step) }
                                    }
                                }
                                return decided
                            }
                            // Coarse to fine. The coarse windows are those at even grid indices; each is evaluated
                            // when it or a grid neighbour is let through by the mask, and reports a hit only when it
                            // is let through itself.
                            let coarseAcross = (across + 1) / 2, coarseDown = (down + 1) / 2
                            var deep = [Bool](repeating: false, count: coarseAcross * coarseDown)
                            for cy in 0 ..< coarseDown {
                                let gy = 2 * cy
                                for cx in 0 ..< coarseAcross {
                                    let gx = 2 * cx
                                    guard changed(max(0, gx - 1), min(across - 1, gx + 1), max(0, gy - 1), min(down - 1, gy + 1)) else { continue }
                                    let d = depth(gx * step, gy * step)
                                    deep[cy * coarseAcross + cx] = d >= refineDepth
                                    if changed(gx, gx, gy, gy) {
                                        decided += 1
                                        if d == stageCount { hit(gx * step, gy * step) }
                                    }
                                }
                            }
                            // The windows between: evaluated only next to a coarse window that went deep enough.
                            for gy in 0 ..< down {
                                let cy0 = gy / 2, cy1 = min(coarseDown - 1, (gy + 1) / 2)
                                for gx in 0 ..< across where (gx | gy) & 1 == 1 && changed(gx, gx, gy, gy) {
                                    decided += 1
                                    let cx0 = gx / 2, cx1 = min(coarseAcross - 1, (gx + 1) / 2)
                                    guard deep[cy0 * coarseAcross + cx0] || deep[cy0 * coarseAcross + cx1]
                                        || deep[cy1 * coarseAcross + cx0] || deep[cy1 * coarseAcross + cx1] else { continue }
                                    if depth(gx * step, gy * step) == stageCount { hit(gx * step, gy * step) }
                                }
                            }
                            return decided
                        }
                    }
                }
            }
        }
    }

    /// Which windows of one image a scan evaluates: those that cover a changed cell of a coarse grid. `changes` is
    /// the grid's summed-area table (row length `stride`, a zero row and column first); the window whose corner is
    /// at (x, y) covers the cells `firstColumn[x] ... lastColumn[x]` across and `firstRow[y] ... lastRow[y]` down.
    struct WindowMask {
        var changes: [Int32]
        var stride: Int
        var firstColumn: [Int32]
        var lastColumn: [Int32]
        var firstRow: [Int32]
        var lastRow: [Int32]
    }

    /// A stump with its feature's rectangle corners resolved for one integral-image stride.
    fileprivate struct PackedStump {
        var a0: Int32 = 0, b0: Int32 = 0, c0: Int32 = 0, d0: Int32 = 0
        var a1: Int32 = 0, b1: Int32 = 0, c1: Int32 = 0, d1: Int32 = 0
        var a2: Int32 = 0, b2: Int32 = 0, c2: Int32 = 0, d2: Int32 = 0
        var w0: Float = 0, w1: Float = 0, w2: Float = 0
        var threshold: Float = 0, left: Float = 0, right: Float = 0
        /// The weights as integers, when all three are whole numbers (``integral``).
        var i0: Int32 = 0, i1: Int32 = 0, i2: Int32 = 0
        var integral = false
    }

    /// Clusters raw hits (OpenCV's `groupRectangles` rule), drops weak clusters and faces inside bigger faces.
    static func group(_ rects: [VitalsRect], minNeighbors: Int, eps: Double = 0.2) -> [Detection] {
        guard !rects.isEmpty else { return [] }
        var label = Array(0 ..< rects.count)
        func find(_ i: Int) -> Int {
            var i = i
            while label[i] != i { label[i] = label[label[i]]; i = label[i] }
            return i
        }
        for i in 0 ..< rects.count {
            for j in (i + 1) ..< rects.count {
                let a = rects[i], b = rects[j]
                let delta = eps * Double(min(a.width, b.width) + min(a.height, b.height)) * 0.5
                if Double(abs(a.x - b.x)) <= delta, Double(abs(a.y - b.y)) <= delta,
                   Double(abs(a.maxX - b.maxX)) <= delta, Double(abs(a.maxY - b.maxY)) <= delta {
                    let ra = find(i), rb = find(j)
                    if ra != rb { label[ra] = rb }
                }
            }
        }
        var clusters: [Int: (x: Int, y: Int, w: Int, h: Int, n: Int)] = [:]
        for (i, r) in rects.enumerated() {
            let c = find(i)
            var acc = clusters[c] ?? (0, 0, 0, 0, 0)
            acc.x += r.x; acc.y += r.y; acc.w += r.width; acc.h += r.height; acc.n += 1
            clusters[c] = acc
        }
        var faces: [Detection] = clusters.values.filter { $0.n > minNeighbors }.map {
            Detection(rect: VitalsRect(x: $0.x / $0.n, y: $0.y / $0.n, width: $0.w / $0.n, height: $0.h / $0.n), neighbors: $0.n)
        }
        // Drop a face that lies inside a bigger, better-supported one.
        faces = faces.filter { small in
            !faces.contains { big in
                guard big != small, big.rect.width > small.rect.width else { return false }
                let dx = Int(Double(big.rect.width) * 0.2), dy = Int(Double(big.rect.height) * 0.2)
                return small.rect.x >= big.rect.x - dx && small.rect.y >= big.rect.y - dy
                    && small.rect.maxX <= big.rect.maxX + dx && small.rect.maxY <= big.rect.maxY + dy
                    && (big.neighbors > 3 || big.neighbors >= small.neighbors)
            }
        }
        return faces.sorted { $0.rect.width * $0.rect.height > $1.rect.width * $1.rect.height }
    }
}
