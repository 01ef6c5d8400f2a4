/// Measures how the content of a fixed image region moves along one axis, from its intensity profile (row or column
/// means of luma) matched against a reference profile with sub-pixel (parabolic) refinement.
///
/// The reference is re-anchored when the content has moved far, and the offset carried, so the output is one
/// continuous displacement in pixels. A flat region (no texture) gives no measurement.
///
/// Two things keep a fast motion (a walking wearer's step moves the picture by up to 8 px a frame at 24 fps) in
/// reach of the search:
/// - when the content has moved beyond the search's reach of the reference, or no longer matches it (a face that
///   bobs up and down changes the columns of a region fixed in the frame), the frame is matched against the last
///   frame instead (when that one was matched), and becomes the reference;
/// - given the picture's travel as the glasses' gyroscope integrates it (`travel`), the search is centred where the
///   content is expected from the last match and the travel since, not where the reference has it.
struct ProfileMotion {
    /// The region, fixed in frame coordinates until ``reset(region:)``.
    private(set) var region: VitalsRect
    /// Whether rows (vertical motion) or columns (horizontal motion) are profiled.
    let vertical: Bool
    /// Search range in pixels.
    var maxShift: Int { reach.maxShift }
    private var reference: [Double] = []
    private var reach: ProfileReach
    /// The last displacement in pixels (content moving down or right is positive).
    var displacement: Double { reach.displacement }

    init(region: VitalsRect, vertical: Bool, maxShift: Int) {
        self.region = region
        self.vertical = vertical
        reach = ProfileReach(maxShift: maxShift)
    }

    /// Starts over on a new region, keeping the displacement continuous.
    mutating func reset(region: VitalsRect) {
        self.region = region
        reference = []
        reach.restart()
    }

    /// Measures the frame; returns the displacement, or nil when the region is too small or flat.
    mutating func update(_ view: VitalsPixelView, travel: Double? = nil) -> Double? {
        update(profile: profile(of: view), travel: travel)
    }

    /// This region's profile in `view` (see ``matchableProfile(_:_:vertical:maxShift:)``), for ``update(profile:travel:)``:
    /// two trackers of the same region can share one.
    func profile(of view: VitalsPixelView) -> [Double]? {
        Self.matchableProfile(view, region, vertical: vertical, maxShift: maxShift)
    }

    /// Measures a frame from its profile of this region (``profile(of:)``); nil when there is none (the region too
    /// small), no reference yet, or the match is flat or poor. `travel`: the picture's displacement the glasses' IMU
    /// integrates to (px, any level; ``ProfileReach``), nil without an IMU.
    mutating func update(profile: [Double]?, travel: Double? = nil) -> Double? {
        let centre = reach.centre(travel: travel)
        guard let profile else {
            reach.missed()
            return nil
        }
        guard !reference.isEmpty, reference.count == profile.count else {
            reference = profile
            reach.startReference([profile])
            return nil
        }
        let maxShift = maxShift
        let onReference = Self.match(profile, against: reference, maxShift: maxShift, centre: centre)
        let becomesReference = reach.settle(onReference, profiles: [profile]) { last, centre in
            guard let previous = last[0], previous.count == profile.count else { return nil }
            return Self.match(profile, against: previous, maxShift: maxShift, centre: centre)?.shift
        }
        guard let becomesReference else { return nil }
        if becomesReference { reference = profile }
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
        match(p, against: ref, maxShift: maxShift)?.shift
    }

    /// What a search of `p` against `ref` about `centre` found (``costs(of:against:maxShift:centre:)``, then
    /// ``bestShift(_:variance:maxShift:centre:)``); nil when the profiles are too short or the reference is flat.
    static func match(_ p: [Double], against ref: [Double], maxShift: Int, centre: Int = 0) -> Match? {
        costs(of: p, against: ref, maxShift: maxShift, centre: centre)
            .map { bestShift($0.costs, variance: $0.variance, maxShift: maxShift, centre: centre) }
    }

    /// The mismatch of `p` against `ref` at every shift from `centre` − `maxShift` to `centre` + `maxShift` (sum of
    /// squared differences over the interior every shift reaches, means removed) and the reference's own variation
    /// there (sum of squares about its mean); nil when the profiles are too short or the reference is flat.
    static func costs(of p: [Double], against ref: [Double], maxShift: Int, centre: Int = 0)
        -> (costs: [Double], variance: Double)?
    {
        let n = p.count
        let lo = max(0, maxShift - centre), hi = min(n, n - maxShift - centre)
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
                for (k, d) in (centre - maxShift ... centre + maxShift).enumerated() {
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

    /// What a search found (``bestShift(_:variance:maxShift:centre:)``).
    enum Match: Equatable {
        /// The shift, px.
        case found(Double)
        /// The least mismatch sits at the edge of the search: the content moved further than it looks.
        case beyondReach
        /// The least mismatch explains less than two thirds of the reference's variation: nothing matches.
        case poor

        var shift: Double? {
            if case .found(let shift) = self { shift } else { nil }
        }
    }

    /// The shift at the least of `costs` (index k is shift `centre` + k − `maxShift`), refined by a parabola through
    /// it and its neighbours; ``Match/beyondReach`` when the least sits at the edge of the search, ``Match/poor`` when
    /// it explains less than two thirds of `variance` (noise on a flat region matches nothing).
    static func bestShift(_ costs: [Double], variance: Double, maxShift: Int, centre: Int = 0) -> Match {
        guard costs.count == 2 * maxShift + 1, costs.count >= 3 else { return .poor }
        var best = 0
        for k in 1 ..< costs.count where costs[k] < costs[best] { best = k }
        guard best > 0, best < costs.count - 1 else { return .beyondReach }
        guard costs[best] < variance / 3 else { return .poor }
        var frac = 0.0
        let a = costs[best - 1], b = costs[best], c = costs[best + 1]
        let denom = a - 2 * b + c
        if denom > 0 { frac = max(-0.5, min(0.5, 0.5 * (a - c) / denom)) }
        return .found(Double(centre + best - maxShift) + frac)
    }
}

/// A profile tracker's displacement, and what keeps a fast motion in its search's reach (see ``ProfileMotion``): the
/// last frame's profiles when it was matched, and where the content is expected from the motion the IMU reported
/// since. The tracker keeps its reference profiles; this keeps the displacement they were taken at.
struct ProfileReach {
    /// The search's range, px.
    let maxShift: Int
    /// The last displacement in pixels (content moving down or right is positive).
    private(set) var displacement = 0.0
    /// The displacement at which the reference was taken: a shift against the reference is measured from it.
    private(set) var carried = 0.0
    /// The last frame's profiles and its displacement, when it was matched (or became the reference).
    private var last: (profiles: [[Double]?], displacement: Double)?
    /// Where the content is expected (the output's displacement, px): the last one measured, moved on by the IMU's
    /// travel since; nil without travel.
    private var expected: Double?
    /// The IMU's travel at the last frame.
    private var lastTravel: Double?
    /// How far the IMU's travel went from the last frame to this one (px); nil without travel.
    private var moved: Double?

    init(maxShift: Int) {
        self.maxShift = maxShift
    }

    /// Starts over on new regions (no reference, no last frame, no travel), keeping the displacement continuous.
    mutating func restart() {
        self = ProfileReach(maxShift: maxShift, displacement: displacement)
    }

    private init(maxShift: Int, displacement: Double) {
        self.maxShift = maxShift
        self.displacement = displacement
        carried = displacement
    }

    /// The search's centre against the reference (px, within ±2 `maxShift`) for a frame at which the IMU's travel
    /// (its cumulative picture displacement, px, any level) is `travel`; 0 without travel, or on the first frame
    /// with it. Call once per frame, before matching.
    mutating func centre(travel: Double?) -> Int {
        let before = lastTravel
        lastTravel = travel.flatMap { $0.isFinite ? $0 : nil }
        guard let now = lastTravel, let before else {
            expected = nil
            moved = nil
            return 0
        }
        moved = now - before
        let position = (expected ?? displacement) + (now - before)
        expected = position
        return Self.clamped(position - carried, maxShift)
    }

    /// The frame's `profiles` became the reference, at the carried displacement (a tracker's first frame, or its
    /// first after ``restart()``).
    mutating func startReference(_ profiles: [[Double]?]) {
        matched(profiles, at: carried)
    }

    /// Settles a frame after its match against the reference (`onReference`, nil when there was nothing to match):
    /// found, it is the frame's ``displacement``, and the frame becomes the reference when it moved more than half the
    /// search's range; otherwise the frame is matched against the last frame (`againstLast`, given the last frame's
    /// profiles and the centre to search about, the IMU's travel since; nil when that fails too) and becomes the
    /// reference. Returns whether the frame's profiles are the reference from now on (the caller keeps them); nil
    /// when neither matched, and the next frame then has no last frame to fall back on.
    mutating func settle(_ onReference: ProfileMotion.Match?, profiles: [[Double]?],
                         againstLast: (_ last: [[Double]?], _ centre: Int) -> Double?) -> Bool?
    {
        let settled: (displacement: Double, becomesReference: Bool)
        switch onReference {
        case .found(let shift)?:
            settled = (carried + shift, abs(shift) > Double(maxShift) * 0.5)
        case .beyondReach?, .poor?:
            guard let last, let step = againstLast(last.profiles, moved.map { Self.clamped($0, maxShift) } ?? 0) else {
                missed()
                return nil
            }
            settled = (last.displacement + step, true)
        case nil:
            missed()
            return nil
        }
        displacement = settled.displacement
        if settled.becomesReference { carried = displacement }
        matched(profiles, at: displacement)
        return settled.becomesReference
    }

    /// The frame was matched at `displacement` (or became the reference there).
    mutating func matched(_ profiles: [[Double]?], at displacement: Double) {
        last = (profiles, displacement)
        if expected != nil { expected = displacement }
    }

    /// The frame was not matched: the next frame has no last frame to fall back on.
    mutating func missed() {
        last = nil
    }

    /// `value` rounded, within twice the search's range (a profile is more than four ranges long, so the interior
    /// every shift of a search about it reaches is never empty).
    private static func clamped(_ value: Double, _ maxShift: Int) -> Int {
        guard value.isFinite else { return 0 }
        let reach = Double(2 * maxShift)
        return Int(min(max(value, -reach), reach).rounded())
    }
}

/// Measures one displacement along one axis for several image regions that move together (the background beside
/// and above the head, which moves only with the camera): at every shift the regions' profile mismatches are summed
/// before the best shift is taken, so a textured region decides and a flat or changing one, which alone would
/// match noise, hardly counts.
///
/// Like ``ProfileMotion``, each region's reference is re-anchored (all together) when the content has moved far, and
/// the offset carried, so the output is one continuous displacement in pixels; and the same two things keep a fast
/// motion in reach (``ProfileReach``).
struct ProfileMotionGroup {
    /// The regions, fixed in frame coordinates until ``reset(regions:)``.
    private(set) var regions: [VitalsRect]
    /// Whether rows (vertical motion) or columns (horizontal motion) are profiled.
    let vertical: Bool
    /// Search range in pixels.
    var maxShift: Int { reach.maxShift }
    private var references: [[Double]?]
    private var reach: ProfileReach
    /// The last displacement in pixels (content moving down or right is positive).
    var displacement: Double { reach.displacement }

    init(regions: [VitalsRect], vertical: Bool, maxShift: Int) {
        self.regions = regions
        self.vertical = vertical
        references = Array(repeating: nil, count: regions.count)
        reach = ProfileReach(maxShift: maxShift)
    }

    /// Starts over on new regions, keeping the displacement continuous.
    mutating func reset(regions: [VitalsRect]) {
        self.regions = regions
        references = Array(repeating: nil, count: regions.count)
        reach.restart()
    }

    /// Measures the frame; returns the displacement, or nil when no region could be matched (too small, flat, or
    /// no reference yet). `travel`: the picture's displacement the glasses' IMU integrates to (px, any level;
    /// ``ProfileReach``), nil without an IMU.
    mutating func update(_ view: VitalsPixelView, travel: Double? = nil) -> Double? {
        let maxShift = maxShift, vertical = vertical
        let centre = reach.centre(travel: travel)
        let profiles = regions.map { ProfileMotion.matchableProfile(view, $0, vertical: vertical, maxShift: maxShift) }
        let onReferences = Self.summedMatch(profiles, against: references, centre: centre, maxShift: maxShift)
        // A region without a reference of its size (the first frame, or clamped differently) starts one.
        for i in regions.indices where references[i]?.count != profiles[i]?.count { references[i] = profiles[i] }
        let becomesReference = reach.settle(onReferences, profiles: profiles) { last, centre in
            Self.summedMatch(profiles, against: last, centre: centre, maxShift: maxShift)?.shift
        }
        guard let becomesReference else { return nil }
        if becomesReference { references = profiles }
        return displacement
    }

    /// The best shift of `profiles` against `references` (nil entries and mismatched sizes skipped), their mismatches
    /// summed at every shift about `centre`; nil when no region could be matched.
    private static func summedMatch(_ profiles: [[Double]?], against references: [[Double]?], centre: Int, maxShift: Int)
        -> ProfileMotion.Match?
    {
        var total = [Double](repeating: 0, count: 2 * maxShift + 1), variance = 0.0
        var matched = false
        for (profile, reference) in zip(profiles, references) {
            guard let profile, let reference, reference.count == profile.count,
                  let match = ProfileMotion.costs(of: profile, against: reference, maxShift: maxShift, centre: centre) else { continue }
            for k in total.indices { total[k] += match.costs[k] }
            variance += match.variance
            matched = true
        }
        return matched ? ProfileMotion.bestShift(total, variance: variance, maxShift: maxShift, centre: centre) : nil
    }
}
