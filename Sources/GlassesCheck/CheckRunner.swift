import GlassesBridge
import Foundation
import GlassesLink
import GlassesVideo
import SmartSpectraInput
import Synchronization
import WearablesKit

/// What a check run reports while it runs.
package enum CheckEvent: Sendable {
    /// A group or configuration begins (`stream hvc1.medium.24`).
    case begin(String)
    /// One check's result.
    case result(CheckResult)
    /// A pipeline event of the current run, with its time (for `--verbose`-style logs).
    case bridge(BridgeEvent, Double)
}

/// Runs a ``CheckPlan`` against a device: the link and photo through WearablesKit directly, every stream
/// configuration, the lifecycle steps and the vitals through ``BridgePipeline``, and evaluates each from what it saw.
package final class CheckRunner: Sendable {
    /// The plan.
    package let plan: CheckPlan
    /// The device.
    package let target: CheckTarget
    /// The reference heart-rate recording, if any.
    package let reference: ReferenceRecording?
    /// A reference read while the plan runs (a live stream), if any.
    package let liveReference: LiveReference?
    private let makeBackend: @Sendable () -> any ProcessingBackend
    private let emit: @Sendable (CheckEvent) -> Void
    private let results = Mutex<[CheckResult]>([])
    /// Whether ``interrupt()`` was called, and the pipeline running now (to stop it).
    private let interruption = Mutex<(interrupted: Bool, current: BridgePipeline?)>((false, nil))

    /// Creates a runner; nothing happens until ``run()``.
    /// - Parameter backend: makes the engine for each pipeline run (the embedded vitals engine by default).
    package init(
        plan: CheckPlan, target: CheckTarget, reference: ReferenceRecording? = nil, liveReference: LiveReference? = nil,
        backend: @escaping @Sendable () -> any ProcessingBackend = { EmbeddedVitalsBackend() },
        emit: @escaping @Sendable (CheckEvent) -> Void = { _ in }
    ) {
        self.plan = plan
        self.target = target
        self.reference = reference
        self.liveReference = liveReference
        self.makeBackend = backend
        self.emit = emit
    }

    private var waiter: CheckWaiter { CheckWaiter(clock: target.clock) }

    private func record(_ result: CheckResult) {
        // After an interruption a check's run was cut short: what it would say is not a verdict.
        guard !isInterrupted else { return }
        results.withLock { $0.append(result) }
        emit(.result(result))
    }

    private var isInterrupted: Bool { interruption.withLock { $0.interrupted } }

    /// Stops the plan (SIGINT, SIGTERM): the check running now ends without a verdict, none after it starts, and
    /// the report ends with an `interrupted` error, so the results so far are kept and the run does not pass.
    package func interrupt() {
        let current = interruption.withLock { state -> BridgePipeline? in
            state.interrupted = true
            return state.current
        }
        current?.requestStop(reason: "signal")
    }

    /// Runs every group of the plan in order and returns the report.
    package func run() async -> CheckReport {
        let startedAt = target.wallClock()
        let start = waiter.now
        var report = CheckReport(planName: plan.name, startedAt: startedAt, properties: [
            CheckProperty("device", target.source.description), CheckProperty("plan", plan.name),
        ])
        if let reference { report.properties.append(CheckProperty("reference", reference.description)) }
        if let liveReference { report.properties.append(CheckProperty("reference", liveReference.name)) }
        let groups = plan.groups
        var unreachable: String?
        var refused = false
        if target.source.isNetworkStream {
            unreachable = await streamPlan()
        } else if groups.contains(.link) || groups.contains(.photo) {
            emit(.begin("link"))
            switch await probeOnOwnThread() {
            case .reached: break
            case .unreachable(let why): unreachable = why
            case .refused: refused = true
            }
        }
        if unreachable == nil, !refused, !target.source.isNetworkStream {
            if groups.contains(.streams) {
                for configuration in plan.streams where !isInterrupted {
                    emit(.begin("stream \(configuration.checkName)"))
                    let observation = await drive(configuration, seconds: streamLimit)
                    if observation.frames.isEmpty, observation.summary.failure?.kind == .deviceUnavailable, results.withLock(\.isEmpty) {
                        unreachable = observation.summary.failure?.message
                        break
                    }
                    for result in StreamEvaluator.evaluate(configuration, observation, plan: plan) { record(result) }
                }
            }
            if unreachable == nil, !isInterrupted, groups.contains(.pauseResume) || groups.contains(.linkLoss) {
                emit(.begin("lifecycle"))
                await lifecycle()
            }
            if unreachable == nil, !isInterrupted, groups.contains(.vitals) {
                emit(.begin("vitals"))
                await vitals()
            }
        }
        if let unreachable, !isInterrupted {
            // A JUnit reader shows a file without a testcase as green: the unreachable device is an error testcase.
            record(.error("link", "reachable", unreachable, type: "unreachable"))
        }
        if isInterrupted {
            let stop = CheckResult.error("run", "interrupted", "stopped by a signal before the plan finished: the check running then "
                                         + "has no verdict and those after it did not run", type: "interrupted")
            results.withLock { $0.append(stop) }
            emit(.result(stop))
            unreachable = nil
        }
        report.results = results.withLock { $0 }
        report.seconds = waiter.now - start
        report.unreachable = unreachable
        return report
    }

    private var streamLimit: Double { plan.tolerances.streamingWithinSeconds + plan.warmUpSeconds + plan.measureSeconds + 1 }

    // MARK: Pipeline runs

    /// One pipeline run of `configuration`: stops `seconds` after starting, or once the measurement window is full.
    /// `script` runs once, at the first frame, with the arrival time (lifecycle steps); `done` ends the run early.
    private func drive(
        _ configuration: StreamConfiguration, seconds: Double, stopAfterWindow: Bool = true,
        script: (@Sendable (_ firstFrame: Double, _ pipeline: BridgePipeline, _ lastArrival: @escaping @Sendable () -> Double) -> Void)? = nil,
        backend: (any ProcessingBackend)? = nil
    ) async -> StreamObservation {
        let observation = Mutex(StreamObservation())
        let links = Mutex<[any DeviceLink]>([])
        let source = target.source
        let wrapped: BridgeSource
        switch source.kind {
        case .glasses(let connect, let deviceDials, let connectBlocks):
            wrapped = BridgeSource(
                kind: .glasses(connect: {
                    let link = try connect()
                    links.withLock { $0.append(link) }
                    return link
                }, deviceDials: deviceDials, connectBlocks: connectBlocks), truth: source.truth, description: source.description)
        case .network:
            wrapped = source
        case .file:
            var failed = StreamObservation()
            failed.summary.failure = BridgeFailure(.invalidInput, "check runs against glasses or a stream, not a file")
            return failed
        }
        var settings = BridgeSettings(streamConfiguration: configuration)
        settings.duration = .milliseconds(Int64(seconds * 1000))
        let scheduler = target.clock.scheduler
        let origin = scheduler.now
        let window = plan.warmUpSeconds + plan.measureSeconds
        // The pipeline the observer acts on is the runner's current one (set below, before the run starts).
        let current: @Sendable () -> BridgePipeline? = { [self] in interruption.withLock { $0.current } }
        let stopping = Atomic<Bool>(false)
        let scripted = Atomic<Bool>(false)
        settings.frameObserver = { frame, arrival in
            let time = (arrival - origin).inSeconds
            let first = observation.withLock { state -> Double in
                state.frames.append(ObservedFrame(frame, arrival: time))
                return state.frames[0].arrival
            }
            if let script, !scripted.exchange(true, ordering: .relaxed), let pipeline = current() {
                let lastArrival: @Sendable () -> Double = { observation.withLock { $0.frames.last?.arrival ?? 0 } }
                scheduler.schedule(after: .zero) { script(first, pipeline, lastArrival) }
            }
            if stopAfterWindow, time - first >= window, !stopping.exchange(true, ordering: .relaxed) {
                scheduler.schedule(after: .zero) { current()?.requestStop(reason: "duration") }
            }
        }
        let tracker = Mutex(VitalsTracker())
        let emit = self.emit
        let pipeline = BridgePipeline(
            settings: settings, source: wrapped, clock: target.clock, backend: backend ?? makeBackend()
        ) { event, time in
            emit(.bridge(event, time))
            switch event {
            case .state(let phase, _): observation.withLock { $0.phases.append((phase, time)) }
            case .notice(let text), .warning(let text): observation.withLock { $0.messages.append((text, time)) }
            case .error(let code, let message): observation.withLock { $0.messages.append(("\(code): \(message)", time)) }
            case .stats(let stats, _, _, _):
                observation.withLock {
                    $0.accountingSnapshots.append((stats.accounting, time))
                    $0.deviceDropSnapshots.append((stats.deviceDroppedFrames, time))
                }
            case .metrics(let payload, _):
                let rows = tracker.withLock { $0.ingest(payload) }
                observation.withLock { state in for row in rows { state.vitals.append((row, time)) } }
            default: break
            }
        }
        let interruptedAlready = interruption.withLock { state -> Bool in
            state.current = pipeline
            return state.interrupted
        }
        if interruptedAlready { pipeline.requestStop(reason: "signal") }
        let result = await pipeline.run()
        interruption.withLock { $0.current = nil }
        var final = observation.withLock { $0 }
        final.summary = result.summary
        for link in links.withLock({ $0 }) {
            guard let diagnostics = (link as? any LinkDiagnosticsReporting)?.diagnostics else { continue }
            final.uncreditedSamples += diagnostics.uncreditedVideoSamples
            if let d = diagnostics.decoder {
                final.linkEncoded = true
                final.linkDecoder.garbageBytesSkipped += d.garbageBytesSkipped
                final.linkDecoder.checksumFailures += d.checksumFailures
                final.linkDecoder.malformedFramesSkipped += d.malformedFramesSkipped
            }
        }
        return final
    }

    // MARK: Lifecycle: pause/resume and link loss

    private struct LifecycleMarks: Sendable {
        var pauseAt: Double?
        var resumeAt: Double?
        var lossAt: Double?
        var declined: [String] = []
    }

    private func lifecycle() async {
        let group = "lifecycle"
        let control = target.control
        let wantPause = plan.groups.contains(.pauseResume), wantLoss = plan.groups.contains(.linkLoss)
        let drivable = control.tap != nil || control.ask != nil
        let lossDrivable = control.loseLink != nil || control.ask != nil
        if wantPause && !drivable { record(.skipped(group, "pause and resume", "manual step: this device cannot be driven to pause and nobody is at an interactive terminal to tap the glasses")) }
        if wantLoss && !lossDrivable { record(.skipped(group, "link loss and reconnect", "manual step: this device cannot be driven to lose its link and nobody is at an interactive terminal to interrupt it")) }
        let doPause = wantPause && drivable, doLoss = wantLoss && lossDrivable
        guard doPause || doLoss else { return }
        let t = plan.tolerances
        let marks = Mutex(LifecycleMarks())
        let scheduler = target.clock.scheduler
        let origin = scheduler.now
        let now: @Sendable () -> Double = { (scheduler.now - origin).inSeconds }
        // Each step runs when the one before it is done: pause, resume (once frames flow again, or the bound has
        // passed) the link loss, and the end once frames are back after the loss (or the bound has passed).
        let script: @Sendable (Double, BridgePipeline, @escaping @Sendable () -> Double) -> Void = { _, pipeline, lastArrival in
            @Sendable func after(_ seconds: Double, _ body: @escaping @Sendable () -> Void) {
                scheduler.schedule(after: .milliseconds(Int64(seconds * 1000)), body)
            }
            @Sendable func poll(_ timeout: Double, _ condition: @escaping @Sendable () -> Bool, then: @escaping @Sendable () -> Void) {
                let deadline = now() + timeout
                @Sendable func step() {
                    if condition() || now() >= deadline { then() } else { after(0.1, step) }
                }
                step()
            }
            /// Performs a step (drives the device, or asks the operator on a thread of its own) and then continues.
            @Sendable func perform(_ drive: (@Sendable () -> Void)?, ask prompt: String, mark: @escaping @Sendable (inout LifecycleMarks, Double?) -> Void,
                                   then: @escaping @Sendable (Bool) -> Void) {
                if let drive {
                    marks.withLock { mark(&$0, now()) }
                    drive()
                    then(true)
                } else if let ask = control.ask {
                    Thread.detachNewThread {
                        let done = ask(prompt)
                        scheduler.schedule(after: .zero) {
                            marks.withLock { mark(&$0, done ? now() : nil) }
                            then(done)
                        }
                    }
                } else {
                    then(false)
                }
            }
            let finish: @Sendable () -> Void = { after(1) { pipeline.requestStop(reason: "duration") } }
            let loss: @Sendable () -> Void = {
                guard doLoss else { finish(); return }
                perform(control.loseLink,
                        ask: "Interrupt the link now (stop the relay or its network for a few seconds, then bring it back); press Enter once it is back.",
                        mark: { m, time in if let time { m.lossAt = time } else { m.declined.append("link loss") } }) { done in
                    guard done, let lossAt = marks.withLock({ $0.lossAt }) else { finish(); return }
                    poll(t.reconnectWithinSeconds + 0.5, { lastArrival() > lossAt + 0.05 }, then: finish)
                }
            }
            guard doPause else {
                after(1) { loss() }
                return
            }
            after(1) {
                perform(control.tap, ask: "Tap the glasses once to pause the stream; press Enter when it is paused.",
                        mark: { m, time in if let time { m.pauseAt = time } else { m.declined.append("pause") } }) { paused in
                    guard paused else { loss(); return }
                    after(2) {
                        perform(control.tap, ask: "Tap the glasses again to resume; press Enter when done.",
                                mark: { m, time in if let time { m.resumeAt = time } else { m.declined.append("pause") } }) { resumed in
                            guard resumed, let resumeAt = marks.withLock({ $0.resumeAt }) else { loss(); return }
                            poll(t.resumeWithinSeconds, { lastArrival() > resumeAt }) { after(0.5) { loss() } }
                        }
                    }
                }
            }
        }
        let limit = t.streamingWithinSeconds + 4 + t.resumeWithinSeconds + t.reconnectWithinSeconds + 4 + (control.tap == nil ? 600 : 0)
        let observation = await drive(plan.lifecycleStream, seconds: limit, stopAfterWindow: false, script: script)
        let m = marks.withLock { $0 }
        let frames = observation.frames.map(\.arrival)
        if doPause {
            if m.declined.contains("pause") {
                record(.skipped(group, "pause and resume", "the operator declined the pause step"))
            } else if let pauseAt = m.pauseAt, let resumeAt = m.resumeAt {
                let pausedSeen = observation.firstTime(of: .paused, after: pauseAt) != nil
                let resumed = frames.first { $0 > resumeAt && $0 < (m.lossAt ?? .infinity) }.map { $0 - resumeAt }
                let within = pausedSeen && (resumed.map { $0 <= t.resumeWithinSeconds } ?? false)
                let measured = (pausedSeen ? "paused, " : "never paused, ")
                    + (resumed.map { "frames again \(format($0, digits: 2)) s after the resume" } ?? "no frame after the resume")
                record(.measured(group, "pause and resume", within: within, measured: measured,
                                 bound: "paused, then frames within \(format(t.resumeWithinSeconds)) s of the resume", value: resumed,
                                 seconds: observation.summary.durationSeconds))
            } else {
                record(.error(group, "pause and resume", "the pause and resume steps did not run (no frame arrived to start them)", type: "missing"))
            }
        }
        if doLoss {
            if m.declined.contains("link loss") {
                record(.skipped(group, "link loss and reconnect", "the operator declined the link-loss step"))
            } else if let lossAt = m.lossAt {
                let reconnects = observation.summary.stats.reconnects
                let back = frames.first { $0 > lossAt + 0.05 }.map { $0 - lossAt }
                let within = reconnects >= 1 && (back.map { $0 <= t.reconnectWithinSeconds } ?? false)
                let measured = "\(reconnects) reconnect(s), " + (back.map { "frames again \(format($0, digits: 2)) s after the loss" } ?? "no frame after the loss")
                record(.measured(group, "link loss and reconnect", within: within, measured: measured,
                                 bound: "a reconnect and frames within \(format(t.reconnectWithinSeconds)) s", value: back,
                                 seconds: observation.summary.durationSeconds))
            } else {
                record(.error(group, "link loss and reconnect", "the link-loss step did not run (no frame arrived to start it)", type: "missing"))
            }
        }
    }

    // MARK: Vitals and the reference

    private func vitals() async {
        let wallStart = target.wallClock()
        let observation = await drive(plan.lifecycleStream, seconds: plan.vitalsSeconds, stopAfterWindow: false)
        judgeVitals(observation, wallStart: wallStart)
    }

    /// The vitals checks (and the reference's) of a run that started at `wallStart`.
    private func judgeVitals(_ observation: StreamObservation, wallStart: Date) {
        let group = "vitals"
        let t = plan.tolerances
        // Vitals are timed on the input timeline (which starts at the first frame), not by when their event was
        // emitted: the engine's consumers may lag behind the clock, most of all in virtual time on a busy machine.
        let firstFrame = observation.frames.first?.arrival ?? observation.firstTime(of: .streaming) ?? 0
        let seconds = observation.summary.durationSeconds
        for (metric, label, bound) in [("pulseRate", "stable pulse", t.pulseStableWithinSeconds),
                                       ("breathingRate", "stable breathing", t.breathingStableWithinSeconds)] {
            let first = observation.vitals.first { $0.sample.metric == metric && $0.sample.stable }
            if let first {
                let after = max(0, first.sample.timeSeconds)
                record(.measured(group, label, within: after <= bound,
                                 measured: "\(format(first.sample.value)) \(metric == "pulseRate" ? "bpm" : "/min") stable \(format(after)) s after the first frame",
                                 bound: "stable within \(format(bound)) s", value: after, seconds: seconds))
            } else if plan.vitalsSeconds < bound {
                record(.skipped(group, label, "no stable value in the plan's \(format(plan.vitalsSeconds)) s vitals run, which is shorter than the \(format(bound)) s bound: lengthen durations.vitals to judge it"))
            } else {
                record(CheckResult(group: group, name: label, verdict: .fail, measured: "never stable", bound: "stable within \(format(bound)) s",
                                   message: "measured no stable value in \(format(seconds)) s, expected one within \(format(bound)) s of streaming",
                                   failureType: "missing", seconds: seconds))
            }
        }
        if let liveReference, reference == nil, liveReference.recording() == nil {
            record(.error(group, "pulse against the reference", "the live reference \(liveReference.name) gave no heart rate during the run",
                          type: "noOverlap", seconds: seconds))
            return
        }
        guard let reference = reference ?? liveReference?.recording() else { return }
        for result in ReferenceComparison.compare(
            reference, observation: observation, wallStart: wallStart, firstFrame: firstFrame, vitalsSeconds: plan.vitalsSeconds,
            tolerances: t, group: group)
        {
            record(result)
        }
    }

    // MARK: A network stream

    /// The plan against a network stream (`--device srt://…`): one run serves the stream checks and the vitals (a
    /// publisher is not asked for configurations, and a phone app would not come back between runs). What the
    /// publisher is expected to send is the plan's `lifecycleStream` (size and rate; DAT's lower resolutions count
    /// as adaptation). The link, the photo and the lifecycle steps are recorded as skipped: a stream has no link
    /// protocol to ask. Returns why the stream was unreachable, if it was.
    private func streamPlan() async -> String? {
        let groups = plan.groups
        let noLink = "a network stream speaks no link protocol"
        if groups.contains(.link) {
            record(.skipped("link", "link protocol", "\(noLink): hello, identity, heartbeat and clock are checked through a relay (--device tcp:… or --listen)"))
        }
        if groups.contains(.photo) { record(.skipped("photo", "photo mid-stream", "\(noLink): a photo cannot be asked of a publisher")) }
        if groups.contains(.pauseResume) { record(.skipped("lifecycle", "pause and resume", "\(noLink): a publisher cannot be paused from here")) }
        if groups.contains(.linkLoss) {
            record(.skipped("lifecycle", "link loss and reconnect", "\(noLink): a publisher that leaves is waited for again, and its reconnects are counted in the stream's accounting"))
        }
        let wantStreams = groups.contains(.streams), wantVitals = groups.contains(.vitals)
        guard wantStreams || wantVitals, !isInterrupted else { return nil }
        emit(.begin("stream \(target.source.description)"))
        let configuration = plan.lifecycleStream
        let wallStart = target.wallClock()
        let observation = await drive(configuration, seconds: max(wantStreams ? streamLimit : 0, wantVitals ? plan.vitalsSeconds : 0),
                                      stopAfterWindow: !wantVitals)
        if observation.frames.isEmpty, observation.summary.failure?.kind == .deviceUnavailable {
            return observation.summary.failure?.message
        }
        if wantStreams {
            for result in StreamEvaluator.evaluate(configuration, observation, plan: plan, group: "stream.network", networkStream: true) { record(result) }
        }
        if wantVitals { judgeVitals(observation, wallStart: wallStart) }
        return nil
    }

    // MARK: Link and photo, through WearablesKit directly

    /// How the link probe ended.
    private enum ProbeOutcome: Sendable {
        /// The device said hello; the link checks (and the photo) have their results.
        case reached
        /// Nothing answered, or nothing said hello: why (the run ends with exit 69).
        case unreachable(String)
        /// The device answered but the host refused the link (another protocol version): recorded as a failed
        /// check, and nothing else can run.
        case refused
    }

    private func probeOnOwnThread() async -> ProbeOutcome {
        let box = Mutex<ProbeOutcome>(.reached)
        await onOwnThread(name: "glasses-bridge.check") { [self] in
            let outcome = probe()
            box.withLock { $0 = outcome }
        }
        return box.withLock { $0 }
    }

    /// Link checks, then (when planned) a photo mid-stream.
    private func probe() -> ProbeOutcome {
        let t = plan.tolerances
        guard case .glasses(let connect, _, _) = target.source.kind else { return .unreachable("check runs against glasses, not a file") }
        let start = waiter.now
        let link: any DeviceLink
        do {
            link = try connect()
        } catch {
            return .unreachable((error as? BridgeFailure)?.message ?? "\(error)")
        }
        let configuration: WearablesConfiguration
        do {
            configuration = try WearablesConfiguration(scheduler: target.clock.scheduler)
        } catch {
            record(.error("link", "hello", "WearablesKit rejected its configuration: \(error)"))
            return .reached
        }
        let wearables = Wearables.makeInstance(configuration: configuration)
        let found = Mutex<DeviceIdentifier?>(nil)
        let token = wearables.addDevicesListener { ids in
            if let id = ids.first { found.withLock { if $0 == nil { $0 = id } } }
        }
        let closing = Mutex<LinkError?>(nil)
        wearables.attach(link: ObservedDeviceLink(link) { error in closing.withLock { $0 = error } })
        let linkGroup = plan.groups.contains(.link)
        let greeted = waiter.wait(seconds: t.helloWithinSeconds) {
            found.withLock { $0 } != nil || closing.withLock { $0 }?.code == .incompatible
        }
        let helloSeconds = waiter.now - start
        guard greeted, let id = found.withLock({ $0 }), let device = wearables.deviceForIdentifier(id) else {
            link.close()
            _ = token
            if let reason = closing.withLock({ $0 }), reason.code == .incompatible, reason.message.contains("pairing failed") {
                // The device refused this host's token: the device is there but will not talk to this rack (exit 69,
                // like a device that cannot be reached), not a failed protocol check.
                return .unreachable("\(reason.message). Give the token the device was started with (--token, or GLASSES_TOKEN).")
            }
            if let reason = closing.withLock({ $0 }), reason.code == .incompatible {
                // The device answered with a hello this host cannot speak to: a failed check, not an absent device.
                record(CheckResult(group: "link", name: "protocol version", verdict: .fail, measured: "refused by the host",
                                   bound: "link protocol \(linkProtocolVersion)",
                                   message: "\(reason.message), expected link protocol \(linkProtocolVersion): the host refused the link, so no other check could run",
                                   failureType: "incompatible", seconds: helloSeconds))
                return .refused
            }
            return .unreachable("the device did not introduce itself (hello) within \(format(t.helloWithinSeconds)) s")
        }
        if linkGroup {
            record(.measured("link", "hello", within: helloSeconds <= t.helloWithinSeconds, measured: "\(format(helloSeconds, digits: 2)) s",
                             bound: "≤ \(format(t.helloWithinSeconds)) s", value: helloSeconds, seconds: helloSeconds))
            let info = device.info
            var missing: [String] = []
            if info.name.isEmpty { missing.append("name") }
            if info.identifier.description.isEmpty { missing.append("identifier") }
            if info.firmwareVersion.isEmpty { missing.append("firmware version") }
            var wanted = plan.groups.contains(.streams) ? plan.streams : []
            wanted.append(plan.lifecycleStream)
            for stream in wanted {
                if !info.supportedCodecs.contains(stream.videoCodec) { missing.append("codec \(stream.videoCodec.rawValue)") }
                if !info.supportedResolutions.contains(stream.resolution) { missing.append("resolution \(stream.resolution.rawValue)") }
                if !info.supportedFrameRates.contains(stream.frameRate) { missing.append("\(stream.frameRate) fps") }
            }
            if plan.groups.contains(.photo), !info.supportedPhotoFormats.contains(.jpeg) { missing.append("jpeg photos") }
            let unique = missing.reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
            let described = "\(info.name) (\(info.deviceType.rawValue), firmware \(info.firmwareVersion)); codecs \(info.supportedCodecs.map(\.rawValue).joined(separator: "/")), resolutions \(info.supportedResolutions.map(\.rawValue).joined(separator: "/")), \(info.supportedFrameRates.map(String.init).joined(separator: "/")) fps"
            record(.measured("link", "identity and capabilities", within: unique.isEmpty, measured: described,
                             bound: "a name, identifier and firmware, and every planned codec, resolution and rate", value: nil,
                             seconds: 0, failureType: "missing", detail: unique.isEmpty ? nil : "missing: \(unique.joined(separator: ", "))"))
            record(.measured("link", "protocol version", within: info.protocolVersion == linkProtocolVersion,
                             measured: "\(info.protocolVersion)", bound: "\(linkProtocolVersion)", value: Double(info.protocolVersion), seconds: 0,
                             failureType: "incompatible"))
            // The heartbeat clock exchange measures the round trip; an in-process link shares the host's clock.
            let diagnostics: @Sendable () -> LinkDiagnostics? = { (link as? any LinkDiagnosticsReporting)?.diagnostics }
            _ = waiter.wait(seconds: 3.5) {
                guard let d = diagnostics() else { return true }
                return d.decoder == nil || d.clock.roundTripUs != nil
            }
            if let d = diagnostics(), d.decoder != nil {
                if let rtt = d.clock.roundTripUs {
                    let ms = Double(rtt) / 1000
                    record(.measured("link", "heartbeat round trip", within: ms <= t.heartbeatRoundTripMs, measured: "\(format(ms, digits: 2)) ms",
                                     bound: "≤ \(format(t.heartbeatRoundTripMs)) ms", value: ms, seconds: 3.5))
                } else {
                    record(CheckResult(group: "link", name: "heartbeat round trip", verdict: .fail, bound: "≤ \(format(t.heartbeatRoundTripMs)) ms",
                                       message: "no heartbeat round trip was measured in 3.5 s (\(d.clock.exchangesAccepted) exchanges accepted, \(d.clock.exchangesRejected) rejected)",
                                       failureType: "missing", seconds: 3.5))
                }
            } else {
                record(CheckResult(group: "link", name: "heartbeat round trip", verdict: .pass, measured: "in-process link",
                                   message: "in-process link: heartbeats share the host's clock, no round trip to measure"))
            }
        }
        if plan.groups.contains(.photo) {
            // Taken on the link probe's connection, so before the streams; under its own heading.
            emit(.begin("photo"))
            photo(wearables: wearables, device: id)
        }
        _ = token
        link.close()
        // The glasses want a pause between one session's end and the next one's start.
        _ = waiter.wait(seconds: 2.5) { false }
        return .reached
    }

    private struct PhotoState: Sendable {
        var frames: [Double] = []
        var photo: (data: Data, time: Double)?
        var errors: [String] = []
        var streaming = false
    }

    private func photo(wearables: WearablesInstance, device: DeviceIdentifier) {
        let group = "photo", t = plan.tolerances
        let session: DeviceSession
        do {
            session = try wearables.createSession(deviceSelector: SpecificDeviceSelector(device: device))
            try session.start()
        } catch {
            record(.error(group, "capture mid-stream", "no session could start for the photo: \(error)", type: "sessionFailed"))
            return
        }
        guard waiter.wait(seconds: 10, until: { session.state == .started }) else {
            record(.error(group, "capture mid-stream", "the session did not start within 10 s (state \(session.state))", type: "sessionFailed"))
            session.stop()
            return
        }
        let camera: Camera
        do {
            guard let added = try session.addCamera(config: plan.lifecycleStream) else {
                record(.error(group, "capture mid-stream", "the session refused a camera", type: "sessionFailed"))
                session.stop()
                return
            }
            camera = added
        } catch {
            record(.error(group, "capture mid-stream", "the camera could not be added: \(error)", type: "sessionFailed"))
            session.stop()
            return
        }
        let state = Mutex(PhotoState())
        let waiter = self.waiter
        let stream = camera.stream
        let tokens = ListenerTokenBag()
        stream.videoFramePublisher.listen { _ in state.withLock { $0.frames.append(waiter.now) } }.store(in: tokens)
        stream.photoDataPublisher.listen { photo in state.withLock { $0.photo = (photo.data, waiter.now) } }.store(in: tokens)
        stream.errorPublisher.listen { error in state.withLock { $0.errors.append(error.description) } }.store(in: tokens)
        stream.statePublisher.listen { s in if s == .streaming { state.withLock { $0.streaming = true } } }.store(in: tokens)
        stream.start()
        defer {
            tokens.clear()
            camera.stop()
            session.stop()
        }
        let streamingBy = waiter.now + t.streamingWithinSeconds + 1
        guard waiter.wait(seconds: t.streamingWithinSeconds + 1, until: { state.withLock { $0.streaming && $0.frames.count >= 2 } }) else {
            record(.error(group, "capture mid-stream", "the stream for the photo did not deliver frames within \(format(t.streamingWithinSeconds + 1)) s", type: "missing"))
            return
        }
        _ = streamingBy
        _ = waiter.wait(seconds: 1) { false }
        let askedAt = waiter.now
        guard stream.capturePhoto(format: .jpeg) else {
            record(.error(group, "capture mid-stream", "the stream refused the photo request (not streaming, or a capture in flight)", type: "refused"))
            return
        }
        let arrived = waiter.wait(seconds: t.photoWithinSeconds) { state.withLock { $0.photo != nil || !$0.errors.isEmpty } }
        let snapshot = state.withLock { $0 }
        guard arrived, let photo = snapshot.photo else {
            let why = snapshot.errors.isEmpty ? "no photo arrived" : "the capture failed: \(snapshot.errors.joined(separator: "; "))"
            let seconds = waiter.now - askedAt
            record(CheckResult(group: group, name: "capture mid-stream", verdict: .fail, measured: "none in \(format(seconds)) s",
                               bound: "a photo within \(format(t.photoWithinSeconds)) s",
                               message: "\(why) in \(format(seconds)) s, expected a photo within \(format(t.photoWithinSeconds)) s",
                               failureType: "missing", seconds: seconds))
            record(.skipped(group, "photo decodes", "no photo to decode"))
            record(.skipped(group, "video resumes", "no photo was taken"))
            return
        }
        let delay = photo.time - askedAt
        record(.measured(group, "capture mid-stream", within: delay <= t.photoWithinSeconds, measured: "\(photo.data.count) bytes after \(format(delay, digits: 2)) s",
                         bound: "a photo within \(format(t.photoWithinSeconds)) s", value: delay, seconds: delay))
        do {
            let size = try JPEGDecoder.decodedSize(of: photo.data)
            let minimum = StreamingResolution.low.videoFrameSize
            let within = size.width >= Int(minimum.width) && size.height >= Int(minimum.height)
            record(.measured(group, "photo decodes", within: within, measured: "a \(size.width)×\(size.height) JPEG",
                             bound: "decodes, at least \(minimum.width)×\(minimum.height)", value: Double(size.width * size.height), seconds: 0))
        } catch {
            record(CheckResult(group: group, name: "photo decodes", verdict: .fail, measured: "\(photo.data.count) bytes that do not decode",
                               bound: "a decodable JPEG", message: "the photo does not decode: \(error.message)", failureType: "undecodable"))
        }
        let resumed = waiter.wait(seconds: t.videoResumesWithinSeconds) { state.withLock { $0.frames.contains { $0 > photo.time } } }
        let next = state.withLock { $0.frames.first { $0 > photo.time } }
        let gap = next.map { $0 - photo.time }
        record(.measured(group, "video resumes", within: resumed && gap != nil,
                         measured: gap.map { "a frame \(format($0, digits: 2)) s after the photo" } ?? "no frame after the photo",
                         bound: "a frame within \(format(t.videoResumesWithinSeconds)) s", value: gap, seconds: gap ?? t.videoResumesWithinSeconds))
    }
}
