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
    let detector: FaceDetector
    /// The full-frame search: a finer pyramid and fewer votes, so that small and distant faces are found (a false
    /// hit costs little: a second face must be found twice, and the tracked one is chosen by overlap).
    let searchDetector: FaceDetector

    // Face tracking (see VitalsEngine+FaceTracking.swift).
    var anchorBox: VitalsRect?
    var trackedBox: VitalsRect?
    var faceMotionX: ProfileMotion?
    var faceMotionY: ProfileMotion?
    var anchorOffset = (x: 0.0, y: 0.0)
    var lastFullDetection = -Double.infinity
    var framesSinceLocal = 0
    var localMisses = 0
    var lastDetectionHit = -Double.infinity
    /// Other faces the last full search found, with how many searches in a row found each: a second face counts
    /// once ``secondFaceSightings`` searches have.
    var pendingFaces: [(rect: VitalsRect, sightings: Int)] = []
    var extraFaces = 0
    var usingSkinFinder = false
    /// The budgeted search while no face is tracked.
    var scout = FaceScout()
    var subpixel = (x: 0.0, y: 0.0)
    /// Where the skin regions are sampled: the tracked position through a play (backlash) filter, so that tracking
    /// jitter below the play (codec artefacts move texture by fractions of a pixel) leaves the regions still.
    var skinPosition = (x: 0.0, y: 0.0)
    /// The gains that keep the colours continuous across a re-adopted face box.
    var splice = ColourSplice()
    /// When the face box last changed (adopted afresh or replaced): the skin regions, and with them how their colour
    /// follows the motion, are new from then on (see ``motionFitSpan``).
    var lastBoxChange = -Double.infinity
    private var lastFaceSeen = -Double.infinity

    // Motion (see VitalsEngine+Breathing.swift).
    var chestUpper: ProfileMotion?
    var chestLower: ProfileMotion?
    /// The background regions' vertical motion, measured as one (see ``ProfileMotionGroup``).
    var backgroundVertical: ProfileMotionGroup?
    /// The background regions' horizontal motion.
    var backgroundHorizontal: ProfileMotionGroup?
    /// The background's displacement when last measured (x, y; px): the camera's own motion, held through a frame in
    /// which no background region could be measured.
    var cameraMotion = (x: 0.0, y: 0.0)
    /// The face's rows measured every frame for the head's height (``faceMotionY`` moves the skin regions, and only
    /// on frames where the columns match too).
    var headMotion: ProfileMotion?
    /// The face's vertical displacement from its row profiles when they last matched, with the camera's vertical
    /// displacement then: where the rows find no match, the head is taken to have moved with the camera since.
    var lastFaceMatch = (face: 0.0, camera: 0.0)
    /// The head's height for breathing (px, continuous across box changes; see ``lastFaceMatch``).
    var headY = 0.0
    var backgroundRegions: [VitalsRect] = []

    // Samples.
    struct Sample {
        var t: Double
        var rgb: RGB
        /// The skin's colour region by region, for timing the beats on each (see ``SkinParts``).
        var parts: SkinParts?
        var faceX: Double, faceY: Double
        /// Motion the colour trace may echo: the tracked face position (x, y), how far the skin regions lag it (x, y)
        /// and the background's displacement (x, y), which measures the camera's own motion on many more pixels
        /// than a small face offers.
        var motion: [Double]
        var upper: Double?, lower: Double?, background: Double?
        /// Mean colour of the background beside the head: in a still scene, any variation is the video's own noise.
        var backgroundRGB: RGB?
        /// The head's height for breathing, sub-pixel (see ``VitalsEngine/headY``); nil: use `faceY`.
        var headY: Double? = nil
    }

    /// The skin's mean colour in its three regions (forehead, left cheek, right cheek), which share the pulse but
    /// not the camera's noise, with each region's share of the skin's pixels: how far the forehead's and the cheeks'
    /// beat times disagree measures the timing noise of the whole
    /// (``HRVMeasures/splitTimingNoise(beats:first:second:firstShare:rate:expectedRate:)``).
    struct SkinParts {
        var colours: [RGB]
        var shares: [Double]
    }
    var samples: [Sample] = []
    var frameTimes: [Double] = []
    private var startTime: Double?
    private var lastTime: Double?
    private var lastUpdate = -Double.infinity
    private var lastHRV = -Double.infinity
    var lastEmittedPulseWave = -Double.infinity
    var lastEmittedBreathing = -Double.infinity
    var latestPulse: (rate: Double, confidence: Double, snr: Double)?
    var pulseTracker = PulseTracker()
    /// The doubt about the latest pulse rate (``PulseDoubt``), nil when none: HRV timed at a doubted rate is not stable.
    var pulseDoubt: PulseDoubt?
    /// The video's own rhythms in the background's chroma, kept out of the methods that read chroma.
    var videoLines = SpectralLineFinder()
    /// The lines of the camera's motion in the face's position, kept out where the skin still echoes them.
    var motionLines = SpectralLineFinder()
    private var condition = VitalsCondition.noFaceFound
    // The glasses' IMU (see VitalsEngine+MotionSensor.swift): nil until the first rotation rate arrives.
    var motionSensor: MotionClockAlignment?
    var motionEstimate: MotionClockAlignment.Estimate?
    var lastMotionEstimate = -Double.infinity
    /// The lines of the IMU's rotation (the camera's displacement it integrates to), and how far that displacement
    /// moved in the pulse band in the last window (band-passed σ, px, the larger axis).
    var sensorLines = SpectralLineFinder()
    var sensorMotionLevel = 0.0
    /// The picture's displacement the IMU integrates to (px, across and down, any level), from the first trusted clock
    /// estimate on; nil before (see ``advanceSensorTravel(from:to:)``).
    var sensorTravel: (x: Double, y: Double)?
    /// How many times the measurement started over after it had begun (a gap in the input or the face lost for
    /// longer than ``VitalsEngineConfiguration/maximumGap``): the rare, visible exception, not every flicker.
    public private(set) var restarts = 0

    /// What looking for a face cost on the last frame processed while no face was tracked: the detector windows it
    /// evaluated and the pixels of the shrunken pictures it built (0 and 0 while a face is tracked). For benchmarks
    /// and for tests of the search's budget (docs/VITALS-ENGINE.md, *Looking for a face*).
    public var lastFaceSearchWork: (windows: Int, pixels: Int) {
        trackedBox == nil ? (scout.lastFrameWindows, scout.lastFramePixels) : (0, 0)
    }

    /// Creates an engine with a face detector built on `cascade`.
    public init(configuration: VitalsEngineConfiguration = VitalsEngineConfiguration(), cascade: HaarCascade) {
        self.configuration = configuration
        self.detector = FaceDetector(cascade: cascade, scaleFactor: 1.15, minNeighbors: 5)
        self.searchDetector = FaceDetector(cascade: cascade, scaleFactor: 1.1, minNeighbors: 3)
    }

    /// Creates an engine with the default frontal-face cascade (see ``HaarCascade/frontalFace()``).
    public convenience init(configuration: VitalsEngineConfiguration = VitalsEngineConfiguration()) throws(VitalsEngineError) {
        self.init(configuration: configuration, cascade: try HaarCascade.frontalFace())
    }

    /// Processes one frame (timestamps strictly increasing, microseconds) and returns the verdict and new samples.
    public func process(_ view: VitalsPixelView, timestampUs: Int64) -> VitalsFrameResult {
        let t = Double(timestampUs) / 1_000_000
        if let last = lastTime, t - last > configuration.maximumGap { restartSignals() }
        if let last = lastTime, t <= last { return VitalsFrameResult(condition: condition, face: trackedBox) }
        // Where the IMU says the picture went since the last frame: the profile searches look there first.
        advanceSensorTravel(from: lastTime, to: t)
        lastTime = t
        frameTimes.append(t)
        while let first = frameTimes.first, t - first > 2 { frameTimes.removeFirst() }

        // The camera's motion first: through a frame in which the face's rows find no match, the head's height for
        // breathing moves with it (see trackFace).
        let camera = trackedBox == nil ? (x: nil, y: nil) : measureCamera(view)
        if let y = camera.y { cameraMotion.y = y }
        if let x = camera.x { cameraMotion.x = x }
        if camera.x != nil || camera.y != nil { motionSensor?.addFrame(at: t, across: camera.x, down: camera.y) }
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

        let (rgb, parts, position) = sampleSkin(view, box: box)
        let luma = rgb.luma

        let (upper, lower) = measureChest(view)
        let background = camera.y
        let colours = splice.applied(to: ColourSplice.Colours(skin: rgb, parts: parts?.colours,
                                                              background: Self.meanColour(of: backgroundRegions, in: view)))
        let skinParts = parts.map { SkinParts(colours: colours.parts ?? $0.colours, shares: $0.shares) }
        let motion = [anchorOffset.x + subpixel.x, anchorOffset.y + subpixel.y, subpixel.x - position.x, subpixel.y - position.y,
                      cameraMotion.x, cameraMotion.y]
        samples.append(Sample(t: t, rgb: colours.skin, parts: skinParts, faceX: anchorOffset.x + Double(box.x),
                              faceY: anchorOffset.y + Double(box.y), motion: motion, upper: upper, lower: lower,
                              background: background, backgroundRGB: colours.background, headY: headY))
        result.measurement = VitalsFrameMeasurement(skinRed: colours.skin.r, skinGreen: colours.skin.g, skinBlue: colours.skin.b,
                                                    upperChest: upper, lowerChest: lower, background: background,
                                                    backgroundHorizontal: camera.x)
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

    private func restartSignals() {
        if !samples.isEmpty { restarts += 1 }
        samples.removeAll()
        splice = ColourSplice()
        startTime = nil
        lastHRV = -Double.infinity
        latestPulse = nil
        pulseDoubt = nil
        pulseTracker.reset()
        videoLines.reset()
        motionLines.reset()
        sensorLines.reset()
        sensorMotionLevel = 0
        lastEmittedPulseWave = -Double.infinity
        lastEmittedBreathing = -Double.infinity
    }

    /// The estimation schedule, run about once a second: pulse, then breathing, then (every `hrvInterval`) HRV from
    /// the pulse just found.
    private func update(_ result: inout VitalsFrameResult, at t: Double) {
        guard let first = samples.first else { return }
        let duration = t - first.t
        let c = configuration
        refreshMotionEstimate(at: t)
        if duration >= c.pulseFirstOutput {
            pulse(&result, at: t, duration: duration)
        }
        if duration >= c.breathingFirstOutput {
            breathing(&result, at: t, duration: duration)
        }
        if duration >= c.hrvFirstOutput, t - lastHRV >= c.hrvInterval, let pulse = latestPulse {
            lastHRV = t
            hrv(&result, at: t, duration: duration, pulse: pulse)
        }
    }
}
