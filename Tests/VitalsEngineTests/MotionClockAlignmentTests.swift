import Foundation
import GlassesMedia
import GlassesSimulator
import Synchronization
import Testing
import WearablesKit
@testable import VitalsEngine

/// The IMU's clock against the video's, from the camera's own motion (``MotionClockAlignment``): on synthetic
/// series with a known offset, on the cases that must give no answer, and through the simulated glasses (their IMU
/// clock shifted) and the engine's own measurement of the background.
@Suite("The IMU's clock against the video's")
struct MotionClockAlignmentTests {
    /// A head sway: slow sines on each axis (radians), like the simulator's, and its rate.
    struct Sway {
        var terms: [(amplitude: Double, hertz: Double, phase: Double)]
        func angle(_ t: Double) -> Double { terms.reduce(0) { $0 + $1.amplitude * sin(2 * .pi * $1.hertz * t + $1.phase) } }
        func rate(_ t: Double) -> Double {
            terms.reduce(0) { $0 + $1.amplitude * 2 * .pi * $1.hertz * cos(2 * .pi * $1.hertz * t + $1.phase) }
        }
        static let across = Sway(terms: [(0.02, 0.13, 0.4), (0.01, 0.31, 1.0), (0.004, 1.1, 2.0)])
        static let down = Sway(terms: [(0.015, 0.11, 2.5), (0.01, 0.23, 0.3), (0.006, 0.9, 1.2)])
    }

    /// Frames at `fps` whose background moved by whole pixels (`focal` px a radian), and gyroscope readings at
    /// `hertz` stamped `offset` seconds ahead on the IMU's clock, for `seconds`.
    static func aligned(offset: Double, seconds: Double = 20, fps: Double = 24, hertz: Double = 60, focal: Double = 300,
                        across: Sway = .across, down: Sway = .down, rounded: Bool = true, measured: (Double) -> Bool = { _ in true },
                        rates: ((Double) -> (Double, Double))? = nil) -> MotionClockAlignment {
        var alignment = MotionClockAlignment()
        var imu = 0.0, frame = 0.0
        // Interleaved in time, as they would arrive.
        while frame < seconds || imu < seconds {
            if imu <= frame {
                let (a, d) = rates?(imu) ?? (across.rate(imu), down.rate(imu))
                alignment.addRotationRate(at: imu + offset, across: a, down: d)
                imu += 1 / hertz
            } else {
                let x = focal * across.angle(frame), y = focal * down.angle(frame)
                let seen = measured(frame)
                alignment.addFrame(at: frame, across: seen ? (rounded ? x.rounded() : x) : nil, down: seen ? (rounded ? y.rounded() : y) : nil)
                frame += 1 / fps
            }
        }
        return alignment
    }

    @Test("a known offset is recovered within a millisecond-scale step, and the gains are the focal length",
          arguments: [-0.3, -0.12, 0, 0.041, 0.2])
    func recoversAKnownOffset(offset: Double) throws {
        let estimate = try #require(Self.aligned(offset: offset).estimate(), "no estimate at \(offset) s")
        #expect(abs(estimate.offset - offset) < 0.005, "estimated \(estimate.offset) s for \(offset) s")
        #expect(estimate.fit > 0.9 && estimate.pairs > 700, "\(estimate)")
        #expect(abs(estimate.pixelsPerRadianAcross - 300) < 15 && abs(estimate.pixelsPerRadianDown - 300) < 15, "\(estimate)")
    }

    @Test("a camera axis reversed is fitted with a negative gain: the offset does not depend on the axes' conventions")
    func reversedAxis() throws {
        let estimate = try #require(Self.aligned(offset: 0.1, rates: { t in (-Sway.across.rate(t), Sway.down.rate(t)) }).estimate())
        #expect(abs(estimate.offset - 0.1) < 0.005 && estimate.pixelsPerRadianAcross < -285, "\(estimate)")
    }

    @Test("no answer when the picture barely moves, when the gyroscope measured something else, from a pure sway, too short a run or an offset out of range")
    func refusals() {
        // A sway of under a pixel, measured exactly: the fit is perfect, but the engine's own noise would be its size.
        let tiny = Sway(terms: [(0.003, 0.13, 0.4), (0.001, 0.9, 1.0)])
        #expect(Self.aligned(offset: 0.1, focal: 300, across: tiny, down: tiny, rounded: false).estimate() == nil, "a picture that barely moves")
        // The gyroscope's own series, unrelated to the picture's (another sway).
        let other = Sway(terms: [(0.02, 0.17, 2.0), (0.01, 0.53, 0.7)]), other2 = Sway(terms: [(0.02, 0.07, 1.0), (0.01, 0.41, 2.2)])
        #expect(Self.aligned(offset: 0.1, rates: { t in (other.rate(t), other2.rate(t)) }).estimate() == nil, "unrelated rotation")
        // One sine at 1.25 Hz: an offset and one 0.4 s away explain it alike (with the gain's sign flipped).
        let pure = Sway(terms: [(0.02, 1.25, 0)])
        #expect(Self.aligned(offset: 0.1, across: pure, down: pure).estimate() == nil, "a periodic sway")
        // Too short: 1.6 s of a large sway (18 pairs once the search range is kept clear at both ends) has peaks
        // as good as the right one.
        #expect(Self.aligned(offset: 0.1, seconds: 1.6, focal: 3000).estimate() == nil, "too short")
        // Too few frames measured: the background matched for 0.3 s every 2.5 s of 20 (under 40 pairs).
        #expect(Self.aligned(offset: 0.1, focal: 3000, measured: { $0.truncatingRemainder(dividingBy: 2.5) < 0.3 }).estimate() == nil,
                "too few frames measured")
        // An offset just beyond the range searched is not claimed at its edge; one far beyond finds no fit.
        #expect(Self.aligned(offset: 0.55).estimate() == nil, "just out of range")
        #expect(Self.aligned(offset: 0.8).estimate() == nil, "out of range")
    }

    @Test("bounded: the window and the capacity cap what is kept; a clock that goes back starts its series afresh; non-finite values are ignored")
    func bounded() throws {
        var alignment = MotionClockAlignment(window: 10)
        for k in 0 ..< 36_000 {  // 10 minutes at 60 Hz
            let t = Double(k) / 60
            alignment.addRotationRate(at: t, across: Sway.across.rate(t), down: Sway.down.rate(t))
            if k % 2 == 0 { alignment.addFrame(at: t, across: (300 * Sway.across.angle(t)).rounded(), down: (300 * Sway.down.angle(t)).rounded()) }
        }
        #expect(alignment.frames.count <= 10 * 30 + 1 && alignment.rates.count <= Int(10.5 * 60) + 1)
        #expect(try #require(alignment.estimate()).offset.magnitude < 0.005)
        alignment.addRotationRate(at: .nan, across: 1, down: 1)
        alignment.addRotationRate(at: 700, across: .infinity, down: 1)
        alignment.addFrame(at: 700, across: .nan, down: 1)
        #expect(alignment.frames.last?.across == nil && alignment.rates.last?.t ?? 0 < 600)
        alignment.addRotationRate(at: 1, across: 0, down: 0)  // a new IMU clock
        #expect(alignment.rates.count == 1 && alignment.estimate() == nil)
        var capped = MotionClockAlignment(window: 300)
        for k in 0 ..< 3 * MotionClockAlignment.capacity { capped.addFrame(at: Double(k) / 1000, across: 0, down: 0) }
        #expect(capped.frames.count == MotionClockAlignment.capacity)
    }

    @Test("through the simulated glasses and the engine: the IMU's clock shifted by the simulator is recovered within one frame interval",
          arguments: [-0.12, 0.09])
    func simulatedGlassesShiftedClock(offset: Double) async throws {
        let fps: UInt = 24
        let scheduler = ManualScheduler()
        let wearables = Wearables.makeInstance(configuration: try WearablesConfiguration(scheduler: scheduler))
        let kit = SimulatorKit(scheduler: scheduler)
        let glasses = try kit.pairGlasses(
            with: wearables, profile: SubjectProfile(headMotion: true, headMotionAmplitude: 0.02, seed: 5),
            options: SimulatedGlasses.Options(motionClockOffset: .milliseconds(Int64((offset * 1000).rounded()))))
        scheduler.advance(by: .milliseconds(10))
        let session = try wearables.createSession(deviceSelector: SpecificDeviceSelector(device: glasses.info.identifier))
        try session.start()
        scheduler.advance(by: .milliseconds(10))
        let camera = try #require(try session.addCamera(
            config: StreamConfiguration.validated(videoCodec: .raw, resolution: .low, frameRate: fps)))
        let frames = Mutex<[VideoFrame]>([])
        let token = camera.stream.videoFramePublisher.listen { frame in frames.withLock { $0.append(frame) } }
        camera.stream.start()
        scheduler.advance(by: .milliseconds(200))
        #expect(camera.stream.state == .streaming)
        // 15 Hz for 16 s: every sample fits the motion stream's buffer (256) without reading while the clock runs.
        let motion = try #require(try session.addMotion(configuration: MotionConfiguration(samplingRate: .hz15)))
        motion.start()
        scheduler.advance(by: .seconds(16))
        try session.removeMotion()
        var samples: [MotionSample] = []
        for await sample in motion.samples { samples.append(sample) }
        camera.stream.stop()
        _ = token
        #expect(samples.count >= 235)

        let engine = try VitalsEngine()
        var alignment = MotionClockAlignment()
        var measured = 0
        for frame in frames.withLock({ $0 }) {
            guard case .raw(let image) = frame.content else { continue }
            let result = try image.data.withUnsafeBytes { raw in
                let base = raw.baseAddress!.assumingMemoryBound(to: UInt8.self)
                let view = try VitalsPixelView(format: .nv12VideoRange, width: image.width, height: image.height, plane0: base,
                                               bytesPerRow0: image.lumaBytesPerRow,
                                               plane1: base + image.lumaBytesPerRow * image.height, bytesPerRow1: image.chromaBytesPerRow)
                return engine.process(view, timestampUs: frame.presentationTimeUs)
            }
            if result.measurement?.backgroundHorizontal != nil { measured += 1 }
            alignment.addFrame(at: Double(frame.presentationTimeUs) / 1e6, across: result.measurement?.backgroundHorizontal,
                               down: result.measurement?.background)
        }
        for sample in samples {
            let gyro = try #require(sample.gyroscope)
            alignment.addRotationRate(at: Double(sample.timestampNs) / 1e9, across: Double(gyro.x), down: Double(gyro.y))
        }
        #expect(measured > 300, "the engine measured the background on \(measured) frames")
        let estimate = try #require(alignment.estimate(), "no estimate")
        #expect(abs(estimate.offset - offset) < 1 / Double(fps), "estimated \(estimate.offset) s for \(offset) s: \(estimate)")
        // The simulator's camera: a picture shift of 0.6 × the width (360 px) a radian, yaw across and pitch down.
        let focal = SimulatedScene.focalLengthPerWidth * 360
        #expect(abs(estimate.pixelsPerRadianAcross / focal - 1) < 0.15 && abs(estimate.pixelsPerRadianDown / focal - 1) < 0.15,
                "\(estimate)")
    }
}
