// The real-photograph vitals benchmark: public-domain portraits composited by the simulator at several face sizes,
// with known pulse, breathing and RR intervals, through raw or HEVC delivery, against ground truth.
import Dispatch
import Foundation
import GlassesBridge
import GlassesSimulator
import GlassesVideo
import Synchronization
import VitalsEngine
import WearablesKit

/// A portrait fixture: the file (under Tests/VitalsEngineTests/Fixtures) and its face box in the file's pixels.
struct PortraitFixture: Sendable {
    var name: String
    var file: String
    var faceBox: PixelRect

    /// The three portraits (sources and licences in Tests/VitalsEngineTests/Fixtures/README.md).
    static let all: [PortraitFixture] = [
        PortraitFixture(name: "collins", file: "portrait-astronaut.ppm", faceBox: PixelRect(x: 115, y: 67, width: 101, height: 101)),
        PortraitFixture(name: "hopper", file: "portrait-hopper.ppm", faceBox: PixelRect(x: 85, y: 60, width: 116, height: 116)),
        PortraitFixture(name: "obama", file: "portrait-obama.ppm", faceBox: PixelRect(x: 144, y: 41, width: 122, height: 122)),
    ]
}

/// One way of delivering a portrait clip to the engine.
struct PhotoCondition: Sendable {
    var name: String
    var bitrate: Int?
    var shakeAndDim = false
    /// Frames per second of the clip (DAT streams at a steady 24 over Bluetooth).
    var fps = 30
    /// The wearer's head drifting the view: amplitude in pixels at 504 px across (the simulator's head motion, whose
    /// largest components take 3–8 s; a tenth of it near 1 Hz is the shake), with the light swinging ±15 % over 20 s
    /// (dimming to 0.85 of its level and back). Nil: still (or `shakeAndDim`'s 3 px and 0.7 light).
    var wearerDrift: Double? = nil
    /// The pulse's amplitude as a share of the simulator's default (0.5: a weak pulse, as on darker skin).
    var pulseScale = 1.0
}

let photoConditions: [PhotoCondition] = [
    PhotoCondition(name: "photo-raw", bitrate: nil),
    PhotoCondition(name: "photo-hvc1-2M", bitrate: 2_000_000),
    PhotoCondition(name: "photo-hvc1-2M-shake", bitrate: 2_000_000, shakeAndDim: true),
    PhotoCondition(name: "photo-hvc1-1M", bitrate: 1_000_000),
    PhotoCondition(name: "photo-hvc1-4M", bitrate: 4_000_000),
    PhotoCondition(name: "photo-raw-shake", bitrate: nil, shakeAndDim: true),
    // DAT's 24 fps at the bit rates measured over Bluetooth (issue #45).
    PhotoCondition(name: "photo24-hvc1-600k", bitrate: 600_000, fps: 24),
    PhotoCondition(name: "photo24-hvc1-1M-drift", bitrate: 1_000_000, fps: 24, wearerDrift: 8),
    PhotoCondition(name: "photo24-hvc1-1M-weak", bitrate: 1_000_000, fps: 24, pulseScale: 0.5),
    PhotoCondition(name: "photo24-hvc1-600k-drift-weak", bitrate: 600_000, fps: 24, wearerDrift: 8, pulseScale: 0.5),
]

/// The face widths (px at 504×896) the photo conditions are run at.
let photoFaceWidths = [50, 75, 100, 150]

/// One clip: which portrait, how large, at what pulse.
struct PhotoClip: Sendable {
    var portrait: PortraitFixture
    var faceWidth: Int
    var pulseRate: Double
    var breathingRate: Double
    var seed: UInt64
}

/// The clips of a run: every portrait at every width, pulse rates spread over 50–150 bpm (a low-discrepancy
/// sequence, so each width sees slow and fast pulses); `quick` keeps one portrait and two rates per width.
private func photoClips(quick: Bool, seedBase: UInt64) -> [PhotoClip] {
    var clips: [PhotoClip] = []
    var n = 0
    for (w, width) in photoFaceWidths.enumerated() {
        for (p, portrait) in PortraitFixture.all.enumerated() {
            if quick, p != w % PortraitFixture.all.count { continue }
            for k in 0 ..< 2 {
                let i = Double(w * 6 + p * 2 + k)
                let fraction = (0.5 + i * 0.6180339887).truncatingRemainder(dividingBy: 1)
                let pulse = (50 + 100 * fraction).rounded()
                let breathing = (8 + 16 * (0.3 + i * 0.4142135624).truncatingRemainder(dividingBy: 1)).rounded()
                clips.append(PhotoClip(portrait: portrait, faceWidth: width, pulseRate: pulse, breathingRate: breathing,
                                       seed: seedBase + UInt64(n)))
                n += 1
            }
        }
    }
    return clips
}

/// What one clip measured.
struct PhotoResult: Sendable {
    var clip: PhotoClip
    var truePulse = 0.0, trueBreathing = 0.0
    var pulseErrors: [Double] = []
    var breathingErrors: [Double] = []
    /// The run's pulse: the median of the run's stable pulse samples, as the bridge's summary reports it (never the
    /// median of values split a factor two apart: `VitalBasis.value`); nil when none was stable or the split left
    /// none (the summary's `null`, with `pulseUnavailable`).
    var runPulse: Double?
    /// The largest error of any stable pulse sample against the truth over its window (bpm); nil with none stable.
    var worstStablePulseError: Double?
    /// The run's breathing rate, the same way.
    var runBreathing: Double?
    var stableHRV = false
    var rmssd: Double?, trueRMSSD: Double?
    /// The last scored HRV window's measures (RMSSD before the noise correction, the noise removed, the pairs).
    var hrvMeasures: HRVMeasures?
    var restarts = 0
    var framesOK = 0, frames = 0
    var faceWidths: [Double] = []
    var conditions: [String: Int] = [:]
    var engineMs = 0.0
    var failure: String?
    /// The clip's file for the peers (relative to `--clips-dir`), when it was written.
    var clipFile: String?

    var pulseError: Double? { runPulse.map { $0 - truePulse } }
    /// The beat-timing noise (ms²) the scored HRV window's beats carried: what takes the RMSSD their intervals show to
    /// the true one, (uncorrected² − true²) / 6, taking the heart's differences and the errors as independent.
    var carriedTimingNoise: Double? {
        guard let m = hrvMeasures, let truth = trueRMSSD else { return nil }
        return max(0, (m.uncorrectedRMSSD * m.uncorrectedRMSSD - truth * truth) / 6)
    }
    /// The RMSSD error (ms) a perfect noise correction would still leave on that window
    /// (``HRVMeasures/leastRMSSDError(rmssd:timingNoise:pairs:)``): what the beats allow, whatever the estimator.
    var leastRMSSDError: Double? {
        guard let m = hrvMeasures, let truth = trueRMSSD, let noise = carriedTimingNoise else { return nil }
        return HRVMeasures.leastRMSSDError(rmssd: truth, timingNoise: noise, pairs: m.pairCount)
    }
    var breathingError: Double? { runBreathing.map { $0 - trueBreathing } }
}

/// Runs the photo conditions `names` and prints their table; with `clipsDirectory`, also writes every clip as the
/// engine saw it and a manifest `clips.json` there for the peers (Scripts/peers/rppg_peers.py).
func runPhotoBenchmark(_ names: [String], duration: Double, jobs: Int, seedBase: UInt64, quick: Bool, verbose: Bool,
                       trace: Bool, clipsDirectory: URL? = nil) {
    let root = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
    var images: [String: FaceImage] = [:]
    for p in PortraitFixture.all {
        let url = root.appendingPathComponent("Tests/VitalsEngineTests/Fixtures").appendingPathComponent(p.file)
        do { images[p.name] = try FaceImage(ppmFile: url) } catch {
            FileHandle.standardError.write(Data("vitals benchmark: \(error) (run from the package root)\n".utf8))
            exit(66)
        }
    }
    let clips = photoClips(quick: quick, seedBase: seedBase)
    let photos = images
    say2("photo conditions: \(clips.count) clips × \(Int(duration)) s (\(PortraitFixture.all.map(\.name).joined(separator: ", ")) at face widths \(photoFaceWidths.map(String.init).joined(separator: "/")) px), 504×896, 30 fps (the photo24 conditions 24)")
    if let clipsDirectory { say2("writing the clips and clips.json to \(clipsDirectory.path) for the peers") }
    var records: [PeerClipRecord] = []
    say2(photoTableHeader)
    for name in names {
        guard let condition = photoConditions.first(where: { $0.name == name }) else { continue }
        let all = inParallel(clips.count, jobs: jobs) { index -> PhotoResult in
            let clip = clips[index]
            let output = clipsDirectory.map { directory -> PhotoClipOutput in
                let file = "\(condition.name)-\(index)-\(clip.portrait.name)-\(clip.faceWidth)px" + (condition.bitrate == nil ? ".mkv" : ".mp4")
                return PhotoClipOutput(file: file, path: directory.appendingPathComponent(file).path)
            }
            let r: PhotoResult
            if let image = photos[clip.portrait.name] {
                r = runPhotoClip(clip, image: image, duration: duration, condition: condition, trace: trace, output: output)
            } else {
                var failed = PhotoResult(clip: clip)
                failed.failure = "portrait \(clip.portrait.name) not loaded"
                r = failed
            }
            if verbose { say2("  \(condition.name) \(describe(r))") }
            return r
        }
        if let clipsDirectory {
            records += all.compactMap { r in
                r.clipFile.map { file in
                    PeerClipRecord(condition: condition.name, file: file, portrait: r.clip.portrait.name, faceWidth: r.clip.faceWidth,
                                   duration: duration, fps: condition.fps, truePulse: r.truePulse, trueBreathing: r.trueBreathing,
                                   ourPulse: r.runPulse, ourBreathing: r.runBreathing, trueRMSSD: r.trueRMSSD, failure: r.failure)
                }
            }
            do { try writePeerManifest(records, to: clipsDirectory) } catch {
                FileHandle.standardError.write(Data("vitals benchmark: \(error)\n".utf8))
                exit(73)
            }
        }
        reportPhotoWidths(condition, all)
    }
}

/// The photo table's header line.
let photoTableHeader = "condition              width | pulse MAE clipMAE ≤3bpm none | breath MAE clipMAE | HRV stable RMSSD MAE least | restarts | ok frames | face px | CPU ms/frame"

/// Runs `body` for every index below `count` on `jobs` threads and returns the results in index order.
func inParallel<T: Sendable>(_ count: Int, jobs: Int, _ body: @Sendable (Int) -> T) -> [T] {
    let results = Mutex<[Int: T]>([:])
    let next = Mutex(0)
    DispatchQueue.concurrentPerform(iterations: jobs) { _ in
        while true {
            let index: Int = next.withLock { n in defer { n += 1 }; return n }
            if index >= count { break }
            let r = body(index)
            results.withLock { $0[index] = r }
        }
    }
    return results.withLock { d in (0 ..< count).compactMap { d[$0] } }
}

/// Prints a condition's table rows: one per face width, then the clips from 75 px together.
func reportPhotoWidths(_ condition: PhotoCondition, _ results: [PhotoResult]) {
    for width in photoFaceWidths { reportPhoto(condition, width: width, results.filter { $0.clip.faceWidth == width }) }
    reportPhoto(condition, width: nil, results.filter { $0.clip.faceWidth >= 75 })
}

func describe(_ r: PhotoResult) -> String {
    func f(_ v: Double?, _ format: String = "%+.1f") -> String { v.map { String(format: format, $0) } ?? "--" }
    let top = r.conditions.sorted { $0.value > $1.value }.prefix(3).map { "\($0.key) \($0.value)" }.joined(separator: ", ")
    let sampleMAE = r.pulseErrors.isEmpty ? nil : r.pulseErrors.map(abs).reduce(0, +) / Double(r.pulseErrors.count)
    return "\(r.clip.portrait.name) \(r.clip.faceWidth) px pulse \(f(r.truePulse, "%.1f")): run \(f(r.runPulse, "%.1f")) (err \(f(r.pulseError)), "
        + "sample MAE \(f(sampleMAE, "%.1f")), worst stable \(f(r.worstStablePulseError, "%.1f"))) breathing \(f(r.trueBreathing, "%.1f")): run \(f(r.runBreathing, "%.1f")) "
        + "(err \(f(r.breathingError))) RMSSD \(f(r.rmssd, "%.1f")) vs \(f(r.trueRMSSD, "%.1f")) \(r.stableHRV ? "stable" : "not stable") "
        + (r.hrvMeasures.map { m in
            "(\(m.pairCount) pairs, uncorrected \(f(m.uncorrectedRMSSD, "%.1f")), timing noise removed \(f(m.timingNoise.squareRoot(), "%.1f")) ms, "
                + "carried \(f(r.carriedTimingNoise?.squareRoot(), "%.1f")) ms, least error \(f(r.leastRMSSDError, "%.1f")), engine's floor \(f(m.rmssdFloor, "%.1f"))) "
        } ?? "")
        + "restarts \(r.restarts) face \(f(SignalMedian.of(r.faceWidths), "%.0f")) px [\(top)]" + (r.failure.map { " FAILED \($0)" } ?? "")
}

func reportPhoto(_ c: PhotoCondition, width: Int?, _ results: [PhotoResult]) {
    guard !results.isEmpty else { return }
    func mae(_ v: [Double]) -> String {
        v.isEmpty ? "   --" : String(format: "%5.2f", v.map(abs).reduce(0, +) / Double(v.count))
    }
    // Clip errors over the clips with a run value; a clip with none (no stable sample) is counted apart, and is
    // not within 3 bpm.
    let clipPulse = results.compactMap(\.pulseError)
    let within = clipPulse.filter { abs($0) <= 3 }.count
    let noValue = results.count - clipPulse.count
    let clipBreathing = results.compactMap(\.breathingError)
    let hrvClips = results.filter { $0.trueRMSSD != nil }
    let stable = hrvClips.filter(\.stableHRV).count
    let rmssdErrors = results.compactMap { r in r.rmssd.flatMap { v in r.trueRMSSD.map { v - $0 } } }
    let frames = results.map(\.frames).reduce(0, +)
    let ok = Double(results.map(\.framesOK).reduce(0, +)) / Double(max(frames, 1))
    let ms = results.map(\.engineMs).reduce(0, +) / Double(max(frames, 1))
    let face = SignalMedian.of(results.flatMap(\.faceWidths)) ?? 0
    let label = width.map { String(format: "%5d", $0) } ?? " ≥75"
    func pad(_ s: String, _ n: Int) -> String { s.count >= n ? s : s + String(repeating: " ", count: n - s.count) }
    say2(pad(c.name, 22) + " " + label + " | " + mae(results.flatMap(\.pulseErrors)) + "   " + mae(clipPulse) + "  "
         + String(format: "%2d/%-2d %4d", within, results.count, noValue) + " | " + mae(results.flatMap(\.breathingErrors)) + "   "
         + mae(clipBreathing) + "  | " + String(format: "%2d/%-2d", stable, hrvClips.count) + "     " + mae(rmssdErrors)
         + "  " + mae(results.compactMap(\.leastRMSSDError)) + " | " + String(format: "%8d | %8.0f%% | %7.0f | %8.3f", results.map(\.restarts).reduce(0, +), 100 * ok, face, ms))
}

enum SignalMedian {
    static func of(_ v: [Double]) -> Double? {
        guard !v.isEmpty else { return nil }
        let s = v.sorted()
        return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
    }
}

/// Where a clip is written for the peers: its name in the manifest and its path.
private struct PhotoClipOutput {
    var file: String
    var path: String
}

/// Renders one clip, delivers it raw or through HEVC to a fresh engine and measures it against the truth; with
/// `output`, also writes the clip there as the engine saw it.
private func runPhotoClip(_ clip: PhotoClip, image: FaceImage, duration: Double, condition: PhotoCondition, trace: Bool,
                          output: PhotoClipOutput? = nil) -> PhotoResult {
    var result = PhotoResult(clip: clip)
    result.clipFile = output?.file
    var random = SeededRandom(seed: clip.seed, stream: 98)
    let profile = SubjectProfile(
        pulseRate: clip.pulseRate, breathingRate: clip.breathingRate,
        hrvRMSSD: max(8, random.uniform(20 ... 60) * min(1, pow(60 / clip.pulseRate / 0.8, 2))),
        pulseAmplitude: 0.003 * condition.pulseScale,
        lightingLevel: condition.shakeAndDim ? 0.7 : random.uniform(0.9 ... 1.1),
        lightingDrift: condition.wearerDrift != nil ? 0.15 : random.uniform(0 ... 0.02),
        headMotion: condition.shakeAndDim || condition.wearerDrift != nil,
        headMotionAmplitude: (condition.wearerDrift ?? 3.0) / 504, seed: clip.seed)
    let width = 504, height = 896
    let scene: SimulatedScene
    let engine: VitalsEngine
    guard let placement = PortraitPhoto(image: image, faceBox: clip.portrait.faceBox, faceWidth: Double(clip.faceWidth) / Double(width)) else {
        result.failure = "bad portrait placement"
        return result
    }
    do {
        scene = try SimulatedScene(profile: profile, portrait: placement)
        engine = try VitalsEngine()
    } catch {
        result.failure = "\(error)"
        return result
    }
    var encoder: HEVCEncoder?
    var decoder: VideoFrameDecoder?
    let fps = condition.fps
    if let bitrate = condition.bitrate {
        do {
            encoder = try HEVCEncoder(width: width, height: height, frameRate: fps, bitrate: bitrate)
            decoder = try VideoFrameDecoder(outputFormat: .nv12VideoRange)
        } catch {
            result.failure = "\(error)"
            return result
        }
    }
    var writer: PeerClipWriter?
    if let clipPath = output?.path {
        do {
            if let encoder {
                writer = try PeerClipWriter(hevcPath: clipPath, codecConfiguration: encoder.codecConfiguration)
            } else {
                writer = try PeerClipWriter(rawPath: clipPath, width: width, height: height, fps: fps)
            }
        } catch {
            result.failure = "\(error)"
            return result
        }
    }
    let truth = scene.groundTruth(through: duration + 1)
    result.truePulse = truth.meanPulseRate(in: 0 ... duration) ?? clip.pulseRate
    result.trueBreathing = truth.meanBreathingRate(in: 0 ... duration) ?? clip.breathingRate
    var buffer = [UInt8](repeating: 0, count: width * height * 3 / 2)
    var scorer = PhotoScorer(result: result, trace: trace,
                             pulseTruth: { truth.meanPulseRate(in: $0) }, breathingTruth: { truth.meanBreathingRate(in: $0) })
    let frameCount = Int(duration * Double(fps))
    for n in 0 ..< frameCount {
        let t = Double(n) / Double(fps)
        let us = Int64((t * 1_000_000).rounded())
        buffer.withUnsafeMutableBytes { scene.render(at: t, width: width, height: height, into: $0) }
        if let encoder, let decoder {
            do {
                guard let image = RawVideoImage(width: width, height: height, lumaBytesPerRow: width, chromaBytesPerRow: width,
                                                data: Data(buffer)) else {
                    scorer.result.failure = "rendered frame does not fit \(width)×\(height) NV12"
                    return scorer.result
                }
                for sample in try encoder.encode(image, presentationTimeUs: us) {
                    try writer?.writeHEVC(sample, codecConfiguration: encoder.codecConfiguration)
                    let frame = VideoFrame(presentationTimeUs: us, content: .hevc(HEVCSample(
                        data: sample.data, isKeyframe: sample.isKeyframe, codecConfiguration: encoder.codecConfiguration)))
                    for decoded in try decoder.decode(frame) {
                        if let r = processDecoded(decoded, engine: engine, cpuMs: &scorer.result.engineMs) { scorer.consume(r) }
                    }
                }
            } catch {
                scorer.result.failure = "\(error)"
                return scorer.result
            }
        } else {
            do { try writer?.writeRaw(buffer) } catch {
                scorer.result.failure = "\(error)"
                return scorer.result
            }
            let r = buffer.withUnsafeBufferPointer { p -> VitalsFrameResult? in
                guard let base = p.baseAddress, let view = try? VitalsPixelView(
                    format: .nv12VideoRange, width: width, height: height, plane0: base, bytesPerRow0: width,
                    plane1: base + width * height, bytesPerRow1: width) else { return nil }
                let start = threadCPUNanoseconds()
                defer { scorer.result.engineMs += Double(threadCPUNanoseconds() - start) / 1e6 }
                return engine.process(view, timestampUs: us)
            }
            if let r { scorer.consume(r) }
        }
    }
    do { try writer?.finish() } catch { scorer.result.failure = "\(error)" }
    let rmssdTruth: ((ClosedRange<Double>) -> Double?)? = condition.shakeAndDim || condition.wearerDrift != nil ? nil : { truth.rmssd(window: $0) }
    return scorer.finish(restarts: engine.restarts, duration: duration, rmssdTruth: rmssdTruth)
}

/// Runs the engine on one decoded picture (NV12 video range) and adds its thread CPU time to `cpuMs`; nil when
/// the picture is not a two-plane image the engine can view.
func processDecoded(_ decoded: DecodedVideoFrame, engine: VitalsEngine, cpuMs: inout Double) -> VitalsFrameResult? {
    let pb = decoded.pixelBuffer
    return pb.withUnsafeReadOnlyStorage { storage -> VitalsFrameResult? in
        guard let base = storage.baseAddress?.assumingMemoryBound(to: UInt8.self), pb.planes.count > 1,
              let view = try? VitalsPixelView(
                  format: .nv12VideoRange, width: pb.width, height: pb.height,
                  plane0: UnsafePointer(base + pb.planes[0].offset), bytesPerRow0: pb.planes[0].bytesPerRow,
                  plane1: UnsafePointer(base + pb.planes[1].offset), bytesPerRow1: pb.planes[1].bytesPerRow)
        else { return nil }
        let start = threadCPUNanoseconds()
        defer { cpuMs += Double(threadCPUNanoseconds() - start) / 1e6 }
        return engine.process(view, timestampUs: decoded.presentationTimeUs)
    }
}

/// Scores one clip's engine output against its truth: every pulse sample from 15 s and breathing sample from 30 s
/// against the truth over its window, the run values (median of the stable samples), and the last HRV sample.
struct PhotoScorer {
    /// The clip's result so far.
    var result: PhotoResult
    let trace: Bool
    /// The true mean pulse (bpm) and breathing rate (per minute) over a span of the clip's seconds.
    let pulseTruth: (ClosedRange<Double>) -> Double?
    let breathingTruth: (ClosedRange<Double>) -> Double?
    private var stablePulse: [Double] = []
    private var stableBreathing: [Double] = []
    private var lastHRV: VitalsHRVSample?

    init(result: PhotoResult, trace: Bool, pulseTruth: @escaping (ClosedRange<Double>) -> Double?,
                     breathingTruth: @escaping (ClosedRange<Double>) -> Double?) {
        self.result = result
        self.trace = trace
        self.pulseTruth = pulseTruth
        self.breathingTruth = breathingTruth
    }

    /// Takes one frame's output.
    mutating func consume(_ r: VitalsFrameResult) {
        result.frames += 1
        result.conditions[r.condition.rawValue, default: 0] += 1
        if r.condition == .ok { result.framesOK += 1 }
        if let face = r.face { result.faceWidths.append(Double(face.width)) }
        for s in r.pulseRate {
            let ts = Double(s.timestampUs) / 1e6
            // The run value, like the summary's, takes every stable sample; the sample errors those from 15 s.
            if s.confidence >= VitalsStability.pulse {
                stablePulse.append(s.value)
                if let gt = pulseTruth(max(0, ts - 12) ... ts) {
                    result.worstStablePulseError = max(result.worstStablePulseError ?? 0, abs(s.value - gt))
                }
            }
            guard ts >= 15, let gt = pulseTruth(max(0, ts - 12) ... ts) else { continue }
            result.pulseErrors.append(s.value - gt)
            if trace {
                let doubt: String = r.pulseDoubt.map { " doubt \($0.rawValue)" } ?? ""
                let harmonic: String = r.pulseHarmonic.map { " [\($0.summary)]" } ?? ""
                say2("    \(result.clip.portrait.name) \(result.clip.faceWidth) px " + String(format: "t %.1f pulse %.1f truth %.1f confidence %.2f ", ts, s.value, gt, s.confidence)
                     + r.condition.rawValue + doubt + harmonic)
            }
        }
        for s in r.breathingRate {
            let ts = Double(s.timestampUs) / 1e6
            if s.confidence >= VitalsStability.breathing { stableBreathing.append(s.value) }
            guard ts >= 30, let gt = breathingTruth(max(0, ts - 30) ... ts) else { continue }
            result.breathingErrors.append(s.value - gt)
        }
        for s in r.hrv { lastHRV = s }
    }

    /// The clip's result: run values, and HRV against `rmssdTruth` (the true RMSSD over a span; nil where the
    /// condition does not score HRV) once a 60 s HRV window has been reached.
    func finish(restarts: Int, duration: Double, rmssdTruth: ((ClosedRange<Double>) -> Double?)?) -> PhotoResult {
        var result = result
        result.restarts = restarts
        // The summary's rule: the median, except stable values split into a rate and its harmonic (HarmonicSplit).
        result.runPulse = VitalBasis(stablePulse, harmonics: true)?.value
        result.runBreathing = SignalMedian.of(stableBreathing)
        if duration >= 60, let rmssdTruth { result.trueRMSSD = rmssdTruth(max(0, duration - 60) ... duration) }
        if let h = lastHRV {
            let ts = Double(h.timestampUs) / 1e6
            result.stableHRV = h.confidence >= VitalsStability.hrv && ts >= 60
            if ts >= 60, let rmssdTruth {
                result.rmssd = h.measures.rmssd
                result.hrvMeasures = h.measures
                result.trueRMSSD = rmssdTruth(max(0, ts - 60) ... ts)
            }
        }
        return result
    }
}

/// CPU time of the calling thread, ns: the engine's own cost, whatever else shares the cores (wall time on a
/// machine busy with other builds reads many times higher).
func threadCPUNanoseconds() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

/// Writes a line to standard output unbuffered.
func say2(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// Writes one rendered 504×896 portrait frame as a PPM (`Benchmarks vitals-frame PORTRAIT WIDTH OUT.ppm`), to look at.
func writePhotoFrame(_ arguments: [String]) {
    guard arguments.count == 3, let portrait = PortraitFixture.all.first(where: { $0.name == arguments[0] }),
          let faceWidth = Int(arguments[1]) else {
        FileHandle.standardError.write(Data("usage: Benchmarks vitals-frame collins|hopper|obama WIDTH OUT.ppm\n".utf8))
        exit(64)
    }
    let url = URL(fileURLWithPath: "Tests/VitalsEngineTests/Fixtures").appendingPathComponent(portrait.file)
    guard let image = try? FaceImage(ppmFile: url),
          let placement = PortraitPhoto(image: image, faceBox: portrait.faceBox, faceWidth: Double(faceWidth) / 504),
          let scene = try? SimulatedScene(profile: SubjectProfile(), portrait: placement) else { exit(66) }
    let frame = scene.render(at: 0, width: 504, height: 896)
    if let engine = try? VitalsEngine() {
        var line: [String] = []
        for n in 0 ..< 12 {
            let r = frame.data.withUnsafeBytes { raw -> VitalsFrameResult? in
                guard let base = raw.bindMemory(to: UInt8.self).baseAddress,
                      let view = try? VitalsPixelView(format: .nv12VideoRange, width: 504, height: 896, plane0: base, bytesPerRow0: 504,
                                                      plane1: base + 504 * 896, bytesPerRow1: 504) else { return nil }
                return engine.process(view, timestampUs: Int64(n) * 100_000)
            }
            if let r { line.append("\(r.condition.rawValue) \(r.face.map { "\($0.x),\($0.y) \($0.width)" } ?? "-")") }
        }
        print("engine on frame 0, 12 frames at 10 fps: " + line.joined(separator: " | "))
    }
    var rgb = [UInt8](repeating: 0, count: 504 * 896 * 3)
    frame.data.withUnsafeBytes { raw in
        let p = raw.bindMemory(to: UInt8.self)
        for y in 0 ..< 896 {
            for x in 0 ..< 504 {
                let l = (Double(p[y * 504 + x]) - 16) * 1.164
                let c = 504 * 896 + (y / 2) * 504 + (x / 2) * 2
                let u = Double(p[c]) - 128, v = Double(p[c + 1]) - 128
                let k = (y * 504 + x) * 3
                rgb[k] = UInt8(max(0, min(255, l + 1.596 * v)))
                rgb[k + 1] = UInt8(max(0, min(255, l - 0.392 * u - 0.813 * v)))
                rgb[k + 2] = UInt8(max(0, min(255, l + 2.017 * u)))
            }
        }
    }
    _ = FileManager.default.createFile(atPath: arguments[2], contents: Data("P6\n504 896\n255\n".utf8) + Data(rgb))
}
