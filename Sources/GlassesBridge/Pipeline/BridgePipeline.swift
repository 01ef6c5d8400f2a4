import Foundation
import GlassesVideo
import SmartSpectraInput
import Synchronization
import WearablesKit

/// The outcome of a run: its summary and the process exit code it maps to.
public struct BridgeRunResult: Sendable {
    /// The final summary (also emitted as the last event).
    public let summary: BridgeSummary
    /// 0 for a normal end, 69 when the device stopped the run, 70 for an internal failure.
    public let exitCode: BridgeExitCode
}

/// The settings of a pipeline run, resolved from the command line or set by tests.
public struct BridgeSettings: Sendable {
    /// What to ask of the glasses.
    public var streamConfiguration: StreamConfiguration
    /// The layout submitted to custom input.
    public var pixelFormat: SubmitPixelFormat = .nv12
    /// The orientation fix custom input applies.
    public var transform: TransformOption = .none
    /// The metrics to measure.
    public var metrics: MetricSelection = .default
    /// How long to run, in scheduler time; nil until stopped or the file ends.
    public var duration: Duration?
    /// Where to keep what the glasses sent.
    public var recordPath: String?
    /// Where to write the frames exactly as submitted (Y4M).
    public var videoOutPath: String?
    /// How often periodic stats are emitted.
    public var statsInterval: Duration = .seconds(1)
    /// Frames that may wait for the worker before the oldest is dropped as late: the hand-off's places, and for
    /// glasses the video credit they get. Glasses sending HEVC get more (``encodedBacklog``).
    public var frameCapacity: Int = 3
    /// How far behind HEVC video may fall before a frame is lost: an HEVC sample is tens of kilobytes, and one that
    /// is lost costs every frame up to the next keyframe, so a moment of contention (every stream's keyframe at once,
    /// a process starting many streams) is waited out rather than lost. Half a second by default.
    /// - Glasses sending HEVC get that much video as hand-off places, at the stream's frame rate (12 at 24 fps, 15 at
    ///   30; never fewer than ``frameCapacity``, at most 120). These places are also the glasses' credit. Raw frames
    ///   (677 kB each at 504×896) keep ``frameCapacity``.
    /// - A file played in real time lets an HEVC frame wait for room up to this past its time, when that is longer
    ///   than ``fileLatenessTolerance``.
    public var encodedBacklog: Duration = .milliseconds(500)
    /// A file played in real time: how long past its time a frame may wait for room in the hand-off before it is
    /// skipped as late (``LateFramePolicy``; an HEVC frame up to ``encodedBacklog`` when that is longer). A quarter
    /// second lets a moment of contention pass without a loss.
    public var fileLatenessTolerance: Duration = .milliseconds(250)
    /// Frames that may wait inside the engine before new ones are dropped as late.
    public var engineQueueLimit: Int = 4
    /// In virtual time, whether time also waits for the engine to process each frame (no engine drops; set false
    /// to let a slow engine fall behind, as in real time).
    public var virtualTimeWaitsForEngine = true
    /// In virtual time with a file, whether the chain is pipelined (the default): the file thread reads and pushes
    /// frame N+2 while the worker decodes N+1 and the engine processes N, and the pipeline drains only before a
    /// timer (stats, duration) fires and at the end, so every timer sees what it saw in the serial chain. Set false
    /// for the serial chain: each frame read, decoded and processed by the engine before the next is read. Both give
    /// the same frames, values and counts; only wall time differs.
    public var virtualTimePipelined = true
    /// The lifecycle policy's timings and limits.
    public var policy = LifecyclePolicy.Configuration()
    /// In virtual time, called after every step once the worker is idle: lets a test wait for messages still in
    /// flight on a real socket before time moves on (in-process links need nothing).
    public var virtualTimeSettle: (@Sendable () -> Void)?
    /// Sees every frame the glasses deliver, with its host arrival time, before the hand-off (`glasses-bridge check`
    /// reads timestamps, sizes and keyframes here); called on the link's event thread, so keep it cheap.
    public var frameObserver: (@Sendable (VideoFrame, Duration) -> Void)?
    /// A live reference heart rate (a chest strap on LSL) to put beside each `stats` event's pulse, paired into the
    /// summary's ``BridgeSummary/reference``; read on the wall clock, so only for real-time runs.
    package var reference: LiveReference?
    /// Whether to ask the glasses for their IMU (DAT 1.0 Motion, 30 Hz) once the stream streams, and report in the
    /// summary (``BridgeSummary/motion``) how far its clock is from the video's. Glasses only; the vitals do not use
    /// the IMU yet.
    public var motion = false

    /// Creates settings for a stream configuration; everything else has its command-line default.
    public init(streamConfiguration: StreamConfiguration) {
        self.streamConfiguration = streamConfiguration
    }

    /// The hand-off's places for a run: ``frameCapacity``, or for glasses sending HEVC enough places for
    /// ``encodedBacklog`` at the stream's frame rate.
    package func handoffPlaces(glasses: Bool) -> Int {
        let places = max(1, frameCapacity)
        guard glasses, streamConfiguration.videoCodec == .hvc1 else { return places }
        let (seconds, attoseconds) = encodedBacklog.components
        // Clamped in floating point before the conversion: the frame rate of an unvalidated configuration may be
        // any UInt.
        let backlog = max(0, Double(seconds) + Double(attoseconds) / 1e18)
        let wanted = min(Double(Self.mostEncodedPlaces), (backlog * Double(streamConfiguration.frameRate)).rounded(.up))
        return max(places, Int(wanted))
    }

    /// The most places ``encodedBacklog`` can ask for: five seconds at 24 fps.
    private static let mostEncodedPlaces = 120
}

/// The pipeline: glasses (or a file) → decode → one serial worker → SmartSpectra custom input → metrics → events.
///
/// Order follows the custom-input contract: custom input is selected while the SDK is stopped, `start()` is awaited
/// before the first frame, frames are submitted from one worker thread, and teardown runs in reverse (stop frame
/// delivery, drain the worker, stop the SDK). The ``LifecyclePolicy`` handles pauses, zombie streams, lost links and
/// ended sessions; the worker restarts custom input before a frame that would leave a gap over 2 s.
///
/// Create it, then `await run()`; nothing starts before. ``requestStop(reason:)`` (from a signal handler, a timer or
/// a test) ends the run gracefully; `run()` then returns the summary.
public final class BridgePipeline: Sendable {
    /// The settings.
    public let settings: BridgeSettings
    /// Where frames come from.
    public let source: BridgeSource
    /// How time passes.
    public let clock: BridgeClock

    private let backend: any ProcessingBackend
    /// The run's IMU against its video, when ``BridgeSettings/motion`` asks for it and the source is glasses.
    private let motion: MotionClockMonitor?
    private let line: JudgedEventLine
    private let run = Mutex(RunState())
    private let counters = BridgeCounters()
    private let tracker = Mutex(VitalsTracker())
    private let finished = Atomic<Bool>(false)
    private let startedAt: Duration

    private struct RunState {
        var started = false
        var frameSource: (any FrameSource)?
        var stopReason: String?
        var failure: BridgeFailure?
        var finishContinuation: CheckedContinuation<Void, Never>?
        var lastStats: (time: Duration, received: UInt64, submitted: UInt64)?
        var agreement: ReferenceAgreement?
        weak var sdk: SmartSpectraSDK?
        /// The source's `finished` state, held back until the engine has drained (``emit(_:)``); `drained` once
        /// it has, after which events go straight out.
        var heldFinish: BridgeEvent?
        var drained = false
    }

    /// The running SDK, if any (weak: the run's resources own it).
    private var currentSDK: SmartSpectraSDK? { run.withLock { $0.sdk } }

    /// Creates a pipeline; nothing runs until ``run()``.
    /// - Parameters:
    ///   - backend: the engine behind custom input; the embedded vitals engine by default.
    ///   - emit: receives every event, judged (``FrameRateGate``: by the rate a file declares, the rate a network
    ///     stream arrives at, or the rate asked of glasses), with its time in seconds since the run began: one event
    ///     at a time, in one order, from whichever of the pipeline's threads delivers (return quickly).
    public init(
        settings: BridgeSettings, source: BridgeSource, clock: BridgeClock,
        backend: any ProcessingBackend = EmbeddedVitalsBackend(),
        emit: @escaping @Sendable (BridgeEvent, Double) -> Void
    ) {
        self.settings = settings
        self.source = source
        self.clock = clock
        var monitor: MotionClockMonitor?
        let embedded = backend as? EmbeddedVitalsBackend
        if settings.motion, case .glasses = source.kind {
            monitor = MotionClockMonitor(rotationRates: embedded == nil ? nil : RotationRateFeed())
        }
        if let monitor, let embedded {
            let observing = embedded.observingCameraMotion { timestampUs, across, down in
                monitor.cameraMotion(timestampUs: timestampUs, across: across, down: down)
            }
            self.backend = monitor.rotationRates.map { observing.takingRotationRates(from: $0) } ?? observing
        } else {
            monitor?.engineUnavailable("the vitals engine (\(backend.name)) does not measure the camera's motion")
            self.backend = backend
        }
        self.motion = monitor
        line = JudgedEventLine(gate: Self.frameRateGate(source, settings), receiver: emit)
        self.startedAt = clock.scheduler.now
    }

    /// The frame-rate rule of a run: a recording is judged by the rate it declares (none for a bare HEVC stream,
    /// which declares none), a network stream by the rate its frames arrive at, glasses by the rate asked of them.
    static func frameRateGate(_ source: BridgeSource, _ settings: BridgeSettings) -> FrameRateGate? {
        switch source.kind {
        case .file(let path): SourceFileInfo(path: path)?.frameRate.map { FrameRateGate(fileFrameRate: $0) }
        case .network: .networkStream()
        case .glasses: FrameRateGate(askedRate: settings.streamConfiguration.frameRate)
        }
    }

    // MARK: Control

    /// Ends the run gracefully (teardown, summary); `reason` appears in the summary (`signal`, `duration`, …).
    public func requestStop(reason: String = "signal") {
        let frameSource = run.withLock { state -> (any FrameSource)? in
            if state.stopReason == nil { state.stopReason = reason }
            return state.frameSource
        }
        if let frameSource {
            frameSource.stop()
        } else {
            markFinished(nil)
        }
    }

    /// Asks the glasses for a photo mid-stream; false when not streaming, a capture is in flight, or no glasses.
    @discardableResult
    public func capturePhoto() -> Bool {
        run.withLock { $0.frameSource }?.capturePhoto() ?? false
    }

    // MARK: Run

    /// Runs until the duration elapses, the file ends, ``requestStop(reason:)`` is called or the device stops the
    /// run; returns the summary. Call once.
    public func run() async -> BridgeRunResult {
        let firstRun = run.withLock { state -> Bool in
            defer { state.started = true }
            return !state.started
        }
        guard firstRun else {
            preconditionFailure("BridgePipeline.run() called twice")
        }
        var resources: RunResources? = nil
        do {
            resources = try await startRun()
        } catch {
            let failure = error as? BridgeFailure ?? BridgeFailure(.internalError, error.localizedDescription)
            emit(.error(code: failure.kind.rawValue, message: failure.message))
            markFinished(failure)
        }
        var consumers: [Task<Void, Never>] = []
        if let started = resources {
            await waitForFinish(started)
            await teardown(started)
            consumers = started.consumers
        }
        // Releasing the run's resources releases the SDK, which ends its update streams; the consumers then drain
        // what is buffered and end (bounded by a guard in case something still holds the SDK).
        resources = nil
        await drain(consumers)
        // The run's `finished` state comes after the last payload and verdict of the engine's drain, just before
        // the summary: a consumer that stops at `finished` (an LSL marker, a log watcher) has missed nothing.
        if let held = run.withLock({ state -> BridgeEvent? in
            state.drained = true
            defer { state.heldFinish = nil }
            return state.heldFinish
        }) {
            emit(held)
        }
        return finishSummary()
    }

    /// Everything one run owns; released at the end, which also ends the SDK's update streams.
    private final class RunResources: Sendable {
        let sdk: SmartSpectraSDK
        let handoff: FrameHandoff
        let worker: FrameWorker
        let wearables: WearablesInstance?
        let recorder: StreamRecorder?
        let consumers: [Task<Void, Never>]

        init(
            sdk: SmartSpectraSDK, handoff: FrameHandoff, worker: FrameWorker, wearables: WearablesInstance?,
            recorder: StreamRecorder?, consumers: [Task<Void, Never>]
        ) {
            self.sdk = sdk
            self.handoff = handoff
            self.worker = worker
            self.wearables = wearables
            self.recorder = recorder
            self.consumers = consumers
        }
    }

    private func startRun() async throws -> RunResources {
        let scheduler = clock.scheduler
        emit(.notice("source: \(source.description); \(describe(settings.streamConfiguration, file: source.isFile))"))

        // 1. The SDK: custom input selected while stopped, update streams subscribed before start.
        let config = SmartSpectraConfig()
        config.requestedMetrics = Array(settings.metrics.metrics).sorted { $0.rawValue < $1.rawValue }
        let sdk = SmartSpectraSDK(config: config, backend: backend)
        let input: CustomInput
        do {
            input = try sdk.useCustomInput(frameTransform: settings.transform.frameTransform)
        } catch {
            throw BridgeFailure(.internalError, "Custom input could not be selected: \(error.localizedDescription)")
        }
        let consumers = startConsumers(sdk)
        run.withLock { $0.sdk = sdk }
        do {
            try await sdk.start()
        } catch {
            for consumer in consumers { consumer.cancel() }
            throw BridgeFailure(.internalError, "The vitals engine (\(backend.name)) could not start: \(error.localizedDescription)")
        }

        // 2. The worker, then frame delivery.
        let handoff = FrameHandoff(frameCapacity: settings.handoffPlaces(glasses: source.isGlasses), counters: counters)
        let worker = FrameWorker(handoff: handoff, context: FrameWorkerContext(
            sdk: sdk, input: input, counters: counters,
            outputFormat: settings.pixelFormat == .bgra ? .bgra32 : .nv12VideoRange,
            frameRate: settings.streamConfiguration.frameRate, videoOutPath: settings.videoOutPath,
            engineQueueLimit: settings.engineQueueLimit,
            // The link's host end is opened on this scheduler too, so frame timing and this clock are one clock.
            hostClockUs: { scheduler.now.wholeMicroseconds },
            runStartHostUs: startedAt.wholeMicroseconds,
            notice: { [weak self] message in self?.emit(.notice(message)) },
            fatal: { [weak self] failure in self?.fail(failure) },
            motion: motion
        ))
        worker.start()
        let recorder = settings.recordPath.map { path in
            StreamRecorder(path: path, frameRate: Int(settings.streamConfiguration.frameRate)) { [weak self] message in
                self?.emit(.error(code: BridgeFailure.Kind.outputFailed.rawValue, message: "--record: \(message)"))
            }
        }

        var wearables: WearablesInstance?
        var record: (@Sendable (VideoFrame) -> Void)?
        if let recorder {
            record = { frame in recorder.record(frame) }
        }
        let emitClosure: @Sendable (BridgeEvent) -> Void = { [weak self] event in self?.emit(event) }
        let frameSource: any FrameSource
        switch source.kind {
        case .glasses(let connect, let deviceDials, let connectBlocks):
            var policy = settings.policy
            policy.reconnectWaitsForDevice = deviceDials
            let instance = Wearables.makeInstance(configuration: try wearablesConfiguration(scheduler))
            wearables = instance
            let dependencies = GlassesController.Dependencies(
                wearables: instance, scheduler: scheduler, streamConfiguration: settings.streamConfiguration,
                handoff: handoff, counters: counters, connect: connect, connectWaitsForDevice: deviceDials,
                connectOnOwnThread: connectBlocks,
                record: record, observe: settings.frameObserver,
                emit: emitClosure, finish: { [weak self] failure in self?.markFinished(failure) }, motion: motion
            )
            frameSource = GlassesController(
                policy: LifecyclePolicy(configuration: policy), dependencies: dependencies
            )
        case .network(let address, let connectTimeout):
            var policy = settings.policy
            // A listener waits for the publisher to come back at once; a caller dials again after a backoff.
            policy.reconnectWaitsForDevice = address.listens
            policy.deviceIsStreamPublisher = true
            frameSource = NetworkStreamSource(policy: LifecyclePolicy(configuration: policy), dependencies: NetworkStreamSource.Dependencies(
                address: address, connectTimeout: connectTimeout, scheduler: scheduler, handoff: handoff, counters: counters,
                // A network stream arrives in bursts (the stream's analysis, jitter): a frame may wait up to 1 s for room.
                latenessTolerance: max(settings.fileLatenessTolerance, .seconds(1)), observe: settings.frameObserver, emit: emitClosure,
                finish: { [weak self] failure in self?.markFinished(failure) }
            ))
        case .file(let path):
            frameSource = FilePlaybackSource(dependencies: FilePlaybackSource.Dependencies(
                path: path, clock: clock, startedAt: startedAt, stopAt: settings.duration.map { startedAt + $0 }, handoff: handoff,
                counters: counters,
                // Weakly: the source outlives the run's resources, and the SDK must go with them (its release ends
                // the metrics streams; holding it here kept the consumers waiting for their 5 s guard).
                waitForEngineQueue: { [weak sdk] in sdk?.waitForQueueRoom(allowingPending: 0) },
                waitForEngine: settings.virtualTimeWaitsForEngine, pipelined: settings.virtualTimePipelined,
                latenessTolerance: settings.fileLatenessTolerance, encodedLatenessTolerance: settings.encodedBacklog,
                record: record, emit: emitClosure,
                finish: { [weak self] reason, failure in self?.sourceFinished(reason: reason, failure: failure) }
            ))
        }
        let stopAlreadyRequested = run.withLock { state -> Bool in
            state.frameSource = frameSource
            return state.stopReason != nil
        }
        scheduleTimers(barrier: timerBarrier(handoff: handoff, sdk: sdk))
        frameSource.start()
        if stopAlreadyRequested { frameSource.stop() }
        return RunResources(
            sdk: sdk, handoff: handoff, worker: worker, wearables: wearables, recorder: recorder, consumers: consumers
        )
    }

    private func wearablesConfiguration(_ scheduler: any EventScheduler) throws -> WearablesConfiguration {
        do {
            return try WearablesConfiguration(scheduler: scheduler)
        } catch {
            throw BridgeFailure(.internalError, "WearablesKit rejected its configuration: \(error.localizedDescription)")
        }
    }

    /// What the run asks for: the stream (a file brings its own codec, size and rate), the layout, the metrics.
    private func describe(_ configuration: StreamConfiguration, file: Bool) -> String {
        let size = configuration.resolution.videoFrameSize
        let stream = file ? "the file's own codec, size and frame rate"
            : source.isNetworkStream ? "the stream's own codec, size and frame rate"
            : "\(configuration.videoCodec.rawValue) \(size) at \(configuration.frameRate) fps"
        return "\(stream), submitted as \(settings.pixelFormat.rawValue), metrics \(settings.metrics)"
    }

    /// The consumer of metrics and status, subscribed before `start()`: one task reading one stream, so a payload and
    /// a verdict reach the judged line in the order the SDK produced them. It ends when the SDK is released.
    private func startConsumers(_ sdk: SmartSpectraSDK) -> [Task<Void, Never>] {
        let updates = sdk.updates(bufferingPolicy: .bufferingNewest(4096))
        let task = Task { [weak self] in
            for await update in updates {
                guard let self else { return }
                switch update {
                case .metrics(let payload):
                    // Judged first: the run's own tracker (the summary, the stats' vitals) sees what users see.
                    if case .metrics(let judged, _)? = self.emit(.metrics(payload, json: "")) {
                        self.tracker.withLock { _ = $0.ingest(judged) }
                    }
                case .status(.validationStatus(let verdict?)): self.emit(.validation(verdict))
                case .status(.error(let error?)): self.emit(.error(code: "\(error.code)", message: error.message))
                case .status: break
                }
            }
        }
        return [task]
    }

    /// What a timer waits for before it acts. A pipelined file run in virtual time drains the chain first (the
    /// hand-off, the worker and, when time waits for it, the engine), so a timer at time T sees every frame before T
    /// fully processed, as in the serial chain; elsewhere timers act at once (the clock thread already waits per
    /// step when the pipeline drives virtual time, and real time never waits).
    private func timerBarrier(handoff: FrameHandoff, sdk: SmartSpectraSDK) -> (@Sendable () -> Void)? {
        guard case .virtual = clock, source.isFile, settings.virtualTimePipelined else { return nil }
        let waitForEngine = settings.virtualTimeWaitsForEngine
        // Weakly: a timer still pending when the run ends stays in the scheduler, and must not keep the SDK alive.
        return { [weak handoff, weak sdk] in
            handoff?.waitUntilIdle()
            if waitForEngine { sdk?.waitForQueueRoom(allowingPending: 0) }
        }
    }

    private func scheduleTimers(barrier: (@Sendable () -> Void)?) {
        let scheduler = clock.scheduler
        if let duration = settings.duration {
            scheduler.schedule(after: duration) { [weak self] in
                barrier?()
                self?.requestStop(reason: "duration")
            }
        }
        scheduleStats(barrier: barrier)
    }

    /// The closure captures the pipeline weakly and never the scheduler: one that captured the scheduler would sit in
    /// that scheduler's own pending work after the run (a `ManualScheduler` is never advanced again), a cycle that
    /// kept the scheduler and everything else pending on it alive. The barrier holds its parts weakly too.
    private func scheduleStats(barrier: (@Sendable () -> Void)?) {
        clock.scheduler.schedule(after: settings.statsInterval) { [weak self] in
            guard let self, !self.finished.load(ordering: .acquiring) else { return }
            barrier?()
            self.emitStats()
            self.scheduleStats(barrier: barrier)
        }
    }

    private func emitStats() {
        let now = clock.scheduler.now
        var stats = counters.snapshot
        run.withLock { state in
            if let last = state.lastStats {
                let seconds = (now - last.time).inSeconds
                if seconds > 0 {
                    stats.framesPerSecondIn = Double(stats.accounting.received - last.received) / seconds
                    stats.framesPerSecondOut = Double(stats.accounting.submitted - last.submitted) / seconds
                }
            } else if let first = stats.accounting.firstReceivedUs, stats.accounting.received > 1,
                      case let span = (now - .microseconds(first)).inSeconds, span >= 0.5 {
                // The first line: the rate between the first frame and now, (n - 1) frames over their span. Counting
                // from the run's start instead read 25 fps at 24 in virtual time (frames at 0 and at 1 s both in
                // the first second) and too low in real time (the stream starts some way into it).
                stats.framesPerSecondIn = Double(stats.accounting.received - 1) / span
                stats.framesPerSecondOut = Double(max(stats.accounting.submitted, 1) - 1) / span
            } else {
                let seconds = (now - startedAt).inSeconds
                if seconds > 0 {
                    stats.framesPerSecondIn = Double(stats.accounting.received) / seconds
                    stats.framesPerSecondOut = Double(stats.accounting.submitted) / seconds
                }
            }
            state.lastStats = (now, stats.accounting.received, stats.accounting.submitted)
        }
        fillRestartCounts(&stats)
        stats.latency = counters.takeIntervalLatency()
        stats.latencyBuckets = counters.runLatencyBuckets
        let (vitals, stable) = tracker.withLock { ($0.latest, $0.latestIsStable) }
        var reference: VitalsSnapshot?
        if let live = settings.reference {
            let heartRate = live.heartRate(at: Date())
            reference = VitalsSnapshot(pulseRate: heartRate)
            run.withLock { state in
                var agreement = state.agreement ?? ReferenceAgreement(source: live.name)
                agreement.note(reference: heartRate, pulse: vitals.pulseRate, stable: stable.pulseRate)
                state.agreement = agreement
            }
        }
        emit(.stats(stats, vitals: vitals, truth: source.truth?(.trailing(rates: 10, hrv: 30)), reference: reference))
    }

    private func fillRestartCounts(_ stats: inout BridgeStats) {
        if let frameSource = run.withLock({ $0.frameSource }) {
            let counts = frameSource.restartCounts
            stats.stallRestarts = counts.stalls
            stats.deviceDroppedFrames = frameSource.deviceDroppedFrames
            stats.reconnects = counts.reconnects
            stats.sessionRestarts = counts.sessions
        }
    }

    // MARK: Finishing

    private func fail(_ failure: BridgeFailure) {
        if let frameSource = run.withLock({ $0.frameSource }) {
            frameSource.fail(failure)
        } else {
            emit(.error(code: failure.kind.rawValue, message: failure.message))
            markFinished(failure)
        }
    }

    /// A source ended the run by itself (a file's end, or its failure).
    private func sourceFinished(reason: String, failure: BridgeFailure?) {
        run.withLock { state in
            if state.stopReason == nil { state.stopReason = reason }
        }
        markFinished(failure)
    }

    private func markFinished(_ failure: BridgeFailure?) {
        let continuation = run.withLock { state -> CheckedContinuation<Void, Never>? in
            if state.failure == nil { state.failure = failure }
            defer { state.finishContinuation = nil }
            return state.finishContinuation
        }
        finished.store(true, ordering: .releasing)
        continuation?.resume()
    }

    /// In virtual time, how long (real time) each step of the clock waits for glasses that are expected to dial.
    static let virtualTimeDialWait: Duration = .milliseconds(250)

    private func waitForFinish(_ resources: RunResources) async {
        let drivesVirtualTime: ManualScheduler?
        if case .virtual(let scheduler) = clock, run.withLock({ $0.frameSource })?.pipelineDrivesVirtualTime == true {
            drivesVirtualTime = scheduler
        } else {
            drivesVirtualTime = nil
        }
        switch drivesVirtualTime {
        case nil:
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let alreadyDone = run.withLock { state -> Bool in
                    if finished.load(ordering: .acquiring) { return true }
                    state.finishContinuation = continuation
                    return false
                }
                if alreadyDone { continuation.resume() }
            }
        case let scheduler?:
            let waitForEngine = settings.virtualTimeWaitsForEngine
            let settle = settings.virtualTimeSettle
            let controller = run.withLock { $0.frameSource } as? GlassesController
            await onOwnThread(name: "glasses-bridge.clock") { [self] in
                while !finished.load(ordering: .acquiring) {
                    guard scheduler.runNext() else {
                        fail(BridgeFailure(.internalError, "Virtual time ran out of things to do before the run ended."))
                        break
                    }
                    settle?()
                    // A relay that dials in does so in real time: let it, before time moves on (bounded, because
                    // the dial may itself wait for something later in virtual time, such as a relay restarting).
                    controller?.waitWhileAwaitingDevice(upTo: Self.virtualTimeDialWait)
                    if waitForEngine {
                        resources.handoff.waitUntilIdle()
                        resources.sdk.waitForQueueRoom(allowingPending: 0)
                    } else {
                        // The engine may fall behind, as in real time: time moves on once the worker is idle or
                        // waiting for the engine (and the device then drops for lack of credit).
                        resources.handoff.waitUntilSettled()
                    }
                }
            }
        }
    }

    private func teardown(_ resources: RunResources) async {
        // Reverse order: stop frame delivery, drain the worker, stop the SDK.
        let frameSource = run.withLock { $0.frameSource }
        frameSource?.stopDelivery()
        resources.handoff.push(control: .finish)
        await onOwnThread(name: "glasses-bridge.drain") {
            resources.worker.waitUntilExited()
        }
        if let recorder = resources.recorder {
            let failure = Mutex<VideoCodecError?>(nil)
            await onOwnThread(name: "glasses-bridge.record") {
                do throws(VideoCodecError) {
                    try recorder.finish()
                } catch {
                    failure.withLock { $0 = error }
                }
            }
            if let error = failure.withLock({ $0 }) {
                markFinished(BridgeFailure(.outputFailed, "--record \(recorder.path) was not written completely: \(error.message)"))
            }
        }
        try? await resources.sdk.stop()
        let engineDropped = resources.sdk.frameStatistics.dropped
        counters.updateStats { $0.engineDroppedFrames += engineDropped }
    }

    private func drain(_ consumers: [Task<Void, Never>]) async {
        let guardTask = Task {
            try? await Task.sleep(for: .seconds(5))
            for consumer in consumers { consumer.cancel() }
        }
        for consumer in consumers { await consumer.value }
        guardTask.cancel()
    }

    /// Seconds after which a run with no frame points at the glasses even when a person stopped it: a stream takes
    /// about a second to start (session, stream, the first keyframe).
    static let firstFrameAllowance = 5.0

    /// Why a run in which no frame arrived failed: a file read to its end without one is at fault itself (65);
    /// otherwise the glasses are pointed at, unless a person stopped the run before they had time to send anything.
    private func noFrameFailure(reason: String?, seconds: Double) -> BridgeFailure {
        let elapsed = String(format: "%.1f", seconds)
        if case .file(let path) = source.kind {
            if reason == "endOfFile" { return BridgeFailure(.badInputData, "\(path) holds no playable frame") }
            return BridgeFailure(.noFrames, "no frame of \(path) was played in \(elapsed) s")
        }
        let advice = source.isNetworkStream
            ? "check that the phone app streams to this address (with its stream key or passphrase) in H.264 or H.265, and that the publisher was not refused."
            : "check that the glasses are on, unfolded and worn, that the address is right, and that the "
            + "stream was not refused."
        // What the glasses said when they stopped the stream (a feed of the wrong size, a camera fault) beats advice.
        if let said = run.withLock({ $0.frameSource?.lastDeviceFault }) {
            return BridgeFailure(.noFrames, "no frame arrived from \(source.description) in \(elapsed) s: the glasses reported a "
                + "stream fault: \(said)")
        }
        guard reason == "signal" else {
            return BridgeFailure(.noFrames, "no frame arrived from \(source.description) in \(elapsed) s: \(advice)")
        }
        return BridgeFailure(.noFrames, "stopped by a signal \(elapsed) s in, before any frame arrived from \(source.description)"
            + (seconds >= Self.firstFrameAllowance ? ": \(advice)" : " (the first frame takes about a second)."))
    }

    private func finishSummary() -> BridgeRunResult {
        var (reason, failure) = run.withLock { ($0.stopReason, $0.failure) }
        var stats = counters.snapshot
        if failure == nil, stats.accounting.received == 0 {
            // A run in which nothing arrived did not do what was asked, however it ended.
            let noFrames = noFrameFailure(reason: reason, seconds: (clock.scheduler.now - startedAt).inSeconds)
            emit(.error(code: noFrames.kind.rawValue, message: noFrames.message))
            failure = noFrames
            run.withLock { $0.failure = noFrames }
        }
        fillRestartCounts(&stats)
        stats.latency = counters.runLatency
        stats.latencyBuckets = counters.runLatencyBuckets
        var summary = BridgeSummary()
        summary.basis = tracker.withLock { $0.runBasis }
        summary.vitals = summary.basis.medians
        let requested = settings.metrics.metrics
        (summary.pulseAbsence, summary.breathingAbsence, summary.hrvAbsence) = tracker.withLock {
            ($0.pulseAbsence(requested: requested.contains(.pulseRate)),
             $0.breathingAbsence(requested: requested.contains(.breathingRate)), $0.hrvAbsence(requested: requested.contains(.hrv)))
        }
        if stats.accounting.submitted == 0 {
            summary.pulseAbsence = summary.pulseAbsence?.noFrameMeasured()
            summary.breathingAbsence = summary.breathingAbsence?.noFrameMeasured()
            summary.hrvAbsence = summary.hrvAbsence?.noFrameMeasured()
        }
        summary.truth = source.truth?(.wholeRun)
        if let live = settings.reference {
            summary.reference = run.withLock { $0.agreement } ?? ReferenceAgreement(source: live.name)
        }
        summary.stats = stats
        summary.durationSeconds = (clock.scheduler.now - startedAt).inSeconds
        summary.failure = failure
        summary.receivedStream = run.withLock { $0.frameSource?.receivedStream }
        summary.motion = motion?.summary()
        summary.reason = failure?.kind.rawValue ?? reason ?? "endOfInput"
        if case .summary(let judged)? = emit(.summary(summary)) { summary = judged }
        // The summary is the last event: every event is delivered before run() returns.
        line.waitUntilDelivered()
        return BridgeRunResult(summary: summary, exitCode: failure?.exitCode ?? .success)
    }

    // MARK: Helpers

    /// Judges and sends an event (``JudgedEventLine``); returns it as judged, nil when left out.
    /// A source's `finished` state is held until the engine has drained its queue (see ``run()``), so that the
    /// fixed order of a run's end is: the last metrics and verdicts, `finished`, the summary.
    @discardableResult
    private func emit(_ event: BridgeEvent) -> BridgeEvent? {
        if case .state(.finished, _) = event {
            let held = run.withLock { state -> Bool in
                guard !state.drained else { return false }
                state.heldFinish = event
                return true
            }
            if held { return event }
        }
        return line.send(event, at: (clock.scheduler.now - startedAt).inSeconds)
    }
}

/// Runs blocking work on a new thread and resumes when it is done: keeps blocking waits off the cooperative pool.
package func onOwnThread(name: String, _ body: @escaping @Sendable () -> Void) async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        let thread = Thread {
            body()
            continuation.resume()
        }
        thread.name = name
        thread.start()
    }
}

extension TransformOption {
    /// The SDK's transform for this option.
    public var frameTransform: FrameTransform {
        switch self {
        case .none: .none
        case .rotate90cw: .rotate90CW
        case .rotate90ccw: .rotate90CCW
        case .rotate180: .rotate180
        case .mirrorHorizontal: .mirrorHorizontal
        case .mirrorVertical: .mirrorVertical
        }
    }
}
