// The several-glasses benchmark (run by Scripts/bench): how many 504x896 24 fps hvc1 simulated glasses one process
// keeps up with in real time without a dropped frame, per core, and the peak memory each stream adds.
import Foundation
import GlassesBridge
import GlassesLink
import GlassesSimulator
import GlassesVideo
import Synchronization
import WearablesKit

/// `Benchmarks streams [--seconds S] [--counts 1,2,4,…] [--clip PATH] [--no-face-clip PATH]
/// [--series rendered,passthrough,files] [--lateness-ms MS] [--handoff-frames N]`: for each series and each count N (in order, stopping at the first that fails) runs N streams
/// in this process, each with its own pipeline (source, decoder, SDK, engine) on its own real-time clock, for S
/// seconds (default 12), and says whether every stream kept up: no frame dropped anywhere (by the glasses for lack of
/// link credit, by the bridge, by an engine's queue) and, from the 3 s mark, no stream more than a quarter second
/// (6 frames) behind 24 fps at any stats line (``StreamWatch/lagLimit``). The series:
/// - `rendered`: simulated glasses that render and encode (libx265) in this process too, so the figure is the
///   whole rig's;
/// - `passthrough` (needs `--clip`, a 504x896 24 fps HEVC clip of the simulated glasses at least S + 1 s long):
///   simulated glasses that send the clip's own samples (``VideoFileFeed/passthrough``, glasses with a hardware
///   encoder), over in-process links with credit and WearablesKit sessions, as real glasses reach the bridge;
/// - `files` (needs `--clip`): the clip played as files in real time, a late frame waiting up to `--lateness-ms`
///   for room before it is skipped (by default 250, ``BridgeSettings/fileLatenessTolerance``, and 500 for HEVC,
///   ``BridgeSettings/encodedBacklog``).
/// `--handoff-frames` sets every stream's hand-off places, which are also the credit glasses get (by default 3 for a
/// file, and half a second's worth, 12, for glasses sending HEVC: ``BridgeSettings/encodedBacklog``).
/// With `--no-face-clip` (a clip like `--clip` with no face in view) each clip series runs on it too, and a table puts
/// the series with a face and without one side by side.
/// Before the clip's series it measures what decoding alone allows: the clip's frames per CPU second under
/// `ffmpeg -threads 1`, over 24 fps, is the most streams a core could keep up with doing nothing else.
func runStreamsBenchmark(_ arguments: [String]) {
    var seconds = 12.0
    // Up to 32 a core (the no-face clip's decoding alone allows 23 a core here): a series that keeps up with every
    // count says so, as a lower bound.
    var counts = [1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 28, 32, 36, 40, 48, 56, 64]
    var clip: String?
    var noFaceClip: String?
    var single: Int?
    var series: [StreamsSeries] = StreamsSeries.allCases
    var latenessMs: Int?
    var handoffFrames: Int?
    var index = 0
    while index < arguments.count {
        let value = index + 1 < arguments.count ? arguments[index + 1] : ""
        switch arguments[index] {
        case "--seconds": seconds = max(4, Double(value) ?? seconds)
        case "--counts": counts = value.split(separator: ",").compactMap { Int($0) }.filter { $0 > 0 }
        case "--clip": clip = value
        case "--no-face-clip": noFaceClip = value
        case "--one": single = Int(value).flatMap { $0 > 0 ? $0 : nil }
        case "--lateness-ms": latenessMs = Int(value).map { max(0, $0) } ?? latenessMs
        case "--handoff-frames": handoffFrames = Int(value).flatMap { (1...64).contains($0) ? $0 : nil } ?? handoffFrames
        case "--series":
            let named = value.split(separator: ",").map { StreamsSeries(rawValue: String($0)) }
            guard !named.isEmpty, named.allSatisfy({ $0 != nil }) else { streamsUsage() }
            series = named.compactMap { $0 }
        default:
            streamsUsage()
        }
        index += 2
    }
    let tuning = StreamsTuning(latenessMs: latenessMs, handoffFrames: handoffFrames)
    if let single {
        // One count in a process of its own (see `streamsSample`): the sample, as one JSON line, to the parent.
        guard series.count == 1, series[0] == .rendered || clip != nil else { streamsUsage() }
        let sample = streamsRun(count: single, seconds: seconds, series: series[0], clip: clip, tuning: tuning)
        guard let json = try? JSONEncoder().encode(sample) else { exit(70) }
        print(samplePrefix + String(decoding: json, as: UTF8.self))
        exit(0)
    }
    // Each clip series with a face (--clip), then without one (--no-face-clip), then the two side by side.
    var rows: [(series: StreamsSeries, face: StreamsOutcome?, noFace: StreamsOutcome?)] = []
    for kind in series {
        if kind != .rendered && clip == nil && noFaceClip == nil {
            print("(the \(kind.rawValue) series needs --clip: left out)")
            continue
        }
        let face = kind == .rendered || clip != nil
            ? streamsSeries(counts: counts, seconds: seconds, series: kind, clip: clip, tuning: tuning) : nil
        let noFace = kind == .rendered ? nil : noFaceClip.map {
            streamsSeries(counts: counts, seconds: seconds, series: kind, clip: $0, tuning: tuning)
        }
        rows.append((kind, face, noFace))
    }
    guard noFaceClip != nil, !rows.isEmpty else { return }
    print("streams kept up, per core, against decoding's ceiling measured before each series (\"≥\": every count "
          + "tried kept up):")
    print("series       | with a face (\(clip.map { URL(fileURLWithPath: $0).lastPathComponent } ?? "-")) | "
          + "without a face (\(noFaceClip.map { URL(fileURLWithPath: $0).lastPathComponent } ?? "-"))")
    for row in rows {
        print(row.series.rawValue.padding(toLength: 12, withPad: " ", startingAt: 0)
              + " | \(row.face?.summary ?? "-") | \(row.noFace?.summary ?? "-")")
    }
}

/// What one series found: the count kept up, on how many cores, and decoding's ceiling per core when measured.
private struct StreamsOutcome {
    var kept: Int
    var cores: Int
    /// Whether a count fell behind (false: every count tried kept up, so `kept` is a lower bound).
    var failed: Bool
    var ceilingPerCore: Double?

    var summary: String {
        let atLeast = failed ? "" : "≥"
        let perCore = Double(kept) / Double(max(1, cores))
        let ratio = ceilingPerCore.map { String(format: ", %@%.2f× of %.1f", atLeast, perCore / $0, $0) } ?? ""
        return String(format: "%@%d (%.1f per core%@)", atLeast, kept, perCore, ratio)
    }
}

/// The kinds of stream the benchmark runs side by side.
private enum StreamsSeries: String, CaseIterable {
    /// Simulated glasses that render and x265-encode in this process.
    case rendered
    /// Simulated glasses that send the clip's own HEVC samples (``VideoFileFeed/passthrough``): glasses with a
    /// hardware encoder, over an in-process link with its credit, WearablesKit's session and stream.
    case passthrough
    /// The clip played as a file in real time.
    case files
}

private func streamsUsage() -> Never {
    FileHandle.standardError.write(Data(("usage: Benchmarks streams [--seconds S] [--counts 1,2,4,...] [--clip PATH] "
        + "[--no-face-clip PATH] [--series rendered,passthrough,files] [--lateness-ms MS] [--handoff-frames N]\n").utf8))
    exit(64)
}

/// How the streams' pipelines are set, the same in the parent and in every child.
private struct StreamsTuning {
    /// A late file frame's wait for room, raw or HEVC; nil: the defaults (``BridgeSettings/fileLatenessTolerance``,
    /// 250 ms, and for HEVC ``BridgeSettings/encodedBacklog``, 500 ms).
    var latenessMs: Int?
    /// Every stream's hand-off places (the glasses' credit); nil: the defaults (``BridgeSettings/frameCapacity``,
    /// ``BridgeSettings/encodedBacklog``).
    var handoffFrames: Int?

    /// The child's arguments for these settings.
    var arguments: [String] {
        (latenessMs.map { ["--lateness-ms", String($0)] } ?? []) + (handoffFrames.map { ["--handoff-frames", String($0)] } ?? [])
    }

    /// What a late file frame waits, in words.
    var latenessWords: String { latenessMs.map { "\($0) ms" } ?? "250 ms (500 ms for HEVC)" }

    /// Applies them to one stream's settings.
    func apply(to settings: inout BridgeSettings, file: Bool) {
        if let latenessMs {
            // A file's HEVC frames wait max(this, encodedBacklog); the backlog's places are the glasses' alone.
            settings.fileLatenessTolerance = .milliseconds(Int64(latenessMs))
            if file { settings.encodedBacklog = .zero }
        }
        if let handoffFrames {
            // Glasses sending HEVC get at least encodedBacklog's places; a file, frameCapacity's.
            settings.frameCapacity = handoffFrames
            if !file { settings.encodedBacklog = .zero }
        }
    }
}

/// Marks the child's result line.
private let samplePrefix = "streams-sample "

/// Runs one count in a fresh process (`Benchmarks streams --one N`), so that its peak RSS over the RSS before it
/// is that count's alone (a process that ran a larger count first reuses the memory it freed) and no thread of an
/// earlier count is still winding down. Nil, with the reason on stderr, when the child fails.
private func streamsSample(count: Int, seconds: Double, series: StreamsSeries, clip: String?, tuning: StreamsTuning) -> StreamsSample? {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL
    process.arguments = ["streams", "--one", String(count), "--seconds", String(seconds), "--series", series.rawValue]
        + tuning.arguments
        + (clip.map { ["--clip", $0] } ?? [])
    let output = Pipe()
    process.standardOutput = output
    do {
        try process.run()
    } catch {
        FileHandle.standardError.write(Data("streams: could not start \(CommandLine.arguments[0]): \(error)\n".utf8))
        return nil
    }
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    let line = String(decoding: data, as: UTF8.self).split(separator: "\n").last { $0.hasPrefix(samplePrefix) }
    guard process.terminationStatus == 0, let line,
          let sample = try? JSONDecoder().decode(StreamsSample.self, from: Data(line.dropFirst(samplePrefix.count).utf8))
    else {
        FileHandle.standardError.write(Data("streams: the run of \(count) stream(s) ended with status \(process.terminationStatus) and no result\n".utf8))
        return nil
    }
    return sample
}

/// One series of counts: simulated glasses (`clip` nil) or copies of a clip played as files in real time.
@discardableResult
private func streamsSeries(counts: [Int], seconds: Double, series: StreamsSeries, clip: String?,
                           tuning: StreamsTuning) -> StreamsOutcome {
    let cores = ProcessInfo.processInfo.activeProcessorCount
    var load = [Double](repeating: 0, count: 3)
    _ = getloadavg(&load, 3)
    let clipName = clip.map { URL(fileURLWithPath: $0).lastPathComponent } ?? ""
    switch series {
    case .files:
        print("several streams in one process: copies of \(clipName) (504x896 hvc1 "
              + "24 fps, the simulated glasses' video) played as files in real time, each with its own pipeline and "
              + "embedded engine (no simulator in the process), a late frame waiting up to \(tuning.latenessWords) for room, "
              + "\(Int(seconds)) s per count, \(cores) cores")
    case .passthrough:
        print("several glasses in one process: 504x896 hvc1 24 fps simulated glasses sending \(clipName)'s own HEVC "
              + "samples (passthrough: glasses with a hardware encoder; no rendering or x265), each over its own "
              + "in-process link with credit, with its own WearablesKit session, pipeline and embedded engine, real "
              + "time, \(Int(seconds)) s per count, \(cores) cores")
    case .rendered:
        print("several glasses in one process: 504x896 hvc1 24 fps simulated glasses (rendered and x265-encoded in this "
              + "process), each with its own pipeline and embedded engine, real time, \(Int(seconds)) s per count, "
              + "\(cores) cores")
    }
    print(String(format: "load average at start: %.2f %.2f %.2f (the machine is shared: other work lowers the count)",
                 load[0], load[1], load[2]))
    // The peer: what decoding alone allows on this machine now, before any count runs.
    let ceiling = series == .rendered ? nil : clip.flatMap(decodingCeiling(clip:))
    if let ceiling {
        print(String(format: "decoding alone: `ffmpeg -threads 1 -pix_fmt nv12 -f null -` decodes the clip at %.0f frames "
                     + "per CPU second (best of 3), so a core could keep up with at most %.1f streams of 24 fps if it did "
                     + "nothing but decode", ceiling.framesPerCPUSecond, ceiling.framesPerCPUSecond / 24))
    }
    var kept = 0
    var failed = false
    var perStreamRSS: Double?
    var cpuPerStream: Double?
    for count in counts {
        guard let sample = streamsSample(count: count, seconds: seconds, series: series, clip: clip, tuning: tuning) else { break }
        // CPU per stream at 24 fps, from a count that kept up (else the first one measured).
        if sample.keptUp || cpuPerStream == nil, sample.meanFPS > 0 {
            cpuPerStream = sample.cpuCores / Double(count) * 24 / sample.meanFPS
        }
        let verdict = sample.keptUp ? "kept up" : "fell behind (\(sample.problem))"
        print(String(format: "%3d stream(s): %@; process cpu %.2f cores (%.2f per stream); fps out mean %.1f, lowest "
                     + "second %.1f, most behind %.1f frames; peak RSS %.0f MiB, +%.1f MiB per stream over the %.0f MiB before",
                     count, verdict, sample.cpuCores, sample.cpuCores / Double(count), sample.meanFPS, sample.minFPS,
                     sample.largestLag, sample.peakRSS, (sample.peakRSS - sample.baseRSS) / Double(count), sample.baseRSS))
        guard sample.keptUp else {
            failed = true
            break
        }
        kept = count
        perStreamRSS = (sample.peakRSS - sample.baseRSS) / Double(count)
    }
    _ = getloadavg(&load, 3)
    // Every count kept up (or a count could not be run): the count is a lower bound, not where the process stops.
    let atLeast = failed ? "" : "at least "
    print(String(format: "kept up with %@%d stream(s) on %d cores: %.1f per core%@; peak RSS per stream %@; "
                 + "load average at end %.2f", atLeast, kept, cores, Double(kept) / Double(cores),
                 failed ? "" : " (no count tried fell behind: a lower bound)",
                 perStreamRSS.map { String(format: "%.1f MiB", $0) } ?? "n/a", load[0]))
    if let cpuPerStream, cpuPerStream > 0 {
        print(String(format: "CPU-bound estimate (if the cores were this process's alone): %.2f cores per stream at 24 fps (CPU over "
                     + "frames delivered), "
                     + "so about %.1f streams per core", cpuPerStream, 1 / cpuPerStream))
    }
    if let ceiling {
        let perCore = ceiling.framesPerCPUSecond / 24
        print(String(format: "against decoding's ceiling: kept up with %@%.1f per core of the %.1f that ffmpeg's decoding alone "
                     + "would allow (%@%.2f×)", atLeast, Double(kept) / Double(cores), perCore, atLeast,
                     Double(kept) / Double(cores) / perCore))
    }
    return StreamsOutcome(kept: kept, cores: cores, failed: failed, ceilingPerCore: ceiling.map { $0.framesPerCPUSecond / 24 })
}

/// The clip's frames per CPU second when `ffmpeg -threads 1` only decodes it (the best of three runs by CPU time),
/// nil with a line on stderr when the clip or ffmpeg cannot be read.
private func decodingCeiling(clip: String) -> (frames: Int, framesPerCPUSecond: Double)? {
    do {
        let reader = try VideoFileReader(path: clip)
        var frames = 0
        while try reader.nextFrame() != nil { frames += 1 }
        let best = try (0..<3).map { _ in try ffmpegDecodeCPUSeconds(clip) }.min() ?? 0
        guard frames > 0, best > 0 else { return nil }
        return (frames, Double(frames) / best)
    } catch {
        FileHandle.standardError.write(Data("streams: decoding's ceiling was not measured: \(error)\n".utf8))
        return nil
    }
}

private struct StreamsSample: Codable {
    var keptUp: Bool
    var problem: String
    var cpuCores: Double
    var minFPS: Double
    /// Frames submitted per second per stream, over the whole run.
    var meanFPS: Double
    /// The most frames any stream was behind 24 fps at a stats line (``StreamWatch/largestLag(before:)``).
    var largestLag: Double
    var baseRSS: Double
    var peakRSS: Double
}

/// One stream's stats lines after its first 3 s: the rate of each interval, and how far the stream fell behind the
/// clock (frames due at 24 fps since the 3 s mark, less the frames submitted since then).
private final class StreamWatch: Sendable {
    /// Frames a stream may be behind the clock at a stats line and still count as keeping up: a quarter second at
    /// 24 fps, less than the chain's 3 frames of hand-off and 4 of engine queue together, so a stream that is
    /// behind for good fails here before it drops; a frame or two that slipped across an interval's boundary
    /// (22 frames in one second, 26 in the next) does not.
    static let lagLimit = 6.0

    private struct Line {
        var seconds: Double
        var fps: Double
        var submitted: UInt64
    }

    private let lines = Mutex<[Line]>([])
    /// The time of the first stats line that counted a dropped frame (by the glasses, the bridge or the engine).
    private let firstDrop = Mutex<Double?>(nil)

    func observe(_ event: BridgeEvent, at seconds: Double) {
        guard case .stats(let stats, _, _, _) = event else { return }
        if stats.deviceDroppedFrames + stats.accounting.dropped + stats.engineDroppedFrames > 0 {
            firstDrop.withLock { $0 = $0 ?? seconds }
        }
        guard seconds >= 3 else { return }
        lines.withLock { $0.append(Line(seconds: seconds, fps: stats.framesPerSecondOut, submitted: stats.accounting.submitted)) }
    }

    /// When this stream's first drop was counted (its stats line's time), if it dropped any.
    var firstDropSeconds: Double? { firstDrop.withLock { $0 } }

    /// The lowest rate of the intervals that ended before `end` (the last, cut short by the stop, is left out).
    func minFPS(before end: Double) -> Double {
        lines.withLock { $0 }.filter { $0.seconds < end }.map(\.fps).min() ?? 0
    }

    /// Frames submitted per second from its first stats line to its last before `end` (nil with fewer than two):
    /// the rate once started, which the time to connect and start each stream (longer with more of them) leaves out.
    func steadyFPS(before end: Double) -> Double? {
        let kept = lines.withLock { $0 }.filter { $0.seconds < end }
        guard let first = kept.first, let last = kept.last, last.seconds > first.seconds else { return nil }
        return Double(last.submitted &- first.submitted) / (last.seconds - first.seconds)
    }

    /// The most frames the stream was behind 24 fps at any stats line before `end`, counted from its first line.
    func largestLag(before end: Double) -> Double {
        let kept = lines.withLock { $0 }.filter { $0.seconds < end }
        guard let first = kept.first else { return 0 }
        return kept.map { line in
            (line.seconds - first.seconds) * 24 - Double(line.submitted &- first.submitted)
        }.max() ?? 0
    }
}

private func streamsRun(count: Int, seconds: Double, series: StreamsSeries, clip: String?, tuning: StreamsTuning) -> StreamsSample {
    let baseRSS = residentMiB()
    let peak = Mutex(baseRSS)
    let sampling = Atomic<Bool>(true)
    let sampler = Thread {
        while sampling.load(ordering: .relaxed) {
            let now = residentMiB()
            peak.withLock { $0 = max($0, now) }
            usleep(50_000)
        }
    }
    sampler.start()
    var pipelines: [BridgePipeline] = []
    var watches: [StreamWatch] = []
    for index in 0..<count {
        let scheduler = DispatchEventScheduler(label: "bench.streams.\(index)")
        let watch = StreamWatch()
        if series == .files, let clip {
            guard var settings = try? BridgeSettings(streamConfiguration: StreamConfiguration.validated(
                videoCodec: .hvc1, resolution: .medium, frameRate: 24))
            else { fatalError("the settings could not be made") }
            settings.duration = .milliseconds(Int64(seconds * 1000))
            tuning.apply(to: &settings, file: true)
            pipelines.append(BridgePipeline(settings: settings, source: .file(clip), clock: .realTime(scheduler)) { event, time in
                watch.observe(event, at: time)
            })
            watches.append(watch)
            continue
        }
        guard let glasses = try? SimulatedGlasses(profile: SubjectProfile(seed: UInt64(index + 1)), scheduler: scheduler),
              var settings = try? BridgeSettings(streamConfiguration: StreamConfiguration.validated(
                videoCodec: .hvc1, resolution: .medium, frameRate: 24))
        else { fatalError("the simulated glasses or the settings could not be made") }
        if series == .passthrough, let clip {
            do { try glasses.setCameraFeed(.videoFile(VideoFileFeed(path: clip, passthrough: true))) } catch {
                fatalError("the clip cannot be passed through: \(error.message)")
            }
        }
        settings.duration = .milliseconds(Int64(seconds * 1000))
        tuning.apply(to: &settings, file: false)
        let source = BridgeSource.glasses("sim#\(index + 1)") {
            let pair = InProcessLink.makePair(scheduler: scheduler)
            glasses.attach(pair.device)
            return pair.host
        }
        pipelines.append(BridgePipeline(settings: settings, source: source, clock: .realTime(scheduler)) { event, time in
            watch.observe(event, at: time)
        })
        watches.append(watch)
    }
    let cpuStart = processCPU()
    let start = monotonicSeconds()
    let done = DispatchSemaphore(value: 0)
    let results = Mutex<[BridgeRunResult]>([])
    let running = pipelines
    Task {
        await withTaskGroup(of: BridgeRunResult.self) { group in
            for pipeline in running { group.addTask { await pipeline.run() } }
            for await result in group { results.withLock { $0.append(result) } }
        }
        done.signal()
    }
    done.wait()
    let wall = monotonicSeconds() - start
    let cpu = processCPU() - cpuStart
    sampling.store(false, ordering: .relaxed)
    var problems: [String] = []
    let finished = results.withLock { $0 }
    let submitted = finished.reduce(0.0) { $0 + Double($1.summary.stats.accounting.submitted) }
    let meanFPS = submitted / Double(max(1, count)) / max(0.001, finished.map(\.summary.durationSeconds).max() ?? wall)
    for result in finished {
        let stats = result.summary.stats
        if let failure = result.summary.failure { problems.append(failure.message) }
        if stats.deviceDroppedFrames > 0 { problems.append("\(stats.deviceDroppedFrames) dropped by the glasses for credit") }
        if stats.accounting.dropped > 0 {
            let reasons = stats.accounting.droppedByReason.map { "\($0.value) \($0.key.rawValue)" }.sorted().joined(separator: ", ")
            problems.append("\(stats.accounting.dropped) dropped by the bridge: \(reasons)")
        }
        if stats.engineDroppedFrames > 0 { problems.append("\(stats.engineDroppedFrames) dropped by an engine") }
    }
    let minFPS = watches.map { $0.minFPS(before: seconds - 0.5) }.min() ?? 0
    let lag = watches.map { $0.largestLag(before: seconds - 0.5) }.max() ?? 0
    let drops = watches.compactMap(\.firstDropSeconds).sorted()
    if let first = drops.first, !problems.isEmpty {
        problems[0] += String(format: " (%d stream(s) dropped, the first by the stats line at %.1f s)", drops.count, first)
    }
    if lag > StreamWatch.lagLimit {
        problems.append(String(format: "a stream fell %.0f frames behind 24 fps", lag))
    }
    // The rate from the 3 s mark: over the whole run the time to connect and start each stream, longer with more
    // of them, lowered it below 95 % of 24 fps for counts that never fell behind.
    let steady = watches.compactMap { $0.steadyFPS(before: seconds - 0.5) }
    let steadyFPS = steady.isEmpty ? 0 : steady.reduce(0, +) / Double(steady.count)
    if steadyFPS < 24 * 0.95 {
        problems.append(String(format: "the streams delivered %.1f fps on average from the 3 s mark", steadyFPS))
    }
    return StreamsSample(
        keptUp: problems.isEmpty, problem: problems.first ?? "", cpuCores: cpu / wall, minFPS: minFPS, meanFPS: meanFPS,
        largestLag: lag, baseRSS: baseRSS, peakRSS: peak.withLock { $0 })
}

/// CPU seconds of this process, user and system.
private func processCPU() -> Double {
    var usage = rusage()
    getrusage(__rusage_who_t(Int32(truncatingIfNeeded: RUSAGE_SELF.rawValue)), &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
        + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

/// Resident memory of this process now, in MiB (`VmRSS` of `/proc/self/status`).
private func residentMiB() -> Double {
    guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
          let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") })
    else { return 0 }
    let kib = line.split(separator: " ").compactMap { Double($0) }.first ?? 0
    return kib / 1024
}
