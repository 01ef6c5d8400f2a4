import GlassesBridge
import GlassesSimulator

/// The destinations a run's options ask for, opened before the run starts and fed through one ``EventFanOut``.
///
/// Adding a destination is a file in this folder (a type conforming to ``EventSink``) and one line in ``open``.
enum RunSinks {
    /// Opens every destination the options ask for; the formatted output comes first in the order.
    /// - Parameters:
    ///   - context: what the formatted output knows of the run.
    ///   - devices: the run's devices when there are several (each event then carries its index).
    ///   - glasses: the simulated glasses, when simulated (the report's `--truth-out` reads their truth).
    /// - Throws: ``BridgeFailure`` naming the destination that cannot be opened; its kind gives the exit code (an
    ///   output that cannot be written, 73). Nothing opened before it is left open (``EventSink/discard()``).
    static func open(
        _ options: BridgeOptions, context: OutputContext, devices: [OutputDevice] = [], glasses: SimulatedGlasses? = nil
    ) throws(BridgeFailure) -> EventFanOut {
        var destinations: [any EventSink] = []
        do throws(BridgeFailure) {
            if let report = RunReportRecorder(options: options, startedAt: context.startedAt) {
                if let glasses { report.watch(glasses) }
                destinations.append(report)
            }
            if let metrics = try MetricsEndpoint.open(options) { destinations.append(metrics) }
            if let lsl = try LSLSink(options: options) { destinations.append(lsl) }
            // The formatted output is opened last (a failure above leaves no empty file behind) and fed first.
            return EventFanOut([try formattedOutput(options, context: context, devices: devices)] + destinations)
        } catch {
            for destination in destinations { destination.discard() }
            throw error
        }
    }

    private static func formattedOutput(
        _ options: BridgeOptions, context: OutputContext, devices: [OutputDevice]
    ) throws(BridgeFailure) -> OutputSink {
        do {
            return try OutputSink(format: options.format, path: options.outputPath, context: context, devices: devices)
        } catch {
            throw BridgeFailure(.outputFailed, error.message)
        }
    }
}
