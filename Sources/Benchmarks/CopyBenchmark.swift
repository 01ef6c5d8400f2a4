import Foundation
import GlassesBridge
import GlassesLink
import GlassesMedia
import GlassesSimulator
import WearablesKit

/// Counts the copies of frame bytes between a socket and the engine, for raw and hvc1 (`Scripts/bench`).
///
/// Simulated glasses serve a Unix socket in real time; the bridge's own pipeline reads them for a few seconds.
/// ``FrameCopyCounter`` is read before and after; copies per frame are the counted copies divided by the frames
/// custom input accepted, and for socket reads the bytes read over the bytes of the video samples' link bodies
/// (control traffic included, so slightly above 1).
func runCopyBenchmark(_ arguments: [String]) {
    let seconds = arguments.first.flatMap(Double.init) ?? 4
    print("copies of frame bytes per frame, socket → engine (\(Int(seconds)) s each, 360x640 at 15 fps, counted):")
    print(String(format: "%-6@ %12@ %12@ %12@ %14@ %8@", "codec" as NSString, "socket read" as NSString,
                 "link body" as NSString, "conversion" as NSString, "input copy" as NSString, "total" as NSString))
    for codec in [VideoCodec.raw, .hvc1] {
        do {
            let result = try measureCopies(codec: codec, seconds: seconds)
            print(result)
        } catch {
            print("\(codec.rawValue): could not measure: \(error)")
        }
    }
}

private func measureCopies(codec: VideoCodec, seconds: Double) throws -> String {
    let scheduler = DispatchEventScheduler(label: "bench.copies.sim")
    let glasses = try SimulatedGlasses(profile: SubjectProfile(seed: 3), scheduler: scheduler)
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("bench-copies-\(getpid()).sock").path
    try? FileManager.default.removeItem(atPath: path)
    let server = try SimulatorServer(glasses: glasses, address: .unix(path: path))
    defer { server.stop() }
    let clock = DispatchEventScheduler(label: "bench.copies.bridge")
    var settings = BridgeSettings(streamConfiguration: StreamConfiguration(videoCodec: codec, resolution: .low, frameRate: 15))
    settings.duration = .milliseconds(Int64(seconds * 1000))
    let source = BridgeSource.glasses("unix:\(path)") {
        try LinkConnector.connect(to: .unix(path: path), options: LinkConnectionOptions(scheduler: clock))
    }
    let before = FrameCopyCounter.snapshot()
    let pipeline = BridgePipeline(settings: settings, source: source, clock: .realTime(clock)) { _, _ in }
    let run = PendingRun(pipeline).wait()
    let after = FrameCopyCounter.snapshot()
    guard let result = run else { return "\(codec.rawValue): no result" }
    let frames = Double(result.summary.stats.accounting.submitted)
    guard frames > 0 else { return "\(codec.rawValue): no frame was submitted" }
    func delta(_ stage: FrameCopyCounter.Stage) -> FrameCopyCounter.Count {
        let a = after[stage] ?? FrameCopyCounter.Count(copies: 0, bytes: 0)
        let b = before[stage] ?? FrameCopyCounter.Count(copies: 0, bytes: 0)
        return FrameCopyCounter.Count(copies: a.copies - b.copies, bytes: a.bytes - b.bytes)
    }
    let link = delta(.linkBody)
    let socketCopies = link.bytes > 0 ? Double(delta(.socketRead).bytes) / Double(link.bytes) : 0
    let linkCopies = Double(link.copies) / frames
    let conversion = Double(delta(.conversion).copies) / frames
    let input = Double(delta(.customInputCopy).copies) / frames
    return String(format: "%-6@ %12.2f %12.2f %12.2f %14.2f %8.2f   (%d frames)", codec.rawValue as NSString,
                  socketCopies, linkCopies, conversion, input, socketCopies + linkCopies + conversion + input,
                  Int(frames))
}

/// A pipeline run started on a task of its own; ``wait()`` blocks the calling thread (a benchmark's) until it ends.
final class PendingRun: @unchecked Sendable {
    // @unchecked Sendable: `value` is written once by the task before the semaphore is signalled, read after the wait.
    private var value: BridgeRunResult?
    private let done = DispatchSemaphore(value: 0)

    /// Starts `pipeline`.
    init(_ pipeline: BridgePipeline) {
        Task {
            self.value = await pipeline.run()
            self.done.signal()
        }
    }

    /// Waits for the run's end and returns its result.
    func wait() -> BridgeRunResult? {
        done.wait()
        return value
    }
}
