/// Measures how the content of a fixed image region moves along one axis, from its intensity profile (row or column
/// means of luma) matched against a reference profile with sub-pixel (parabolic) refinement.
///
/// The reference is re-anchored when the content has moved far, and the offset carried, so the output is one
/// continuous displacement in pixels. A flat region (no texture) gives no measurement.
struct ProfileMotion {
    /// The region, fixed in frame coordinates until ``reset(region:)``.
    private(set) var region: VitalsRect
    /// Whether rows (vertical motion) or columns (horizontal motion) are profiled.
    let vertical: Bool
    /// Search range in pixels.
    let maxShift: Int
    private var reference: [Double] = []
    private var carried = 0.0
    /// The last displacement in pixels (content moving down or right is positive).
    private(set) var displacement = 0.0

    init(region: VitalsRect, vertical: Bool, maxShift: Int) {
        self.region = region
        self.vertical = vertical
        self.maxShift = maxShift
    }

    /// Starts over on a new region, keeping the displacement continuous.
    mutating func reset(region: VitalsRect) {
        self.region = region
        reference = []
        carried = displacement
    }

    /// Measures the frame; returns the displacement, or nil when the region is too small or flat.
    mutating func update(_ view: VitalsPixelView) -> Double? {
        update(profile: profile(of: view))
    }

    /// This region's profile in `view` (see ``matchableProfile(_:_:vertical:maxShift:)``), for ``update(profile:)``:
    /// two trackers of the same region can share one.
    func profile(of view: VitalsPixelView) -> [Double]? {
        Self.matchableProfile(view, region, vertical: vertical, maxShift: maxShift)
    }

    /// Measures a frame from its profile of this region (``profile(of:)``); nil when there is none (the region too
    /// small), no reference yet, or the match is flat or poor.
    mutating func update(profile: [Double]?) -> Double? {
        guard let profile else { return nil }
        guard !reference.isEmpty, reference.count == profile.count else {
            reference = profile
            return nil
        }
        guard let shift = Self.shift(of: profile, against: reference, maxShift: maxShift) else { return nil }
        displacement = carried + shift
        if abs(shift) > Double(maxShift) * 0.5 {
            carried += shift
            reference = profile
        }
        return displacement
    }

    /// The profile of `region` (clamped to the frame), or nil when it is too small to search ±`maxShift` along, or
    /// too thin across, to match.
    static func matchableProfile(_ view: VitalsPixelView, _ region: VitalsRect, vertical: Bool, maxShift: Int) -> [Double]? {
        let r = region.clamped(width: view.width, height: view.height)
        let length = vertical ? r.height : r.width
        guard length > 4 * maxShift, (vertical ? r.width : r.height) >= 8 else { return nil }
        return profile(view, r, vertical: vertical)
    }

    /// Row means (vertical) or column means (horizontal) of luma, sampling every 4th pixel across.
    static func profile(_ view: VitalsPixelView, _ r: VitalsRect, vertical: Bool) -> [Double] {
        let across = 4
        // Integer sums per row or column (exact), then one division each; luma read straight off the plane.
        let bgra = view.format == .bgra
        let pixelBytes = bgra ? 4 : 1
        let plane = view.plane0, rowBytes = view.bytesPerRow0
        @inline(__always) func luma(_ p: UnsafePointer<UInt8>) -> Int {
            bgra ? (Int(p[0]) * 29 + Int(p[1]) * 150 + Int(p[2]) * 77) >> 8 : Int(p[0])
        }
        if vertical {
            var out = [Double](repeating: 0, count: r.height)
            let n = (r.width + across - 1) / across
            for y in 0 ..< r.height {
                let row = plane + (r.y + y) * rowBytes + r.x * pixelBytes
                var s = 0
                var i = 0
                while i < r.width { s += luma(row + i * pixelBytes); i += across }
                out[y] = Double(s) / Double(max(n, 1))
            }
            return out
        }
        var sums = [Int32](repeating: 0, count: r.width)
        var y = r.y
        var rows = 0
        sums.withUnsafeMutableBufferPointer { sums in
            while y < r.maxY {
                let row = plane + y * rowBytes + r.x * pixelBytes
                if bgra {
                    for x in 0 ..< r.width { sums[x] += Int32(luma(row + x * 4)) }
                } else {
                    // A plain luma row: widening adds the compiler vectorises.
                    for x in 0 ..< r.width { sums[x] &+= Int32(row[x]) }
                }
                rows += 1
                y += across
            }
        }
        return sums.map { Double($0) / Double(max(rows, 1)) }
    }

    /// The shift `d` minimising the mean squared difference between `p(i + d)` and `ref(i)` over the interior,
    /// each profile with its mean removed; nil when the reference is flat, the match poor or at the search's edge.
    static func shift(of p: [Double], against ref: [Double], maxShift: Int) -> Double? {
        guard let match = costs(of: p, against: ref, maxShift: maxShift) else { return nil }
        return bestShift(match.costs, variance: match.variance, maxShift: maxShift)
    }

    /// The mismatch of `p` against `ref` at every shift from −`maxShift` to `maxShift` (sum of squared differences
    /// over the interior, means removed) and the reference's own variation (sum of squares about its mean); nil when
    /// the profiles are too short or the reference is flat.
    static func costs(of p: [Double], against ref: [Double], maxShift: Int) -> (costs: [Double], variance: Double)? {
        let n = p.count
        let lo = maxShift, hi = n - maxShift
        guard hi - lo > 4, ref.count == n else { return nil }
        var refMean = 0.0
        for i in lo ..< hi { refMean += ref[i] }
        refMean /= Double(hi - lo)
        var refVar = 0.0
        var gradient = 0.0
        for i in lo ..< hi {
            refVar += (ref[i] - refMean) * (ref[i] - refMean)
            if i > lo { gradient += abs(ref[i] - ref[i - 1]) }
        }
        guard gradient / Double(hi - lo) > 0.05 else { return nil }
        // Per shift: Σ((p − p̄) − (ref − r̄))² = Σp² − (Σp)²/n − 2·Σp·(ref − r̄) + Σ(ref − r̄)², one pass each.
        let count = Double(hi - lo)
        var centred = [Double](repeating: 0, count: n)
        for i in lo ..< hi { centred[i] = ref[i] - refMean }
        var costs = [Double](repeating: 0, count: 2 * maxShift + 1)
        p.withUnsafeBufferPointer { p in
            centred.withUnsafeBufferPointer { r in
                for (k, d) in (-maxShift ... maxShift).enumerated() {
                    var sum = 0.0, squares = 0.0, cross = 0.0
                    for i in lo ..< hi {
                        let v = p[i + d]
                        sum += v
                        squares += v * v
                        cross += v * r[i]
                    }
                    costs[k] = max(0, squares - sum * sum / count - 2 * cross + refVar)
                }
            }
        }
        return (costs, refVar)
    }

    /// The shift at the least of `costs` (index k is shift k − `maxShift`), refined by a parabola through it and its
    /// neighbours; nil when the least sits at the edge of the search (the content moved further than we look) or
    /// explains less than two thirds of `variance` (noise on a flat region matches nothing).
    static func bestShift(_ costs: [Double], variance: Double, maxShift: Int) -> Double? {
        guard costs.count == 2 * maxShift + 1, costs.count >= 3 else { return nil }
        var best = 0
        for k in 1 ..< costs.count where costs[k] < costs[best] { best = k }
        guard best > 0, best < costs.count - 1, costs[best] < variance / 3 else { return nil }
        var frac = 0.0
        let a = costs[best - 1], b = costs[best], c = costs[best + 1]
        let denom = a - 2 * b + c
        if denom > 0 { frac = max(-0.5, min(0.5, 0.5 * (a - c) / denom)) }
        return Double(best - maxShift) + frac
    }
}

/// Measures one displacement along one axis for several image regions that move together (the background beside
/// and above the head, which moves only with the camera): at every shift the regions' profile mismatches are summed
/// before the best shift is taken, so a textured region decides and a flat or changing one, which alone would
/// match noise, hardly counts.
///
/// Like ``ProfileMotion``, each region's reference is re-anchored (all together) when the content has moved far, and
/// the offset carried, so the output is one continuous displacement in pixels.
struct ProfileMotionGroup {
    /// The regions, fixed in frame coordinates until ``reset(regions:)``.
    private(set) var regions: [VitalsRect]
    /// Whether rows (vertical motion) or columns (horizontal motion) are profiled.
    let vertical: Bool
    /// Search range in pixels.
    let maxShift: Int
    private var references: [[Double]?]
    private var carried = 0.0
    /// The last displacement in pixels (content moving down or right is positive).
    private(set) var displacement = 0.0

    init(regions: [VitalsRect], vertical: Bool, maxShift: Int) {
        self.regions = regions
        self.vertical = vertical
        self.maxShift = maxShift
        references = Array(repeating: nil, count: regions.count)
    }

    /// Starts over on new regions, keeping the displacement continuous.
    mutating func reset(regions: [VitalsRect]) {
        self.regions = regions
        references = Array(repeating: nil, count: regions.count)
        carried = displacement
    }

    /// Measures the frame; returns the displacement, or nil when no region could be matched (too small, flat, or
    /// no reference yet).
    mutating func update(_ view: VitalsPixelView) -> Double? {
        var total = [Double](repeating: 0, count: 2 * maxShift + 1), variance = 0.0
        var profiles: [[Double]?] = []
        var matched = false
        for (i, region) in regions.enumerated() {
            let profile = ProfileMotion.matchableProfile(view, region, vertical: vertical, maxShift: maxShift)
            profiles.append(profile)
            guard let profile, let reference = references[i], reference.count == profile.count,
                  let match = ProfileMotion.costs(of: profile, against: reference, maxShift: maxShift) else { continue }
            for k in total.indices { total[k] += match.costs[k] }
            variance += match.variance
            matched = true
        }
        // A region without a reference of its size (the first frame, or clamped differently) starts one.
        for i in regions.indices where references[i]?.count != profiles[i]?.count { references[i] = profiles[i] }
        guard matched, let shift = ProfileMotion.bestShift(total, variance: variance, maxShift: maxShift) else { return nil }
        displacement = carried + shift
        if abs(shift) > Double(maxShift) * 0.5 {
            carried += shift
            references = profiles
        }
        return displacement
    }
}
