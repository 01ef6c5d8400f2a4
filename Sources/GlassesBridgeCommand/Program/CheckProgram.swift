import CommandSupport
import Foundation
import GlassesBridge
import GlassesCheck
import GlassesLink
import GlassesSimulator
import SmartSpectraInput
import Synchronization
import WearablesKit

/// The `glasses-bridge check` program: plan and reference loading, the target, output, JUnit, the exit code.
package enum CheckProgram {
    /// Exit status when a check failed or could not run.
    package static let checkFailed: Int32 = 1

    /// Runs the checks the options describe; returns the process exit status.
    package static func run(_ options: CheckOptions) async -> Int32 {
        let plan: CheckPlan
        do {
            plan = try options.planPath.map { path throws(CheckPlanError) in try CheckPlan.load(contentsOf: path) } ?? CheckPlan()
        } catch {
            BridgeCommandLine.printError("glasses-bridge check: error: --plan \(error.message)")
            return ExitCode.usage.rawValue
        }
        var reference: ReferenceRecording?
        if let path = options.referencePath {
            do {
                reference = try ReferenceRecording.load(contentsOf: path)
            } catch {
                BridgeCommandLine.printError("glasses-bridge check: error: --reference \(error.message)")
                return ExitCode.dataError.rawValue
            }
        }
        var feed: LSLReferenceFeed?
        if let query = options.referenceLSL {
            do {
                feed = try LSLReferenceFeed(query: query)
            } catch {
                BridgeCommandLine.printError("glasses-bridge check: error: --reference lsl:\(query): \(error.message)")
                return ExitCode.deviceUnavailable.rawValue
            }
        }
        defer { feed?.stop() }
        let liveReference = feed.map { feed in LiveReference(name: "lsl:\(options.referenceLSL ?? "") (live)", recording: { feed.recording() }) }
        if let path = options.junitPath, let problem = OutputPathCheck.problem(writing: path) {
            BridgeCommandLine.printError("glasses-bridge check: error: cannot write --junit \(path): \(problem).")
            return ExitCode.cannotWriteOutput.rawValue
        }
        let prepared: PreparedTarget
        do {
            prepared = try makeTarget(options)
        } catch {
            BridgeCommandLine.printError("glasses-bridge check: \(error.message)")
            return error.exitCode.rawValue
        }
        defer { prepared.teardown() }
        let output = CheckOutput(format: options.format, verbose: options.verbose)
        output.start(plan: plan, device: prepared.target.source.description)
        let runner = CheckRunner(plan: plan, target: prepared.target, reference: reference, liveReference: liveReference, emit: { event in output.write(event) })
        // Ctrl-C or SIGTERM ends the plan with what it has: the results so far, the JUnit file, exit 1.
        let trap = SignalTrap { _ in
            runner.interrupt()
            prepared.interrupt()
        }
        let report = await runner.run()
        trap.cancel()
        output.finish(report)
        if let path = options.junitPath {
            do {
                try JUnitReport.write(report, to: path, systemOut: output.linesByCheck)
            } catch {
                BridgeCommandLine.printError("glasses-bridge check: error: --junit \(path) was not written: \(FileErrorText.reason(error))")
                return ExitCode.cannotWriteOutput.rawValue
            }
        }
        if let unreachable = report.unreachable {
            BridgeCommandLine.printError("glasses-bridge check: the device could not be reached: \(unreachable)")
        }
        return report.exitCode
    }

    /// Asks the operator on the terminal and waits for Enter; `skip` (or end of input) declines.
    @Sendable static func askOperator(_ prompt: String) -> Bool {
        ConsoleText.standardError("\nglasses-bridge check: \(prompt) (or type 'skip') ")
        guard let line = readLine() else { return false }
        return line.trimmingCharacters(in: .whitespaces).lowercased() != "skip"
    }

    /// A target, what to release after the run (a listening socket), and what else a signal stops.
    struct PreparedTarget: Sendable {
        let target: CheckTarget
        let teardown: @Sendable () -> Void
        /// Called with the runner's interruption: a listener stops, so that a wait for the relay to dial in ends
        /// now rather than at the connect timeout.
        var interrupt: @Sendable () -> Void = {}
    }

    static func makeTarget(_ options: CheckOptions) throws(BridgeFailure) -> PreparedTarget {
        let interactive = isatty(STDIN_FILENO) == 1 && isatty(STDERR_FILENO) == 1
        let ask: (@Sendable (String) -> Bool)? = interactive ? askOperator : nil
        switch options.device {
        case .simulator:
            let clock: BridgeClock = options.realtime ? .realTime(DispatchEventScheduler(label: "glasses-bridge.check")) : .virtual(ManualScheduler())
            var profile = SubjectProfile(seed: 1)
            var scenario: Scenario?
            if let path = options.simScenarioPath {
                do {
                    scenario = try Scenario(contentsOf: URL(fileURLWithPath: path))
                } catch {
                    throw BridgeFailure(.invalidInput, "--sim-scenario: \(BridgeCommandLine.words(error))")
                }
                profile = scenario?.subject ?? profile
            }
            let glasses: SimulatedGlasses
            do {
                glasses = try SimulatedGlasses(profile: profile, scheduler: clock.scheduler)
            } catch {
                throw BridgeFailure(.internalError, "The simulator could not start: \(error.message).")
            }
            if let scenario {
                do {
                    _ = try glasses.start(scenario)
                } catch {
                    throw BridgeFailure(.invalidInput, "--sim-scenario: \(error.message)")
                }
            }
            let control = CheckDeviceControl(tap: { glasses.tap() }, loseLink: { glasses.inject(.linkLoss) })
            return PreparedTarget(target: CheckTarget(source: .simulator(glasses), clock: clock, control: control), teardown: {})
        case .link(let address):
            let scheduler = DispatchEventScheduler(label: "glasses-bridge.check")
            let connection = LinkConnectionOptions(
                scheduler: scheduler, pairingToken: options.token, connectTimeout: options.effectiveConnectTimeout)
            let description = options.device.description
            let source = BridgeSource.glasses(description, connectBlocks: true,
                                              connect: BridgeCommandLine.dialler(address, options: connection, named: description))
            return PreparedTarget(
                target: CheckTarget(source: source, clock: .realTime(scheduler), control: CheckDeviceControl(ask: ask)), teardown: {})
        case .listening(let address):
            let scheduler = DispatchEventScheduler(label: "glasses-bridge.check")
            let listening = try ListeningSource.open(
                on: address, token: options.token, scheduler: scheduler, connectTimeout: options.effectiveConnectTimeout
            ) { refusal in
                BridgeCommandLine.printError("glasses-bridge check: warning: \(refusal)")
            }
            return PreparedTarget(
                target: CheckTarget(source: listening.source, clock: .realTime(scheduler), control: CheckDeviceControl(ask: ask)),
                teardown: { listening.listener.stop() }, interrupt: { listening.listener.stop() })
        case .file:
            throw BridgeFailure(.invalidInput, "check runs against glasses, not a file")
        case .stream(let address):
            // A stream cannot be asked to pause or drop: the lifecycle steps are skipped, the publisher drives itself.
            let scheduler = DispatchEventScheduler(label: "glasses-bridge.check")
            let source = BridgeSource.stream(address, connectTimeout: options.effectiveConnectTimeout)
            return PreparedTarget(target: CheckTarget(source: source, clock: .realTime(scheduler)), teardown: {})
        }
    }
}

/// Writes check events as text or NDJSON on standard output, and keeps each check's NDJSON line for JUnit.
final class CheckOutput: Sendable {
    private let format: OutputFormat
    private let verbose: Bool
    private let lines = Mutex<[String: String]>([:])
    private let began = Date()

    init(format: OutputFormat, verbose: Bool) {
        self.format = format
        self.verbose = verbose
    }

    /// Each check's NDJSON line, by its full name.
    var linesByCheck: [String: String] { lines.withLock { $0 } }

    private func out(_ text: String) {
        ConsoleText.standardOutput((text + "\n"))
    }

    private var elapsed: Double { Date().timeIntervalSince(began) }

    func start(plan: CheckPlan, device: String) {
        switch format {
        case .ndjson:
            out(JSONValue.object([
                ("type", .string("checkStart")), ("t", .double(0)), ("schemaVersion", .int(1)), ("plan", .string(plan.name)),
                ("device", .string(device)),
                ("groups", .array(plan.groups.map { .string($0.rawValue) })),
            ]).serialized)
        default:
            out(TextEventFormatter.printable("glasses-bridge check: plan \(plan.name) against \(device)"))
        }
    }

    static func json(_ result: CheckResult, t: Double) -> String {
        var members: [(String, JSONValue)] = [
            ("type", .string("check")), ("t", .double((t * 1000).rounded() / 1000)), ("group", .string(result.group)),
            ("name", .string(result.name)), ("verdict", .string(result.verdict.rawValue)),
            ("measured", result.measured.map { .string($0) } ?? .null), ("bound", result.bound.map { .string($0) } ?? .null),
            ("value", JSONValue.number(result.value)), ("message", .string(result.message)),
            ("failureType", result.failureType.map { .string($0) } ?? .null),
            ("seconds", .double((result.seconds * 1000).rounded() / 1000)),
        ]
        if let adaptation = result.adaptation { members.append(("adaptation", .string(adaptation))) }
        return JSONValue.object(members).serialized
    }

    func write(_ event: CheckEvent) {
        switch event {
        case .begin(let what):
            if format == .ndjson {
                out(JSONValue.object([("type", .string("checkBegin")), ("t", .double((elapsed * 1000).rounded() / 1000)), ("what", .string(what))]).serialized)
            } else {
                out("-- \(what)")
            }
        case .result(let result):
            let line = Self.json(result, t: elapsed)
            lines.withLock { $0[result.fullName] = line }
            if format == .ndjson {
                out(line)
            } else {
                let label = result.verdict.rawValue.uppercased().padding(toLength: 7, withPad: " ", startingAt: 0)
                out(TextEventFormatter.printable("\(label) \(result.fullName): \(result.message)"))
            }
        case .bridge(let event, let time):
            guard verbose, format == .text else { return }
            switch event {
            case .state(let phase, _): out(String(format: "        [%7.1fs] state %@", time, "\(phase)"))
            case .notice(let text), .warning(let text): out(String(format: "        [%7.1fs] ", time) + TextEventFormatter.printable(text))
            case .error(let code, let message): out(String(format: "        [%7.1fs] error ", time) + TextEventFormatter.printable("\(code): \(message)"))
            default: break
            }
        }
    }

    func finish(_ report: CheckReport) {
        let counts = (report.count(.pass), report.count(.fail), report.count(.error), report.count(.skipped))
        switch format {
        case .ndjson:
            out(JSONValue.object([
                ("type", .string("checkSummary")), ("t", .double((elapsed * 1000).rounded() / 1000)), ("plan", .string(report.planName)),
                ("tests", .int(Int64(report.results.count))), ("passed", .int(Int64(counts.0))), ("failures", .int(Int64(counts.1))),
                ("errors", .int(Int64(counts.2))), ("skipped", .int(Int64(counts.3))),
                ("unreachable", report.unreachable.map { .string($0) } ?? .null), ("exitCode", .int(Int64(report.exitCode))),
            ]).serialized)
        default:
            let problems = report.problems.map { "  \($0.verdict.rawValue.uppercased()) \($0.fullName): \($0.message)" }
            if !problems.isEmpty { out("problems:\n" + problems.map(TextEventFormatter.printable).joined(separator: "\n")) }
            out(TextEventFormatter.printable("\(report.results.count) checks: \(counts.0) passed, \(counts.1) failed, \(counts.2) errors, \(counts.3) skipped"
                + " in \(String(format: "%.1f", report.seconds)) s" + (report.unreachable.map { "; device unreachable: \($0)" } ?? "")))
        }
    }
}
