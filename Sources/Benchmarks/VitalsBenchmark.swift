// The vitals benchmark: seeded simulated subjects through the embedded engine, per condition, against ground truth.
import Foundation
import GlassesReport
import GlassesSimulator
import GlassesVideo
import SmartSpectraInput
import VitalsEngine
import WearablesKit

/// One way of delivering the subject's video to the engine.
private struct BenchCondition: Sendable {
    var name: String
    var bitrate: Int?      // nil: raw NV12
    var fps: Int = 30
    var lighting: Double? = nil
    var headMotion = false
    /// How the wearer moves (implies head motion); nil: as `headMotion` says, the slow drift.
    var wearerMotion: WearerMotion? = nil
    /// Whether the engine is given the glasses' gyroscope (60 Hz, on a clock 40 ms ahead of the video's).
    var imu = false
    /// Draw RMSSD independently of the pulse rate (15–80 ms even at 150 bpm) instead of the resting-physiology coupling.
    var uncoupledHRV = false
    var pulseTarget: Double? = nil
    var breathingTarget: Double? = nil
    var rmssdTarget: Double? = nil
}

private let allConditions: [BenchCondition] = [
    BenchCondition(name: "raw", bitrate: nil, pulseTarget: 1.5, breathingTarget: 1, rmssdTarget: 15),
    BenchCondition(name: "hvc1-2M", bitrate: 2_000_000, pulseTarget: 3, breathingTarget: 1.5),
    BenchCondition(name: "hvc1-1M", bitrate: 1_000_000),
    BenchCondition(name: "hvc1-4M", bitrate: 4_000_000),
    BenchCondition(name: "raw-dim", bitrate: nil, lighting: 0.35),
    BenchCondition(name: "raw-motion", bitrate: nil, headMotion: true),
    BenchCondition(name: "raw-15fps", bitrate: nil, fps: 15),
    BenchCondition(name: "raw-wild-hrv", bitrate: nil, uncoupledHRV: true),
]

/// The wearer at DAT's 24 fps after HEVC, walking, nodding, turning and still (`moving`), each without and with the
/// IMU (`+imu`: the same subjects; the still wearer's IMU reads no rotation).
private let movingConditions: [BenchCondition] = [
    ("walk", WearerMotion.walking, 2_000_000), ("nod", .nodding, 1_000_000), ("turn", .turning, 2_000_000),
    ("still", nil, 2_000_000),
].flatMap { name, motion, bitrate in
    [false, true].map { imu in
        BenchCondition(name: "hvc1-\(bitrate / 1_000_000)M-\(name)\(imu ? "+imu" : "")", bitrate: bitrate, fps: 24,
                       wearerMotion: motion, imu: imu)
    }
}

/// What one subject run measured.
private struct SubjectResult: Sendable {
    var pulseErrors: [Double] = []
    /// The stable pulse samples' errors (bpm), from 15 s on.
    var stablePulseErrors: [Double] = []
    /// The IMU's clock offset the engine found at the end (s), with the IMU.
    var clockOffset: Double?
    var breathingErrors: [Double] = []
    var rmssdError: Double?
    var firstStablePulse: Double?
    var firstStableBreathing: Double?
    var firstStableHRV: Double?
    var engineMs = 0.0
    var frames = 0
    var failure: String?
    /// One line for `--verbose`: the subject's truth and what the engine measured.
    var summary = ""
    /// The subject's true mean pulse and breathing rate.
    var truePulse = 0.0
    var trueBreathing = 0.0
}

func runVitalsBenchmark(_ arguments: [String]) {
    var subjects = 20, duration: Double?, jobs = 2, seedBase: UInt64 = 1000, verbose = false, trace = false, quick = false
    var names = allConditions.map(\.name)
    var reportDirectory: String?
    var clipsDirectory: String?
    var i = 0
    func value(_ flag: String) -> String {
        i += 1
        guard i < arguments.count else { fail("\(flag) needs a value") }
        return arguments[i]
    }
    while i < arguments.count {
        switch arguments[i] {
        case "--subjects": subjects = Int(value("--subjects")) ?? subjects
        case "--duration": duration = Double(value("--duration")) ?? duration
        case "--quick": quick = true
        case "--jobs": jobs = max(1, Int(value("--jobs")) ?? jobs)
        case "--seed": seedBase = UInt64(value("--seed")) ?? seedBase
        case "--conditions":
            names = value("--conditions").split(separator: ",").flatMap { name -> [String] in
                switch name {
                case "all": (allConditions + movingConditions).map(\.name) + photoConditions.map(\.name)
                case "photo": photoConditions.map(\.name)
                case "photo24": photoConditions.filter { $0.fps == 24 }.map(\.name)
                case "sim": allConditions.map(\.name)
                case "moving": movingConditions.map(\.name)
                default: [String(name)]
                }
            }
        case "--verbose", "-v": verbose = true
        case "--trace": trace = true
        case "--report": reportDirectory = value("--report")
        case "--clips-dir": clipsDirectory = value("--clips-dir")
        case "--help", "-h":
            say("usage: Benchmarks vitals [--subjects N=20] [--duration S=65] [--jobs J=2] [--seed N] [--verbose] [--trace] [--quick] [--report DIR] [--clips-dir DIR] [--conditions sim|moving|photo|photo24|all|NAME,...]")
            say("  --clips-dir DIR: also write each photo clip as the engine saw it (raw: FFV1 .mkv, HEVC: the encoded .mp4) and clips.json (truth, our values) for Scripts/peers/rppg_peers.py")
            say("  simulator conditions (the default): \(allConditions.map(\.name).joined(separator: ","))")
            say("  moving: the wearer walking, nodding, turning and still at 24 fps after HEVC, each without and with the glasses' IMU (+imu)")
            say("  real-photograph conditions: \(photoConditions.map(\.name).joined(separator: ",")); --quick runs 8 of their 24 clips")
            say("  photo24: the 24 fps photo conditions alone (DAT's rate; 600 kbit/s and 1 Mbit/s, wearer drift with light swinging ±15 %, half the pulse)")
            say("  photo table: a clip's run value is the median of its stable samples, as the bridge's summary reports it")
            say("    (never the median of values split a factor two apart: then the larger group's if the other is under a tenth, else none);")
            say("    ≤3bpm counts the clips whose run value is within 3 bpm, none those with no stable sample (no value)")
            exit(0)
        default: fail("unknown option \(arguments[i])")
        }
        i += 1
    }
    let simulated = allConditions + movingConditions
    for name in names where !simulated.contains(where: { $0.name == name }) && !photoConditions.contains(where: { $0.name == name }) {
        fail("unknown condition \(name)")
    }
    let conditions = names.compactMap { name in simulated.first { $0.name == name } }
    let photoNames = names.filter { name in photoConditions.contains { $0.name == name } }
    do { _ = try HaarCascade.frontalFace() } catch { fail("\(error)") }
    if let reportDirectory {
        do { _ = try prepareOutputFolder(reportDirectory, flag: "--report", holding: " for the pages") } catch { fail("\(error)") }
    }
    var clipsURL: URL?
    if let clipsDirectory {
        guard !photoNames.isEmpty else { fail("--clips-dir writes the photo conditions' clips: give --conditions photo-…") }
        do { clipsURL = try preparePeerClipDirectory(clipsDirectory) } catch { fail("\(error)") }
    }
    var pages: [BenchmarkCondition] = []
    if !photoNames.isEmpty {
        runPhotoBenchmark(photoNames, duration: duration ?? (quick ? 40 : 65), jobs: jobs, seedBase: seedBase, quick: quick,
                          verbose: verbose, trace: trace, clipsDirectory: clipsURL)
        if conditions.isEmpty { return }
    }
    let runDuration = duration ?? 65
    say("vitals benchmark: \(subjects) subjects × \(Int(runDuration)) s per condition, 504×896, \(jobs) jobs")
    say("condition    | pulse MAE  RMSE | breath MAE RMSE | RMSSD MAE RMSE | 1st stable pulse/breath/HRV s | ms/frame | fails")
    let subjectCount = subjects, firstSeed = seedBase, seconds = runDuration, chatty = verbose, tracing = trace
    for condition in conditions {
        let all = inParallel(subjectCount, jobs: jobs) { index -> SubjectResult in
            let r = runSubject(index: index, seed: firstSeed + UInt64(index), duration: seconds, condition: condition, trace: tracing)
            if chatty { say("  \(condition.name) subject \(index): \(r.summary)") }
            return r
        }
        report(condition, all)
        let subjects = all.enumerated().map { index, r in
            BenchmarkSubject(index: index, truePulse: r.truePulse, trueBreathing: r.trueBreathing, pulseErrors: r.pulseErrors,
                             breathingErrors: r.breathingErrors, rmssdError: r.rmssdError, failure: r.failure)
        }
        pages.append(BenchmarkCondition(name: condition.name, bitrate: condition.bitrate, fps: condition.fps, duration: seconds,
                                        subjects: subjects))
    }
    if let reportDirectory {
        // Every page shows the accuracy-vs-bitrate curve of all the conditions run, so they are written at the end.
        for page in pages {
            let path = (reportDirectory as NSString).appendingPathComponent(BenchmarkReport.fileName(page))
            let html = BenchmarkReport.html(page, all: pages, generator: "Scripts/bench-vitals")
            do {
                try Data(html.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
                say("wrote \(path)")
            } catch {
                FileHandle.standardError.write(Data("vitals benchmark: cannot write \(path): \(error.localizedDescription)\n".utf8))
                exit(73)
            }
        }
    }
}

private func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("vitals benchmark: \(message)\n".utf8))
    exit(64)
}

private func report(_ c: BenchCondition, _ results: [SubjectResult]) {
    func stats(_ errors: [Double]) -> (Double, Double)? {
        guard !errors.isEmpty else { return nil }
        let mae = errors.map(abs).reduce(0, +) / Double(errors.count)
        let rmse = (errors.map { $0 * $0 }.reduce(0, +) / Double(errors.count)).squareRoot()
        return (mae, rmse)
    }
    // Per subject: mean error over its samples; then MAE/RMSE across all samples of all subjects.
    let pulse = stats(results.flatMap(\.pulseErrors)), breathing = stats(results.flatMap(\.breathingErrors))
    let rmssd = stats(results.compactMap(\.rmssdError))
    func fmt(_ s: (Double, Double)?, _ target: Double?) -> String {
        guard let s else { return "   --    --  " }
        let mark = target.map { s.0 <= $0 ? "✓" : "✗" } ?? " "
        return String(format: "%5.2f %5.2f %@", s.0, s.1, mark)
    }
    func median(_ v: [Double]) -> String {
        guard !v.isEmpty else { return "--" }
        let s = v.sorted()
        return String(format: "%.0f", s[s.count / 2])
    }
    let frames = results.map(\.frames).reduce(0, +)
    let ms = results.map(\.engineMs).reduce(0, +) / Double(max(frames, 1))
    let fails = results.filter { $0.failure != nil }
    let first = "\(median(results.compactMap(\.firstStablePulse)))/\(median(results.compactMap(\.firstStableBreathing)))/\(median(results.compactMap(\.firstStableHRV)))"
    func pad(_ s: String, _ width: Int) -> String { s.count >= width ? s : s + String(repeating: " ", count: width - s.count) }
    say(pad(c.name, 12) + " | " + fmt(pulse, c.pulseTarget) + " | " + fmt(breathing, c.breathingTarget) + " | "
        + fmt(rmssd, c.rmssdTarget) + " | " + pad(first, 29) + " | " + String(format: "%8.3f | %d", ms, fails.count))
    // A subject's run value as the summary gives it: the median of its stable samples' errors.
    let runErrors = results.compactMap { r -> Double? in
        guard !r.stablePulseErrors.isEmpty else { return nil }
        let e = r.stablePulseErrors.sorted()
        return e[e.count / 2]
    }
    let offsets = results.compactMap(\.clockOffset)
    let offsetText = offsets.isEmpty ? (c.imu ? ", IMU clock offset never estimated" : "")
        : String(format: ", IMU clock offset estimated on %d of %d: %.1f–%.1f ms (true %.0f)", offsets.count, results.count,
                 (offsets.min() ?? 0) * 1000, (offsets.max() ?? 0) * 1000, imuClockOffset * 1000)
    say(String(format: "             run values within 3 bpm: %d of %d (MAE %.2f); stable samples off by more than 10 bpm: %d%@",
               runErrors.filter { abs($0) <= 3 }.count, results.count,
               runErrors.map(abs).reduce(0, +) / Double(max(1, runErrors.count)),
               results.flatMap(\.stablePulseErrors).filter { abs($0) > 10 }.count, offsetText as NSString))
    let noStable = results.filter { $0.firstStablePulse == nil }.count
    if noStable > 0 { say("             \(noStable) subject(s) never reached a stable pulse") }
    for f in fails.prefix(3) { say("             failure: \(f.failure!)") }
}

/// The benchmark's IMU: its rate (Hz) and how far its clock is ahead of the video's (s).
private let imuRate = 60.0, imuClockOffset = 0.04

private func runSubject(index: Int, seed: UInt64, duration: Double, condition: BenchCondition, trace: Bool) -> SubjectResult {
    var random = SeededRandom(seed: seed, stream: 99)
    let pulseRate = random.uniform(45 ... 150), breathingRate = random.uniform(6 ... 30)
    // RMSSD falls steeply as the heart speeds up (roughly with the square of the RR interval): 15–80 ms at rest
    // (RR ≥ 0.8 s), about 5–30 ms at 125 bpm. `raw-wild-hrv` drops the coupling to show what irregular fast rhythms cost.
    let rr = 60 / pulseRate
    let coupling = condition.uncoupledHRV ? 1 : min(1, (rr / 0.8) * (rr / 0.8))
    let rmssd = max(5, random.uniform(15 ... 80) * coupling)
    let profile = SubjectProfile(
        pulseRate: pulseRate, breathingRate: breathingRate, hrvRMSSD: rmssd,
        lightingLevel: condition.lighting ?? random.uniform(0.7 ... 1.3), lightingDrift: random.uniform(0 ... 0.03),
        headMotion: condition.headMotion || condition.wearerMotion != nil, wearerMotion: condition.wearerMotion ?? .drift,
        seed: seed)
    var result = SubjectResult()
    let width = 504, height = 896
    let scene: SimulatedScene
    let engine: VitalsEngine
    do {
        scene = try SimulatedScene(profile: profile)
        engine = try VitalsEngine()
    } catch {
        result.failure = "\(error)"
        return result
    }
    var encoder: HEVCEncoder?
    var decoder: VideoFrameDecoder?
    if let bitrate = condition.bitrate {
        do {
            encoder = try HEVCEncoder(width: width, height: height, frameRate: condition.fps, bitrate: bitrate)
            decoder = try VideoFrameDecoder(outputFormat: .nv12VideoRange)
        } catch {
            result.failure = "\(error)"
            return result
        }
    }
    let frameCount = Int(duration * Double(condition.fps))
    var buffer = [UInt8](repeating: 0, count: width * height * 3 / 2)
    let truth = scene.groundTruth(through: duration + 1)
    var lastHRV: VitalsHRVSample?
    var skinLuma = 0.0
    var imuIndex = 0
    for n in 0 ..< frameCount {
        let t = Double(n) / Double(condition.fps)
        let us = Int64((t * 1_000_000).rounded())
        // The gyroscope through this frame's exposure, as the glasses would have sent it by now.
        while condition.imu, Double(imuIndex) / imuRate <= t {
            let at = Double(imuIndex) / imuRate
            let sample = SimulatedIMU.sample(rotation: scene.headRotation(at: at), timestampNs: 0)
            if let g = sample.gyroscope { engine.addRotationRate(at: at + imuClockOffset, across: Double(g.x), down: Double(g.y)) }
            imuIndex += 1
        }
        buffer.withUnsafeMutableBytes { scene.render(at: t, width: width, height: height, into: $0) }
        if n == 0 {
            // The subject's skin brightness (mean luma, 0–255 video range, in the simulator's skin boxes): darker skin
            // carries a smaller pulse in absolute terms, which is what a codec quantises away first.
            var sum = 0, count = 0
            for box in scene.frameInfo(at: 0, width: width, height: height).skinBoxes {
                for y in max(0, box.y) ..< min(height, box.y + box.height) {
                    for x in max(0, box.x) ..< min(width, box.x + box.width) { sum += Int(buffer[y * width + x]); count += 1 }
                }
            }
            skinLuma = Double(sum) / Double(max(count, 1))
        }
        var frameResult: VitalsFrameResult?
        if let encoder, let decoder {
            do {
                let image = RawVideoImage(width: width, height: height, lumaBytesPerRow: width, chromaBytesPerRow: width, data: Data(buffer))!
                for sample in try encoder.encode(image, presentationTimeUs: us) {
                    let frame = VideoFrame(presentationTimeUs: us, content: .hevc(HEVCSample(
                        data: sample.data, isKeyframe: sample.isKeyframe, codecConfiguration: encoder.codecConfiguration)))
                    for decoded in try decoder.decode(frame) {
                        let pb = decoded.pixelBuffer
                        frameResult = pb.withUnsafeReadOnlyStorage { storage -> VitalsFrameResult? in
                            let base = storage.baseAddress!.assumingMemoryBound(to: UInt8.self)
                            guard let view = try? VitalsPixelView(
                                format: .nv12VideoRange, width: pb.width, height: pb.height,
                                plane0: UnsafePointer(base + pb.planes[0].offset), bytesPerRow0: pb.planes[0].bytesPerRow,
                                plane1: UnsafePointer(base + pb.planes[1].offset), bytesPerRow1: pb.planes[1].bytesPerRow) else { return nil }
                            let start = threadCPUNanoseconds()
                            defer { result.engineMs += Double(threadCPUNanoseconds() - start) / 1e6; result.frames += 1 }
                            return engine.process(view, timestampUs: decoded.presentationTimeUs)
                        }
                    }
                }
            } catch {
                result.failure = "\(error)"
                return result
            }
        } else {
            frameResult = buffer.withUnsafeBufferPointer { p -> VitalsFrameResult? in
                guard let view = try? VitalsPixelView(
                    format: .nv12VideoRange, width: width, height: height, plane0: p.baseAddress!, bytesPerRow0: width,
                    plane1: p.baseAddress! + width * height, bytesPerRow1: width) else { return nil }
                let start = threadCPUNanoseconds()
                defer { result.engineMs += Double(threadCPUNanoseconds() - start) / 1e6; result.frames += 1 }
                return engine.process(view, timestampUs: us)
            }
        }
        guard let r = frameResult else { continue }
        for s in r.pulseRate {
            let ts = Double(s.timestampUs) / 1e6
            if s.confidence >= VitalsStability.pulse, result.firstStablePulse == nil { result.firstStablePulse = ts }
            if ts >= 15, let gt = truth.meanPulseRate(in: max(0, ts - 12) ... ts) {
                result.pulseErrors.append(s.value - gt)
                if s.confidence >= VitalsStability.pulse { result.stablePulseErrors.append(s.value - gt) }
            }
            if trace {
                let gt = truth.meanPulseRate(in: max(0, ts - 12) ... ts) ?? 0
                say(String(format: "    subject %d t %.1f pulse %.1f truth %.1f confidence %.0f method %@ doubt %@", index, ts, s.value, gt,
                           s.confidence, (r.pulseMethod?.rawValue ?? "-") as NSString, (r.pulseDoubt.map { "\($0)" } ?? "-") as NSString))
            }
        }
        for s in r.breathingRate {
            let ts = Double(s.timestampUs) / 1e6
            if s.confidence >= VitalsStability.breathing, result.firstStableBreathing == nil { result.firstStableBreathing = ts }
            if ts >= 30, let gt = truth.meanBreathingRate(in: max(0, ts - 30) ... ts) { result.breathingErrors.append(s.value - gt) }
            if trace {
                let gt = truth.meanBreathingRate(in: max(0, ts - 30) ... ts) ?? 0
                say(String(format: "    subject %d t %.1f breathing %.2f truth %.2f confidence %.0f", index, ts, s.value, gt, s.confidence))
            }
        }
        for s in r.hrv {
            let ts = Double(s.timestampUs) / 1e6
            if s.confidence >= VitalsStability.hrv, result.firstStableHRV == nil { result.firstStableHRV = ts }
            lastHRV = s
        }
    }
    result.clockOffset = engine.motionSensorAlignment?.offset
    var rmssdText = "--"
    if let h = lastHRV {
        let ts = Double(h.timestampUs) / 1e6
        if let gt = truth.rmssd(window: max(0, ts - 60) ... ts) {
            result.rmssdError = h.measures.rmssd - gt
            rmssdText = String(format: "%.1f vs %.1f", h.measures.rmssd, gt)
        }
    }
    func meanError(_ e: [Double]) -> String {
        e.isEmpty ? "--" : String(format: "%+.2f", e.reduce(0, +) / Double(e.count))
    }
    let truePulse = truth.meanPulseRate(in: 0 ... duration) ?? 0, trueBreathing = truth.meanBreathingRate(in: 0 ... duration) ?? 0
    result.truePulse = truePulse
    result.trueBreathing = trueBreathing
    let stable = result.stablePulseErrors.sorted()
    let runError = stable.isEmpty ? "--" : String(format: "%+.2f", stable[stable.count / 2])
    result.summary = String(format: "pulse %.1f bpm (err %@, max %.1f; run %@ from %d stable), breathing %.1f (err %@), RMSSD %@ ms, light %.2f, skin luma %.0f",
                            truePulse, meanError(result.pulseErrors), result.pulseErrors.map(abs).max() ?? 0, runError, stable.count,
                            trueBreathing, meanError(result.breathingErrors), rmssdText, profile.lightingLevel, skinLuma)
    return result
}

/// Writes a line to standard output unbuffered, so each condition shows as soon as it finishes, even into a pipe.
private func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
