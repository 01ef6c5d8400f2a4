import Foundation
import SmartSpectraInput
import Synchronization
import Testing
import WearablesKit
@testable import GlassesBridge

/// The pipelined chain (file read ahead, decode and engine on their own threads) against the serial one, in virtual
/// time, on the same recording of a seeded simulation, with the real decoder and the real embedded engine.
@Suite("Pipelined chain", .serialized)
struct PipelinedChainTests {
    /// Also shows that the comparison can fail: one frame the engine never sees, or two frames it sees in the wrong
    /// order, change the NDJSON (one recording and one serial run serve all four runs: the real engine is slow in
    /// debug builds).
    @Test func pipelinedAndSerialRunsGiveTheSameNDJSONAndAFaultedRunDoesNot() async throws {
        try await withRecording { path in
            let serial = try await replay(path, pipelined: false)
            let pipelined = try await replay(path, pipelined: true)
            #expect(serial.frames > 100)
            #expect(serial.lines.first { $0.hasPrefix("{\"type\":\"metrics\"") } != nil, "the engine reported nothing")
            #expect(differences(serial.lines, pipelined.lines) == [])
            #expect(serial.engineTimestamps == pipelined.engineTimestamps)
            // Stopped by --duration mid-file: the stop waits for the frames before it, as in the serial chain.
            let serialStopped = try await replay(path, pipelined: false, duration: .milliseconds(3500))
            let pipelinedStopped = try await replay(path, pipelined: true, duration: .milliseconds(3500))
            #expect(serialStopped.frames < serial.frames)
            #expect(differences(serialStopped.lines, pipelinedStopped.lines) == [])
            for fault in [EngineFault.drop(frame: 40), .swap(frame: 40)] {
                let faulted = try await replay(path, pipelined: true, fault: fault)
                #expect(differences(serial.lines, faulted.lines) != [], "\(fault.testDescription) went unnoticed")
            }
        }
    }
}

/// A fault injected between custom input and the real engine.
enum EngineFault: Sendable, CustomTestStringConvertible {
    /// The engine never sees frame `frame` (0-based).
    case drop(frame: Int)
    /// The engine sees frame `frame + 1`'s pixels at frame `frame`'s time and the other way round.
    case swap(frame: Int)

    var testDescription: String {
        switch self {
        case .drop(let frame): "drop frame \(frame)"
        case .swap(let frame): "swap frames \(frame) and \(frame + 1)"
        }
    }
}

/// The embedded engine behind a recorder of timestamps and an optional fault.
private struct FaultyEngine: ProcessingBackend {
    final class Log: Sendable {
        let timestamps = Mutex<[Int64]>([])
    }

    let inner = EmbeddedVitalsBackend()
    let fault: EngineFault?
    let log = Log()
    var name: String { inner.name }
    var producedMetrics: Set<MetricType> { inner.producedMetrics }

    func makeProcessor(configuration: ProcessingConfiguration) throws -> any FrameProcessor {
        Processor(inner: try inner.makeProcessor(configuration: configuration), fault: fault, log: log)
    }

    final class Processor: FrameProcessor {
        let inner: any FrameProcessor
        let fault: EngineFault?
        let log: Log
        var index = 0
        var held: (PixelBuffer, Int64)?

        init(inner: any FrameProcessor, fault: EngineFault?, log: Log) {
            self.inner = inner
            self.fault = fault
            self.log = log
        }

        func process(_ frame: PixelBuffer, timestampUs: Int64) -> ProcessingUpdate {
            defer { index += 1 }
            log.timestamps.withLock { $0.append(timestampUs) }
            switch fault {
            case .drop(let dropped) where dropped == index:
                return ProcessingUpdate()
            case .swap(let first) where first == index:
                held = (frame, timestampUs)
                return ProcessingUpdate()
            case .swap(let first) where first + 1 == index:
                guard let (heldFrame, heldTimestamp) = held else { break }
                held = nil
                var update = inner.process(frame, timestampUs: heldTimestamp)
                let second = inner.process(heldFrame, timestampUs: timestampUs)
                if update.metrics == nil { update = second }
                return update
            default:
                break
            }
            return inner.process(frame, timestampUs: timestampUs)
        }

        func finish() -> ProcessingUpdate { inner.finish() }
    }
}

private struct Replay {
    /// NDJSON lines with every timing field (`t`) zeroed, grouped by event type (metrics, validation and stats
    /// arrive on different threads, so only the order within a type is defined).
    var lines: [String]
    var frames: UInt64
    var engineTimestamps: [Int64]
}

/// Records 6 s of seeded simulated glasses (hvc1, 360×640, 24 fps) to a Matroska file and passes its path.
private func withRecording(_ body: (String) async throws -> Void) async throws {
    let directory = FileManager.default.temporaryDirectory
        .appendingPathComponent("gb-pipelined-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let path = directory.appendingPathComponent("glasses.mkv").path
    let recording = try SimulatedRun(codec: .hvc1, seconds: 6) { $0.recordPath = path }
    let result = await recording.run()
    #expect(result.exitCode == .success)
    try await body(path)
}

private func replay(
    _ path: String, pipelined: Bool, duration: Duration? = nil, fault: EngineFault? = nil
) async throws -> Replay {
    var settings = BridgeSettings(streamConfiguration: try StreamConfiguration.validated(
        videoCodec: .hvc1, resolution: .low, frameRate: 24
    ))
    settings.virtualTimePipelined = pipelined
    settings.duration = duration
    let engine = FaultyEngine(fault: fault)
    let events = EventLog()
    let pipeline = BridgePipeline(
        settings: settings, source: .file(path), clock: .virtual(ManualScheduler()), backend: engine
    ) { event, time in events.append(event, time) }
    let result = await pipeline.run()
    #expect(result.exitCode == .success, "\(String(describing: result.summary.failure))")
    #expect(result.summary.stats.accounting.isBalanced)
    #expect(result.summary.stats.accounting.dropped == 0)
    var byType: [String: [String]] = [:]
    var order: [String] = []
    for (event, _) in events.all {
        var event = event
        // A stats line's vitals are the newest the metrics consumer (a task of its own) has taken in by then, in
        // the serial chain too: left out here; the metrics lines and the summary carry the values.
        if case .stats(let stats, _, let truth, let reference) = event { event = .stats(stats, vitals: VitalsSnapshot(), truth: truth, reference: reference) }
        let line = NDJSONEventFormatter.json(for: event, at: 0).serialized
        let type = String(line.prefix { $0 != "," })
        if byType[type] == nil { order.append(type) }
        byType[type, default: []].append(line)
    }
    return Replay(
        lines: order.sorted().flatMap { byType[$0]! },
        frames: result.summary.stats.accounting.submitted,
        engineTimestamps: engine.log.timestamps.withLock { $0 }
    )
}

/// The lines that differ, position by position (and any left over), as readable pairs.
private func differences(_ expected: [String], _ actual: [String]) -> [String] {
    var found: [String] = []
    for index in 0..<max(expected.count, actual.count) {
        let left = index < expected.count ? expected[index] : "(none)"
        let right = index < actual.count ? actual[index] : "(none)"
        if left != right { found.append("#\(index): \(left) ≠ \(right)") }
        if found.count == 5 { break }
    }
    return found
}
