import Foundation
import GlassesSimulator
import Testing
@testable import VitalsEngine

/// The engine with the glasses' IMU (``VitalsEngine/addRotationRate(at:across:down:)``): the rotation read at the
/// frames' times, the spans of strong rotation it leaves out, and a nodding wearer read right with it where the
/// engine alone reads a rhythm of the nods.
@Suite("The engine with the glasses' IMU")
struct MotionSensorTests {
    @Test("the rotation at the frames' times: angles that move as the sway's, rates equal to it, read at the offset; nil when the readings cover under half the span")
    func rotationAtTheFramesTimes() throws {
        let offset = 0.04
        let alignment = MotionClockAlignmentTests.aligned(offset: offset)
        let sway = MotionClockAlignmentTests.Sway.across
        let rotation = try #require(alignment.rotation(from: 2, rate: 24, count: 240, offset: offset))
        #expect(rotation.angle.across.count == 240 && rotation.rate.down.count == 240)
        let level = rotation.angle.across[0] - sway.angle(2)
        for k in stride(from: 0, to: 240, by: 7) {
            let t = 2 + Double(k) / 24
            #expect(abs(rotation.angle.across[k] - level - sway.angle(t)) < 2e-4, "angle at \(t) s")
            #expect(abs(rotation.rate.across[k] - sway.rate(t)) < 2e-3, "rate at \(t) s")
        }
        // Read without the offset, the rate is the sway's 40 ms later.
        let early = try #require(alignment.rotation(from: 2, rate: 24, count: 240, offset: 0))
        #expect(abs(early.rate.across[100] - sway.rate(2 + 100.0 / 24 - offset)) < 2e-3)
        #expect(alignment.rotation(from: 16, rate: 24, count: 240, offset: 0) == nil, "16–26 s: the readings end at 20 s")
        #expect(alignment.rotation(from: 14, rate: 24, count: 240, offset: 0) != nil, "14–24 s: six of ten seconds covered")
        #expect(MotionClockAlignment().rotation(from: 0, rate: 24, count: 10, offset: 0) == nil)
    }

    @Test("strong rotation: a burst well above the window's median is marked with 0.2 s either side; a walk's steady rotation, a window mostly moving and a one-way turn are kept")
    func strongRotationSpans() {
        let fs = 24.0
        let still = [Double](repeating: 0, count: 240)
        func marked(_ speeds: [Double]) -> [Bool] { VitalsEngine.strongRotation(across: speeds, down: still, rate: fs) }
        // A nod: pitch back and forth at 1.8 Hz for a second, over a slow drift.
        var nod = [Double](repeating: 0.02, count: 240)
        for k in 100 ..< 124 { nod[k] = 0.5 * sin(2 * .pi * 1.8 * Double(k - 100) / fs) }
        let nodMarked = VitalsEngine.strongRotation(across: still, down: nod, rate: fs)
        let margin = Int((VitalsEngine.strongRotationMargin * fs).rounded())
        let first = nod.firstIndex { abs($0) > 0.1 }!, last = nod.lastIndex { abs($0) > 0.1 }!
        #expect(nodMarked.enumerated().allSatisfy { k, m in m == (first - margin ... last + margin).contains(k) }, "\(nodMarked.indices.filter { nodMarked[$0] })")
        // A turn: one way, as fast, for as long: a step of the picture's position the fit takes out, kept.
        var turn = [Double](repeating: 0.02, count: 240)
        for k in 100 ..< 124 { turn[k] = 0.5 * sin(.pi * Double(k - 100) / 24) }
        #expect(!marked(turn).contains(true))
        #expect(!VitalsEngine.strongRotation(across: turn.map { $0 * 0.6 }, down: turn.map { $0 * 0.8 }, rate: fs).contains(true), "diagonal")
        // A turn there and straight back within the margins nets out: left out.
        var back = turn
        for k in 124 ..< 148 { back[k] = -turn[k - 24] }
        #expect(marked(back).contains(true))
        // A walk: rotating all the time, back and forth at 0.3 rad/s; nothing stands out three times above the median.
        let walk = (0 ..< 240).map { 0.3 * sin(2 * .pi * 1.8 * Double($0) / fs) + 0.05 }
        #expect(!marked(walk).contains(true))
        // Slow below 0.1 rad/s is never strong, however it compares.
        var slow = [Double](repeating: 0.001, count: 240)
        slow[50] = 0.09
        #expect(!marked(slow).contains(true))
        // Bursts over half the window: kept whole.
        var busy = [Double](repeating: 0.01, count: 240)
        for k in 0 ..< 130 { busy[k] = 0.6 * sin(2 * .pi * 2 * Double(k) / fs) }
        #expect(!marked(busy).contains(true))
        #expect(VitalsEngine.strongRotation(across: [], down: [], rate: fs).isEmpty)
        #expect(VitalsEngine.strongRotation(across: [1], down: [], rate: fs).isEmpty)
    }

    @Test("the IMU's signals join the motion fit only when they explain more of the skin's colour than chance would")
    func sensorSignalsEarnTheirPlace() throws {
        let fs = 24.0, n = 720, band = (low: 0.67, high: 3.0)
        var rng = SplitMix(seed: 11)
        func sway(_ hz: Double, _ phase: Double) -> [Double] { (0 ..< n).map { sin(2 * .pi * hz * Double($0) / fs + phase) } }
        // The picture's motion (one signal) and the IMU's four: rhythms of their own in the pulse band.
        let picture = sway(1.1, 0.3)
        let sensor = [sway(1.7, 0.1), sway(2.3, 1.2), sway(0.9, 2.0), sway(1.35, 0.7)]
        let motion = [picture] + sensor
        let earning: Set<Int> = [1, 2, 3, 4]
        func channels(sensorEcho: Double) -> [[Double]] {
            let green = (0 ..< n).map { i -> Double in
                let echo: Double = 0.8 * picture[i] + sensorEcho * sensor[0][i]
                let pulse: Double = 0.3 * sin(2 * Double.pi * 1.5 * Double(i) / fs)
                return 110 + echo + pulse + 0.5 * rng.gaussian()
            }
            return [green.map { $0 + 40 }, green, green.map { $0 - 20 }]
        }
        // The skin follows the IMU's first signal as well as the picture's: the IMU earns its place.
        let echoing = try #require(VitalsEngine.motionCoupling(channels(sensorEcho: 0.5), motion: motion, rate: fs, low: band.low,
                                                               high: band.high, earning: earning))
        #expect(echoing.used == [0, 1, 2, 3, 4])
        // The skin follows the picture alone: the IMU's signals would only fit the noise, and stay out.
        let quiet = try #require(VitalsEngine.motionCoupling(channels(sensorEcho: 0), motion: motion, rate: fs, low: band.low,
                                                             high: band.high, earning: earning))
        #expect(quiet.used == [0])
        // Without `earning`, every signal that moves is fitted, as before.
        let all = try #require(VitalsEngine.motionCoupling(channels(sensorEcho: 0), motion: motion, rate: fs, low: band.low,
                                                           high: band.high))
        #expect(all.used == [0, 1, 2, 3, 4])
    }

    @Test("bridging: a gap becomes the straight line between its neighbours; a gap at an end holds the nearest value")
    func bridging() {
        let x: [Double] = [0, 1, 9, 9, 9, 5, 6, 9]
        let gaps = [false, false, true, true, true, false, false, true]
        #expect(VitalsEngine.bridged(x, over: gaps) == [0, 1, 2, 3, 4, 5, 6, 6])
        #expect(VitalsEngine.bridged([7, 1, 2], over: [true, false, false]) == [1, 1, 2])
        #expect(VitalsEngine.bridged(x, over: []) == x && VitalsEngine.bridged([1, 2], over: [true, true]) == [1, 2])
    }

    @Test("bridging below a cutoff: a gap keeps what it held below the cutoff and loses what it held above")
    func bridgingKeepsBelow() {
        let fs = 24.0
        let slow = (0 ..< 288).map { sin(2 * .pi * 0.8 * Double($0) / fs) }
        // A nod's echo, five times the slow wave, at 2 Hz in the gap (4 s to 7.4 s) alone.
        let gaps = (0 ..< 288).map { (96 ..< 178).contains($0) }
        let x = slow.indices.map { slow[$0] + (gaps[$0] ? 5 * sin(2 * .pi * 2 * Double($0) / fs) : 0) }
        // Measured inside the gap, half a second in from its edges (where the line and the filter meet).
        func rmsFromSlow(_ y: [Double]) -> Double {
            let d = (108 ..< 166).map { y[$0] - slow[$0] }
            return (d.reduce(0) { $0 + $1 * $1 } / Double(d.count)).squareRoot()
        }
        let line = VitalsEngine.bridged(x, over: gaps)
        let kept = VitalsEngine.bridged(x, over: gaps, keepingBelow: 1.2, rate: fs)
        // The straight line loses the slow wave in the gap (its RMS is 0.71); kept below 1.2 Hz, the gap holds it,
        // and the 2 Hz echo passes at a few per cent of its amplitude.
        #expect(rmsFromSlow(line) > 0.5, "line: \(rmsFromSlow(line))")
        #expect(rmsFromSlow(kept) < 0.2, "kept: \(rmsFromSlow(kept))")
        // Outside the gap the signal is as it was (within a tenth of the slow wave), beyond the filter's reach (a second)
        // from the gap's edges.
        let outside = zip(kept, x).enumerated().filter { i, _ in !(72 ..< 202).contains(i) }.map { abs($1.0 - $1.1) }
        #expect(outside.max() ?? 1 < 0.1, "outside: \(outside.max() ?? 1)")
        #expect(VitalsEngine.bridged(x, over: gaps, keepingBelow: 0, rate: fs) == line)
    }

    @Test("the low-pass passes 1 / (1 + (f / cutoff)⁸) of a sine's amplitude, in phase")
    func lowPass() {
        let fs = 24.0
        func amplitude(_ f: Double) -> Double {
            let x = (0 ..< 480).map { sin(2 * .pi * f * Double($0) / fs) }
            let y = SignalMath.lowPass(x, sampleRate: fs, cutoff: 1.2)
            // Away from the ends: the projection on the input (in phase) over the middle 10 s.
            let middle = 120 ..< 360
            return middle.reduce(0) { $0 + y[$1] * x[$1] } / middle.reduce(0) { $0 + x[$1] * x[$1] }
        }
        for f in [0.6, 1.0, 1.2, 2.0, 2.4] {
            let expected = 1 / (1 + pow(f / 1.2, 8))
            #expect(abs(amplitude(f) - expected) < 0.02, "\(f) Hz: \(amplitude(f)) against \(expected)")
        }
    }

    @Test("the nods' spans are kept below 0.6 of the nod's rate while they hold there no more than twice the power of the rest")
    func nodCutoff() throws {
        let engine = try VitalsEngine()
        let fs = 24.0, n = 288
        // Nods at 2 Hz in two spans of 3.4 s (pitch, the IMU's `down`), a still head between.
        let gaps = (0 ..< n).map { (48 ..< 130).contains($0) || (200 ..< 282).contains($0) }
        let rate = (0 ..< n).map { gaps[$0] ? 0.5 * sin(2 * .pi * 2 * Double($0) / fs) : 0 }
        let still = [Double](repeating: 0, count: n)
        let signals = [still, still, still, rate.map { $0 * 300 }]
        // A pulse at 50 bpm through it all; then the same with a strong slow echo (0.9 Hz) in the spans alone.
        let pulse = (0 ..< n).map { sin(2 * .pi * (50.0 / 60) * Double($0) / fs) }
        let echo = (0 ..< n).map { gaps[$0] ? 4 * sin(2 * .pi * 0.9 * Double($0) / fs) : 0 }
        func skin(_ x: [Double]) -> [[Double]] { [x.map { 120 + $0 }, x.map { 100 + 2 * $0 }, x.map { 80 + $0 }] }
        let cutoff = engine.nodCutoff(signals, rate: fs, skin: skin(pulse), gaps: gaps)
        #expect(abs(cutoff - 0.6 * 2) < 0.05, "\(cutoff)")
        #expect(engine.nodCutoff(signals, rate: fs, skin: skin(zip(pulse, echo).map(+)), gaps: gaps) == 0)
        #expect(engine.nodCutoff(signals, rate: fs, skin: skin(pulse), gaps: [Bool](repeating: false, count: n)) == 0)
        // Nods at 1 Hz: 0.6 of it is under the pulse band's floor (40 bpm), and nothing is kept.
        let slowNods = (0 ..< n).map { gaps[$0] ? 150 * sin(2 * .pi * 1.0 * Double($0) / fs) : 0 }
        #expect(engine.nodCutoff([still, still, still, slowNods], rate: fs, skin: skin(pulse), gaps: gaps) == 0)
    }

    @Test("a rate on a line of the wearer's rhythmic rotation is doubted only while the rotation moves the picture by 3 px or more, only on the line, and only where the fit took out three quarters of the skin's power")
    func motionRhythmDoubt() throws {
        let engine = try VitalsEngine()
        let fs = 24.0
        // The IMU's displacement: a walk's step at 1.8 Hz, 6 px, across, over the head's irregular 1 px; 12 s windows,
        // three of them (a line needs three).
        var random = SeededRandom(seed: 3, stream: 1)
        let step = (0 ..< 288).map { 6 * sin(2 * .pi * 1.8 * Double($0) / fs) + random.gaussian() }
        let spectrum = BandSpectrum(step, rate: fs, low: 0.7, high: 3.5, step: PulseAnalysis.spectrumStep)
        for _ in 0 ..< 3 { engine.sensorLines.update(spectrum, spectrum) }
        engine.sensorMotionLevel = 4
        #expect(engine.onMotionRhythm(1.8, echoLeft: 0.2) && engine.onMotionRhythm(1.85, echoLeft: 0.2))
        #expect(!engine.onMotionRhythm(1.2, echoLeft: 0.2) && !engine.onMotionRhythm(2.3, echoLeft: 0.2))
        #expect(!engine.onMotionRhythm(1.8, echoLeft: 0.8), "a pulse that shares the step's rate keeps its power through the fit")
        // The moving benchmark's walking subject at 111.6 bpm: its pulse on the step's line kept between a quarter and a
        // half of its power.
        #expect(!engine.onMotionRhythm(1.8, echoLeft: 0.4), "a pulse that kept 40 % of its power through the fit stays")
        engine.sensorMotionLevel = 2
        #expect(!engine.onMotionRhythm(1.8, echoLeft: 0.2), "a sway of a pixel or two is the fit's to take out")
    }

    /// What the two engines made of the nodding wearer: each stable pulse sample's error (bpm, from 15 s), and the
    /// clocks as the one with the IMU related them.
    struct NoddingRun: Sendable {
        var alone: [Double] = [], helped: [Double] = []
        /// Every pulse sample's error with the IMU, stable or not (bpm, from 15 s).
        var helpedSamples: [Double] = []
        var estimate: MotionClockAlignment.Estimate?
        var sensors = (alone: false, helped: false)
    }

    /// A subject of the benchmark (by default its first, 107 bpm), nodding, through HEVC at 1 Mbit/s and 24 fps for
    /// 45 s (the moving conditions' `hvc1-1M-nod`), read by one engine given the gyroscope (60 Hz, on a clock 40 ms
    /// ahead) and, with `alone`, one without it.
    static func nodding(seed: UInt64 = 1000, alone withAlone: Bool = true) throws -> NoddingRun {
        let scene = try SceneThroughHEVC.benchmarkSubject(seed: seed, wearerMotion: .nodding)
        let truth = scene.groundTruth(through: 46)
        let alone = try VitalsEngine(), helped = try VitalsEngine()
        var imu = 0
        var run = NoddingRun()
        try SceneThroughHEVC.run(scene, width: 504, height: 896, seconds: 45, bitrate: 1_000_000, fps: 24) { decoded, t in
            while Double(imu) / 60 <= t {
                let at = Double(imu) / 60
                guard let gyroscope = SimulatedIMU.sample(rotation: scene.headRotation(at: at), timestampNs: 0).gyroscope else {
                    throw TestFailure("the simulated IMU gave no gyroscope reading")
                }
                helped.addRotationRate(at: at + 0.04, across: Double(gyroscope.x), down: Double(gyroscope.y))
                imu += 1
            }
            for (engine, withIMU) in [(alone, false), (helped, true)] where withIMU || withAlone {
                let result = try SceneThroughHEVC.process(decoded, with: engine)
                for sample in result.pulseRate {
                    let ts = Double(sample.timestampUs) / 1e6
                    guard ts >= 15, let gt = truth.meanPulseRate(in: (ts - 12) ... ts) else { continue }
                    if withIMU { run.helpedSamples.append(sample.value - gt) }
                    guard sample.confidence >= VitalsStability.pulse else { continue }
                    if withIMU { run.helped.append(sample.value - gt) } else { run.alone.append(sample.value - gt) }
                }
            }
        }
        run.estimate = helped.motionSensorAlignment
        run.sensors = (alone.hasMotionSensor, helped.hasMotionSensor)
        return run
    }

    @Test("a nodding wearer after HEVC at 1 Mbit/s, 24 fps: with the IMU the pulse is within 3 bpm and never stable off by 10; the engine alone reads the nods",
          .timeLimit(.minutes(6)))
    func noddingWearer() async throws {
        // Tens of seconds of CPU: on a thread of its own, not the cooperative pool's.
        let run = try await onOwnThread { try Self.nodding() }
        func median(_ errors: [Double]) -> Double? { errors.isEmpty ? nil : errors.sorted()[errors.count / 2] }
        #expect(run.sensors.helped && !run.sensors.alone)
        #expect(run.helped.count >= 3 && abs(median(run.helped) ?? 99) <= 3 && run.helped.allSatisfy { abs($0) <= 10 },
                "with the IMU: \(run.helped)")
        // What the IMU is for: the engine alone is stably wrong, or never stable.
        #expect(run.alone.isEmpty || run.alone.contains { abs($0) > 10 } || abs(median(run.alone)!) > 3, "alone: \(run.alone)")
        let estimate = try #require(run.estimate, "the clocks were never related")
        #expect(abs(estimate.offset - 0.04) < 1.0 / 24, "\(estimate)")
    }

    @Test("a slow pulse (46.8 bpm) under nods at 117 bpm keeps its beats through the nods: with the IMU every sample within 5 bpm",
          .timeLimit(.minutes(6)))
    func slowPulseThroughNods() async throws {
        // The benchmark's seventh subject. With the nods' spans left out at every frequency, the bridges' straight lines
        // took the place of a third of its beats and from 36 s it read 40–43 bpm, then its harmonic (90–94 bpm).
        let run = try await onOwnThread { try Self.nodding(seed: 1006, alone: false) }
        #expect(run.helpedSamples.count >= 20 && run.helpedSamples.allSatisfy { abs($0) <= 5 }, "\(run.helpedSamples)")
        #expect(run.helped.count >= 10, "stable: \(run.helped)")
    }
}
