/// Finds how far an IMU's clock is from the video's, from the camera's own motion.
///
/// DAT documents the clock of its motion samples and not how it relates to the video frames' presentation times, so
/// before a gyroscope can say anything about a frame the two clocks have to be related. The picture itself measures
/// the camera's rotation: when the head turns, the background moves across the frame by about the focal length (in
/// pixels) times the angle. This sets the background's displacement, measured by the engine every frame while a face
/// is tracked (``VitalsFrameMeasurement/backgroundHorizontal`` and ``VitalsFrameMeasurement/background``), against
/// the rotation the gyroscope integrates to over the same spans, and takes the clock offset at which the rotation
/// explains the most of the picture's motion.
///
/// How, exactly: frames are paired with the first frame at least ``span`` later (a pair's displacement is a few
/// pixels even for slow turns, where consecutive frames differ by a pixel or none). For a trial offset `τ`, each
/// pair's rotation is the integrated rate between the pair's times plus `τ` on the IMU's clock (linear between
/// samples). On each axis the displacements are fitted to the rotations with a gain and an intercept; the score is
/// the variance both fits explain together (R²). Offsets are tried every 5 ms across ±``searchRange``, then every
/// 0.5 ms about the best. The sign and size of each gain are fitted, not assumed: Meta documents neither the IMU's
/// axes nor the camera's focal length, and the gain comes out as the camera's focal length in pixels (with the sign
/// of the axis convention).
///
/// An estimate is given only when it can be trusted: at least ``minimumPairs`` pairs within the IMU's coverage at
/// every trial offset, the picture moving (a displacement standard deviation of at least ``minimumMotion`` px), the
/// rotation explaining at least ``minimumFit`` of it, the best offset inside the range searched (not at its edge),
/// and no rival: another peak of the scores more than ``rivalSeparation`` away whose score is within ``rivalMargin``
/// of the best would make the answer a guess (periodic motion).
///
/// Memory is bounded: the last ``window`` seconds of frames and of samples are kept, and at most ``capacity`` of
/// each. Non-finite values are ignored; a time that goes backwards starts that series afresh (a new clock).
/// A plain value: feed it and ask it on one thread, or guard it.
public struct MotionClockAlignment: Sendable {
    /// A clock offset, with what supports it.
    public struct Estimate: Sendable, Hashable {
        /// The IMU's clock minus the video's, in seconds: an instant the video stamps `t`, the IMU stamps
        /// `t + offset`.
        public var offset: Double
        /// The share of the picture's motion (variance over the pairs, both axes) that the rotation explains at
        /// ``offset``, 0–1.
        public var fit: Double
        /// Pixels the picture moves across per radian of the rotation given as `across` (for a pinhole camera at the
        /// centre of rotation: the focal length in pixels, signed by the axes' conventions).
        public var pixelsPerRadianAcross: Double
        /// Pixels the picture moves down per radian of the rotation given as `down`.
        public var pixelsPerRadianDown: Double
        /// Frame pairs behind the fit, both axes.
        public var pairs: Int
    }

    /// How far either way the offset is looked for, seconds.
    public let searchRange: Double
    /// How much of the past is kept and fitted, seconds.
    public let window: Double
    /// A frame is paired with the first frame at least this much later (seconds), if it is within twice that.
    public static let span = 0.2
    /// Pairs needed for an estimate (both axes together).
    public static let minimumPairs = 40
    /// The least standard deviation of the pairs' displacements, px: below it the picture barely moved.
    public static let minimumMotion = 0.5
    /// The least share of the picture's motion the rotation must explain.
    public static let minimumFit = 0.5
    /// Peaks of the scores further than this from the best (seconds) are rivals.
    public static let rivalSeparation = 0.1
    /// A rival whose score is within this of the best's makes the estimate ambiguous.
    public static let rivalMargin = 0.05
    /// At most this many frames, and this many samples, are kept.
    public static let capacity = 8192

    private(set) var frames: [(t: Double, across: Double?, down: Double?)] = []
    private(set) var rates: [(t: Double, across: Double, down: Double)] = []

    /// Creates an empty alignment.
    /// - Parameters:
    ///   - searchRange: how far either way to look for the offset, seconds (clamped to 0.05…5).
    ///   - window: how much of the past to fit, seconds (clamped to 5…300).
    public init(searchRange: Double = 0.5, window: Double = 30) {
        self.searchRange = searchRange.isFinite ? min(max(searchRange, 0.05), 5) : 0.5
        self.window = window.isFinite ? min(max(window, 5), 300) : 30
    }

    /// Adds a frame's measured camera displacement (px, content moving right and down positive; nil on an axis the
    /// frame could not measure) at `t` seconds on the video's clock.
    public mutating func addFrame(at t: Double, across: Double?, down: Double?) {
        guard t.isFinite else { return }
        if let last = frames.last?.t, t <= last {
            guard t < last else { return }
            frames.removeAll()
        }
        let a = across.flatMap { $0.isFinite ? $0 : nil }, d = down.flatMap { $0.isFinite ? $0 : nil }
        frames.append((t, a, d))
        let stale = frames.prefix { $0.t < t - window }.count
        if stale > 0 || frames.count > Self.capacity { frames.removeFirst(max(stale, frames.count - Self.capacity)) }
    }

    /// Adds a gyroscope reading at `t` seconds on the IMU's clock: the rate (rad/s) about the axis whose rotation
    /// moves the picture across, and about the one that moves it down (for DAT glasses as the simulator models them,
    /// the gyroscope's X and Y).
    public mutating func addRotationRate(at t: Double, across: Double, down: Double) {
        guard t.isFinite, across.isFinite, down.isFinite else { return }
        if let last = rates.last?.t, t <= last {
            guard t < last else { return }
            rates.removeAll()
        }
        rates.append((t, across, down))
        let stale = rates.prefix { $0.t < t - window - searchRange }.count
        if stale > 0 || rates.count > Self.capacity { rates.removeFirst(max(stale, rates.count - Self.capacity)) }
    }

    /// The offset, or nil while there is too little, too still or too ambiguous a motion to tell (see the type's
    /// description for each condition).
    public func estimate() -> Estimate? {
        guard rates.count >= 2, let first = rates.first?.t, let last = rates.last?.t else { return nil }
        let angles = Self.integrate(rates)
        // Pairs whose both ends, moved by any trial offset, fall within the IMU's coverage.
        var pairs: [[(from: Double, to: Double, moved: Double)]] = [[], []]
        for axis in 0 ..< 2 {
            var j = 0
            for i in frames.indices {
                guard let start = Self.value(frames[i], axis) else { continue }
                let from = frames[i].t
                guard from - searchRange >= first else { continue }
                if j <= i { j = i + 1 }
                while j < frames.count, frames[j].t < from + Self.span { j += 1 }
                guard j < frames.count else { break }
                let to = frames[j].t
                guard to - from <= 2 * Self.span, to + searchRange <= last, let end = Self.value(frames[j], axis) else { continue }
                pairs[axis].append((from, to, end - start))
            }
        }
        let count = pairs[0].count + pairs[1].count
        guard count >= Self.minimumPairs else { return nil }
        let spread = Self.standardDeviation(pairs[0].map(\.moved) + pairs[1].map(\.moved))
        guard spread >= Self.minimumMotion else { return nil }

        func score(_ offset: Double) -> (fit: Double, gains: [Double]) {
            var explained = 0.0, total = 0.0
            var gains = [0.0, 0.0]
            for axis in 0 ..< 2 where !pairs[axis].isEmpty {
                var n = 0.0, sp = 0.0, sd = 0.0, spp = 0.0, sdd = 0.0, spd = 0.0
                for pair in pairs[axis] {
                    let p = Self.linear(angles, at: pair.to + offset, axis) - Self.linear(angles, at: pair.from + offset, axis)
                    let d = pair.moved
                    n += 1; sp += p; sd += d; spp += p * p; sdd += d * d; spd += p * d
                }
                let sxx = spp - sp * sp / n, syy = sdd - sd * sd / n, sxy = spd - sp * sd / n
                total += max(0, syy)
                if sxx > 0 {
                    explained += sxy * sxy / sxx
                    gains[axis] = sxy / sxx
                }
            }
            return (total > 0 ? min(1, explained / total) : 0, gains)
        }

        // Coarse, then fine about the best.
        let coarse = 0.005
        let steps = Int((searchRange / coarse).rounded(.down))
        var scores: [(offset: Double, fit: Double)] = []
        for k in -steps ... steps {
            let offset = Double(k) * coarse
            scores.append((offset, score(offset).fit))
        }
        guard let best = scores.max(by: { $0.fit < $1.fit }) else { return nil }
        guard abs(best.offset) < Double(steps) * coarse - coarse / 2 else { return nil }
        // Rivals are the other peaks (local maxima) of the scores, not the slopes of the best one's.
        let peaks = scores.indices.filter { k in
            (k == 0 || scores[k - 1].fit <= scores[k].fit) && (k == scores.count - 1 || scores[k + 1].fit <= scores[k].fit)
        }
        let rival = peaks.map { scores[$0] }.filter { abs($0.offset - best.offset) > Self.rivalSeparation }.map(\.fit).max() ?? 0
        guard rival < best.fit - Self.rivalMargin else { return nil }
        var refined = (offset: best.offset, fit: best.fit, gains: score(best.offset).gains)
        for k in -10 ... 10 where k != 0 {
            let offset = best.offset + Double(k) * coarse / 10
            let s = score(offset)
            if s.fit > refined.fit { refined = (offset, s.fit, s.gains) }
        }
        guard refined.fit >= Self.minimumFit else { return nil }
        return Estimate(offset: refined.offset, fit: refined.fit, pixelsPerRadianAcross: refined.gains[0],
                        pixelsPerRadianDown: refined.gains[1], pairs: count)
    }

    /// The rotation the gyroscope measured, at `count` instants on the video's clock from `start` every `1 / rate`
    /// seconds, read at each instant plus `offset` on the IMU's clock: the angle (rad) since the oldest sample kept
    /// and the rate (rad/s, linear between samples), across and down. An instant past either end of the samples takes
    /// the value at that end. Nil without two samples, or when the samples cover less than half the span asked. The
    /// angle's level is arbitrary (the same for every call until the oldest sample goes): what it is for is how it
    /// moves.
    public func rotation(from start: Double, rate: Double, count: Int, offset: Double)
        -> (angle: (across: [Double], down: [Double]), rate: (across: [Double], down: [Double]))?
    {
        guard rates.count >= 2, count > 0, rate > 0, rate.isFinite, start.isFinite, offset.isFinite,
              let first = rates.first?.t, let last = rates.last?.t else { return nil }
        let from = start + offset, to = from + Double(count - 1) / rate
        guard min(to, last) - max(from, first) >= (to - from) / 2 else { return nil }
        let angles = Self.integrate(rates)
        var angle = (across: [Double](repeating: 0, count: count), down: [Double](repeating: 0, count: count))
        var speed = angle
        for k in 0 ..< count {
            let t = min(max(from + Double(k) / rate, first), last)
            angle.across[k] = Self.linear(angles, at: t, 0)
            angle.down[k] = Self.linear(angles, at: t, 1)
            // The rate between the samples either side (the same search, on the rates themselves).
            speed.across[k] = Self.linear(rates, at: t, 0)
            speed.down[k] = Self.linear(rates, at: t, 1)
        }
        return (angle, speed)
    }

    /// The rotation the gyroscope measured between two instants on the video's clock, read at each plus `offset` on
    /// the IMU's clock (rad; across, down): the rates integrated, linear between samples and held beyond the last
    /// (the newest samples may not have arrived yet). Nil without two samples, for an empty or non-finite span, or
    /// when the samples cover less than half of it.
    public func rotation(from start: Double, to end: Double, offset: Double) -> (across: Double, down: Double)? {
        guard rates.count >= 2, start.isFinite, end.isFinite, offset.isFinite, end > start,
              let first = rates.first?.t, let last = rates.last?.t else { return nil }
        let a = start + offset, b = end + offset
        guard min(b, last) - max(a, first) >= (b - a) / 2 else { return nil }
        var across = 0.0, down = 0.0
        var t = a, rate = (Self.linear(rates, at: a, 0), Self.linear(rates, at: a, 1))
        func step(to next: Double) {
            let r = (Self.linear(rates, at: next, 0), Self.linear(rates, at: next, 1))
            across += (next - t) * (rate.0 + r.0) / 2
            down += (next - t) * (rate.1 + r.1) / 2
            t = next
            rate = r
        }
        // The samples strictly inside the span, found by bisection.
        var low = 0, high = rates.count
        while low < high {
            let mid = (low + high) / 2
            if rates[mid].t <= a { low = mid + 1 } else { high = mid }
        }
        var k = low
        while k < rates.count, rates[k].t < b {
            step(to: rates[k].t)
            k += 1
        }
        step(to: b)
        return (across, down)
    }

    // MARK: - Arithmetic

    private static func value(_ frame: (t: Double, across: Double?, down: Double?), _ axis: Int) -> Double? {
        axis == 0 ? frame.across : frame.down
    }

    /// The rotation integrated from the first sample (trapezoids), at each sample's time.
    private static func integrate(_ rates: [(t: Double, across: Double, down: Double)]) -> [(t: Double, across: Double, down: Double)] {
        var out = [(t: rates[0].t, across: 0.0, down: 0.0)]
        out.reserveCapacity(rates.count)
        for k in 1 ..< rates.count {
            let dt = rates[k].t - rates[k - 1].t, previous = out[k - 1]
            out.append((rates[k].t, previous.across + dt * (rates[k].across + rates[k - 1].across) / 2,
                        previous.down + dt * (rates[k].down + rates[k - 1].down) / 2))
        }
        return out
    }

    /// A series' value at `t` on one axis (the integrated rotation, or the rate), linear between samples (`t` within
    /// the samples' span).
    private static func linear(_ series: [(t: Double, across: Double, down: Double)], at t: Double, _ axis: Int) -> Double {
        var low = 0, high = series.count - 1
        while high - low > 1 {
            let mid = (low + high) / 2
            if series[mid].t <= t { low = mid } else { high = mid }
        }
        let a = series[low], b = series[high]
        let w = b.t > a.t ? min(1, max(0, (t - a.t) / (b.t - a.t))) : 0
        return axis == 0 ? a.across + w * (b.across - a.across) : a.down + w * (b.down - a.down)
    }

    private static func standardDeviation(_ values: [Double]) -> Double {
        guard values.count > 1 else { return 0 }
        let mean = values.reduce(0, +) / Double(values.count)
        return (values.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(values.count - 1)).squareRoot()
    }
}
