import Foundation
import Testing
import WearablesKit
@testable import GlassesSimulator

/// Mean luma over a set of boxes of an NV12 image.
func meanLuma(_ image: RawVideoImage, boxes: [PixelRect]) -> Double {
    var sum = 0, count = 0
    image.data.withUnsafeBytes { raw in
        let p = raw.bindMemory(to: UInt8.self)
        for b in boxes {
            for y in max(0, b.y)..<min(image.height, b.y + b.height) {
                for x in max(0, b.x)..<min(image.width, b.x + b.width) {
                    sum += Int(p[y * image.lumaBytesPerRow + x])
                    count += 1
                }
            }
        }
    }
    return count == 0 ? 0 : Double(sum) / Double(count)
}

/// Mean green (BT.601 video range → RGB) over boxes of an NV12 image.
func meanGreen(_ image: RawVideoImage, boxes: [PixelRect]) -> Double {
    var sum = 0.0, count = 0
    image.data.withUnsafeBytes { raw in
        let p = raw.bindMemory(to: UInt8.self)
        let chroma = image.lumaBytesPerRow * image.height
        for b in boxes {
            for y in max(0, b.y)..<min(image.height, b.y + b.height) {
                for x in max(0, b.x)..<min(image.width, b.x + b.width) {
                    let yy = (Double(p[y * image.lumaBytesPerRow + x]) - 16) / 219
                    let ci = chroma + (y / 2) * image.chromaBytesPerRow + (x / 2) * 2
                    let cb = (Double(p[ci]) - 128) / 224, cr = (Double(p[ci + 1]) - 128) / 224
                    sum += yy - 0.344136 * cb - 0.714136 * cr
                    count += 1
                }
            }
        }
    }
    return count == 0 ? 0 : sum / Double(count)
}

/// Pearson correlation.
func correlation(_ a: [Double], _ b: [Double]) -> Double {
    let n = Double(a.count)
    let ma = a.reduce(0, +) / n, mb = b.reduce(0, +) / n
    var sab = 0.0, saa = 0.0, sbb = 0.0
    for i in a.indices {
        sab += (a[i] - ma) * (b[i] - mb)
        saa += (a[i] - ma) * (a[i] - ma)
        sbb += (b[i] - mb) * (b[i] - mb)
    }
    return sab / (saa * sbb).squareRoot()
}

/// Second-order-section band-pass (Butterworth-like, RBJ biquad) applied forwards and backwards.
func bandPass(_ x: [Double], sampleRate: Double, low: Double, high: Double) -> [Double] {
    func biquad(_ input: [Double], highPass: Bool, cutoff: Double) -> [Double] {
        let w = 2 * Double.pi * cutoff / sampleRate, q = 0.7071
        let alpha = sin(w) / (2 * q), cw = cos(w)
        var b0, b1, b2: Double
        if highPass { b0 = (1 + cw) / 2; b1 = -(1 + cw); b2 = (1 + cw) / 2 } else { b0 = (1 - cw) / 2; b1 = 1 - cw; b2 = (1 - cw) / 2 }
        let a0 = 1 + alpha, a1 = -2 * cw, a2 = 1 - alpha
        var out = [Double](repeating: 0, count: input.count)
        var x1 = input.first ?? 0, x2 = x1, y1 = highPass ? 0 : x1, y2 = y1
        for i in input.indices {
            let y = (b0 * input[i] + b1 * x1 + b2 * x2 - a1 * y1 - a2 * y2) / a0
            x2 = x1; x1 = input[i]; y2 = y1; y1 = y
            out[i] = y
        }
        return out
    }
    var y = biquad(x, highPass: true, cutoff: low)
    y = biquad(y, highPass: false, cutoff: high)
    y = Array(biquad(Array(y.reversed()), highPass: true, cutoff: low).reversed())
    return Array(biquad(Array(y.reversed()), highPass: false, cutoff: high).reversed())
}

@Suite("Scene and physiology")
struct SceneTests {
    @Test("frames have the requested NV12 geometry", arguments: StreamingResolution.allCases)
    func geometry(resolution: StreamingResolution) throws {
        let scene = try SimulatedScene(profile: SubjectProfile(seed: 3))
        let image = scene.render(at: 1.0, resolution: resolution)
        let size = resolution.videoFrameSize
        #expect(image.width == Int(size.width))
        #expect(image.height == Int(size.height))
        #expect(image.data.count == image.width * image.height * 3 / 2)
        // Video range: no luma below 16 - noise or above 235 + noise by much; the face is brighter than black.
        let face = scene.frameInfo(at: 1.0, width: image.width, height: image.height)
        let skin = meanLuma(image, boxes: face.skinBoxes)
        #expect(skin > 60 && skin < 235)
    }

    @Test("same seed and time give the same bytes; another seed differs")
    func determinism() throws {
        let a = try SimulatedScene(profile: SubjectProfile(headMotion: true, seed: 9))
        let b = try SimulatedScene(profile: SubjectProfile(headMotion: true, seed: 9))
        let c = try SimulatedScene(profile: SubjectProfile(headMotion: true, seed: 10))
        _ = b.render(at: 5.0, resolution: .low)   // rendering order must not matter
        #expect(a.render(at: 2.5, resolution: .low) == b.render(at: 2.5, resolution: .low))
        #expect(a.render(at: 2.5, resolution: .low) != c.render(at: 2.5, resolution: .low))
        #expect(a.groundTruth(through: 30).beatTimes == b.groundTruth(through: 30).beatTimes)
    }

    @Test("#19: a size change drops the previous size's layers, and a size built again renders the same bytes")
    func oneSizeHeld() throws {
        let scene = try SimulatedScene(profile: SubjectProfile(headMotion: true, seed: 9))
        let first = scene.render(at: 2.5, resolution: .low)
        _ = scene.render(at: 2.6, resolution: .medium)
        #expect(scene.heldCanvasCount == 1)
        #expect(scene.render(at: 2.5, resolution: .low) == first)
        #expect(scene.heldCanvasCount == 1)
    }

    @Test("ground truth: rates, HRV and export agree with the profile")
    func groundTruth() throws {
        let scene = try SimulatedScene(profile: SubjectProfile(pulseRate: 66, breathingRate: 12, hrvRMSSD: 45, seed: 4))
        let truth = scene.groundTruth(through: 300)
        let hr = try #require(truth.meanPulseRate(in: 10...290))
        #expect(abs(hr - 66) < 2)
        let br = try #require(truth.meanBreathingRate(in: 10...290))
        #expect(abs(br - 12) < 1)
        let rmssd = try #require(truth.rmssd(window: 10...290))
        #expect(rmssd > 30 && rmssd < 60)
        let sdnn = try #require(truth.sdnn(window: 10...290))
        #expect(sdnn > 20)
        #expect(abs(Double(truth.breathOnsets(in: 0...300).count) - 60) <= 4)
        let csv = truth.csv(in: 0...10, step: 1)
        #expect(csv.split(separator: "\n").count == 12)
        #expect(csv.hasPrefix("time_s,pulseRate,breathingRate,hrvRmssd,hrvSdnn,instantPulseRate,ppg,breathing\n"))
        let lines = truth.ndjson(in: 0...12, step: 0.5).split(separator: "\n")
        #expect(lines.count == 25)
        // The bridge's vocabulary: `t` and the keys of its stats lines' truth, the rate over the trailing 10 s.
        let first = try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any]
        #expect(first?["t"] as? Double == 0 && first?["instantPulseRate"] is Double)
        let last = try JSONSerialization.jsonObject(with: Data(lines[24].utf8)) as? [String: Any]
        #expect(last?["t"] as? Double == 12)
        let pulse = try #require(last?["pulseRate"] as? Double)
        #expect(abs(pulse - (truth.meanPulseRate(in: 2...12) ?? 0)) < 1e-9)
        #expect(last?["hrvRmssd"] is Double && last?["pulse_bpm"] == nil)
        let shifted = truth.ndjson(in: 0...1, step: 1, timeOffset: 2.5).split(separator: "\n")
        #expect(shifted.first?.hasPrefix("{\"breathing\"") == true && shifted.last?.contains("\"t\":3.5") == true)
        #expect(truth.beatsCSV(in: 0...60).split(separator: "\n").count > 60)
    }

    @Test("PPG waveform: unit peak, zero at the ends, a dicrotic notch")
    func waveform() {
        let samples = (0..<1000).map { Waveforms.ppg(phase: Double($0) / 1000) }
        #expect(abs(samples.max()! - 1) < 1e-3)
        #expect(abs(samples[0]) < 1e-9)
        let peak = samples.firstIndex(of: samples.max()!)!
        #expect(peak > 120 && peak < 250)
        // After the systolic peak the curve falls, then rises again (the diastolic wave): a local minimum exists.
        let after = Array(samples[peak..<700])
        let hasNotch = (1..<(after.count - 1)).contains { after[$0] < after[$0 - 1] && after[$0] < after[$0 + 1] }
        #expect(hasNotch)
    }

    @Test("the PPG's systolic peaks are the beats: peak-to-peak intervals keep the RR intervals' RMSSD")
    func ppgPeaksFollowBeats() throws {
        let truth = try SimulatedScene(profile: SubjectProfile(pulseRate: 70, hrvRMSSD: 60, seed: 9)).groundTruth(through: 62)
        let fs = 1000.0
        let wave = (0..<Int(60 * fs)).map { truth.ppg(at: Double($0) / fs) ?? 0 }
        // Systolic peaks: local maxima above 0.8 (the diastolic wave stays below 0.5).
        var peaks: [Double] = []
        for i in 1..<(wave.count - 1) where wave[i] > 0.8 && wave[i] >= wave[i - 1] && wave[i] > wave[i + 1] {
            peaks.append(Double(i) / fs)
        }
        let rr = truth.rrIntervals(in: 0...60).map(\.seconds)
        #expect(abs(peaks.count - rr.count) <= 2)
        let intervals = zip(peaks.dropFirst(), peaks).map { $0 - $1 }
        let diffs = zip(intervals.dropFirst(), intervals).map { $0 - $1 }
        let peakRMSSD = (diffs.map { $0 * $0 }.reduce(0, +) / Double(diffs.count)).squareRoot() * 1000
        let trueRMSSD = try #require(truth.rmssd(window: 0...60))
        #expect(abs(peakRMSSD - trueRMSSD) < 0.05 * trueRMSSD, "peaks \(peakRMSSD) ms, beats \(trueRMSSD) ms")
        // Continuous: no step larger than the steepest slope allows between 1 ms samples.
        #expect(zip(wave.dropFirst(), wave).allSatisfy { abs($0 - $1) < 0.05 })
    }

    @Test("invalid profiles are rejected with a typed error")
    func invalidProfile() {
        #expect(throws: SimulatorError.self) { try SimulatedScene(profile: SubjectProfile(pulseRate: 400)) }
        #expect(throws: SimulatorError.self) { try SimulatedScene(profile: SubjectProfile(sensorNoise: .nan)) }
    }

    @Test("mean green of the skin follows the ground-truth pulse (noise on)")
    func pulseInPixels() throws {
        let profile = SubjectProfile(pulseRate: 75, sensorNoise: 2, seed: 5)
        let scene = try SimulatedScene(profile: profile)
        let fps = 15.0, count = 150
        var green: [Double] = [], truth: [Double] = []
        let info = scene.frameInfo(at: 0, width: 360, height: 640)
        for i in 0..<count {
            let t = Double(i) / fps
            let image = scene.render(at: t, resolution: .low)
            green.append(meanGreen(image, boxes: info.skinBoxes))
            truth.append(scene.groundTruth(through: t).ppg(at: t)!)
        }
        let fg = bandPass(green, sampleRate: fps, low: 0.7, high: 3.5)
        let ft = bandPass(truth, sampleRate: fps, low: 0.7, high: 3.5)
        let r = correlation(Array(fg[15...]), Array(ft[15...]))
        #expect(r > 0.8, "correlation \(r)")
    }

    @Test("breathing lifts the chest: the body's top edge moves with the breathing signal")
    func breathingMotion() throws {
        let scene = try SimulatedScene(profile: SubjectProfile(sensorNoise: 0, breathingAmplitude: 0.02, seed: 6))
        let truth = scene.groundTruth(through: 20)
        var lowT = 0.0, highT = 0.0, lo = 2.0, hi = -1.0
        for i in 0..<100 {
            let t = Double(i) * 0.1
            let b = truth.breathingSignal(at: t)!
            if b < lo { lo = b; lowT = t }
            if b > hi { hi = b; highT = t }
        }
        let exhaled = scene.render(at: lowT, resolution: .low)
        let inhaled = scene.render(at: highT, resolution: .low)
        // Column at x = 20% of width crosses the shoulder edge: count cloth-dark rows below the shoulder.
        func shoulderRow(_ image: RawVideoImage) -> Int {
            let x = 72
            let p = [UInt8](image.data)
            let wallLevel = Int(p[300 * 360 + x])
            for y in 300..<640 where abs(Int(p[y * 360 + x]) - wallLevel) > 40 { return y }
            return 640
        }
        #expect(shoulderRow(inhaled) < shoulderRow(exhaled))
    }
}
