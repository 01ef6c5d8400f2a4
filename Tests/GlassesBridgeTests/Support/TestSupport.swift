import Foundation
import GlassesSimulator
import SmartSpectraInput
import Synchronization
import WearablesKit
@testable import GlassesBridge
import GlassesBridgeCommand

/// A gate an engine waits at until the test opens it (for good: every later wait passes at once).
final class Gate: Sendable {
    private let opened = Mutex(false)
    private let semaphore = DispatchSemaphore(value: 0)

    /// Lets every waiter through, now and later.
    func open() {
        if !opened.withLock({ was in defer { was = true }; return was }) { semaphore.signal() }
    }

    /// Blocks the calling thread until the gate is open.
    func pass() {
        guard !opened.withLock({ $0 }) else { return }
        semaphore.wait()
        semaphore.signal()  // hand the opening on to the next waiter
    }
}

/// A fast engine for pipeline tests: records every run's timestamps, optionally holds its first frame at a
/// ``Gate``, and reports a fixed, stable pulse and breathing rate once a second of input.
struct RecordingBackend: ProcessingBackend {
    final class Log: Sendable {
        let runs = Mutex<[[Int64]]>([])
        var allTimestamps: [[Int64]] { runs.withLock { $0 } }
    }

    let log = Log()
    /// When set, the engine's first frame waits here: an engine that falls behind, without real-time sleeps.
    var gate: Gate?
    /// Whether its pulse and breathing values are stable (false: an engine that never settles).
    var stable = true
    /// An RMSSD to report (stable) with each pulse, in ms; nil reports none.
    var rmssd: Double?
    /// A pulse to report from the engine's drain at the end of the run (`finish()`), after the source finished.
    var drainPulse: Float?
    var name: String { "recording" }
    var producedMetrics: Set<MetricType> { [.pulseRate, .breathingRate, .hrv] }

    func makeProcessor(configuration: ProcessingConfiguration) throws -> any FrameProcessor {
        log.runs.withLock { $0.append([]) }
        return Processor(log: log, gate: gate, stable: stable, rmssd: rmssd, drainPulse: drainPulse)
    }

    final class Processor: FrameProcessor {
        let log: Log
        let gate: Gate?
        let stable: Bool
        let rmssd: Double?
        let drainPulse: Float?
        var lastReport: Int64 = -1_000_000
        var lastTimestamp: Int64 = 0

        init(log: Log, gate: Gate?, stable: Bool = true, rmssd: Double? = nil, drainPulse: Float? = nil) {
            self.log = log
            self.gate = gate
            self.stable = stable
            self.rmssd = rmssd
            self.drainPulse = drainPulse
        }

        func process(_ frame: PixelBuffer, timestampUs: Int64) -> ProcessingUpdate {
            log.runs.withLock { runs in runs[runs.count - 1].append(timestampUs) }
            lastTimestamp = timestampUs
            gate?.pass()
            guard timestampUs - lastReport >= 1_000_000 else { return ProcessingUpdate() }
            lastReport = timestampUs
            var metrics = Metrics()
            metrics.cardio.pulseRate = [MeasurementWithConfidence(value: 70, stable: stable, confidence: 90, timestamp: timestampUs)]
            metrics.breathing.rate = [MeasurementWithConfidence(value: 14, stable: stable, confidence: 90, timestamp: timestampUs)]
            if let rmssd {
                metrics.cardio.hrv = [Hrv(rmssd: rmssd, meanNn: 857, sdnn: rmssd, baevsky: 0, timestamp: timestampUs, confidence: 90, stable: true)]
            }
            return ProcessingUpdate(metrics: metrics, validation: ValidationStatus(code: .ok))
        }

        func finish() -> ProcessingUpdate {
            guard let drainPulse else { return ProcessingUpdate() }
            var metrics = Metrics()
            metrics.cardio.pulseRate = [MeasurementWithConfidence(value: drainPulse, stable: stable, confidence: 90, timestamp: lastTimestamp)]
            return ProcessingUpdate(metrics: metrics, validation: ValidationStatus(code: .ok))
        }
    }
}

/// Collects the events of a run.
final class EventLog: Sendable {
    private let events = Mutex<[(event: BridgeEvent, time: Double)]>([])

    func append(_ event: BridgeEvent, _ time: Double) { events.withLock { $0.append((event, time)) } }

    var all: [(event: BridgeEvent, time: Double)] { events.withLock { $0 } }

    var phases: [LifecyclePolicy.Phase] {
        all.compactMap { if case .state(let phase, _) = $0.event { phase } else { nil } }
    }

    var notices: [String] {
        all.compactMap { if case .notice(let text) = $0.event { text } else { nil } }
    }

    /// Phases, notices and errors with their times, for failure messages.
    var timeline: [String] {
        all.compactMap { entry in
            let t = String(format: "%.1f", entry.time)
            switch entry.event {
            case .state(let phase, _): return "\(t) \(phase.rawValue)"
            case .notice(let text): return "\(t) \(text)"
            case .error(let code, let message): return "\(t) \(code): \(message)"
            default: return nil
            }
        }
    }

    /// Frames submitted by `seconds` of run time, from the periodic stats.
    func submitted(by seconds: Double) -> UInt64 {
        all.last { entry in
            if case .stats = entry.event { entry.time <= seconds } else { false }
        }.flatMap { if case .stats(let stats, _, _, _) = $0.event { stats.accounting.submitted } else { nil } } ?? 0
    }
}

/// One simulated run in virtual time.
struct SimulatedRun {
    let scheduler = ManualScheduler()
    let glasses: SimulatedGlasses
    let backend: RecordingBackend
    let events = EventLog()
    let pipeline: BridgePipeline

    init(
        codec: VideoCodec = .raw, frameRate: UInt = 24, resolution: StreamingResolution = .low,
        seconds: Double, backend: RecordingBackend = RecordingBackend(), glassesOptions: SimulatedGlasses.Options = .init(),
        configure: (inout BridgeSettings) -> Void = { _ in }
    ) throws {
        glasses = try SimulatedGlasses(profile: SubjectProfile(seed: 7), scheduler: scheduler, options: glassesOptions)
        self.backend = backend
        var settings = BridgeSettings(streamConfiguration: try StreamConfiguration.validated(
            videoCodec: codec, resolution: resolution, frameRate: frameRate
        ))
        settings.duration = .milliseconds(Int64(seconds * 1000))
        configure(&settings)
        let events = self.events
        pipeline = BridgePipeline(
            settings: settings, source: .simulator(glasses), clock: .virtual(scheduler), backend: backend
        ) { event, time in events.append(event, time) }
    }

    /// Runs `action` at `seconds` of virtual time.
    func at(_ seconds: Double, _ action: @escaping @Sendable () -> Void) {
        scheduler.schedule(after: .milliseconds(Int64(seconds * 1000)), action)
    }

    func run() async -> BridgeRunResult { await pipeline.run() }
}

extension BridgeStats {
    /// received = submitted + rejected + dropped, and nothing left in flight.
    var balances: Bool { accounting.isBalanced }
}
