import Foundation

// The glasses' IMU: its rotation, on the video's clock, as more signals the colour's motion echo is fitted to, and
// the spans of strong back-and-forth rotation (a nod), which the colour traces leave out.
extension VitalsEngine {
    /// How much of the IMU's past the engine keeps and fits its clock over, seconds: the pulse's motion fit
    /// (``motionFitSpan``, 30 s) plus the pulse window's slack.
    static let motionSensorWindow = 40.0
    /// Pixels the picture moves per radian of rotation, taken until the clocks are related (and with them the gains
    /// measured): 0.6 frame widths of 504 px, a wide camera's focal length. It only sets the level below which a
    /// signal counts as still (``motionCoupling(_:motion:rate:low:high:)``); the fit finds the real coupling.
    static let nominalPixelsPerRadian = 300.0
    /// A rotation faster than this (rad/s, both axes together) can be strong motion: about 6°/s, or 30 px/s on a
    /// 504 px frame, where the face's skin regions start to lag the face.
    static let strongRotation = 0.1
    /// ... and only when faster than this many times the window's median rate: a wearer who walks rotates all the time,
    /// and what is left out is what stands out (a nod, a turn).
    static let strongRotationRatio = 3.0
    /// Seconds left out either side of strong rotation: the skin regions catch up and the codec settles.
    static let strongRotationMargin = 0.2
    /// At most this share of a window is left out; a window that moves more throughout keeps all of it (its motion is
    /// the norm there, and the fit takes its echo out).
    static let strongRotationShare = 0.4

    /// The least pulse-band motion (band-passed σ of the IMU's displacement, px) whose lines make a rate on them
    /// doubtful (``PulseDoubt/motionRhythm``): a walk's step moves the picture by several pixels, a standing wearer's
    /// sway by one or two, which the fit takes out.
    static let rhythmicMotion = 3.0
    /// The share of the skin's power at a rate on the wearer's rhythm that the motion's fit must have left for the
    /// rate to stay (``onMotionRhythm(_:echoLeft:)``): a quarter. At a half (``echoShare``, until 7 December), a
    /// walking subject whose pulse (111.6 bpm) lies on the step's line was never stable, where the engine without the
    /// IMU and with this quarter reads it within 3 bpm; no other moving condition changed (docs/VITALS-ENGINE.md).
    static let rhythmEchoShare = 0.25

    /// Whether a pulse at `frequency` (Hz) is in doubt as the wearer's own rhythm: it sits on a line of the rotation
    /// (``sensorLines``, within the pulse line's own half width) while the rotation moves the picture by at least
    /// ``rhythmicMotion``, and the motion's fit took out more than three quarters of the skin's power there
    /// (`echoLeft`, the share it left, from ``echoLeft(_:at:rate:)``, below ``rhythmEchoShare``): the colour there was
    /// the motion's echo. A pulse that merely shares the step's rate keeps much of its power through the fit, and
    /// stays.
    func onMotionRhythm(_ frequency: Double, echoLeft: @autoclosure () -> Double) -> Bool {
        guard sensorMotionLevel >= Self.rhythmicMotion else { return false }
        let reach = Self.pulseLineHalfWidth(at: frequency)
        guard sensorLines.lines.contains(where: { abs($0 - frequency) <= reach }) else { return false }
        return echoLeft() < Self.rhythmEchoShare
    }

    /// Adds one gyroscope reading from the glasses' IMU: `seconds` on the IMU's own clock (DAT's
    /// `MotionSample.timestampNs` / 1e9, shifted by a constant so that it lies within half a second of the frames'
    /// timestamps), and the rotation rates (rad/s) about the axis whose rotation moves the picture across and about
    /// the one that moves it down (DAT glasses: the gyroscope's X and Y; see ``MotionClockAlignment``). Readings come
    /// in time order; non-finite ones are ignored.
    ///
    /// With readings, the colour the pulse is read from changes in two ways (`docs/VITALS-ENGINE.md`, *The wearer's
    /// own motion*): the spans in which the head nods (back and forth) much faster than it moves otherwise are left
    /// out (below the nod's rhythm only where they hold a much stronger echo than the rest of the window), and what
    /// the rotation (its angle and rate) explains of the skin's colour, where it explains more than chance would, is
    /// taken out with what the picture's own motion explains. The engine relates the IMU's clock to
    /// the video's from the background's motion (``motionSensorAlignment``), and until it has, reads the IMU at the
    /// frames' own times. An engine never given a reading behaves exactly as before.
    public func addRotationRate(at seconds: Double, across: Double, down: Double) {
        if motionSensor == nil { motionSensor = MotionClockAlignment(window: Self.motionSensorWindow) }
        motionSensor?.addRotationRate(at: seconds, across: across, down: down)
    }

    /// The IMU's clock against the video's as the engine uses it (the last trusted estimate); nil before one.
    public var motionSensorAlignment: MotionClockAlignment.Estimate? { motionEstimate }

    /// Whether the engine has had gyroscope readings (``addRotationRate(at:across:down:)``).
    public var hasMotionSensor: Bool { motionSensor != nil }

    /// Estimates the clock offset again: every 2 s until the first trusted estimate, then every 10 s; a failed
    /// estimate keeps the last trusted one (a still head says nothing new about the clocks).
    func refreshMotionEstimate(at t: Double) {
        guard let sensor = motionSensor else { return }
        guard t - lastMotionEstimate >= (motionEstimate == nil ? 2 : 10) else { return }
        lastMotionEstimate = t
        if let estimate = sensor.estimate() { motionEstimate = estimate }
    }

    /// Moves ``sensorTravel`` on by how far the IMU says the picture moved from the frame at `previous` to the one at
    /// `t` (px; content moving right and down positive): the rotation between the frames' times times the gains the
    /// clock estimate measured. The profile searches are centred where it says the content went (``ProfileReach``).
    /// Nothing before a trusted estimate (until then neither the sign nor the size of the coupling is known); the
    /// travel holds across a gap longer than ``predictionGap`` and where the readings do not cover the span.
    func advanceSensorTravel(from previous: Double?, to t: Double) {
        guard let sensor = motionSensor, let estimate = motionEstimate else { return }
        var travel = sensorTravel ?? (0, 0)
        if let previous, t - previous <= Self.predictionGap,
           let rotation = sensor.rotation(from: previous, to: t, offset: estimate.offset) {
            travel.x += rotation.across * estimate.pixelsPerRadianAcross
            travel.y += rotation.down * estimate.pixelsPerRadianDown
        }
        sensorTravel = travel
    }

    /// The longest time between two frames across which the IMU predicts the picture's motion, seconds.
    static let predictionGap = 0.5

    /// The IMU on the colour trace's grid: the camera's displacement and its rate (px and px/s; across, down), and
    /// which grid points lie in strong rotation (see ``strongRotation``); nil without an IMU or where its readings do
    /// not cover the span.
    func motionSensorTrace(from start: Double, rate fs: Double, count: Int) -> (signals: [[Double]], strong: [Bool])? {
        guard let sensor = motionSensor else { return nil }
        let offset = motionEstimate?.offset ?? 0
        guard let rotation = sensor.rotation(from: start, rate: fs, count: count, offset: offset) else { return nil }
        let across = motionEstimate?.pixelsPerRadianAcross ?? Self.nominalPixelsPerRadian
        let down = motionEstimate?.pixelsPerRadianDown ?? Self.nominalPixelsPerRadian
        let signals = [rotation.angle.across.map { $0 * across }, rotation.angle.down.map { $0 * down },
                       rotation.rate.across.map { $0 * across }, rotation.rate.down.map { $0 * down }]
        return (signals, Self.strongRotation(across: rotation.rate.across, down: rotation.rate.down, rate: fs))
    }

    /// The grid points of strong rotation in the rates `across` and `down` (rad/s at `fs`), with
    /// ``strongRotationMargin`` either side, but for a sweep (``sweepShare``); none when they would be more than
    /// ``strongRotationShare`` of the grid.
    static func strongRotation(across: [Double], down: [Double], rate fs: Double) -> [Bool] {
        guard !across.isEmpty, across.count == down.count else { return [] }
        let speeds = zip(across, down).map { ($0 * $0 + $1 * $1).squareRoot() }
        let median = speeds.sorted()[speeds.count / 2]
        let threshold = max(strongRotation, strongRotationRatio * median)
        let margin = Int((strongRotationMargin * fs).rounded())
        var strong = [Bool](repeating: false, count: speeds.count)
        for (i, speed) in speeds.enumerated() where speed > threshold {
            for j in max(0, i - margin) ... min(speeds.count - 1, i + margin) { strong[j] = true }
        }
        // A span that turns one way (its net rotation at least half the way it went) is kept: a step of the
        // picture's position, which the fit's displacement signals take out whole.
        for span in markedRuns(strong) {
            let path = speeds[span].reduce(0, +)
            let net = (pow(across[span].reduce(0, +), 2) + pow(down[span].reduce(0, +), 2)).squareRoot()
            if path > 0, net >= sweepShare * path { for k in span { strong[k] = false } }
        }
        let share = Double(strong.filter { $0 }.count) / Double(speeds.count)
        return share > strongRotationShare ? [Bool](repeating: false, count: speeds.count) : strong
    }

    /// A span of strong rotation whose net rotation is at least this share of the rotation along its way is a sweep
    /// (a turn to someone else and back) and is not left out: a one-way turn puts a step into the picture's position
    /// and no rhythm into the pulse band, and the fit takes the step out. Back-and-forth rotation (a nod, at 1.3–2.2
    /// Hz in the pulse band) nets out near nothing and is left out.
    static let sweepShare = 0.5

    /// `x` with the points marked in `gaps` replaced by the straight line between the unmarked points either side (a
    /// gap at either end holds the nearest unmarked value); unchanged when the lengths differ or every point is marked.
    static func bridged(_ x: [Double], over gaps: [Bool]) -> [Double] {
        guard x.count == gaps.count, gaps.contains(false) else { return x }
        var out = x
        for gap in markedRuns(gaps) {
            let i = gap.lowerBound, j = gap.upperBound
            let before = i > 0 ? x[i - 1] : nil, after = j < x.count ? x[j] : nil
            for k in gap {
                switch (before, after) {
                case let (b?, a?): out[k] = b + (a - b) * Double(k - i + 1) / Double(j - i + 1)
                case let (b?, nil): out[k] = b
                case let (nil, a?): out[k] = a
                case (nil, nil): break
                }
            }
        }
        return out
    }

    /// `x` bridged over `gaps` (``bridged(_:over:)``) above `cutoff` Hz only: below it, what the bridge took out is
    /// put back (the difference low-passed), so a pulse well under a nod's rate keeps its beats through the nods.
    static func bridged(_ x: [Double], over gaps: [Bool], keepingBelow cutoff: Double, rate fs: Double) -> [Double] {
        let line = bridged(x, over: gaps)
        guard cutoff > 0, x.count == gaps.count, gaps.contains(true) else { return line }
        let taken = SignalMath.lowPass(zip(x, line).map { $0 - $1 }, sampleRate: fs, cutoff: cutoff)
        return zip(line, taken).map(+)
    }

    /// Below this share of the nod's rate (the rotation's strongest line in the pulse band) the spans of strong
    /// rotation are kept (``nodCutoff(_:rate:skin:gaps:)``): the nod's own line, 1.67 times the cutoff, passes the
    /// low-pass at under 2 % of its amplitude. A pulse under the cutoff (a slow one: the nods are at 78–132 bpm)
    /// then keeps its beats through the nods instead of the bridge's straight lines.
    static let nodKeptShare = 0.6
    /// ... but only while the spans hold, below the cutoff, at most this many times the power per sample that the rest
    /// of the window holds there: a pulse carries on through a nod at its own strength, while a nod that places the
    /// face's regions again puts a much stronger echo there (the moving benchmark's nodding subjects: 0.2–2 where
    /// the pulse is slow, 3–57 for the 107 bpm subject whose nods read a rate at half of it).
    static let nodSpanPower = 2.0

    /// The runs of consecutive `true` in `marks`, in order.
    static func markedRuns(_ marks: [Bool]) -> [Range<Int>] {
        var runs: [Range<Int>] = []
        var i = 0
        while i < marks.count {
            guard marks[i] else { i += 1; continue }
            var j = i
            while j < marks.count, marks[j] { j += 1 }
            runs.append(i ..< j)
            i = j
        }
        return runs
    }
}
