import Foundation

/// The embedded, offline vitals engine: frames in, pulse, breathing, HRV and a picture verdict out.
///
/// Per frame it tracks the face (Viola–Jones detection every few frames, profile tracking in between), averages
/// the skin of the forehead and cheeks (eyes and mouth excluded) and the colour of the background beside the head,
/// and measures the vertical motion of the chest, the head and the background. About once a second it runs POS,
/// CHROM, GREEN and LUMA on the last ~12 s of colour and fuses them by spectral SNR (trusting chroma only as far as
/// the background shows it is no noisier than luma), finds the breathing rate in the last 30 s of
/// chest-minus-background motion, and every 10 s detects beats for HRV over the last 60 s. Not thread-safe: one
/// caller at a time.
public final class VitalsEngine {
    /// The configuration in use.
    public let configuration: VitalsEngineConfiguration
    private let detector: FaceDetector

    // Face tracking.
    private var anchorBox: VitalsRect?
    private var trackedBox: VitalsRect?
    private var faceMotionX: ProfileMotion?
    private var faceMotionY: ProfileMotion?
    private var anchorOffset = (x: 0.0, y: 0.0)
    private var lastFullDetection = -Double.infinity
    private var framesSinceLocal = 0
    private var localMisses = 0
    private var extraFaces = 0
    private var usingSkinFinder = false
    private var subpixel = (x: 0.0, y: 0.0)
    /// Where the skin regions are sampled: the tracked position through a play (backlash) filter, so that tracking
    /// jitter below the play (codec artefacts move texture by fractions of a pixel) leaves the regions still.
    private var skinPosition = (x: 0.0, y: 0.0)
    private static let skinPlay = 1.0
    private var lastFaceSeen = -Double.infinity

    // Motion.
    private var chestUpper: ProfileMotion?
    private var chestLower: ProfileMotion?
    private var backgrounds: [ProfileMotion] = []
    private var backgroundRegions: [VitalsRect] = []

    // Samples.
    private struct Sample {
        var t: Double
        var rgb: RGB
        var faceX: Double, faceY: Double
        /// Motion the colour trace may echo: the tracked face position and how far the skin regions lag it.
        var motion: [Double]
        var upper: Double?, lower: Double?, background: Double?
        /// Mean colour of the background beside the head: in a still scene, any variation is the video's own noise.
        var backgroundRGB: RGB?
    }
    private var samples: [Sample] = []
    private var frameTimes: [Double] = []
    private var startTime: Double?
    private var lastTime: Double?
    private var lastUpdate = -Double.infinity
    private var lastHRV = -Double.infinity
    private var lastEmittedPulseWave = -Double.infinity
    private var lastEmittedBreathing = -Double.infinity
    private var latestPulse: (rate: Double, confidence: Double, snr: Double)?
    private var condition = VitalsCondition.noFaceFound

    /// Creates an engine with a face detector built on `cascade`.
    public init(configuration: VitalsEngineConfiguration = VitalsEngineConfiguration(), cascade: HaarCascade) {
        self.configuration = configuration
        self.detector = FaceDetector(cascade: cascade, scaleFactor: 1.15, minNeighbors: 5)
    }

    /// Creates an engine with the default frontal-face cascade (see ``HaarCascade/frontalFace()``).
    public convenience init(configuration: VitalsEngineConfiguration = VitalsEngineConfiguration()) throws(VitalsEngineError) {
        self.init(configuration: configuration, cascade: try HaarCascade.frontalFace())
    }

    /// Seconds of continuous face data collected so far.
    public var measuredSeconds: Double {
        guard let first = samples.first, let last = samples.last else { return 0 }
        return last.t - first.t
    }

    /// Processes one frame (timestamps strictly increasing, microseconds) and returns the verdict and new samples.
    public func process(_ view: VitalsPixelView, timestampUs: Int64) -> VitalsFrameResult {
        let t = Double(timestampUs) / 1_000_000
        if let last = lastTime, t - last > configuration.maximumGap { restartSignals() }
        if let last = lastTime, t <= last { return VitalsFrameResult(condition: condition, face: trackedBox) }
        lastTime = t
        frameTimes.append(t)
        while let first = frameTimes.first, t - first > 2 { frameTimes.removeFirst() }

        trackFace(view, at: t)
        var result = VitalsFrameResult(condition: .ok, face: trackedBox)
        guard let box = trackedBox else {
            condition = extraFaces > 0 ? .multipleFacesFound : .noFaceFound
            if t - lastFaceSeen > configuration.maximumGap { restartSignals() }
            result.condition = condition
            // With no face, still tell darkness and glare apart from an empty view.
            let (luma, clipped) = Self.frameLuma(view)
            if luma < configuration.darkLuma * 0.6 { result.condition = .tooDark; condition = .tooDark }
            if luma > configuration.brightLuma + 10 || clipped > 0.5 { result.condition = .tooBright; condition = .tooBright }
            return result
        }
        lastFaceSeen = t

        // Skin: forehead and both cheeks, clear of the eyes and the mouth, at the tracked sub-pixel position
        // (bilinear blend of the four integer placements, so that slow motion does not step the averages).
        let rois = Self.skinRegions(of: box)
        var rgb = RGB(r: 0, g: 0, b: 0)
        var weight = 0.0
        func follow(_ current: Double, _ target: Double) -> Double {
            let d = target - current
            return abs(d) <= Self.skinPlay ? current : target - (d > 0 ? Self.skinPlay : -Self.skinPlay)
        }
        skinPosition = (follow(skinPosition.x, subpixel.x), follow(skinPosition.y, subpixel.y))
        let position = skinPosition
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
        }
        if weight > 0 { rgb.r /= weight; rgb.g /= weight; rgb.b /= weight }
        let luma = rgb.luma

        // Motion: chest rows and background rows, vertical.
        let upper = chestUpper?.update(view)
        let lower = chestLower?.update(view)
        var bg: [Double] = []
        for i in backgrounds.indices { if let d = backgrounds[i].update(view) { bg.append(d) } }
        let background = bg.isEmpty ? nil : SignalMath.median(bg)
        let backgroundRGB = Self.meanColour(of: backgroundRegions, in: view)
        let motion = [anchorOffset.x + subpixel.x, anchorOffset.y + subpixel.y, subpixel.x - position.x, subpixel.y - position.y]
        samples.append(Sample(t: t, rgb: rgb, faceX: anchorOffset.x + Double(box.x), faceY: anchorOffset.y + Double(box.y),
                              motion: motion, upper: upper, lower: lower, background: background, backgroundRGB: backgroundRGB))
        if startTime == nil { startTime = t }
        let keep = max(configuration.hrvWindow, configuration.breathingWindow) + 2
        if let first = samples.first, t - first.t > keep + 5 {
            samples.removeFirst(samples.prefix { t - $0.t > keep }.count)
        }

        condition = verdict(box: box, luma: luma, view: view, at: t)
        result.condition = condition
        if t - lastUpdate >= configuration.updateInterval {
            lastUpdate = t
            update(&result, at: t)
        }
        return result
    }

    // MARK: Face

    private func trackFace(_ view: VitalsPixelView, at t: Double) {
        let shorter = min(view.width, view.height)
        // Detection works on luma shrunk to about 170 px across (faces from ~70 px up at 504×896).
        let factor = max(1, shorter / 168)
        if t - lastFullDetection >= configuration.fullDetectionInterval || trackedBox == nil && t - lastFullDetection >= 0.25 {
            lastFullDetection = t
            let image = GrayImage(downsampling: view, factor: factor)
            var faces = detector.detect(in: image, minSize: 24).map { scaled($0.rect, by: factor) }
            usingSkinFinder = false
            if faces.isEmpty, let blob = SkinFaceFinder(step: max(2, shorter / 128)).find(in: view) {
                faces = [blob]
                usingSkinFinder = true
            }
            extraFaces = max(0, faces.count - 1)
            if let face = faces.first { adopt(face, view: view, force: trackedBox == nil) } else { loseFace() }
            framesSinceLocal = 0
            return
        }
        guard let box = trackedBox else { return }
        // Between detections: follow the face with its row and column profiles.
        if let dx = faceMotionX?.update(view), let dy = faceMotionY?.update(view), let anchor = anchorBox {
            trackedBox = VitalsRect(x: anchor.x + Int(dx.rounded()), y: anchor.y + Int(dy.rounded()), width: anchor.width, height: anchor.height)
            subpixel = (Double(anchor.x) + dx, Double(anchor.y) + dy)
        }
        framesSinceLocal += 1
        if usingSkinFinder {
            if framesSinceLocal >= configuration.localDetectionInterval {
                framesSinceLocal = 0
                if let blob = SkinFaceFinder(step: max(2, shorter / 128)).find(in: view) { adopt(blob, view: view, force: false) } else { loseFace() }
            }
            return
        }
        if framesSinceLocal >= configuration.localDetectionInterval {
            framesSinceLocal = 0
            let margin = box.width / 2
            let region = VitalsRect(x: box.x - margin, y: box.y - margin, width: box.width + 2 * margin, height: box.height + 2 * margin)
                .clamped(width: view.width, height: view.height)
            let image = GrayImage(downsampling: view, factor: factor, region: region)
            let minSize = Int(Double(box.width) * 0.7) / factor, maxSize = Int(Double(box.width) * 1.4) / factor + 1
            let faces = detector.detect(in: image, minSize: max(24, minSize), maxSize: maxSize)
            if let face = faces.first {
                localMisses = 0
                let r = scaled(face.rect, by: factor)
                adopt(VitalsRect(x: r.x + region.x, y: r.y + region.y, width: r.width, height: r.height), view: view, force: false)
            } else {
                localMisses += 1
                if localMisses >= 3 { loseFace() }
            }
        }
    }

    private func scaled(_ r: VitalsRect, by f: Int) -> VitalsRect {
        VitalsRect(x: r.x * f, y: r.y * f, width: r.width * f, height: r.height * f)
    }

    /// Takes a detection as the face box when it differs enough from the tracked one (detector jitter would
    /// otherwise step the skin averages).
    private func adopt(_ face: VitalsRect, view: VitalsPixelView, force: Bool) {
        if !force, let current = trackedBox {
            let dcx = Double(face.x + face.width / 2 - current.x - current.width / 2)
            let dcy = Double(face.y + face.height / 2 - current.y - current.height / 2)
            let ds = Double(face.width - current.width)
            let w = Double(current.width)
            if abs(dcx) < 0.12 * w, abs(dcy) < 0.12 * w, abs(ds) < 0.2 * w { return }
            anchorOffset.x += Double(current.x - face.x)
            anchorOffset.y += Double(current.y - face.y)
        }
        anchorBox = face
        trackedBox = face
        subpixel = (Double(face.x), Double(face.y))
        skinPosition = subpixel
        let maxShift = max(4, face.width / 12)
        faceMotionX = ProfileMotion(region: face, vertical: false, maxShift: maxShift)
        faceMotionY = ProfileMotion(region: face, vertical: true, maxShift: maxShift)
        // The chest below the face, and background beside the head, fixed in frame coordinates from now on.
        let cx = face.x + face.width / 2
        let chestTop = face.maxY + face.height / 5
        let chestHeight = face.height
        let upper = VitalsRect(x: cx - face.width, y: chestTop, width: 2 * face.width, height: chestHeight / 2)
        let lower = VitalsRect(x: cx - face.width, y: chestTop + chestHeight / 2, width: 2 * face.width, height: chestHeight / 2)
        let shift = max(4, face.height / 16)
        if chestUpper == nil || force { chestUpper = ProfileMotion(region: upper, vertical: true, maxShift: shift) } else { chestUpper?.reset(region: upper) }
        if chestLower == nil || force { chestLower = ProfileMotion(region: lower, vertical: true, maxShift: shift) } else { chestLower?.reset(region: lower) }
        let gap = face.width / 5
        let side = [
            VitalsRect(x: 0, y: face.y - face.height / 2, width: face.x - gap, height: face.height * 3 / 2),
            VitalsRect(x: face.maxX + gap, y: face.y - face.height / 2, width: view.width - face.maxX - gap, height: face.height * 3 / 2),
            VitalsRect(x: face.x, y: 0, width: face.width, height: face.y - gap),
        ]
        backgroundRegions = side
        if backgrounds.count != side.count || force {
            backgrounds = side.map { ProfileMotion(region: $0, vertical: true, maxShift: shift) }
        } else {
            for i in side.indices { backgrounds[i].reset(region: side[i]) }
        }
    }

    private func loseFace() {
        trackedBox = nil
        anchorBox = nil
        localMisses = 0
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

    /// Forehead and both cheeks inside a Viola–Jones face box (eyes sit at ~40 % of its height, the mouth ~78 %).
    static func skinRegions(of box: VitalsRect) -> [VitalsRect] {
        func part(_ x0: Double, _ y0: Double, _ x1: Double, _ y1: Double) -> VitalsRect {
            VitalsRect(x: box.x + Int(x0 * Double(box.width)), y: box.y + Int(y0 * Double(box.height)),
                       width: Int((x1 - x0) * Double(box.width)), height: Int((y1 - y0) * Double(box.height)))
        }
        return [part(0.30, 0.06, 0.70, 0.22), part(0.16, 0.50, 0.36, 0.70), part(0.64, 0.50, 0.84, 0.70)]
    }

    /// Mean luma of the frame (0–255, full range) and the fraction of clipped (near-white) samples.
    static func frameLuma(_ view: VitalsPixelView) -> (mean: Double, clipped: Double) {
        var s = 0, n = 0, c = 0
        let white = view.format == .nv12VideoRange ? 232 : 250
        var y = 0
        let step = max(4, min(view.width, view.height) / 32)
        while y < view.height {
            var x = 0
            while x < view.width {
                let v = view.luma(x, y)
                s += v; n += 1
                if v >= white { c += 1 }
                x += step
            }
            y += step
        }
        let mean = Double(s) / Double(max(n, 1))
        return (view.format == .nv12VideoRange ? (mean - 16) * 255 / 219 : mean, Double(c) / Double(max(n, 1)))
    }

    // MARK: Verdict

    private func verdict(box: VitalsRect, luma: Double, view: VitalsPixelView, at t: Double) -> VitalsCondition {
        let c = configuration
        if extraFaces > 0 { return .multipleFacesFound }
        if luma < c.darkLuma { return .tooDark }
        if luma > c.brightLuma { return .tooBright }
        let shorter = Double(min(view.width, view.height))
        let clipped = box.x < 0 || box.y < 0 || box.maxX > view.width || box.maxY > view.height
        if Double(box.width) > c.maximumFaceFraction * shorter || clipped { return .faceTooClose }
        if Double(box.width) < c.minimumFaceFraction * shorter { return .faceTooFar }
        // Face speed over the last second, in face widths per second.
        if let last = samples.last, let past = samples.last(where: { last.t - $0.t >= 1 }) {
            let dt = last.t - past.t
            let dist = ((last.faceX - past.faceX) * (last.faceX - past.faceX) + (last.faceY - past.faceY) * (last.faceY - past.faceY)).squareRoot()
            if dist / dt > c.maximumFaceSpeed * Double(box.width) { return .excessiveMotion }
        }
        if frameTimes.count >= 8, let first = frameTimes.first, let last = frameTimes.last, last > first {
            let fps = Double(frameTimes.count - 1) / (last - first)
            if fps < c.minimumFrameRate { return .frameRateTooLow }
        }
        return .ok
    }

    private func restartSignals() {
        samples.removeAll()
        startTime = nil
        lastHRV = -Double.infinity
        latestPulse = nil
        lastEmittedPulseWave = -Double.infinity
        lastEmittedBreathing = -Double.infinity
    }

    // MARK: Estimation

    /// The sampling rate the traces are resampled to: the input rate rounded, at most 30 Hz.
    private var analysisRate: Double {
        guard frameTimes.count >= 3, let first = frameTimes.first, let last = frameTimes.last, last > first else { return 30 }
        return min(30, max(8, (Double(frameTimes.count - 1) / (last - first)).rounded()))
    }

    private func update(_ result: inout VitalsFrameResult, at t: Double) {
        guard let first = samples.first else { return }
        let duration = t - first.t
        let c = configuration
        let fs = analysisRate
        if duration >= c.pulseFirstOutput {
            let window = Array(samples.drop { t - $0.t > c.pulseWindow })
            let start = window.first!.t
            let (r, g, b) = skinTrace(window, from: start, to: t, rate: fs)
            let analysis = PulseAnalysis.analyse(r: r, g: g, b: b, rate: fs, low: c.pulseRange.lowerBound, high: c.pulseRange.upperBound,
                                                 chromaExcess: chromaExcess(window, from: start, to: t, rate: fs))
            var confidence = Self.confidence(snr: analysis.snr)
            if duration < c.pulseWarmUp { confidence = min(confidence, VitalsStability.pulse - 1) }
            let us = Int64((t * 1_000_000).rounded())
            result.pulseRate.append(VitalsRateSample(value: analysis.rate, confidence: confidence, timestampUs: us))
            result.pulseMethod = analysis.best
            result.pulseWaveConfidence = confidence
            latestPulse = (analysis.rate, confidence, analysis.snr)
            // The newest part of the wave (not emitted before).
            for (i, v) in analysis.wave.enumerated() {
                let ts = start + Double(i) / fs
                if ts > lastEmittedPulseWave, ts > t - 1.5 {
                    result.pulseWave.append(VitalsTraceSample(value: v, timestampUs: Int64((ts * 1_000_000).rounded())))
                    lastEmittedPulseWave = ts
                }
            }
        }
        if duration >= c.breathingFirstOutput {
            breathing(&result, at: t, duration: duration)
        }
        if duration >= c.hrvFirstOutput, t - lastHRV >= c.hrvInterval, let pulse = latestPulse {
            lastHRV = t
            hrv(&result, at: t, duration: duration, pulse: pulse)
        }
    }

    /// The skin's colour over `window` on a uniform grid at `rate`, with the face's motion echo removed in the
    /// pulse band: what the pulse estimators and HRV both start from.
    private func skinTrace(_ window: [Sample], from start: Double, to end: Double, rate fs: Double) -> (r: [Double], g: [Double], b: [Double]) {
        let trace = Self.colourTrace(window, from: start, to: end, rate: fs)
        let motion = Self.motionTrace(window, from: start, rate: fs, count: trace.r.count)
        let band = pulseBand(rate: fs)
        let cleaned = Self.removeMotion([trace.r, trace.g, trace.b], motion: motion, rate: fs, low: band.low, high: band.high)
        return (cleaned[0], cleaned[1], cleaned[2])
    }

    /// The pulse range in Hz, its top kept below the Nyquist frequency of `rate`.
    private func pulseBand(rate fs: Double) -> (low: Double, high: Double) {
        (configuration.pulseRange.lowerBound / 60, min(configuration.pulseRange.upperBound / 60, fs / 2 - 0.1))
    }

    /// The background's chroma-to-luma noise ratio over `window` in the pulse band (see
    /// ``chromaExcess(times:colours:from:to:rate:low:high:)``).
    private func chromaExcess(_ window: [Sample], from start: Double, to end: Double, rate fs: Double) -> Double {
        let valid = window.compactMap { s in s.backgroundRGB.map { (t: s.t, colour: $0) } }
        guard valid.count * 4 >= window.count * 3 else { return 0 }
        let band = pulseBand(rate: fs)
        return Self.chromaExcess(times: valid.map(\.t), colours: valid.map(\.colour), from: start, to: end, rate: fs,
                                 low: band.low, high: band.high)
    }

    /// How much more the video's chroma varies than its luma in a still background, between `low` and `high` Hz:
    /// the band-passed standard deviation of the worse of Cb and Cr over that of Y (BT.601 scaling, so the units
    /// match). 0 when there is too little to judge by or the background does not vary at all.
    ///
    /// A camera's own noise and changing light move luma at least as much as chroma (uncompressed video measures
    /// 0.1–0.5); a codec starved of bits spends little on chroma, which then steps with its refresh rhythm (HEVC at
    /// 2 Mbit/s measures 1–3). The pulse estimators mark down the methods that read chroma by this ratio.
    static func chromaExcess(times: [Double], colours: [RGB], from start: Double, to end: Double, rate: Double,
                             low: Double, high: Double) -> Double {
        guard times.count == colours.count, times.count > Int(4 * rate), end > start else { return 0 }
        let count = Int((end - start) * rate) + 1
        func spread(_ f: (RGB) -> Double) -> Double {
            let trace = SignalMath.resample(times: times, values: colours.map(f), start: start, rate: rate, count: count)
            return SignalMath.standardDeviation(SignalMath.bandPass(trace, sampleRate: rate, low: low, high: high))
        }
        let y = spread(\.luma)
        let cb = spread { ($0.b - $0.luma) / 1.772 }, cr = spread { ($0.r - $0.luma) / 1.402 }
        guard y > 1e-9 else { return 0 }
        return max(cb, cr) / y
    }

    /// The skin's mean red, green and blue, resampled onto a uniform grid from `start` through `end` at `rate`.
    private static func colourTrace(_ window: [Sample], from start: Double, to end: Double, rate: Double) -> (r: [Double], g: [Double], b: [Double]) {
        let count = Int((end - start) * rate) + 1
        let times = window.map(\.t)
        return (SignalMath.resample(times: times, values: window.map(\.rgb.r), start: start, rate: rate, count: count),
                SignalMath.resample(times: times, values: window.map(\.rgb.g), start: start, rate: rate, count: count),
                SignalMath.resample(times: times, values: window.map(\.rgb.b), start: start, rate: rate, count: count))
    }

    /// The face-motion signals of `window` on the colour trace's grid (see `Sample.motion`).
    private static func motionTrace(_ window: [Sample], from start: Double, rate: Double, count: Int) -> [[Double]] {
        let times = window.map(\.t)
        return (0 ..< 4).map { k in
            SignalMath.resample(times: times, values: window.map { $0.motion[k] }, start: start, rate: rate, count: count)
        }
    }

    /// Removes from each channel what the motion signals explain in the pulse band `low`–`high` Hz (least squares
    /// on the band-passed signals), so that shading sliding through the skin regions does not read as pulse.
    /// Motion signals that barely move (band-passed σ ≤ 0.02 px) are left out.
    static func removeMotion(_ channels: [[Double]], motion: [[Double]], rate: Double, low: Double, high: Double) -> [[Double]] {
        let count = channels.first?.count ?? 0
        // Fit on the band-passed signals (the pulse band is where the echo matters), remove with the whole motion
        // (mean removed), so the echo goes at every frequency the filter would have only partly passed.
        let used = motion.filter { $0.count == count }
            .map { m in (whole: m.map { $0 - SignalMath.mean(m) }, band: SignalMath.bandPass(m, sampleRate: rate, low: low, high: high)) }
            .filter { SignalMath.standardDeviation($0.band) > 0.02 }
        guard !used.isEmpty else { return channels }
        let regressors = used.map(\.band)
        let n = regressors.count
        func dot(_ a: [Double], _ b: [Double]) -> Double { zip(a, b).reduce(0) { $0 + $1.0 * $1.1 } }
        var gram = [[Double]](repeating: [Double](repeating: 0, count: n), count: n)
        for i in 0 ..< n { for j in 0 ..< n { gram[i][j] = dot(regressors[i], regressors[j]) } }
        for i in 0 ..< n { gram[i][i] *= 1.001 }   // a touch of ridge for nearly collinear motion
        return channels.map { channel in
            let y = SignalMath.bandPass(channel, sampleRate: rate, low: low, high: high)
            guard let beta = SignalMath.solve(gram, regressors.map { dot($0, y) }) else { return channel }
            var out = channel
            for k in 0 ..< n { for i in 0 ..< count { out[i] -= beta[k] * used[k].whole[i] } }
            return out
        }
    }

    /// Maps spectral SNR (dB) to a 0–100 confidence: −6 dB → 0, 0 dB → 40 (the pulse stable threshold), 9 dB → 100.
    static func confidence(snr: Double) -> Double {
        let v = snr < 0 ? (snr + 6) / 6 * 40 : 40 + snr / 9 * 60
        return min(100, max(0, v))
    }

    private func breathing(_ result: inout VitalsFrameResult, at t: Double, duration: Double) {
        let c = configuration
        let fs = 10.0
        let window = Array(samples.drop { t - $0.t > c.breathingWindow })
        guard let start = window.first?.t else { return }
        let count = Int((t - start) * fs) + 1
        guard count > 40 else { return }
        // Candidate signals: chest rows and head, each minus the background (or minus the head when the
        // background has no texture to track).
        func series(_ f: (Sample) -> Double?) -> [Double]? {
            let valid = window.compactMap { s in f(s).map { (s.t, $0) } }
            guard valid.count > window.count / 2 else { return nil }
            return SignalMath.resample(times: valid.map(\.0), values: valid.map(\.1), start: start, rate: fs, count: count)
        }
        let hasBackground = window.filter { $0.background != nil }.count > window.count / 2
        let reference: (Sample) -> Double? = hasBackground ? { $0.background } : { $0.faceY }
        var candidates: [(name: String, signal: [Double])] = []
        if let s = series({ s in s.upper.flatMap { u in reference(s).map { u - $0 } } }) { candidates.append(("upper", s)) }
        if let s = series({ s in s.lower.flatMap { u in reference(s).map { u - $0 } } }) { candidates.append(("lower", s)) }
        if hasBackground, let s = series({ s in s.background.map { s.faceY - $0 } }) { candidates.append(("head", s)) }
        guard !candidates.isEmpty else { return }
        let low = c.breathingRange.lowerBound / 60, high = c.breathingRange.upperBound / 60
        var best: (rate: Double, snr: Double, index: Int)?
        var detrended: [[Double]] = []
        for (i, candidate) in candidates.enumerated() {
            let x = Self.removeLine(candidate.signal)
            detrended.append(x)
            let spectrum = BandSpectrum(x, rate: fs, low: low, high: high, step: 0.002).normalized
            let peak = spectrum.peak.frequency
            let snr = spectrum.snr(at: peak, halfWidth: 0.03)
            if best == nil || snr > best!.snr { best = (peak * 60, snr, i) }
        }
        guard let chosen = best else { return }
        var confidence = Self.confidence(snr: chosen.snr - 1)
        if duration < c.breathingWarmUp { confidence = min(confidence, VitalsStability.breathing - 1) }
        let us = Int64((t * 1_000_000).rounded())
        result.breathingRate.append(VitalsRateSample(value: chosen.rate, confidence: confidence, timestampUs: us))
        result.breathingTraceConfidence = confidence
        // Traces: upper and lower, inhalation up (image y grows downward, so negate), newest second only.
        let upperIndex = candidates.firstIndex { $0.name == "upper" } ?? chosen.index
        let lowerIndex = candidates.firstIndex { $0.name == "lower" } ?? upperIndex
        let up = SignalMath.smooth(detrended[upperIndex], window: 5), lo = SignalMath.smooth(detrended[lowerIndex], window: 5)
        var lastTs = lastEmittedBreathing
        for i in 0 ..< count {
            let ts = start + Double(i) / fs
            guard ts > lastEmittedBreathing, ts > t - 1.5 else { continue }
            let stamp = Int64((ts * 1_000_000).rounded())
            result.upperBreathingTrace.append(VitalsTraceSample(value: -up[i], timestampUs: stamp))
            result.lowerBreathingTrace.append(VitalsTraceSample(value: -lo[i], timestampUs: stamp))
            lastTs = ts
        }
        lastEmittedBreathing = lastTs
    }

    static func removeLine(_ x: [Double]) -> [Double] {
        let n = Double(x.count)
        guard x.count > 2 else { return x }
        var sx = 0.0, sy = 0.0, sxx = 0.0, sxy = 0.0
        for (i, v) in x.enumerated() {
            let d = Double(i)
            sx += d; sy += v; sxx += d * d; sxy += d * v
        }
        let slope = (n * sxy - sx * sy) / max(n * sxx - sx * sx, 1e-12)
        let intercept = (sy - slope * sx) / n
        return x.enumerated().map { $0.element - (intercept + slope * Double($0.offset)) }
    }

    private func hrv(_ result: inout VitalsFrameResult, at t: Double, duration: Double, pulse: (rate: Double, confidence: Double, snr: Double)) {
        let c = configuration
        let fs = analysisRate
        let window = Array(samples.drop { t - $0.t > c.hrvWindow })
        guard let start = window.first?.t else { return }
        let (r, g, b) = skinTrace(window, from: start, to: t, rate: fs)
        // The method that is best over the whole window, band-passed around the pulse with room for its variability.
        let analysis = PulseAnalysis.analyse(r: r, g: g, b: b, rate: fs, low: c.pulseRange.lowerBound, high: c.pulseRange.upperBound,
                                             chromaExcess: chromaExcess(window, from: start, to: t, rate: fs))
        let f0 = pulse.rate / 60
        let raw = PulseProjection.wave(analysis.best, r: r, g: g, b: b, rate: fs, low: 0.6, high: min(4, fs / 2 - 0.5))
        let wave = SignalMath.bandPass(raw, sampleRate: fs, low: max(0.5, f0 * 0.6), high: min(fs / 2 - 0.5, f0 * 1.6))
        let shape = SignalMath.bandPass(raw, sampleRate: fs, low: max(0.5, f0 * 0.5), high: min(fs / 2 - 0.5, f0 * 3))
        let (runs, accepted) = HRVMeasures.intervals(wave: wave, shape: shape, rate: fs, expectedRate: pulse.rate)
        // Camera noise jitters the beat times; its share of the interval variation is removed (see timingNoise).
        guard let measures = HRVMeasures.from(runs: runs, acceptedFraction: accepted,
                                              timingNoise: HRVMeasures.timingNoise(runs: runs)) else { return }
        let quality = min(1, max(0, (pulse.snr + 2) / 8))
        var confidence = 100 * quality * max(0, (accepted - 0.5) * 2)
        if duration < c.hrvWarmUp { confidence = min(confidence, VitalsStability.hrv - 1) }
        result.hrv.append(VitalsHRVSample(measures: measures, confidence: confidence, timestampUs: Int64((t * 1_000_000).rounded())))
    }
}
