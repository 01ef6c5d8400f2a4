// The several-glasses benchmark (run by Scripts/bench): how many 504x896 24 fps hvc1 simulated glasses one process
// keeps up with in real time without a dropped frame, per core, and the peak memory each stream adds.
import Foundation
import GlassesBridge
import GlassesLink
import GlassesSimulator
import Synchronization
import WearablesKit

/// `Benchmarks streams [--seconds S] [--counts 1,2,4,…]`: for each count N (in order, stopping at the first that
/// fails) runs N simulated glasses in this process, each with its own pipeline (link, session, decoder, SDK, engine)
/// on its own real-time clock, for S seconds (default 12), and says whether every stream kept up: no frame dropped
/// anywhere (by the glasses for lack of link credit, by the bridge, by an engine's queue) and every stats interval
/// after the first 3 s delivering at least 95 % of 24 fps to custom input. The simulated glasses render and encode
/// (libx265) in this process too, so the figure is the whole rig's, not the bridge's alone; the CPU line says how
/// much of it a stream costs.
func runStreamsBenchmark(_ arguments: [String]) {
    var seconds = 12.0
    var counts = [1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24]
    var index = 0
    while index < arguments.count {
        let value = index + 1 < arguments.count ? arguments[index + 1] : ""
        switch arguments[index] {
        case "--seconds": seconds = max(4, Double(value) ?? seconds)
        case "--counts": counts = value.split(separator: ",").compactMap { Int($0) }.filter { $0 > 0 }
        default:
            FileHandle.standardError.write(Data("usage: Benchmarks streams [--seconds S] [--counts 1,2,4,...]\n".utf8))
            exit(64)
        }
        index += 2
    }
    let cores = ProcessInfo.processInfo.activeProcessorCount
    var load = [Double](repeating: 0, count: 3)
    _ = getloadavg(&load, 3)
    print("several glasses in one process: 504x896 hvc1 24 fps simulated glasses (rendered and x265-encoded in this "
          + "process), each with its own pipeline and embedded engine, real time, \(Int(seconds)) s per count, "
          + "\(cores) cores")
    print(String(format: "load average at start: %.2f %.2f %.2f (the machine is shared: other work lowers the count)",
                 load[0], load[1], load[2]))
    var kept = 0
    var perStreamRSS: Double?
    for count in counts {
        let sample = streamsRun(count: count, seconds: seconds)
        let verdict = sample.keptUp ? "kept up" : "fell behind (\(sample.problem))"
        print(String(format: "%3d stream(s): %@; process cpu %.2f cores (%.2f per stream); min fps out %.1f; "
                     + "peak RSS %.0f MiB, +%.1f MiB per stream over the %.0f MiB before",
                     count, verdict, sample.cpuCores, sample.cpuCores / Double(count), sample.minFPS,
                     sample.peakRSS, (sample.peakRSS - sample.baseRSS) / Double(count), sample.baseRSS))
        guard sample.keptUp else { break }
        kept = count
        perStreamRSS = (sample.peakRSS - sample.baseRSS) / Double(count)
    }
    _ = getloadavg(&load, 3)
    print(String(format: "kept up with %d stream(s) on %d cores: %.1f per core; peak RSS per stream %@; "
                 + "load average at end %.2f", kept, cores, Double(kept) / Double(cores),
                 perStreamRSS.map { String(format: "%.1f MiB", $0) } ?? "n/a", load[0]))
}

private struct StreamsSample {
    var keptUp: Bool
    var problem: String
    var cpuCores: Double
    var minFPS: Double
    var baseRSS: Double
    var peakRSS: Double
}

/// The lowest `fpsOut` of one stream's stats lines after its first 3 s.
private final class StreamWatch: Sendable {
    private let lowest = Mutex(Double.infinity)

    func observe(_ event: BridgeEvent, at seconds: Double) {
        guard case .stats(let stats, _, _) = event, seconds >= 3 else { return }
        lowest.withLock { $0 = min($0, stats.framesPerSecondOut) }
    }

    var minFPS: Double { lowest.withLock { $0 } }
}

private func streamsRun(count: Int, seconds: Double) -> StreamsSample {
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
        guard let glasses = try? SimulatedGlasses(profile: SubjectProfile(seed: UInt64(index + 1)), scheduler: scheduler),
              var settings = try? BridgeSettings(streamConfiguration: StreamConfiguration.validated(
                videoCodec: .hvc1, resolution: .medium, frameRate: 24))
        else { fatalError("the simulated glasses or the settings could not be made") }
        settings.duration = .milliseconds(Int64(seconds * 1000))
        let watch = StreamWatch()
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
    for result in results.withLock({ $0 }) {
        let stats = result.summary.stats
        if let failure = result.summary.failure { problems.append(failure.message) }
        if stats.deviceDroppedFrames > 0 { problems.append("\(stats.deviceDroppedFrames) dropped by the glasses for credit") }
        if stats.accounting.dropped > 0 { problems.append("\(stats.accounting.dropped) dropped by the bridge") }
        if stats.engineDroppedFrames > 0 { problems.append("\(stats.engineDroppedFrames) dropped by an engine") }
    }
    let minFPS = watches.map(\.minFPS).min() ?? 0
    if minFPS < 24 * 0.95 { problems.append(String(format: "a stream delivered %.1f fps", minFPS)) }
    return StreamsSample(
        keptUp: problems.isEmpty, problem: problems.first ?? "", cpuCores: cpu / wall, minFPS: minFPS,
        baseRSS: baseRSS, peakRSS: peak.withLock { $0 })
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
