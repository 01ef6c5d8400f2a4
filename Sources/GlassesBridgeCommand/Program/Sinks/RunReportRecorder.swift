import Foundation
import GlassesBridge
import GlassesReport
import GlassesSimulator
import Synchronization

/// Keeps a run's events as NDJSON for `--report`, and the simulator for `--truth-out`; writes both when the run ends.
///
/// The report is built from the same NDJSON lines `--format ndjson` prints, so `--report` and `glasses-bridge report`
/// draw the same page.
final class RunReportRecorder: EventSink {
    private struct State {
        var formatter: NDJSONEventFormatter
        var lines: String
        var glasses: SimulatedGlasses?
        /// The run's clock and the device clock at the summary, to put the truth on the run's clock.
        var clocks: (run: Double, device: Double)?
    }

    private let state: Mutex<State>
    private let options: BridgeOptions

    /// A recorder when the options ask for `--report` or `--truth-out`, else nil.
    init?(options: BridgeOptions, startedAt: Date?) {
        guard options.reportPath != nil || options.truthOutPath != nil else { return nil }
        self.options = options
        let formatter = NDJSONEventFormatter(simulated: options.device.isSimulator, startedAt: startedAt)
        state = Mutex(State(formatter: formatter, lines: formatter.preamble))
    }

    /// Keeps the simulated glasses (for their truth).
    func watch(_ glasses: SimulatedGlasses) {
        state.withLock { $0.glasses = glasses }
    }

    /// Keeps one event, as its NDJSON line.
    func receive(_ event: BridgeEvent, device: Int, at seconds: Double) {
        state.withLock { state in
            if case .summary = event, let glasses = state.glasses { state.clocks = (seconds, glasses.deviceTime) }
            guard options.reportPath != nil else { return }
            state.lines += state.formatter.format(event, at: seconds)
        }
    }

    /// Writes the report and the truth; the failure (exit 73) when one cannot be written.
    func finish() -> BridgeFailure? {
        let (lines, glasses, clocks) = state.withLock { ($0.lines, $0.glasses, $0.clocks) }
        var problems: [String] = []
        if let path = options.truthOutPath, let glasses {
            let deviceEnd = clocks?.device ?? glasses.deviceTime
            // Device time + offset = the run's clock (its NDJSON `t`).
            let offset = clocks.map { $0.run - $0.device } ?? 0
            let truth = glasses.scene.groundTruth(through: deviceEnd)
            let range = max(0, -offset)...max(deviceEnd, max(0, -offset))
            let text = path.lowercased().hasSuffix(".csv")
                ? truth.csv(in: range, step: 0.1, timeOffset: offset) : truth.ndjson(in: range, step: 0.1, timeOffset: offset)
            if let problem = ReportCommand.writeProblem(text, to: path, flag: "--truth-out") { problems.append(problem) }
        }
        if let path = options.reportPath {
            do {
                let run = try RunRecord.parse(ndjson: lines, name: "this run")
                var context = ReportContext()
                context.input = "this run (glasses-bridge --report)"
                context.generator = BridgeHelp.version
                context.settings = Self.settings(options)
                let html = RunReport(run: run, context: context).html()
                if let problem = ReportCommand.writeProblem(html, to: path, flag: "--report") { problems.append(problem) }
            } catch {
                problems.append("the report could not be built: \(error.message)")
            }
        }
        return problems.isEmpty ? nil : BridgeFailure(.outputFailed, problems.joined(separator: " "))
    }

    /// The run's settings as the report lists them.
    static func settings(_ options: BridgeOptions) -> [(String, String)] {
        var rows: [(String, String)] = [("--device", options.device.description)]
        if options.device.isSimulator || !options.device.description.hasPrefix("file:") {
            rows += [("--fps", "\(options.frameRate)"), ("--resolution", options.resolution.rawValue), ("--codec", options.codec.rawValue)]
        }
        rows += [("--pixel-format", options.pixelFormat.rawValue), ("--metrics", "\(options.metrics)"),
                 ("--duration", options.duration.map { "\($0) s" } ?? "until stopped"), ("--realtime", options.realtime ? "yes" : "no")]
        if options.device.isSimulator {
            if let scenario = options.simulator.scenarioPath {
                rows.append(("--sim-scenario", scenario))
            } else {
                rows += [("--sim-pulse", "\(options.simulator.pulseRate)"), ("--sim-breathing", "\(options.simulator.breathingRate)"),
                         ("--sim-seed", "\(options.simulator.seed)")]
            }
        }
        return rows
    }
}
