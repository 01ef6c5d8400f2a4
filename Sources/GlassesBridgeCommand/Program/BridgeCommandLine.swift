import CommandSupport
import Foundation
import GlassesBridge
import GlassesLink
import GlassesSimulator
import SmartSpectraInput
import Synchronization
import WearablesKit

/// The `glasses-bridge` program: parse, then run the command; returns the process exit status.
package enum BridgeCommandLine {
    /// Runs the program with the arguments after its name; writes to standard output and standard error.
    package static func main(_ arguments: [String]) async -> Int32 {
        // A closed pipe on standard output is a write error the sink reports (exit 73), not a silent death.
        signal(SIGPIPE, SIG_IGN)
        let command: BridgeCommand
        do {
            command = try BridgeCommand.parse(arguments)
        } catch {
            printError("glasses-bridge: error: \(error.message)\n\(BridgeHelp.usageLine(for: arguments))")
            return BridgeExitCode.usage.rawValue
        }
        switch command {
        case .help(let topic):
            print(topic == "devices" ? BridgeHelp.devices : topic == "report" ? BridgeHelp.report
                  : topic == "check" ? CheckHelp.text : BridgeHelp.main)
            return BridgeExitCode.success.rawValue
        case .version:
            print(BridgeHelp.version)
            return BridgeExitCode.success.rawValue
        case .devices(let format):
            print(DeviceDiscovery.listing(format: format), terminator: "")
            return BridgeExitCode.success.rawValue
        case .report(let options):
            return ReportCommand.run(options).rawValue
        case .run(let options):
            return await runBridge(options).rawValue
        case .check(let options):
            return await CheckProgram.run(options)
        }
    }

    /// Runs a measurement with parsed options.
    static func runBridge(_ options: BridgeOptions) async -> BridgeExitCode {
        // Every output is checked before anything starts: a run whose files cannot be written is not worth running.
        for (flag, path) in [("--output", options.outputPath), ("--record", options.recordPath), ("--video-out", options.videoOutPath),
                             ("--report", options.reportPath), ("--truth-out", options.truthOutPath)] {
            if let path, let problem = OutputPathCheck.problem(writing: path) {
                printError("glasses-bridge: error: cannot write \(flag) \(path): \(problem).")
                return .cannotWriteOutput
            }
        }
        if options.isMultiDevice { return await runDevices(options) }
        var context = OutputContext()
        context.verbosity = options.verbosity
        context.simulated = options.device.isSimulator
        var realClock = options.realtime
        switch options.device {
        case .link, .listening, .stream: realClock = true
        case .simulator, .file: break
        }
        if realClock { context.startedAt = Date() }  // references logged on the wall clock line up with it
        if case .file(let path) = options.device {
            context.isFile = true
            context.fileDuration = SourceFileInfo(path: path)?.durationSeconds
        }
        // The pipeline first: a command line it refuses (a metric the engine cannot produce, a bad scenario) is a
        // usage error that leaves no output behind. A source that cannot be opened (a recording that cannot be read,
        // a listening address in use) is the run's failure, told like any other: an error, the summary, the report.
        let held = HeldEvents()
        let glasses = Mutex<SimulatedGlasses?>(nil)
        let setUp: Result<PreparedRun, BridgeFailure>
        do {
            setUp = .success(try makePipeline(options, emit: { held.emit($0, at: $1) }, simulator: { made in glasses.withLock { $0 = made } }))
        } catch where error.exitCode == .usage {
            printError("glasses-bridge: error: \(error.message)\n\(BridgeHelp.usageLine)")
            return .usage
        } catch {
            setUp = .failure(error)
        }
        defer { if case .success(let prepared) = setUp { prepared.teardown() } }
        let sinks: EventFanOut
        do {
            sinks = try RunSinks.open(options, context: context, glasses: glasses.withLock { $0 })
        } catch {
            printError("glasses-bridge: error: \(error.message)")
            return error.exitCode
        }
        let stopper = Mutex<BridgePipeline?>(nil)
        let filter = RunEventFilter(options: options) {
            stopper.withLock { $0 }?.requestStop(reason: BridgeFailure.Kind.outputFailed.rawValue)
        }
        held.open { event, seconds in
            for shown in filter.process(event, at: seconds) { sinks.receive(shown, device: 0, at: seconds) }
        }
        let prepared: PreparedRun
        switch setUp {
        case .success(let run): prepared = run
        case .failure(let failure):
            held.emit(.error(code: failure.kind.rawValue, message: failure.message), at: 0)
            held.emit(.summary(.notStarted(failure, metrics: options.metrics)), at: 0)
            printError("glasses-bridge: \(failure.message)")
            if let problem = sinks.finish() { printError("glasses-bridge: error: \(problem.message)") }
            return failure.exitCode
        }
        let pipeline = prepared.pipeline
        stopper.withLock { $0 = pipeline }
        if case .file = options.device {} else if let warning = FrameRateTable.warning(frameRate: options.frameRate, metrics: options.metrics) {
            sinks.receive(.warning(warning), device: 0, at: 0)
            if options.format != .text || options.outputPath != nil {
                printError("glasses-bridge: warning: \(warning)")
            }
        }
        let trap = SignalTrap { [weak pipeline] name in
            pipeline?.requestStop(reason: "signal")
            _ = name
        }
        defer { trap.cancel() }
        let result = await pipeline.run()
        stopper.withLock { $0 = nil }
        let failure = result.summary.failure ?? filter.recordFailure
        if let failure {
            printError("glasses-bridge: \(failure.message)")
        }
        // Every destination is finished however the run ended (also after Ctrl-C): the report and the truth say
        // what happened. A destination that failed makes the exit code 73 unless the run failed first.
        if let problem = sinks.finish() {
            printError("glasses-bridge: error: \(problem.message)")
            return failure?.exitCode ?? problem.exitCode
        }
        return failure?.exitCode ?? result.exitCode
    }

    /// Runs several devices side by side into one output (``MultiDeviceRun``); the exit code is 0 only when every
    /// device did what was asked, else the most severe of theirs.
    static func runDevices(_ options: BridgeOptions) async -> BridgeExitCode {
        var context = OutputContext()
        context.verbosity = options.verbosity
        if options.realtime || options.devices.contains(where: { $0.linkAddress != nil || $0.streamAddress != nil }) { context.startedAt = Date() }
        let devices = zip(options.devices, options.deviceLabels).map { device, label in
            OutputDevice(label: label, source: device.description, simulated: device.isSimulator)
        }
        let sinks: EventFanOut
        do {
            sinks = try RunSinks.open(options, context: context, devices: devices)
        } catch {
            printError("glasses-bridge: error: \(error.message)")
            return error.exitCode
        }
        let totals = await MultiDeviceRun.run(options, sink: sinks)
        for outcome in totals.failedDevices {
            printError("glasses-bridge: \(outcome.device): \(outcome.summary.failure?.message ?? outcome.summary.reason)")
        }
        if let failure = totals.runFailure { printError("glasses-bridge: error: \(failure.message)") }
        return totals.exitCode
    }

    /// Builds the pipeline the options describe.
    /// - Throws: ``BridgeFailure`` when the source cannot be set up (for example an unreadable scenario).
    /// - Parameters:
    ///   - simulator: called with the simulated glasses, when the source is the simulator.
    ///   - configure: adjusts the settings the options give (tests shorten the watchdog with it).
    ///   - backend: the engine behind custom input (the embedded vitals engine when nil; tests use a fast one).
    package static func makePipeline(
        _ options: BridgeOptions, emit: @escaping @Sendable (BridgeEvent, Double) -> Void,
        simulator: (SimulatedGlasses) -> Void = { _ in }, configure: (inout BridgeSettings) -> Void = { _ in },
        backend: (any ProcessingBackend)? = nil
    ) throws(BridgeFailure) -> PreparedRun {
        var teardown: @Sendable () -> Void = {}
        var settings = try BridgeSettings(options: options)
        configure(&settings)
        let engine: any ProcessingBackend = backend ?? EmbeddedVitalsBackend()
        if let refusal = options.metrics.unproducedMessage(produced: engine.producedMetrics, engine: engine.name) {
            throw BridgeFailure(.invalidInput, "--metrics: \(refusal)")
        }
        let clock: BridgeClock
        let source: BridgeSource
        switch options.device {
        case .simulator:
            clock = options.realtime ? .realTime(DispatchEventScheduler(label: "glasses-bridge.clock")) : .virtual(ManualScheduler())
            if let path = options.simulator.scenarioPath {
                let scenario: Scenario
                do {
                    scenario = try Scenario(contentsOf: URL(fileURLWithPath: path))
                } catch {
                    throw BridgeFailure(.invalidInput, "--sim-scenario: \(Self.words(error))")
                }
                let glasses: SimulatedGlasses
                do {
                    glasses = try SimulatedGlasses(profile: scenario.subject, scheduler: clock.scheduler, options: scenario.glassesOptions)
                } catch {
                    throw BridgeFailure(.invalidInput, "--sim-scenario \(path): \(Self.words(error))")
                }
                do {
                    _ = try glasses.start(scenario)
                } catch {
                    throw BridgeFailure(.invalidInput, "--sim-scenario \(path): \(error.message)")
                }
                if settings.duration == nil, let seconds = scenario.duration {
                    settings.duration = .milliseconds(Int64((seconds * 1000).rounded()))
                }
                simulator(glasses)
                source = .simulator(glasses)
            } else {
                let glasses = try options.simulator.makeGlasses(scheduler: clock.scheduler)
                simulator(glasses)
                source = .simulator(glasses)
            }
        case .link(let address):
            let scheduler = DispatchEventScheduler(label: "glasses-bridge.clock")
            clock = .realTime(scheduler)
            let connection = LinkConnectionOptions(
                scheduler: scheduler, pairingToken: options.token, connectTimeout: options.effectiveConnectTimeout)
            source = .glasses(options.device.description, connectBlocks: true,
                              connect: Self.dialler(address, options: connection, named: options.device.description))
        case .listening(let address):
            let scheduler = DispatchEventScheduler(label: "glasses-bridge.clock")
            clock = .realTime(scheduler)
            let listening = try ListeningSource.open(
                on: address, token: options.token, scheduler: scheduler, connectTimeout: options.effectiveConnectTimeout
            ) { refusal in
                // Stamped on the run's clock (it starts with the scheduler), not at 0: a refusal comes any time.
                emit(.warning("\(refusal)"), scheduler.now.inSeconds)
            }
            let listener = listening.listener
            source = listening.source
            teardown = {
                listener.stop()
                let counts = listener.statistics
                if counts.refused > 0 {
                    printError("glasses-bridge: the listener on \(listener.address) refused \(counts.refused) connection(s): pairing \(counts.refusedPairing), busy \(counts.refusedBusy), protocol \(counts.refusedProtocol).")
                }
            }
        case .stream(let address):
            clock = .realTime(DispatchEventScheduler(label: "glasses-bridge.clock"))
            source = .stream(address, connectTimeout: options.effectiveConnectTimeout)
        case .file(let path):
            guard FileManager.default.isReadableFile(atPath: path) else {
                throw BridgeFailure(.deviceUnavailable, "Cannot read \(path): no such file, or no permission to read it.")
            }
            clock = options.realtime ? .realTime(DispatchEventScheduler(label: "glasses-bridge.clock")) : .virtual(ManualScheduler())
            source = .file(path)
        }
        if let query = options.referenceLSL {
            let feed: LSLReferenceFeed
            do {
                feed = try LSLReferenceFeed(query: query)
            } catch {
                teardown()
                throw BridgeFailure(.deviceUnavailable, "--reference lsl:\(query): \(error.message)")
            }
            settings.reference = LiveReference(name: "lsl:\(query) (live)", recording: { feed.recording() })
            teardown = { [teardown] in
                feed.stop()
                teardown()
            }
        }
        return PreparedRun(pipeline: BridgePipeline(settings: settings, source: source, clock: clock, backend: engine, emit: emit),
                           teardown: teardown)
    }

    /// A pipeline ready to run, and what to release once it has run (a listening socket).
    package struct PreparedRun: Sendable {
        /// The pipeline.
        package let pipeline: BridgePipeline
        /// Call once the run ended.
        package let teardown: @Sendable () -> Void
    }

    /// Opens the link to glasses at `address`. Until the first link is made, an address where nothing listens yet is
    /// dialled again until the connect timeout (a relay or glasses-sim started together with the bridge may not
    /// listen yet); after that, each reconnect is one attempt, and the lifecycle policy's backoff spaces them, so that
    /// a dead relay never holds the run's clock.
    static func dialler(_ address: LinkAddress, options: LinkConnectionOptions, named name: String)
        -> @Sendable () throws -> any DeviceLink {
        let connectedOnce = Mutex(false)
        return {
            var options = options
            options.waitsForListener = !connectedOnce.withLock { $0 }
            do {
                let link = try LinkConnector.connect(to: address, options: options)
                connectedOnce.withLock { $0 = true }
                return link
            } catch {
                throw BridgeFailure(.deviceUnavailable, "Cannot reach the glasses at \(name): \(Self.words(error))")
            }
        }
    }

    /// A typed error in the user's terms: its `message` (or `LocalizedError` description), never its type name.
    static func words(_ error: any Error) -> String {
        if let error = error as? LinkError { return error.message }
        if let error = error as? SimulatorError { return error.message }
        if let error = error as? any LocalizedError, let text = error.errorDescription { return text }
        return error.localizedDescription
    }

    static func printError(_ message: String) {
        ConsoleText.standardError((message + "\n"))
    }
}

/// What `glasses-bridge devices` lists.
enum DeviceDiscovery {
    /// One entry of the listing: the same entries in text and NDJSON.
    struct Entry {
        /// `device` (something `--device` takes), `bluetooth` (the adapter status) or `sockets` (how to reach them).
        var type: String
        /// The `--device` value, where there is one.
        var device: String?
        var name: String
        var available: Bool
        var message: String
    }

    /// What this machine can reach: the simulator, Bluetooth (and its paired devices), sockets.
    static func entries() -> [Entry] {
        let bluetooth = bluetoothStatus()
        var entries = [
            Entry(type: "device", device: "sim", name: "built-in simulator", available: true,
                  message: "built-in simulated glasses (always available)   --device sim"),
            Entry(type: "bluetooth", device: nil, name: "bluetooth", available: bluetooth.available, message: bluetooth.message),
        ]
        for paired in bluetooth.available ? pairedDevices() : [] {
            entries.append(Entry(type: "device", device: "bt:\(paired.address)", name: paired.name, available: true,
                                 message: "paired Bluetooth device \(paired.name)   --device bt:\(paired.address)"))
        }
        entries.append(Entry(type: "sockets", device: nil, name: "sockets", available: true,
                             message: "a glasses-sim or relay: --device unix:PATH or --device tcp:HOST:PORT; a relay that dials in (real glasses through a phone): --listen tcp:HOST:PORT"))
        return entries
    }

    /// The listing in the requested format.
    static func listing(format: OutputFormat) -> String {
        let entries = entries()
        switch format {
        case .ndjson:
            return entries.map { entry in
                var members: [(String, JSONValue)] = [("type", .string(entry.type))]
                if let device = entry.device { members.append(("device", .string(device))) }
                members += [("name", .string(entry.name)), ("available", .bool(entry.available)),
                            ("message", .string(entry.message))]
                return JSONValue.object(members).serialized + "\n"
            }.joined()
        default:
            return entries.map { entry in
                let label = entry.device ?? entry.name
                return label.padding(toLength: max(20, label.count + 2), withPad: " ", startingAt: 0) + entry.message + "\n"
            }.joined() + "\n"
        }
    }

    /// Whether this machine has a Bluetooth adapter, as the kernel reports it, and the devices BlueZ has paired.
    static func bluetoothStatus() -> (available: Bool, message: String) {
        let adapters = (try? FileManager.default.contentsOfDirectory(atPath: "/sys/class/bluetooth")) ?? []
        guard !adapters.isEmpty else {
            return (false, "no Bluetooth on this machine (the kernel reports no adapter); use sim, unix: or tcp:")
        }
        let paired = pairedDevices()
        let list = paired.isEmpty
            ? "no paired devices found (pair the glasses with bluetoothctl)"
            : "paired: " + paired.map { "bt:\($0.address) (\($0.name))" }.joined(separator: ", ")
        return (true, "adapter(s) \(adapters.sorted().joined(separator: ", ")); \(list); use --device bt:ADDRESS[@CHANNEL]")
    }

    /// Devices BlueZ remembers as paired (`/var/lib/bluetooth/ADAPTER/DEVICE/info`), where readable.
    static func pairedDevices() -> [(address: String, name: String)] {
        let root = "/var/lib/bluetooth"
        let manager = FileManager.default
        var result: [(String, String)] = []
        for adapter in (try? manager.contentsOfDirectory(atPath: root)) ?? [] {
            for device in (try? manager.contentsOfDirectory(atPath: "\(root)/\(adapter)")) ?? []
            where LinkAddress.isBluetoothAddress(device) {
                let info = (try? String(contentsOfFile: "\(root)/\(adapter)/\(device)/info", encoding: .utf8)) ?? ""
                let name = info.split(separator: "\n").first { $0.hasPrefix("Name=") }.map { String($0.dropFirst(5)) }
                result.append((device, name ?? "unnamed"))
            }
        }
        return result.sorted { $0.0 < $1.0 }
    }
}
