import CommandSupport
import Foundation
import GlassesBridge
import GlassesSimulator
import SmartSpectraInput
import Synchronization

/// A run of several devices in one process (`--device` given more than once).
///
/// Each device is a one-device run of its own (``BridgeOptions/singleDevice(at:)``): its own pipeline, and with it
/// its own session, timeline, SDK and engine, lifecycle policy, clock and accounting. They run side by side and
/// write to one output, each event tagged with its device. A device that fails (it cannot be set up, it is
/// unavailable, its stream stalls for good) ends alone; the others stream on. SIGINT or SIGTERM stops them all.
/// When every device has ended, the totals close the output and give the exit code
/// (``MultiDeviceTotals/exitCode``).
package enum MultiDeviceRun {
    /// Runs every device of `options` to its end and hands their events, then the totals, to `sink`, which it finishes.
    /// - Parameters:
    ///   - simulator: called with the index of a simulated device and its glasses before the run starts (tests
    ///     inject faults through it).
    ///   - configure: adjusts the settings of the device at an index (tests shorten its watchdog).
    ///   - backend: the engine of the device at an index (nil: a new embedded vitals engine for each device).
    /// - Returns: every device's outcome and the exit code.
    package static func run(
        _ options: BridgeOptions, sink: any EventSink,
        simulator: (Int, SimulatedGlasses) -> Void = { _, _ in },
        configure: (Int, inout BridgeSettings) -> Void = { _, _ in },
        backend: ((Int) -> any ProcessingBackend)? = nil
    ) async -> MultiDeviceTotals {
        let labels = options.deviceLabels
        var pipelines: [(index: Int, pipeline: BridgePipeline, teardown: @Sendable () -> Void)] = []
        var setupOutcomes: [Int: DeviceOutcome] = [:]
        var warned = false
        for index in options.devices.indices {
            let one = options.singleDevice(at: index)
            let stopper = Mutex<BridgePipeline?>(nil)
            let filter = RunEventFilter(options: one) {
                stopper.withLock { $0 }?.requestStop(reason: BridgeFailure.Kind.outputFailed.rawValue)
            }
            do {
                let prepared = try BridgeCommandLine.makePipeline(one, emit: { event, seconds in
                    for shown in filter.process(event, at: seconds) { sink.receive(shown, device: index, at: seconds) }
                }, simulator: { simulator(index, $0) }, configure: { configure(index, &$0) },
                   backend: backend?(index))
                stopper.withLock { $0 = prepared.pipeline }
                pipelines.append((index, prepared.pipeline, prepared.teardown))
            } catch {
                // This device cannot start; the others still run.
                let summary = BridgeSummary.notStarted(error, metrics: one.metrics)
                sink.receive(.error(code: error.kind.rawValue, message: error.message), device: index, at: 0)
                sink.receive(.summary(summary), device: index, at: 0)
                setupOutcomes[index] = DeviceOutcome(device: labels[index], summary: summary, exitCode: error.exitCode)
                continue
            }
            if case .file = one.device {} else if let warning = FrameRateTable.warning(frameRate: one.frameRate, metrics: one.metrics) {
                sink.receive(.warning(warning), device: index, at: 0)
                if !warned, options.format != .text || options.outputPath != nil {
                    BridgeCommandLine.printError("glasses-bridge: warning: \(warning)")
                    warned = true
                }
            }
        }
        let running = pipelines.map(\.pipeline)
        let trap = SignalTrap { _ in
            for pipeline in running { pipeline.requestStop(reason: "signal") }
        }
        defer { trap.cancel() }
        let results = await withTaskGroup(of: (Int, BridgeRunResult).self) { group in
            for entry in pipelines {
                group.addTask { (entry.index, await entry.pipeline.run()) }
            }
            var results: [Int: BridgeRunResult] = [:]
            for await (index, result) in group { results[index] = result }
            return results
        }
        for entry in pipelines { entry.teardown() }
        let outcomes = options.devices.indices.map { index -> DeviceOutcome in
            if let outcome = setupOutcomes[index] { return outcome }
            guard let result = results[index] else {
                // Every pipeline that was set up ran; a missing result would be a bug, and says so.
                var summary = BridgeSummary()
                summary.failure = BridgeFailure(.internalError, "The run of \(labels[index]) returned no result.")
                summary.reason = BridgeFailure.Kind.internalError.rawValue
                return DeviceOutcome(device: labels[index], summary: summary, exitCode: .internalError)
            }
            return DeviceOutcome(
                device: labels[index], summary: result.summary,
                exitCode: result.summary.failure?.exitCode ?? result.exitCode)
        }
        var totals = MultiDeviceTotals(devices: outcomes)
        let end = outcomes.map(\.summary.durationSeconds).max() ?? 0
        sink.receiveTotals(totals, at: end)
        if let failure = sink.finish() { totals.runFailure = failure }
        return totals
    }
}
