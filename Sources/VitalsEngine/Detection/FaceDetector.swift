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
        // Every level's integral image has the stride of the largest, so the stumps are laid out once per search.
        let stride = image.width + 1
        var packed: [PackedStump] = []
        // The integral images too are allocated once, for the largest level; row 0 and column 0 stay zero.
        var sum = [Int32](repeating: 0, count: stride * (image.height + 1))
        var squares = [Double](repeating: 0, count: stride * (image.height + 1))
        while true {
            let sw = Int(Double(image.width) / scale), sh = Int(Double(image.height) / scale)
            if sw < ww || sh < wh { break }
            let faceSize = Int(Double(ww) * scale)
            if faceSize > maxSize { break }
            if faceSize >= minSize {
                let level = scale == 1 ? image : image.resized(width: sw, height: sh)
                let step = scale > 2 ? 1 : 2
                if packed.isEmpty { packed = packStumps(stride: stride) }
                scan(level, step: step, stride: stride, packed: packed, sum: &sum, squares: &squares) { x, y in
                    raw.append(VitalsRect(
                        x: Int((Double(x) * scale).rounded()), y: Int((Double(y) * scale).rounded()),
                        width: Int((Double(ww) * scale).rounded()), height: Int((Double(wh) * scale).rounded())))
                }
            }
            scale *= scaleFactor
        }
        return Self.group(raw, minNeighbors: minNeighbors)
    }

    /// Every stump with its feature's corner offsets resolved for an integral image of row length `stride`, in
    /// stage order (the order of evaluation).
    private func packStumps(stride iw: Int) -> [PackedStump] {
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

    /// Evaluates every window position of one pyramid level (no wider than `stride - 1`, no taller than the
    /// integral images hold rows for), building its integral images in `sum` and `squares` first.
    private func scan(_ image: GrayImage, step: Int, stride iw: Int, packed: [PackedStump], sum: inout [Int32],
                      squares: inout [Double], hit: (Int, Int) -> Void) {
        let w = image.width, h = image.height
        precondition(w < iw && (h + 1) * iw <= sum.count && sum.count == squares.count, "pyramid level larger than its integral image")
        image.pixels.withUnsafeBufferPointer { px in
            sum.withUnsafeMutableBufferPointer { sum in
                squares.withUnsafeMutableBufferPointer { sq in
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
        let n0 = iw + 1, n1 = iw + ww - 1, n2 = (wh - 1) * iw + 1, n3 = (wh - 1) * iw + ww - 1
        sum.withUnsafeBufferPointer { s in
            squares.withUnsafeBufferPointer { q in
                packed.withUnsafeBufferPointer { st in
                    stageEnds.withUnsafeBufferPointer { ends in
                        stageThresholds.withUnsafeBufferPointer { thresholds in
                            var y = 0
                            while y + wh <= h {
                                var x = 0
                                while x + ww <= w {
                                    let base = y * iw + x
                                    let vs = Double(s[base + n3] - s[base + n1] - s[base + n2] + s[base + n0])
                                    let vq = q[base + n3] - q[base + n1] - q[base + n2] + q[base + n0]
                                    var nf = normArea * vq - vs * vs
                                    nf = nf > 0 ? nf.squareRoot() : 1
                                    let nff = Float(nf)
                                    let sp = s.baseAddress! + base
                                    var passed = true
                                    var si = 0
                                    for stage in 0 ..< ends.count {
                                        let end = Int(ends[stage])
                                        var total: Float = 0
                                        while si < end {
                                            let p = st[si]
                                            var value = p.w0 * Float(sp[Int(p.d0)] - sp[Int(p.b0)] - sp[Int(p.c0)] + sp[Int(p.a0)])
                                            value += p.w1 * Float(sp[Int(p.d1)] - sp[Int(p.b1)] - sp[Int(p.c1)] + sp[Int(p.a1)])
                                            if p.w2 != 0 {
                                                value += p.w2 * Float(sp[Int(p.d2)] - sp[Int(p.b2)] - sp[Int(p.c2)] + sp[Int(p.a2)])
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
    }

    /// A stump with its feature's rectangle corners resolved for one integral-image stride.
    private struct PackedStump {
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
