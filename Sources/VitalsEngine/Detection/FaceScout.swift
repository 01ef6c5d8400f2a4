/// The search for a face while none is tracked, on a budget: what glasses mostly see is no face at all, so the cost
/// of looking must be bounded per frame and spread over frames, while a face that enters the view is still found
/// quickly (docs/VITALS-ENGINE.md, *Looking for a face where there is none*).
///
/// The search is a scale pyramid over the frame's luma, cut into jobs: one band of rows of one pyramid level each
/// (at most ``bandWindows`` windows), and the skin-colour fallback. A *cycle* runs every job once: each job falls due
/// at a time in proportion to the work before it, so the cycle's work is spread evenly over ``cycleSeconds``, and a
/// frame runs the jobs due before the next frame would come. Every job reads the frame it runs on, never an older
/// one, so a face that is in view from time t is in every window evaluated after t: with each window evaluated once
/// per cycle, it is found at most one cycle (and a frame) after it entered.
///
/// Two lanes: the *measurable* lane looks for faces the engine can measure (at least
/// ``VitalsEngineConfiguration/minimumFaceFraction`` of the frame's shorter side, 48 px at 504×896) in every cycle;
/// the *too-far* lane (faces from two thirds of that, reported `faceTooFar`) after it: whole in the first cycle, then
/// a ``tooFarEvery``-th of its bands in each cycle, so that it is searched in full every ``tooFarEvery`` cycles (about
/// 5 s) without making any cycle dearer than the others.
///
/// Nothing is searched where nothing changed: the frame is cut into tiles (12 px of the measurable lane's level 0,
/// about 24 px at 504×896) whose mean luma is compared with the tile's when each pyramid level last scanned it; a
/// window whose tiles all moved by less than ``changeThreshold`` is not evaluated (its verdict could not have
/// changed), and the raw hits such windows had are kept. A still view (a page, a screen) then costs next to nothing
/// after its first cycle; a moving one is searched in full. A window whose luma is nearly flat (standard deviation
/// under ``minimumDeviation``) is rejected before the cascade's first stage. Each band is searched coarse to fine:
/// the windows on a grid of step 4 first, those between (step 2) only next to one that passed ``refineDepth`` of
/// the cascade's stages (a face makes its neighbours pass the first stages; most of a textured view's windows fall at
/// the first ones).
///
/// Raw hits are kept per level from its latest scan and grouped, lane by lane, after every frame that changed them
/// (OpenCV's rule, as ``FaceDetector`` groups one search), so hits on one face from neighbouring levels, scanned on
/// neighbouring frames, make one detection. No I/O and no clock of its own: the engine calls
/// ``step(_:at:detector:frameRate:minimumFaceFraction:)`` once per frame with the frame's time.
struct FaceScout {
    /// Seconds a cycle is spread over: a face in view is found within this and a frame (0.5 s at 24 fps).
    static let cycleSeconds = 0.42
    /// The too-far lane is searched in full every this many cycles (about every 5 s), a slice in each. (Every sixth
    /// cycle, whole, it cost 10 % of the no-face search's windows and 16 % of its pixels, and made those cycles'
    /// frames twice as dear.)
    static let tooFarEvery = 12
    /// Most windows one job evaluates (a band of rows of one level).
    static let bandWindows = 8_000
    /// A tile's mean luma must move by at least this (0–255) for its windows to be evaluated again.
    static let changeThreshold: Float = 4
    /// The scale step between pyramid levels: the search detector's 1.1. (1.15, the strict detector's, did a third
    /// less work and missed real faces of 64–92 px that 1.1 finds, in FaceSearchBudgetTests.)
    static let pyramidStep = 1.1
    /// Coarse to fine: the windows between those of a grid twice as coarse (step 4) are evaluated only next to one
    /// that passed this many of the cascade's 25 stages
    /// (``FaceDetector/scan(step:workspace:minimumDeviation:mask:refineDepth:hit:)``). 4 finds every face of
    /// FaceSearchBudgetTests as fast as evaluating every window; 5 and 6 missed a 69 px face at 720×1280.
    static let refineDepth = 4
    /// Windows with a luma standard deviation below this are rejected before the cascade (0–255).
    static let minimumDeviation = 5.0
    /// The cascade's window, in pixels of a level: the measurable lane's level 0 is the frame shrunk until the
    /// smallest face the engine measures is one window wide.
    static let windowSize = 24

    /// A face from the grouped raw hits, in frame pixels, with the raw windows that voted for it.
    struct Found: Equatable {
        var rect: VitalsRect
        var votes: Int
    }

    /// What one frame's share of the search found.
    enum Outcome: Equatable {
        /// Nothing new to report.
        case nothing
        /// Faces from the grouped raw hits, largest first. `fresh` tells whether every hit behind the largest was
        /// made on this very frame (its box is where the face is now).
        case faces([Found], fresh: Bool)
        /// No face from the cascade in the cycle so far, but the skin-colour fallback found a face-shaped blob on
        /// this frame.
        case skin(VitalsRect)
    }

    /// One level of the pyramid: how many frame pixels one of its pixels covers, its size and window step.
    struct Level: Equatable {
        var factor: Double
        var width: Int
        var height: Int
        var step: Int
        /// The too-far lane's levels are searched only in some cycles.
        var tooFar: Bool
        /// The face width (frame pixels) one window at this level is.
        var faceSize: Int
    }

    /// A unit of work: a band of rows (window origins `rows`) of one level, or the skin-colour fallback.
    enum Job: Equatable {
        case band(level: Int, rows: Range<Int>)
        case skin
    }

    /// Work done on the last frame, for tests and benchmarks: windows decided (after the change test; evaluated by
    /// the cascade or, coarse to fine, taken as rejected) and level pixels built.
    private(set) var lastFrameWindows = 0
    private(set) var lastFramePixels = 0

    private(set) var levels: [Level] = []
    /// The widest level's width: the integral images' row length.
    private var widestLevel = 0
    private var frameWidth = 0, frameHeight = 0
    private var tileSize = 1, tilesAcross = 0, tilesDown = 0
    /// Per level, each tile's mean luma when the level last scanned it (nan: never).
    private var reference: [[Float]] = []
    /// The tiles' mean luma when the skin fallback last ran (nan: never).
    private var skinReference: [Float] = []
    /// Per level, the corners of the windows that passed every stage in its latest scan (level pixels), with the
    /// frame they were made on.
    private var hits: [[(x: Int, y: Int, frame: Int)]] = []
    /// Per level: the tiles that had changed when its current scan began (they are taken as scanned at its end).
    private var changedAtLevelStart: [[Bool]] = []
    private var tileMeansAtLevelStart: [[Float]] = []
    private var workspace = FaceDetector.Workspace()
    /// Per level, the frame columns its pixels average (``levelColumns(_:frameWidth:)``).
    private var columns: [[Int32]] = []
    /// The cycle's jobs still to run, each with the time it falls due.
    private var queue: [(job: Job, due: Double)] = []
    private var cycle = 0
    /// The too-far lane's next band (an index into its bands in order), moved on only when a band has run: bands
    /// dropped with a cycle's queue after a stall are run in the next cycle, so no pass over a level skips one.
    private var tooFarNext = 0
    private var cycleStart = -Double.infinity
    private var frame = 0
    /// Whether the cycle under way has found any face (the skin fallback runs only when it has not).
    private var cycleFoundFace = false

    /// Starts afresh: everything counts as changed, no hits are kept (after a face is adopted or lost).
    mutating func reset() {
        for i in reference.indices { reference[i] = [Float](repeating: .nan, count: reference[i].count) }
        skinReference = [Float](repeating: .nan, count: skinReference.count)
        for i in hits.indices { hits[i] = [] }
        queue = []
        cycle = 0
        tooFarNext = 0
        cycleStart = -Double.infinity
        cycleFoundFace = false
    }

    /// Lays the pyramid out for a frame size: the measurable lane from the smallest face the engine measures, the
    /// too-far lane from two thirds of it; every level scale-factor apart, down to the window size.
    mutating func configure(width: Int, height: Int, minimumFaceFraction: Double, scaleFactor: Double) {
        guard width != frameWidth || height != frameHeight else { return }
        frameWidth = width
        frameHeight = height
        let shorter = Double(min(width, height))
        let window = Double(Self.windowSize)
        let measurable = max(1, shorter * minimumFaceFraction / window)
        let tooFar = measurable * 2 / 3
        var levels: [Level] = []
        func add(from base: Double, upTo limit: Double?, tooFar: Bool) {
            var factor = base
            while true {
                let w = Int(Double(width) / factor), h = Int(Double(height) / factor)
                if w < Self.windowSize || h < Self.windowSize { break }
                if let limit, factor >= limit { break }
                levels.append(Level(factor: factor, width: w, height: h, step: 2, tooFar: tooFar,
                                    faceSize: Int((window * factor).rounded())))
                factor *= scaleFactor
            }
        }
        add(from: measurable, upTo: nil, tooFar: false)
        if tooFar >= 1 { add(from: tooFar, upTo: measurable, tooFar: true) }
        self.levels = levels
        widestLevel = levels.map(\.width).max() ?? 0
        tileSize = max(8, Int((12 * measurable).rounded()))
        tilesAcross = (width + tileSize - 1) / tileSize
        tilesDown = (height + tileSize - 1) / tileSize
        let tiles = tilesAcross * tilesDown
        reference = levels.map { _ in [Float](repeating: .nan, count: tiles) }
        changedAtLevelStart = levels.map { _ in [] }
        tileMeansAtLevelStart = levels.map { _ in [] }
        skinReference = [Float](repeating: .nan, count: tiles)
        hits = levels.map { _ in [] }
        columns = levels.map { Self.levelColumns($0, frameWidth: width) }
        workspace = FaceDetector.Workspace()
        reset()
    }

    /// One frame's share of the search.
    /// - Parameters:
    ///   - t: the frame's time, seconds (increasing).
    ///   - frameRate: the stream's recent frame rate (how far ahead the next frame is).
    ///   - minimumFaceFraction: the engine's smallest measurable face, as a fraction of the frame's shorter side.
    mutating func step(_ view: VitalsPixelView, at t: Double, detector: FaceDetector, frameRate: Double,
                       minimumFaceFraction: Double) -> Outcome {
        configure(width: view.width, height: view.height, minimumFaceFraction: minimumFaceFraction,
                  scaleFactor: Self.pyramidStep)
        frame += 1
        lastFrameWindows = 0
        lastFramePixels = 0
        let rate = frameRate.isFinite && frameRate > 0 ? frameRate : 30
        // A frame runs the jobs that fall due before the next one would (half a frame on); a cycle starts once the
        // last one's time is up, so every job runs once every ``cycleSeconds``, however cheap the last run was.
        let horizon = t + 0.5 / rate
        // After a gap in the frames (a stall) the rest of a cycle is not run in one burst: a new one starts.
        if !queue.isEmpty, t > cycleStart + 2 * Self.cycleSeconds { queue = [] }
        if queue.isEmpty {
            guard horizon >= cycleStart + Self.cycleSeconds else { return .nothing }
            startCycle(at: max(t, cycleStart + Self.cycleSeconds))
        }
        let means = tileMeans(view)
        var hitsChanged = false
        var skinFound: VitalsRect?
        while let (job, due) = queue.first, due <= horizon {
            queue.removeFirst()
            switch job {
            case .band(let level, let rows):
                if levels[level].tooFar { tooFarNext += 1 }
                scanBand(level: level, rows: rows, view: view, means: means, detector: detector, changed: &hitsChanged)
            case .skin:
                if !cycleFoundFace, skinChanged(means) {
                    skinReference = means
                    skinFound = SkinFaceFinder(step: max(2, min(view.width, view.height) / 128)).find(in: view)
                }
            }
        }
        if hitsChanged || cycleFoundFace {
            let faces = grouped(detector: detector)
            if let largest = faces.first {
                cycleFoundFace = true
                return .faces(faces.map { Found(rect: $0.rect, votes: $0.votes) },
                              fresh: largest.frames.allSatisfy { $0 == frame })
            }
        }
        if let skinFound { return .skin(skinFound) }
        return .nothing
    }

    /// Forgets the raw hits inside `rect` (frame pixels): a face there was looked at and not confirmed.
    mutating func forget(_ rect: VitalsRect) {
        for (i, level) in levels.enumerated() {
            hits[i].removeAll { h in
                let r = Self.frameRect(h.x, h.y, level)
                return VitalsEngine.overlap(r, rect) > 0.5
            }
        }
        cycleFoundFace = false
    }

    // MARK: - The cycle

    /// Lays out a cycle starting at `t`: every job, larger faces first (the small levels are cheap and a near face
    /// is found on the first frames), then down the pyramid, each level's bands from the top, the too-far lane last,
    /// due in proportion to the work before it, so that the work is spread evenly over ``cycleSeconds``.
    private mutating func startCycle(at t: Double) {
        cycleStart = t
        var jobs: [Job] = []
        var tooFarJobs: [Job] = []
        // The measurable lane first (its levels come first in ``levels``), then the too-far lane: a face just over
        // the measurable size is found at its size before the too-far lane's smaller windows find it too small.
        let order = levels.indices.filter { !levels[$0].tooFar }.reversed() + levels.indices.filter { levels[$0].tooFar }.reversed()
        for i in order {
            let level = levels[i]
            let origins = (level.height - Self.windowSize) / level.step + 1
            let perRow = (level.width - Self.windowSize) / level.step + 1
            guard origins > 0, perRow > 0 else { continue }
            let rowsPerBand = max(1, Self.bandWindows / perRow)
            var row = 0
            while row < origins {
                let end = min(origins, row + rowsPerBand)
                let job = Job.band(level: i, rows: (row * level.step) ..< (end * level.step))
                if level.tooFar { tooFarJobs.append(job) } else { jobs.append(job) }
                row = end
            }
        }
        // The too-far lane: whole in the first cycle (after a start or a reset), then its next bands, a
        // tooFarEvery-th of them, in each cycle, so that it is searched in full every ``tooFarEvery`` cycles at an even
        // cost. In order matters: a level's pass begins at its first band, which notes the tiles changed since the
        // level's last pass, and ends at its last, which marks them scanned; every band between must run.
        let count = tooFarJobs.count
        if tooFarNext >= count { tooFarNext = 0 }
        if cycle == 0 {
            jobs += tooFarJobs[tooFarNext...]
        } else if count > 0 {
            // Up to the next of the pass's tooFarEvery boundaries (band ⌈k × count / tooFarEvery⌉) after the next band.
            let k = tooFarNext * Self.tooFarEvery / count + 1
            jobs += tooFarJobs[tooFarNext ..< min(count, (k * count + Self.tooFarEvery - 1) / Self.tooFarEvery)]
        }
        jobs.append(.skin)
        let total = Double(max(1, jobs.reduce(0) { $0 + jobWork($1) }))
        var before = 0
        queue = jobs.map { job in
            defer { before += jobWork(job) }
            return (job, t + Self.cycleSeconds * Double(before) / total)
        }
        cycle += 1
        cycleFoundFace = false
    }

    /// A job's work at most, in window evaluations: a band's windows and pixels (building the level image and its
    /// integral image costs about a window evaluation per two pixels); the skin fallback's samples.
    private func jobWork(_ job: Job) -> Int {
        switch job {
        case .band(let index, let rows):
            let level = levels[index]
            let perRow = (level.width - Self.windowSize) / level.step + 1
            let origins = rows.count / level.step
            return origins * perRow + (rows.count + Self.windowSize) * level.width / 2
        case .skin:
            let step = max(2, min(frameWidth, frameHeight) / 128)
            return (frameWidth / step) * (frameHeight / step)
        }
    }

    /// Scans one band of one level on this frame: windows over changed tiles only. Returns the work done.
    @discardableResult
    private mutating func scanBand(level index: Int, rows: Range<Int>, view: VitalsPixelView, means: [Float],
                                   detector: FaceDetector, changed hitsChanged: inout Bool) -> Int {
        let level = levels[index]
        let tiles = tilesAcross * tilesDown
        // The tiles changed since this level last scanned them: fixed at the level's first band (and taken as
        // scanned at its end), plus any that changed since, for this band alone.
        if rows.lowerBound == 0 || changedAtLevelStart[index].count != tiles {
            changedAtLevelStart[index] = (0 ..< tiles).map { Self.differs(means[$0], reference[index][$0]) }
            tileMeansAtLevelStart[index] = means
        }
        var changed = changedAtLevelStart[index]
        for t in 0 ..< tiles where !changed[t] && Self.differs(means[t], reference[index][t]) { changed[t] = true }
        let anyChanged = changed.contains(true)
        let lastOrigin = (level.height - Self.windowSize) / level.step * level.step
        let lastBand = rows.upperBound > lastOrigin
        defer {
            if lastBand {
                // Every window over the level-start changes has been evaluated: those tiles are up to date.
                for t in 0 ..< tiles where changedAtLevelStart[index][t] { reference[index][t] = tileMeansAtLevelStart[index][t] }
            }
        }
        guard anyChanged else { return 0 }
        let everything = !changed.contains(false)
        let window = Self.windowSize
        let factor = level.factor
        let top = rows.lowerBound
        let bandRows = min(level.height, rows.upperBound - 1 + window) - top
        guard bandRows >= window else { return 0 }
        // Which windows to evaluate: those covering a changed tile (the tiles each covers, from its exact corners).
        var mask: FaceDetector.WindowMask?
        if !everything {
            let across = tilesAcross, down = tilesDown, tileSize = self.tileSize
            var summed = [Int32](repeating: 0, count: (across + 1) * (down + 1))
            for ty in 0 ..< down {
                var run: Int32 = 0
                for tx in 0 ..< across {
                    run += changed[ty * across + tx] ? 1 : 0
                    summed[(ty + 1) * (across + 1) + tx + 1] = summed[ty * (across + 1) + tx + 1] + run
                }
            }
            func tile(_ p: Int, _ count: Int) -> Int32 { Int32(min(count - 1, Int(Double(p) * factor) / tileSize)) }
            let firstColumn = (0 ..< level.width).map { tile($0, across) }
            let lastColumn = (0 ..< level.width).map { tile($0 + window, across) }
            let firstRow = (0 ..< bandRows).map { tile(top + $0, down) }
            let lastRow = (0 ..< bandRows).map { tile(top + $0 + window, down) }
            // Nothing to evaluate when no tile under the band's windows changed.
            let y0 = Int(firstRow[0]), y1 = Int(lastRow[bandRows - window]) + 1
            let stride = across + 1
            guard summed[y1 * stride + across] - summed[y0 * stride + across] > 0 else { return 0 }
            mask = FaceDetector.WindowMask(changes: summed, stride: stride, firstColumn: firstColumn, lastColumn: lastColumn,
                                           firstRow: firstRow, lastRow: lastRow)
        }
        // The band's rows of the level, read from this frame straight into the integral images.
        // Laid out once for the widest level: preparing for each wider level in turn re-packed the cascade's
        // stumps up to once a level in the first cycle.
        workspace.prepare(for: detector, width: widestLevel, height: bandRows)
        let columns = self.columns[index]
        withUnsafeTemporaryAllocation(of: UInt16.self, capacity: max(1, view.width)) { pairs in
            workspace.integrate(width: level.width, height: bandRows) { r, out in
                Self.levelRow(view, level: level, columns: columns, row: top + r, pairs: pairs.baseAddress!, into: out)
            }
        }
        lastFramePixels += level.width * bandRows
        var found: [(x: Int, y: Int, frame: Int)] = []
        let frame = frame
        let evaluated = detector.scan(step: level.step, workspace: workspace, minimumDeviation: Self.minimumDeviation,
                                      mask: mask, refineDepth: Self.refineDepth) { x, y in found.append((x, top + y, frame)) }
        lastFrameWindows += evaluated
        func wasEvaluated(_ x: Int, _ y: Int) -> Bool {
            guard let m = mask else { return true }
            let t = Int(m.firstRow[y - top]) * m.stride, b = (Int(m.lastRow[y - top]) + 1) * m.stride
            let l = Int(m.firstColumn[x]), r = Int(m.lastColumn[x]) + 1
            return m.changes[b + r] - m.changes[t + r] - m.changes[b + l] + m.changes[t + l] > 0
        }
        // The hits of this band's evaluated windows are replaced; those of windows not evaluated stand.
        let before = hits[index].count
        hits[index].removeAll { h in rows.contains(h.y) && wasEvaluated(h.x, h.y) }
        if before != hits[index].count || !found.isEmpty { hitsChanged = true }
        hits[index] += found
        return evaluated + level.width * bandRows / 2
    }

    private func skinChanged(_ means: [Float]) -> Bool {
        zip(means, skinReference).contains { Self.differs($0, $1) }
    }

    private static func differs(_ now: Float, _ then: Float) -> Bool {
        then.isNaN || abs(now - then) >= changeThreshold
    }

    // MARK: - Grouping

    /// The faces the kept hits make, largest first, with the frames of the hits behind each. Each lane is grouped on
    /// its own and a too-far face counts only where no measurable one is: grouped together, the too-far lane's
    /// smaller windows on a face just over the measurable size pulled its box under it (50 px faces of the
    /// real-photograph benchmark came out 47 px wide, `faceTooFar`).
    private func grouped(detector: FaceDetector) -> [(rect: VitalsRect, votes: Int, frames: [Int])] {
        var faces: [(rect: VitalsRect, votes: Int, frames: [Int])] = []
        for tooFar in [false, true] {
            var rects: [VitalsRect] = []
            var frames: [Int] = []
            for (i, level) in levels.enumerated() where level.tooFar == tooFar {
                for h in hits[i] {
                    rects.append(Self.frameRect(h.x, h.y, level))
                    frames.append(h.frame)
                }
            }
            for face in FaceDetector.group(rects, minNeighbors: detector.minNeighbors)
            where !faces.contains(where: { VitalsEngine.overlap($0.rect, face.rect) > 0.2 }) {
                // The frames of the hits behind this face: those its group's rule would have joined to it.
                let delta = 0.2 * Double(face.rect.width)
                let used = zip(rects, frames).filter { r, _ in
                    Double(abs(r.x - face.rect.x)) <= delta && Double(abs(r.y - face.rect.y)) <= delta
                        && Double(abs(r.width - face.rect.width)) <= delta
                }.map(\.1)
                faces.append((face.rect, face.neighbors, used))
            }
        }
        guard let largest = faces.map(\.rect.width).max() else { return [] }
        // A face much smaller than the largest does not compete for the measurement (the engine's rival rule).
        let least = Double(largest) * VitalsEngine.rivalFaceFraction
        return faces.filter { Double($0.rect.width) >= least }.sorted { $0.rect.width * $0.rect.height > $1.rect.width * $1.rect.height }
    }

    static func frameRect(_ x: Int, _ y: Int, _ level: Level) -> VitalsRect {
        let f = level.factor
        return VitalsRect(x: Int((Double(x) * f).rounded()), y: Int((Double(y) * f).rounded()),
                          width: level.faceSize, height: level.faceSize)
    }


    // MARK: - Pixels

    /// Mean luma of every tile, from 4×4 samples each.
    private func tileMeans(_ view: VitalsPixelView) -> [Float] {
        var means = [Float](repeating: 0, count: tilesAcross * tilesDown)
        for ty in 0 ..< tilesDown {
            let y0 = ty * tileSize, h = min(tileSize, view.height - y0)
            for tx in 0 ..< tilesAcross {
                let x0 = tx * tileSize, w = min(tileSize, view.width - x0)
                var sum = 0
                for j in 0 ..< 4 {
                    let y = y0 + (2 * j + 1) * h / 8
                    for i in 0 ..< 4 { sum += view.luma(x0 + (2 * i + 1) * w / 8, y) }
                }
                means[ty * tilesAcross + tx] = Float(sum) / 16
            }
        }
        return means
    }

    /// Which frame columns each pixel of a level averages (two per pixel, inside the frame area it covers).
    static func levelColumns(_ level: Level, frameWidth: Int) -> [Int32] {
        let f = level.factor
        var columns = [Int32](repeating: 0, count: 2 * level.width)
        for x in 0 ..< level.width {
            columns[2 * x] = Int32(min(frameWidth - 1, Int((Double(x) + 0.25) * f)))
            columns[2 * x + 1] = Int32(min(frameWidth - 1, Int((Double(x) + 0.75) * f)))
        }
        return columns
    }

    /// Row `y` of a level, read from the frame into `out` (the level's width): each pixel the mean of 2×2 samples
    /// inside the frame area it covers (columns from ``levelColumns(_:frameWidth:)``). `pairs` holds at least the
    /// frame's width: for NV12 the two frame rows are summed into it once, column by column, so that a pixel takes
    /// two reads instead of four (the same sums).
    static func levelRow(_ view: VitalsPixelView, level: Level, columns: [Int32], row y: Int,
                         pairs: UnsafeMutablePointer<UInt16>, into out: UnsafeMutablePointer<UInt8>) {
        let f = level.factor, w = level.width
        let y0 = min(view.height - 1, Int((Double(y) + 0.25) * f)), y1 = min(view.height - 1, Int((Double(y) + 0.75) * f))
        columns.withUnsafeBufferPointer { c in
            if view.format == .bgra {
                for x in 0 ..< w {
                    let i = Int(c[2 * x]), j = Int(c[2 * x + 1])
                    let s = view.luma(i, y0) + view.luma(j, y0) + view.luma(i, y1) + view.luma(j, y1)
                    out[x] = UInt8(truncatingIfNeeded: (s + 2) >> 2)
                }
            } else {
                let a = view.plane0 + y0 * view.bytesPerRow0, b = view.plane0 + y1 * view.bytesPerRow0
                // The columns increase along the row: the last is the rightmost read.
                let span = w > 0 ? Int(c[2 * w - 1]) + 1 : 0
                for k in 0 ..< span { pairs[k] = UInt16(a[k]) &+ UInt16(b[k]) }
                for x in 0 ..< w {
                    let s = UInt32(pairs[Int(c[2 * x])]) &+ UInt32(pairs[Int(c[2 * x + 1])])
                    out[x] = UInt8(truncatingIfNeeded: (s &+ 2) >> 2)
                }
            }
        }
    }
}
