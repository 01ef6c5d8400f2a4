// The whole-bridge benchmark (run by Scripts/bench): the bridge's pipeline on an HEVC file in virtual time, serial
// and pipelined, against `ffmpeg -threads 1 -pix_fmt nv12 -f null -` on the same file, by wall time.
import Foundation
import GlassesBridge
import GlassesVideo
import SmartSpectraInput
import Synchronization
import WearablesKit

/// `Benchmarks bridge [--runs N] CLIP...`: wall time of the whole bridge (file read, decode, conversion, custom input,
/// the embedded engine, metrics and NDJSON formatting, in this process, `--no-realtime`) serial and pipelined,
/// against the ffmpeg CLI merely decoding the clip; plus each stage alone and the engine thread's busy time, to show
/// which thread waits for which.
func runBridgeBenchmark(_ arguments: [String]) {
    var runs = 3
    var clips: [String] = []
    var index = 0
    while index < arguments.count {
        if arguments[index] == "--runs", index + 1 < arguments.count {
            runs = max(1, Int(arguments[index + 1]) ?? 3)
            index += 2
        } else {
            clips.append(arguments[index])
            index += 1
        }
    }
    guard !clips.isEmpty else {
        FileHandle.standardError.write(Data("usage: Benchmarks bridge [--runs N] CLIP...\n".utf8))
        exit(64)
    }
    for clip in clips { benchmarkBridge(clip, runs: runs) }
}

private func benchmarkBridge(_ clip: String, runs: Int) {
    let name = URL(fileURLWithPath: clip).lastPathComponent
    print("whole bridge on \(name), --no-realtime, in-process (file → decode → custom input → embedded engine → "
          + "NDJSON), best of \(runs) by wall time;")
    print("cli = `ffmpeg -threads 1 -i CLIP -pix_fmt nv12 -f null -`; ratio = cli wall / ours wall (> 1: faster).")
    var load = [Double](repeating: 0, count: 3)
    if getloadavg(&load, 3) == 3 {
        print(String(format: "load average at start: %.2f (noisy when other work shares the cores)", load[0]))
    }
    do {
        let cli = try best(runs) { try cliDecode(clip) }
        let read = try best(runs) { try readOnly(clip) }
        let decode = try best(runs) { try decodeOnly(clip) }
        let serial = try best(runs) { try bridgeRun(clip, pipelined: false) }
        let pipelined = try best(runs) { try bridgeRun(clip, pipelined: true) }
        let frames = Double(serial.frames)
        func row(_ label: String, _ sample: Sample, ratio: Bool = true) {
            var line = pad(label, 34) + String(format: "%7.3f s wall %6.1f fps  process cpu %6.2f ms/frame",
                                                 sample.wall, frames / sample.wall, sample.cpu / frames * 1000)
            if ratio { line += String(format: "   ratio %.2f", cli.wall / sample.wall) }
            if let engine = sample.engineBusy {
                line += String(format: "   engine: cpu %.2f ms/frame, busy %.0f%% of wall; rest of the process: cpu %.2f ms/frame",
                               engine.cpu / frames * 1000, engine.wall / sample.wall * 100,
                               (sample.cpu - engine.cpu) / frames * 1000)
            }
            print(line)
        }
        print("\(serial.frames) frames")
        row("ffmpeg CLI decode (nv12)", cli, ratio: false)
        row("read/demux only", read, ratio: false)
        row("read + decode + convert (nv12)", decode)
        row("bridge, serial chain", serial)
        row("bridge, pipelined chain", pipelined)
        print(String(format: "whole bridge vs ffmpeg -threads 1: %.2f× (pipelined), %.2f× (serial)",
                     cli.wall / pipelined.wall, cli.wall / serial.wall))
        if let engine = pipelined.engineBusy {
            print(String(format: "CPU per frame of everything but decoding: %.2f ms (the pipelined bridge, %.2f ms, less "
                         + "read + decode + convert alone, %.2f ms); of it the engine %.2f ms",
                         (pipelined.cpu - decode.cpu) / frames * 1000, pipelined.cpu / frames * 1000,
                         decode.cpu / frames * 1000, engine.cpu / frames * 1000))
        }
        if serial.ndjson != pipelined.ndjson {
            print("WARNING: the serial and pipelined runs' metrics differ")
            exit(1)
        }
    } catch {
        print("\(clip): \(error)")
        exit(1)
    }
    print("")
}

private struct Sample {
    var frames: Int
    var wall: Double
    /// CPU seconds of the whole process (all threads), user + system.
    var cpu: Double
    /// Seconds the engine spent in `process` on its own thread: wall, and that thread's CPU.
    var engineBusy: (wall: Double, cpu: Double)?
    /// The run's metrics lines, to check serial and pipelined agree.
    var ndjson: [String] = []
}

private struct BenchFailure: Error, CustomStringConvertible {
    var description: String
}

private func best(_ runs: Int, _ body: () throws -> Sample) throws -> Sample {
    var found: Sample?
    for _ in 0..<runs {
        let sample = try body()
        if found == nil || sample.wall < found!.wall { found = sample }
    }
    return found!
}

private func monotonic() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
}

private func cpu(_ who: Int32) -> Double {
    var usage = rusage()
    getrusage(__rusage_who_t(who), &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
        + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

private func threadCPU() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
    return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
}

private let selfUsage = Int32(truncatingIfNeeded: RUSAGE_SELF.rawValue)
private let childUsage = Int32(truncatingIfNeeded: RUSAGE_CHILDREN.rawValue)

/// CPU seconds (user + system) that `ffmpeg -threads 1 -i CLIP -pix_fmt nv12 -f null -` spends decoding `clip`: the
/// peer the streams benchmark measures its decoding ceiling against.
func ffmpegDecodeCPUSeconds(_ clip: String) throws -> Double {
    try cliDecode(clip).cpu
}

private func cliDecode(_ clip: String) throws -> Sample {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["ffmpeg", "-hide_banner", "-nostdin", "-v", "error", "-threads", "1", "-i", clip,
                         "-pix_fmt", "nv12", "-f", "null", "-"]
    process.standardInput = FileHandle.nullDevice
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    let start = monotonic()
    let cpuStart = cpu(childUsage)
    try process.run()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
        throw BenchFailure(description: "ffmpeg failed on \(clip) (status \(process.terminationStatus))")
    }
    return Sample(frames: 0, wall: monotonic() - start, cpu: cpu(childUsage) - cpuStart)
}

private func readOnly(_ clip: String) throws -> Sample {
    let start = monotonic()
    let cpuStart = cpu(selfUsage)
    let reader = try VideoFileReader(path: clip)
    var frames = 0
    while try reader.nextFrame() != nil { frames += 1 }
    return Sample(frames: frames, wall: monotonic() - start, cpu: cpu(selfUsage) - cpuStart)
}

private func decodeOnly(_ clip: String) throws -> Sample {
    let start = monotonic()
    let cpuStart = cpu(selfUsage)
    let reader = try VideoFileReader(path: clip)
    let decoder = try VideoFrameDecoder(outputFormat: .nv12VideoRange, options: VideoDecoderOptions(threadCount: 1))
    var frames = 0
    while let frame = try reader.nextFrame() { frames += try decoder.decode(frame).count }
    frames += try decoder.flush().count
    return Sample(frames: frames, wall: monotonic() - start, cpu: cpu(selfUsage) - cpuStart)
}

/// The embedded engine, timing its own `process` calls (wall time on the engine's thread).
private struct TimedEngine: ProcessingBackend {
    final class Busy: Sendable {
        /// Wall seconds inside `process`, and CPU seconds of the engine's thread inside it.
        let seconds = Mutex((wall: 0.0, cpu: 0.0))
    }

    let inner = EmbeddedVitalsBackend()
    let busy = Busy()
    var name: String { inner.name }
    var producedMetrics: Set<MetricType> { inner.producedMetrics }

    func makeProcessor(configuration: ProcessingConfiguration) throws -> any FrameProcessor {
        Processor(inner: try inner.makeProcessor(configuration: configuration), busy: busy)
    }

    final class Processor: FrameProcessor {
        let inner: any FrameProcessor
        let busy: Busy

        init(inner: any FrameProcessor, busy: Busy) {
            self.inner = inner
            self.busy = busy
        }

        func process(_ frame: PixelBuffer, timestampUs: Int64) -> ProcessingUpdate {
            let start = monotonic()
            let cpuStart = threadCPU()
            defer {
                let wall = monotonic() - start
                let cpu = threadCPU() - cpuStart
                busy.seconds.withLock {
                    $0.wall += wall
                    $0.cpu += cpu
                }
            }
            return inner.process(frame, timestampUs: timestampUs)
        }

        func finish() -> ProcessingUpdate { inner.finish() }
    }
}

/// NDJSON lines of one run; metrics lines kept to compare runs.
private final class NDJSONSink: Sendable {
    private let state = Mutex((bytes: 0, metrics: [String]()))

    func write(_ event: BridgeEvent, _ time: Double) {
        let line = NDJSONEventFormatter.json(for: event, at: time).serialized
        state.withLock { state in
            state.bytes += line.utf8.count + 1
            if case .metrics = event { state.metrics.append(NDJSONEventFormatter.json(for: event, at: 0).serialized) }
        }
    }

    var metrics: [String] { state.withLock { $0.metrics } }
}

private func bridgeRun(_ clip: String, pipelined: Bool) throws -> Sample {
    var settings = BridgeSettings(streamConfiguration: try StreamConfiguration.validated(
        videoCodec: .hvc1, resolution: .high, frameRate: 30
    ))
    settings.virtualTimePipelined = pipelined
    let engine = TimedEngine()
    let sink = NDJSONSink()
    let pipeline = BridgePipeline(
        settings: settings, source: .file(clip), clock: .virtual(ManualScheduler()), backend: engine
    ) { event, time in sink.write(event, time) }
    let start = monotonic()
    let cpuStart = cpu(selfUsage)
    let run = PendingRun(pipeline).wait()
    let wall = monotonic() - start
    guard let result = run, result.exitCode == .success else {
        throw BenchFailure(description: "the bridge failed on \(clip): \(String(describing: run?.summary.failure))")
    }
    let accounting = result.summary.stats.accounting
    guard accounting.dropped == 0, accounting.submitted == accounting.received else {
        throw BenchFailure(description: "the bridge dropped frames in virtual time: \(accounting)")
    }
    return Sample(
        frames: Int(accounting.submitted), wall: wall, cpu: cpu(selfUsage) - cpuStart,
        engineBusy: engine.busy.seconds.withLock { $0 }, ndjson: sink.metrics
    )
}

private func pad(_ text: String, _ width: Int) -> String {
    text.count >= width ? text + " " : text + String(repeating: " ", count: width - text.count)
}
