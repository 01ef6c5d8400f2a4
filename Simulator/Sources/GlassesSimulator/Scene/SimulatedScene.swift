import Foundation
import Synchronization
import WearablesKit

/// A rectangle in frame pixels.
public struct PixelRect: Sendable, Hashable, Codable {
    /// Left edge.
    public var x: Int
    /// Top edge.
    public var y: Int
    /// Width.
    public var width: Int
    /// Height.
    public var height: Int

    /// Creates a rectangle.
    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }
}

/// Where things are in one rendered frame, and the signals that drove it.
public struct SceneFrameInfo: Sendable, Hashable {
    /// Scene time in seconds.
    public let time: Double
    /// The face's bounding box.
    public let faceBox: PixelRect
    /// Boxes that lie on skin (forehead, left cheek, right cheek): good regions to measure the pulse in.
    public let skinBoxes: [PixelRect]
    /// The PPG value that modulated the skin (0...1).
    public let ppg: Double
    /// The lung volume that moved the chest (0...1).
    public let breathing: Double
    /// The illuminant intensity used.
    public let illumination: Double
    /// The whole scene's shift caused by the wearer's head motion, in pixels (x, y), and its roll in radians.
    public let cameraShift: (x: Double, y: Double, roll: Double)

    /// Compares everything but the tuple field by value.
    public static func == (lhs: SceneFrameInfo, rhs: SceneFrameInfo) -> Bool {
        lhs.time == rhs.time && lhs.faceBox == rhs.faceBox && lhs.skinBoxes == rhs.skinBoxes && lhs.ppg == rhs.ppg
            && lhs.breathing == rhs.breathing && lhs.illumination == rhs.illumination
            && lhs.cameraShift.x == rhs.cameraShift.x && lhs.cameraShift.y == rhs.cameraShift.y
            && lhs.cameraShift.roll == rhs.cameraShift.roll
    }

    /// Hashes the same fields.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(time)
        hasher.combine(faceBox)
        hasher.combine(ppg)
    }
}

/// All layers for one output size.
final class SceneCanvas: Sendable {
    let width: Int, height: Int, margin: Int
    let background: SceneLayer, body: SceneLayer, head: SceneLayer
    let faceBox: PixelRect
    let skinBoxes: [PixelRect]

    init(width: Int, height: Int, profile: SubjectProfile, face: FaceImage?, portrait: PortraitPhoto? = nil,
         signature: (Float, Float, Float)) {
        self.width = width
        self.height = height
        let margin = max(8, Int(Double(width) * 0.08) & ~1)
        self.margin = margin
        let art = SceneArtwork(width: width, height: height, margin: margin, profile: profile, face: face)
        let cw = width + 2 * margin, ch = height + 2 * margin
        func even(_ v: Int) -> Int { max(0, v & ~1) }
        if let portrait {
            let photo = PortraitArtwork(photo: portrait, room: art, width: width, margin: margin)
            background = SceneLayer(x0: 0, y0: 0, width: cw, height: ch, shade: photo.background, signature: signature)
            let bodyTop = min(even(photo.bodyTop()), ch - 2)
            body = SceneLayer(x0: 0, y0: bodyTop, width: cw, height: max(2, (ch - bodyTop) & ~1), shade: photo.body,
                              signature: signature)
            let (hx0, hy0, hx1, hy1) = photo.headBounds()
            let x0 = min(even(hx0), cw - 2), y0 = min(even(hy0), ch - 2)
            let x1 = min(max(hx1, x0 + 2), cw), y1 = min(max(hy1, y0 + 2), ch)
            head = SceneLayer(x0: x0, y0: y0, width: max(2, (x1 - x0) & ~1), height: max(2, (y1 - y0) & ~1), shade: photo.head,
                              signature: signature)
            let f = photo.faceBox()
            faceBox = PixelRect(x: f.0, y: f.1, width: f.2, height: f.3)
            skinBoxes = photo.skinBoxes().map { PixelRect(x: $0.0, y: $0.1, width: $0.2, height: $0.3) }
            return
        }
        background = SceneLayer(x0: 0, y0: 0, width: cw, height: ch, shade: art.background, signature: signature)
        let bodyTop = even(Int(0.78 * Double(width)) + margin - 4)
        body = SceneLayer(x0: 0, y0: bodyTop, width: cw, height: (ch - bodyTop) & ~1, shade: art.body, signature: signature)
        let hx0 = even(Int(0.24 * Double(width)) + margin), hx1 = min(cw, Int(0.76 * Double(width)) + margin + 4)
        let hy0 = even(Int(0.30 * Double(width)) + margin), hy1 = min(ch, Int(0.885 * Double(width)) + margin + 4)
        head = SceneLayer(x0: hx0, y0: hy0, width: (hx1 - hx0) & ~1, height: (hy1 - hy0) & ~1, shade: art.head,
                          signature: signature)
        let f = art.faceBox()
        faceBox = PixelRect(x: f.0, y: f.1, width: f.2, height: f.3)
        skinBoxes = art.skinBoxes().map { PixelRect(x: $0.0, y: $0.1, width: $0.2, height: $0.3) }
    }
}

/// The wearer's head rotation from its neutral pose (the pose that renders no shift), in radians, and its rate of
/// change in radians per second (see ``SimulatedScene/headRotation(at:)`` for the axes and the camera model).
public struct HeadRotation: Sendable, Hashable {
    /// About +X (up): positive turns the head left.
    public var yaw: Double = 0
    /// About +Y (lateral, right): positive tilts the head up.
    public var pitch: Double = 0
    /// About +Z (forward): positive tips the head to the right.
    public var roll: Double = 0
    /// d(yaw)/dt.
    public var yawRate: Double = 0
    /// d(pitch)/dt.
    public var pitchRate: Double = 0
    /// d(roll)/dt.
    public var rollRate: Double = 0

    /// Creates a rotation.
    public init(yaw: Double = 0, pitch: Double = 0, roll: Double = 0, yawRate: Double = 0, pitchRate: Double = 0,
                rollRate: Double = 0) {
        self.yaw = yaw
        self.pitch = pitch
        self.roll = roll
        self.yawRate = yawRate
        self.pitchRate = pitchRate
        self.rollRate = rollRate
    }
}

/// A rendered person in a room, with known pulse and breathing: the picture the simulated glasses' camera sees.
///
/// Rendering is a pure function of the profile (seed included) and the scene time: the same time gives the same
/// bytes, whatever was rendered before. Skin follows the skin-reflection model `RGB = I · albedo · (1 + A·û_p·p(t))`
/// (û_p the blood-volume signature normalised to green, A the profile's pulse amplitude, p the PPG); breathing lifts
/// the chest and, a quarter as much, the head; optional wearer head motion shifts and rolls the whole scene;
/// temporal sensor noise is added last. Output is NV12 video range (BT.601 matrix).
public final class SimulatedScene: Sendable {
    /// The profile the scene was created with.
    public let profile: SubjectProfile
    /// The pulse signature used (R, G, B relative to green).
    public let pulseSignature: LinearRGB
    private let face: FaceImage?
    private let portrait: PortraitPhoto?
    private let personScale: Double
    private let physiology: Mutex<PhysiologyModel>
    /// The layers of the last size rendered, and only those: a stream that changes size (DAT's bandwidth adaptation)
    /// must not keep the layers of every size it ever had, megabytes each (docs/RELIABILITY.md, "Soak").
    private let lastCanvas = Mutex<(key: Int, canvas: SceneCanvas)?>(nil)
    private let noiseTable: NoiseTable
    private let motionPhases: [Double]
    /// The step rate when walking and the nod's rate when nodding, Hz (drawn from the seed).
    private let motionRates: (step: Double, nod: Double)
    private let driftPhase: Double

    /// Creates a scene.
    /// - Parameters:
    ///   - profile: the subject, camera and light.
    ///   - face: an optional image to use as the face (the pulse is applied to its skin-coloured pixels).
    /// - Throws: ``SimulatorError`` `invalidProfile` when the profile is out of range.
    public convenience init(profile: SubjectProfile = SubjectProfile(), face: FaceImage? = nil) throws(SimulatorError) {
        try self.init(profile: profile, face: face, portrait: nil)
    }

    /// Creates a scene of a real photograph of a person (see ``PortraitPhoto``) instead of the drawn one.
    /// - Throws: ``SimulatorError`` `invalidProfile` when the profile is out of range.
    public convenience init(profile: SubjectProfile = SubjectProfile(), portrait: PortraitPhoto) throws(SimulatorError) {
        try self.init(profile: profile, face: nil, portrait: portrait)
    }

    private init(profile: SubjectProfile, face: FaceImage?, portrait: PortraitPhoto?) throws(SimulatorError) {
        try profile.validate()
        self.profile = profile
        self.face = face
        self.portrait = portrait
        // A smaller person is further away: their breathing moves fewer pixels (the drawn face is 0.38 frame widths).
        personScale = portrait.map { $0.faceWidth / 0.38 } ?? 1
        var random = SeededRandom(seed: profile.seed, stream: 20)
        if let s = profile.pulseSignature {
            pulseSignature = s
        } else {
            // P_bv ≈ [0.33, 0.77, 0.53] normalised to green, jittered ±5 % (camera and light dependent).
            pulseSignature = LinearRGB(r: 0.33 / 0.77 * random.uniform(0.95...1.05), g: 1,
                                       b: 0.53 / 0.77 * random.uniform(0.95...1.05))
        }
        var noiseRandom = SeededRandom(seed: profile.seed, stream: 21)
        noiseTable = NoiseTable((0..<65_536).map { _ in Float(noiseRandom.gaussian()) })
        motionPhases = (0..<8).map { _ in random.uniform(0...(2 * Double.pi)) }
        driftPhase = random.uniform(0...(2 * Double.pi))
        // Drawn from a stream of their own, so that the phases and everything else keep their seeds' values.
        var rates = SeededRandom(seed: profile.seed, stream: 22)
        motionRates = (rates.uniform(1.6...2.0), rates.uniform(1.3...2.2))
        physiology = Mutex(PhysiologyModel(profile: profile))
    }

    // MARK: Physiology

    /// Changes the mean pulse rate from now on (beats already generated, about a second ahead, keep theirs).
    public func setPulseRate(_ bpm: Double) { physiology.withLock { $0.setPulseRate(bpm) } }
    /// Changes the mean breathing rate from now on.
    public func setBreathingRate(_ brpm: Double) { physiology.withLock { $0.setBreathingRate(brpm) } }

    /// Ground truth generated so far (at least through the last rendered time).
    public var groundTruth: GroundTruth { physiology.withLock { $0.groundTruth } }

    /// Ground truth covering at least `time` seconds (generating it if needed).
    public func groundTruth(through time: Double) -> GroundTruth {
        physiology.withLock { model in
            model.generate(through: time)
            return model.groundTruth
        }
    }

    /// The breathing signal at `time` (the ground truth's, 0 when there is none), for the simulated microphone.
    func breathingSignal(at time: Double) -> Double {
        signals(at: time).breathing
    }

    private func signals(at time: Double) -> (ppg: Double, breathing: Double) {
        physiology.withLock { model in
            model.generate(through: time)
            let truth = model.groundTruth
            return (truth.ppg(at: time) ?? 0, truth.breathingSignal(at: time) ?? 0)
        }
    }

    // MARK: Geometry

    private func canvas(width: Int, height: Int) -> SceneCanvas {
        let key = width << 20 | height
        if let last = lastCanvas.withLock({ $0 }), last.key == key { return last.canvas }
        let s = pulseSignature
        let made = SceneCanvas(width: width, height: height, profile: profile, face: face, portrait: portrait,
                               signature: (Float(s.r), Float(s.g), Float(s.b)))
        // The previous size's layers go once no render still uses them. Rendering is a pure function of the profile
        // and the time, so a size built again renders the same bytes.
        lastCanvas.withLock { $0 = (key, made) }
        return made
    }

    /// How many sizes' layers the scene holds (at most one; for the tests).
    var heldCanvasCount: Int { lastCanvas.withLock { $0 == nil ? 0 : 1 } }

    /// Builds (and caches) the layers for a size ahead of the first frame, so the first frame is not slow.
    public func prepare(width: Int, height: Int) {
        _ = canvas(width: width, height: height)
    }

    /// The wearer's head motion at `time`: shift in pixels and roll in radians (zero when motion is off).
    private func cameraMotion(at time: Double, width: Int) -> (Double, Double, Double) {
        guard profile.headMotion else { return (0, 0, 0) }
        let a = profile.headMotionAmplitude * Double(width)
        let shape = motionShape(at: time)
        let dx = a * shape.x.value
        let dy = a * shape.y.value
        let roll = 0.012 * (profile.headMotionAmplitude / 0.015) * shape.roll.value
        return (dx, dy, roll)
    }

    /// The dimensionless shapes of the head motion (``SubjectProfile/wearerMotion``) and their time derivatives (per
    /// second).
    private func motionShape(at time: Double)
        -> (x: (value: Double, rate: Double), y: (value: Double, rate: Double), roll: (value: Double, rate: Double))
    {
        let p = motionPhases, t = 2 * Double.pi * time
        typealias Term = (value: Double, rate: Double)
        // d/dt sin(2π f t + p) = 2π f cos(2π f t + p).
        func term(_ weight: Double, _ f: Double, _ phase: Double) -> Term {
            (weight * sin(f * t + phase), weight * 2 * Double.pi * f * cos(f * t + phase))
        }
        func sum(_ terms: [Term]) -> Term {
            (terms.reduce(0) { $0 + $1.value }, terms.reduce(0) { $0 + $1.rate })
        }
        func scaled(_ a: Term, _ k: Double) -> Term { (a.value * k, a.rate * k) }
        let x = sum([term(0.6, 0.13, p[0]), term(0.3, 0.31, p[1]), term(0.1, 1.1, p[2])])
        let y = sum([term(0.5, 0.11, p[3]), term(0.3, 0.23, p[4]), term(0.2, 0.9, p[5])])
        let roll = sum([term(0.7, 0.07, p[6]), term(0.3, 0.37, p[7])])
        switch profile.wearerMotion {
        case .drift:
            return (x, y, roll)
        case .walking:
            // The step's pitch with its harmonic; sway and roll at half the step rate; half the drift under them.
            let step = motionRates.step
            let bob = sum([term(1.2, step, p[5]), term(0.4, 2 * step, p[2])])
            let sway = term(0.8, step / 2, p[1])
            return (sum([scaled(x, 0.5), sway]), sum([scaled(y, 0.5), bob]), sum([scaled(roll, 0.5), scaled(sway, 1.2)]))
        case .nodding:
            // Bursts: a raised-cosine envelope of `burst` seconds, every `period`, times a sine at the nod's rate.
            let period = 9.0, burst = 3.0, nod = motionRates.nod
            let phase = (time + p[4] / (2 * Double.pi) * period).truncatingRemainder(dividingBy: period)
            var envelope: Term = (0, 0)
            if phase < burst {
                let w = 2 * Double.pi / burst
                envelope = (0.5 - 0.5 * cos(w * phase), 0.5 * w * sin(w * phase))
            }
            let wave = term(3, nod, p[5])
            let nodding: Term = (envelope.value * wave.value, envelope.rate * wave.value + envelope.value * wave.rate)
            return (scaled(x, 0.5), sum([scaled(y, 0.5), nodding]), scaled(roll, 0.5))
        case .turning:
            // Smooth steps (raised-cosine ramps of `ramp` s) to 4 amplitudes and back: turn, hold, turn back, wait.
            let period = 12.0, ramp = 0.8, hold = 4.0
            let phase = (time + p[0] / (2 * Double.pi) * period).truncatingRemainder(dividingBy: period)
            let w = Double.pi / ramp
            var turn: Term = (0, 0)
            if phase < ramp {
                turn = (0.5 - 0.5 * cos(w * phase), 0.5 * w * sin(w * phase))
            } else if phase < ramp + hold {
                turn = (1, 0)
            } else if phase < 2 * ramp + hold {
                let u = phase - ramp - hold
                turn = (0.5 + 0.5 * cos(w * u), -0.5 * w * sin(w * u))
            }
            return (sum([scaled(x, 0.5), scaled(turn, 4)]), scaled(y, 0.5), scaled(roll, 0.5))
        }
    }

    /// The camera's focal length as a fraction of the frame width: `f_px = 0.6 × width` (a horizontal field of view
    /// of 2·atan(1/1.2) ≈ 79.6°, in the range of the glasses' wide camera). Chosen, not measured.
    public static let focalLengthPerWidth = 0.6

    /// The wearer's head rotation at `time`, the physical motion behind the rendered ``SceneFrameInfo/cameraShift``.
    ///
    /// Camera model: a pinhole camera at the centre of the head's rotation, so a small rotation shifts the image
    /// and the head does not translate. A rotation by `θ` radians shifts the picture by `f_px · θ` pixels, where
    /// `f_px = ``focalLengthPerWidth`` × frame width`; so the angles do not depend on the frame size:
    /// - yaw (about +X, the sky axis; positive turns the head left) = `cameraShift.x / f_px` (the picture moves right);
    /// - pitch (about +Y, lateral, pointing right; positive tilts the head up) = `cameraShift.y / f_px` (the picture
    ///   moves down);
    /// - roll (about +Z, forward; positive tips the head right) = `cameraShift.roll` (the picture turns the other way).
    ///
    /// The axes are those a worn pair measured (`+X` up, `Y` lateral, `+Z` forward; right-handed, so `+Y` points to
    /// the wearer's right). Rates are the exact time derivatives of the angles. All zero when head motion is off.
    public func headRotation(at time: Double) -> HeadRotation {
        guard profile.headMotion else { return HeadRotation() }
        let shape = motionShape(at: time)
        let angle = profile.headMotionAmplitude / Self.focalLengthPerWidth
        let roll = 0.012 * (profile.headMotionAmplitude / 0.015)
        return HeadRotation(
            yaw: angle * shape.x.value, pitch: angle * shape.y.value, roll: roll * shape.roll.value,
            yawRate: angle * shape.x.rate, pitchRate: angle * shape.y.rate, rollRate: roll * shape.roll.rate)
    }

    /// Where the face and skin are, and what drove the frame at `time`, for a frame of the given size.
    public func frameInfo(at time: Double, width: Int, height: Int) -> SceneFrameInfo {
        let c = canvas(width: width, height: height)
        let (ppg, breathing) = signals(at: time)
        let (dx, dy, roll) = cameraMotion(at: time, width: width)
        let headDY = -0.25 * profile.breathingAmplitude * personScale * Double(height) * breathing
        let sx = Int(dx.rounded()), sy = Int((dy + headDY).rounded())
        func moved(_ r: PixelRect) -> PixelRect { PixelRect(x: r.x + sx, y: r.y + sy, width: r.width, height: r.height) }
        return SceneFrameInfo(time: time, faceBox: moved(c.faceBox), skinBoxes: c.skinBoxes.map(moved), ppg: ppg,
                              breathing: breathing, illumination: illumination(at: time), cameraShift: (dx, dy, roll))
    }

    /// Number of skin pixels (non-zero pulse) in the head and neck at a size: the region the pulse lives in.
    public func skinPixelCount(width: Int, height: Int) -> Int {
        let c = canvas(width: width, height: height)
        return c.head.skinPixelCount + c.body.skinPixelCount
    }

    private func illumination(at time: Double) -> Double {
        profile.lightingLevel * (1 + profile.lightingDrift * sin(2 * Double.pi * 0.05 * time + driftPhase))
    }

    // MARK: Rendering

    /// Renders the frame at `time` for a streaming resolution.
    public func render(at time: Double, resolution: StreamingResolution) -> RawVideoImage {
        let size = resolution.videoFrameSize
        return render(at: time, width: Int(size.width), height: Int(size.height))
    }

    /// Renders the frame at `time` (seconds) as NV12 video range with tight strides; sizes are rounded down to even.
    public func render(at time: Double, width requestedWidth: Int, height requestedHeight: Int) -> RawVideoImage {
        let width = max(2, requestedWidth & ~1), height = max(2, requestedHeight & ~1)
        var data = Data(count: width * height * 3 / 2)
        data.withUnsafeMutableBytes { raw in
            let out = raw.bindMemory(to: UInt8.self)
            renderInto(out.baseAddress!, at: time, width: width, height: height)
        }
        return RawVideoImage(width: width, height: height, lumaBytesPerRow: width, chromaBytesPerRow: width, data: data)!
    }

    /// Renders into `buffer` (at least `width * height * 3 / 2` bytes, NV12, tight strides).
    public func render(at time: Double, width: Int, height: Int, into buffer: UnsafeMutableRawBufferPointer) {
        let w = max(2, width & ~1), h = max(2, height & ~1)
        precondition(buffer.count >= w * h * 3 / 2, "buffer too small for \(w)x\(h) NV12")
        renderInto(buffer.baseAddress!.assumingMemoryBound(to: UInt8.self), at: time, width: w, height: h)
    }

    private struct Placement {
        var xShift: Int
        var rowBase: Int
        var fraction: Float
    }

    @_optimize(speed)
    private func renderInto(_ out: UnsafeMutablePointer<UInt8>, at time: Double, width: Int, height: Int) {
        let c = canvas(width: width, height: height)
        let (ppg, breathing) = signals(at: time)
        let (cdx, cdy, roll) = cameraMotion(at: time, width: width)
        let m = c.margin
        let limit = Double(m - 2)
        let lift = -profile.breathingAmplitude * personScale * Double(height) * breathing
        let pulse = Float(profile.pulseAmplitude * ppg)
        let gain = Float(illumination(at: time))
        let sigma = Float(profile.sensorNoise)
        // Offsets of each layer in frame pixels: camera motion plus the layer's own motion.
        func offsets(_ own: Double) -> (Double, Double) {
            (min(max(cdx, -limit), limit), min(max(cdy + own, -limit), limit))
        }
        let bg = offsets(0), bodyOff = offsets(lift), headOff = offsets(0.25 * lift)
        let micro = UInt64(bitPattern: Int64((time * 1_000_000).rounded()))
        var random = SeededRandom(seed: profile.seed ^ 0x5EED, stream: micro)

        let rowAcc = UnsafeMutablePointer<Float>.allocate(capacity: width)
        let rowCb = UnsafeMutablePointer<Float>.allocate(capacity: width / 2)
        let rowCr = UnsafeMutablePointer<Float>.allocate(capacity: width / 2)
        defer {
            rowAcc.deallocate()
            rowCb.deallocate()
            rowCr.deallocate()
        }
        let centreY = Double(height) / 2
        let noise = noiseTable.values
        do {
            // Luma.
            for y in 0..<height {
                let rollShift = Int((roll * (Double(y) - centreY)).rounded())
                let bgRow = min(max(y + m - Int(bg.1.rounded()), 0), c.background.height - 1)
                let bgX = m - Int(bg.0.rounded()) - rollShift
                let src = c.background.luma + bgRow * c.background.width + bgX
                rowAcc.update(from: src, count: width)
                composite(layer: c.body, luma: true, into: rowAcc, cb: nil, y: y, margin: m, offset: bodyOff,
                          rollShift: rollShift, pulse: pulse, width: width)
                composite(layer: c.head, luma: true, into: rowAcc, cb: nil, y: y, margin: m, offset: headOff,
                          rollShift: rollShift, pulse: pulse, width: width)
                let o = out + y * width
                let start = Int(random.next() & 0xFFFF)
                let g = 219 * gain
                for x in 0..<width {
                    let v = 16 + rowAcc[x] * g + noise[(start + x) & 0xFFFF] * sigma + 0.5
                    o[x] = UInt8(min(max(v, 0), 255))
                }
            }
        }
        // Chroma (half resolution).
        let cWidth = width / 2
        let chromaOut = out + width * height
        do {
            let cbg = (bg.0 / 2, bg.1 / 2), cbody = (bodyOff.0 / 2, bodyOff.1 / 2), chead = (headOff.0 / 2, headOff.1 / 2)
            for y in 0..<(height / 2) {
                let rollShift = Int((roll * (Double(2 * y) - centreY) / 2).rounded())
                let bgRow = min(max(y + m / 2 - Int(cbg.1.rounded()), 0), c.background.cHeight - 1)
                let bgX = m / 2 - Int(cbg.0.rounded()) - rollShift
                rowCb.update(from: c.background.cb + bgRow * c.background.cWidth + bgX, count: cWidth)
                rowCr.update(from: c.background.cr + bgRow * c.background.cWidth + bgX, count: cWidth)
                composite(layer: c.body, luma: false, into: rowCb, cb: rowCr, y: y, margin: m / 2, offset: cbody,
                          rollShift: rollShift, pulse: pulse, width: cWidth)
                composite(layer: c.head, luma: false, into: rowCb, cb: rowCr, y: y, margin: m / 2, offset: chead,
                          rollShift: rollShift, pulse: pulse, width: cWidth)
                let o = chromaOut + y * width
                let start = Int(random.next() & 0xFFFF)
                let g = 224 * gain, s = sigma * 0.5
                for x in 0..<cWidth {
                    let u = 128 + rowCb[x] * g + noise[(start + 2 * x) & 0xFFFF] * s + 0.5
                    let v = 128 + rowCr[x] * g + noise[(start + 2 * x + 1) & 0xFFFF] * s + 0.5
                    o[2 * x] = UInt8(min(max(u, 0), 255))
                    o[2 * x + 1] = UInt8(min(max(v, 0), 255))
                }
            }
        }
    }

    /// Composites one layer over a row accumulator, linear in y between the two nearest source rows.
    /// For luma, `acc` is luma; for chroma, `acc` is Cb and `cb` is Cr (naming kept short for speed).
    @inline(__always) @_optimize(speed)
    private func composite(layer: SceneLayer, luma: Bool, into acc: UnsafeMutablePointer<Float>,
                           cb crAcc: UnsafeMutablePointer<Float>?, y: Int, margin m: Int, offset: (Double, Double),
                           rollShift: Int, pulse: Float, width: Int) {
        let lw = luma ? layer.width : layer.cWidth
        let lh = luma ? layer.height : layer.cHeight
        let x0 = luma ? layer.x0 : layer.x0 / 2
        let y0 = luma ? layer.y0 : layer.y0 / 2
        let q = Double(y + m) - offset.1 - Double(y0)
        let base = q.rounded(.down)
        let row = Int(base)
        guard row >= 0, row + 1 < lh else { return }
        let f = Float(q - base), f0 = 1 - f
        let sx = m - Int(offset.0.rounded()) - rollShift - x0   // local column = x + sx
        let starts = luma ? layer.rowStart : layer.cRowStart
        let ends = luma ? layer.rowEnd : layer.cRowEnd
        var lo = Int(min(starts[row], starts[row + 1])), hi = Int(max(ends[row], ends[row + 1]))
        if ends[row] == 0 { lo = Int(starts[row + 1]) }
        if ends[row + 1] == 0 { lo = Int(starts[row]) }
        if hi <= lo { return }
        let xFrom = max(0, lo - sx), xTo = min(width, hi - sx)
        guard xFrom < xTo else { return }
        let i0 = row * lw, i1 = (row + 1) * lw
        if luma {
            let lum = layer.luma, lp = layer.lumaPulse, al = layer.alpha
            do {
                for x in xFrom..<xTo {
                    let c = x + sx
                    let a = al[i0 + c] * f0 + al[i1 + c] * f
                    let v = (lum[i0 + c] + pulse * lp[i0 + c]) * f0 + (lum[i1 + c] + pulse * lp[i1 + c]) * f
                    acc[x] = acc[x] * (1 - a) + v
                }
            }
        } else if let crAcc {
            let cbv = layer.cb, crv = layer.cr, cbp = layer.cbPulse, crp = layer.crPulse, al = layer.cAlpha
            do {
                for x in xFrom..<xTo {
                    let c = x + sx
                    let a = al[i0 + c] * f0 + al[i1 + c] * f
                    let u = (cbv[i0 + c] + pulse * cbp[i0 + c]) * f0 + (cbv[i1 + c] + pulse * cbp[i1 + c]) * f
                    let v = (crv[i0 + c] + pulse * crp[i0 + c]) * f0 + (crv[i1 + c] + pulse * crp[i1 + c]) * f
                    acc[x] = acc[x] * (1 - a) + u
                    crAcc[x] = crAcc[x] * (1 - a) + v
                }
            }
        }
    }
}

/// A table of standard-normal samples the renderer draws sensor noise from.
// @unchecked: written once in init, only read afterwards, freed in deinit.
final class NoiseTable: @unchecked Sendable {
    let values: UnsafeMutablePointer<Float>

    init(_ samples: [Float]) {
        values = UnsafeMutablePointer<Float>.allocate(capacity: samples.count)
        samples.withUnsafeBufferPointer { values.initialize(from: $0.baseAddress!, count: samples.count) }
    }

    deinit { values.deallocate() }
}
