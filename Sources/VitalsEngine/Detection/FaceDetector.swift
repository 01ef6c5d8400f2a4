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
        fileprivate var sum: [Int32] = []
        fileprivate var squares: [Double] = []

        /// Makes room for images up to `width`×`height` (laying the stumps out again only when the row length grows).
        mutating func prepare(for detector: FaceDetector, width: Int, height: Int) {
            if width + 1 > stride {
                stride = width + 1
                packed = detector.packStumps(stride: stride)
                rows = 0
            }
            if height + 1 > rows {
                rows = height + 1
                // Row 0 and column 0 stay zero: every scan writes the rest.
                sum = [Int32](repeating: 0, count: stride * rows)
                squares = [Double](repeating: 0, count: stride * rows)
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
        let w = image.width, h = image.height
        let iw = workspace.stride
        precondition(w < iw && h < workspace.rows, "pyramid level larger than its integral image")
        image.pixels.withUnsafeBufferPointer { px in
            workspace.sum.withUnsafeMutableBufferPointer { sum in
                workspace.squares.withUnsafeMutableBufferPointer { sq in
                    for y in 0 ..< h {
                        var rowSum: Int32 = 0
                        var rowSq = 0.0
                        let above = y * iw + 1, here = (y + 1) * iw + 1, source = y * w
                        for x in 0 ..< w {
                            let v = Int32(px[source + x])
                            rowSum += v
                            rowSq += Double(v * v)
                            sum[here + x] = sum[above + x] + rowSum
                            sq[here + x] = sq[above + x] + rowSq
                        }
                    }
                }
            }
        }
        let stages = cascade.stages
        let stageEnds = stages.map { Int32($0.stumps.upperBound) }
        let stageThresholds = stages.map(\.threshold)
        let ww = cascade.windowWidth, wh = cascade.windowHeight
        let normArea = Double((ww - 2) * (wh - 2))
        // nf below is normArea × the window's standard deviation.
        let leastNorm = minimumDeviation * normArea
        let n0 = iw + 1, n1 = iw + ww - 1, n2 = (wh - 1) * iw + 1, n3 = (wh - 1) * iw + ww - 1
        var evaluated = 0
        let changes = mask?.changes ?? [], stride = mask?.stride ?? 0
        let firstColumn = mask?.firstColumn ?? [], lastColumn = mask?.lastColumn ?? []
        let firstRow = mask?.firstRow ?? [], lastRow = mask?.lastRow ?? []
        let masked = mask != nil
        workspace.sum.withUnsafeBufferPointer { s in
            workspace.squares.withUnsafeBufferPointer { q in
                workspace.packed.withUnsafeBufferPointer { st in
                    stageEnds.withUnsafeBufferPointer { ends in
                        stageThresholds.withUnsafeBufferPointer { thresholds in
                            var y = 0
                            while y + wh <= h {
                                var x = 0
                                let top = masked ? Int(firstRow[y]) * stride : 0, bottom = masked ? (Int(lastRow[y]) + 1) * stride : 0
                                while x + ww <= w {
                                    if masked {
                                        let left = Int(firstColumn[x]), right = Int(lastColumn[x]) + 1
                                        if changes[bottom + right] &- changes[top + right] &- changes[bottom + left] &+ changes[top + left] == 0 {
                                            x += step
                                            continue
                                        }
                                    }
                                    evaluated += 1
                                    let base = y * iw + x
                                    let vs = Double(s[base + n3] - s[base + n1] - s[base + n2] + s[base + n0])
                                    let vq = q[base + n3] - q[base + n1] - q[base + n2] + q[base + n0]
                                    var nf = normArea * vq - vs * vs
                                    nf = nf > 0 ? nf.squareRoot() : 1
                                    if nf < leastNorm { x += step; continue }
                                    let nff = Float(nf)
                                    let sp = s.baseAddress! + base
                                    var passed = true
                                    var si = 0
                                    for stage in 0 ..< ends.count {
                                        let end = Int(ends[stage])
                                        var total: Float = 0
                                        while si < end {
                                            let p = st[si]
                                            // Rectangle sums of an integral image of at most 4096² 8-bit pixels
                                            // fit in Int32: no overflow to check.
                                            var value = p.w0 * Float(sp[Int(p.d0)] &- sp[Int(p.b0)] &- sp[Int(p.c0)] &+ sp[Int(p.a0)])
                                            value += p.w1 * Float(sp[Int(p.d1)] &- sp[Int(p.b1)] &- sp[Int(p.c1)] &+ sp[Int(p.a1)])
                                            if p.w2 != 0 {
                                                value += p.w2 * Float(sp[Int(p.d2)] &- sp[Int(p.b2)] &- sp[Int(p.c2)] &+ sp[Int(p.a2)])
                                            }
                                            total += value < p.threshold * nff ? p.left : p.right
                                            si += 1
                                        }
                                        if total < thresholds[stage] { passed = false; break }
                                    }
                                    if passed { hit(x, y) }
                                    x += step
                                }
                                y += step
                            }
                        }
                    }
                }
            }
        }
        return evaluated
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
