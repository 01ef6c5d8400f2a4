import Dispatch
import Synchronization

/// Frame counters of the current (or last) run.
public struct FrameStatistics: Sendable, Hashable {
    /// Frames accepted by `sendFrame` (copied in).
    public var accepted: UInt64 = 0
    /// Frames rejected by `sendFrame`.
    public var rejected: UInt64 = 0
    /// Frames the backend has processed.
    public var processed: UInt64 = 0
    /// Accepted frames that were never processed: dropped as the oldest in a full queue, or discarded by `reset()`.
    public var dropped: UInt64 = 0
    /// Creates zeroed counters.
    public init() {}
}

/// A change the SDK publishes, in the order it happened: drives observation and the async streams.
enum SDKNotification: Sendable {
    case processingStatus(ProcessingStatus)
    case metrics(Metrics?)
    case validation(ValidationStatus?)
    case error(SmartSpectraError?)
    case imageOutput
}

/// A frame waiting for the processing worker.
struct QueuedFrame: Sendable {
    let frame: PixelBuffer
    let timestampUs: Int64
}

/// What the processing worker should do next.
enum WorkerJob: Sendable {
    /// Nothing queued: wait for a wake-up.
    case wait
    /// Process this frame.
    case process(QueuedFrame)
    /// End the run; `discard` means reset (the final update is thrown away).
    case finish(discard: Bool)
}

/// Side effects the owner performs after an event, outside the lock.
struct SDKEffects {
    /// The caller of `start()` to resume.
    var resumeStart: (waiter: StartWaiter, error: SmartSpectraError?)?
    /// Callers of `stop()`/`reset()`/`waitUntilProcessed()` to resume.
    var resume: [SDKWaiter] = []
    /// The worker to wake.
    var wake: DispatchSemaphore?
    /// A run whose worker thread must be started.
    var launch: RunLaunch?
    /// Something for the log: (level, message).
    var log: [(SmartSpectraLogLevel, String)] = []
}

/// Someone waiting for the SDK: an async caller (a continuation) or a thread blocked on a semaphore.
///
/// Threads wait only where the API says so (``SmartSpectraSDK/waitForQueueRoom(allowingPending:)``,
/// ``CustomInput/beginNewTimeline()``); they are never threads of the cooperative pool.
enum SDKWaiter: Sendable {
    case task(CheckedContinuation<Void, Never>)
    case thread(DispatchSemaphore)

    func resume() {
        switch self {
        case .task(let continuation): continuation.resume()
        case .thread(let semaphore): semaphore.signal()
        }
    }
}

/// The caller of `start()`: an async caller, or a thread blocked until the run accepts frames.
enum StartWaiter: Sendable {
    case task(CheckedContinuation<Void, any Error>)
    case thread(BlockingStart)

    func resume(failure: SmartSpectraError?) {
        switch self {
        case .task(let continuation):
            if let failure { continuation.resume(throwing: failure) } else { continuation.resume() }
        case .thread(let start):
            start.finish(failure)
        }
    }
}

/// A thread's wait for `start()` to finish, and its outcome.
final class BlockingStart: Sendable {
    private let outcome = Mutex<SmartSpectraError?>(nil)
    private let done = DispatchSemaphore(value: 0)

    func finish(_ failure: SmartSpectraError?) {
        outcome.withLock { $0 = failure }
        done.signal()
    }

    /// Blocks until the run accepts frames or failed to start.
    func wait() -> SmartSpectraError? {
        done.wait()
        return outcome.withLock { $0 }
    }
}

/// What the owner needs to start a run's worker.
struct RunLaunch: Sendable {
    let runID: UInt64
    let wake: DispatchSemaphore
    let configuration: ProcessingConfiguration
}

/// The SDK's lifecycle, source selection, per-run timeline and frame queue, plus the values it publishes.
///
/// A plain value: every event is a mutating method returning ``SDKEffects``; the owner keeps it in a `Mutex` and
/// acts on the effects after unlocking. Published changes are appended to an outbox and delivered in order.
struct SDKStateMachine {
    /// The selected source. The SDK-owned camera is the default, as on iOS; it does not exist on Linux.
    enum Source: Equatable {
        case camera
        case custom(generation: UInt64, transform: FrameTransform)
    }

    /// How far a run has come.
    enum Stage {
        /// The worker is creating the backend's processor; `start()` has not returned.
        case launching
        /// Frames are accepted.
        case accepting
        /// Teardown: no new frames; `discard` drops queued frames and the final update (reset).
        case stopping(discard: Bool)
    }

    /// One run, from `start()` until its worker ends.
    struct Run {
        let id: UInt64
        let wake: DispatchSemaphore
        let requested: Set<MetricType>
        var stage: Stage = .launching
        var timeline = TimestampTimeline()
        var queue: [QueuedFrame] = []
        var processedAny = false
        var reportedDrops = false
        var startContinuation: StartWaiter?
        var stopWaiters: [SDKWaiter] = []
        var drainWaiters: [(target: UInt64, continuation: SDKWaiter)] = []
    }

    enum Phase {
        case idle
        case failed
        case active(Run)
    }

    /// The result of admitting a frame's timestamp before its pixels are copied.
    enum Admission {
        case admitted(runID: UInt64, transform: FrameTransform)
        case rejected(SmartSpectraError)
    }

    let queueCapacity: Int
    private(set) var source: Source = .camera
    private var nextGeneration: UInt64 = 1
    private var nextRunID: UInt64 = 1
    private(set) var phase: Phase = .idle

    // Published values.
    private(set) var status: ProcessingStatus = .idle
    private(set) var metrics: Metrics?
    private(set) var validation: ValidationStatus?
    private(set) var error: SmartSpectraError?
    private(set) var imageOutput: PixelBuffer?
    private(set) var statistics = FrameStatistics()

    private var outbox: [SDKNotification] = []
    private var delivering = false

    init(queueCapacity: Int) {
        self.queueCapacity = min(max(1, queueCapacity), SmartSpectraSDK.maximumFrameQueueCapacity)
    }

    // MARK: Source selection

    /// `useCustomInput(frameTransform:)`: stopped-only; returns the new handle's generation.
    mutating func selectCustomInput(transform: FrameTransform) -> Result<UInt64, SmartSpectraError> {
        if let refusal = refuseUnlessStopped("select a custom input") { return .failure(refusal) }
        let generation = nextGeneration
        nextGeneration += 1
        source = .custom(generation: generation, transform: transform)
        return .success(generation)
    }

    /// `useCamera()`: stopped-only; the SDK-owned camera does not exist on Linux, so this always fails.
    mutating func selectCamera() -> SmartSpectraError {
        if let refusal = refuseUnlessStopped("select the camera") { return refusal }
        return SmartSpectraError(
            code: .inputUnavailable,
            message: "SDK-owned camera capture is not available on Linux; select caller-owned frames with "
                + "useCustomInput(frameTransform:). The current source is unchanged."
        )
    }

    private func refuseUnlessStopped(_ action: String) -> SmartSpectraError? {
        guard case .active = phase else { return nil }
        return SmartSpectraError(
            code: .invalidState,
            message: "Cannot \(action) while the SDK is \(status); stop it first.",
            retryable: true
        )
    }

    // MARK: Lifecycle

    /// `start()`: begins a run (the owner launches its worker), or fails at once.
    mutating func startRequested(
        continuation: StartWaiter, configuration: ProcessingConfiguration
    ) -> SDKEffects {
        var effects = SDKEffects()
        if case .active = phase {
            effects.resumeStart = (continuation, SmartSpectraError(
                code: .invalidState, message: "start() called while the SDK is \(status).", retryable: true
            ))
            return effects
        }
        guard case .custom = source else {
            let failure = SmartSpectraError(
                code: .inputUnavailable,
                message: "No input selected: SDK-owned camera capture is not available on Linux; call "
                    + "useCustomInput(frameTransform:) before start()."
            )
            phase = .failed
            publishError(failure)
            publishStatus()
            effects.resumeStart = (continuation, failure)
            effects.log.append((.error, failure.message))
            return effects
        }
        let wake = DispatchSemaphore(value: 0)
        var run = Run(id: nextRunID, wake: wake, requested: configuration.requestedMetrics)
        nextRunID += 1
        run.startContinuation = continuation
        phase = .active(run)
        statistics = FrameStatistics()
        publishError(nil)
        publishMetrics(nil)
        publishValidation(nil)
        publishImage(nil)
        publishStatus()
        effects.launch = RunLaunch(runID: run.id, wake: wake, configuration: configuration)
        effects.log.append((.info, "Starting run \(run.id)."))
        return effects
    }

    /// The worker created its processor.
    mutating func processorReady(runID: UInt64) -> SDKEffects {
        var effects = SDKEffects()
        modifyRun(runID) { run in
            guard let continuation = run.startContinuation else { return }
            run.startContinuation = nil
            if case .launching = run.stage {
                run.stage = .accepting
                effects.resumeStart = (continuation, nil)
            } else {
                effects.resumeStart = (continuation, SmartSpectraError(
                    code: .invalidState, message: "The SDK was stopped before start() completed.", retryable: true
                ))
            }
        }
        return effects
    }

    /// The backend could not start: the run ends in `error`.
    mutating func processorFailed(runID: UInt64, error failure: SmartSpectraError) -> SDKEffects {
        var effects = SDKEffects()
        guard case .active(let run) = phase, run.id == runID else { return effects }
        if let continuation = run.startContinuation { effects.resumeStart = (continuation, failure) }
        effects.resume = run.stopWaiters + run.drainWaiters.map(\.continuation)
        if case .stopping(let discard) = run.stage {
            // stop() or reset() came while the processor was being made: the run ends where they lead, idle (reset
            // also clears the error); start() still hears the failure.
            phase = .idle
            if discard { clearOutput() } else { publishError(failure) }
        } else {
            phase = .failed
            publishError(failure)
        }
        publishStatus()
        effects.log.append((.error, "The processing backend failed to start: \(failure)"))
        return effects
    }

    /// `stop()` (`discard == false`) or `reset()` (`discard == true`).
    ///
    /// Stop lets the worker process the frames already accepted, then publishes the backend's final update. Reset
    /// drops queued frames and clears measurement output. Both resume `continuation` once the run has ended; with
    /// no run they resume it at once.
    mutating func stopRequested(discard: Bool, continuation: SDKWaiter) -> SDKEffects {
        var effects = SDKEffects()
        guard case .active(var run) = phase else {
            if discard {
                phase = .idle
                clearOutput()
                publishStatus()
            } else if case .failed = phase {
                phase = .idle
                publishStatus()
            }
            effects.resume.append(continuation)
            return effects
        }
        let alreadyDiscarding: Bool
        if case .stopping(let flag) = run.stage { alreadyDiscarding = flag } else { alreadyDiscarding = false }
        run.stage = .stopping(discard: discard || alreadyDiscarding)
        if discard {
            statistics.dropped += UInt64(run.queue.count)
            run.queue.removeAll()
        }
        run.stopWaiters.append(continuation)
        effects.resume += takeSatisfiedDrainWaiters(&run)
        effects.wake = run.wake
        phase = .active(run)
        publishStatus()
        effects.log.append((.info, discard ? "Resetting run \(run.id)." : "Stopping run \(run.id)."))
        return effects
    }

    /// The worker ended the run; `finalUpdate` is nil when it was discarded.
    mutating func runFinished(runID: UInt64, finalUpdate: ProcessingUpdate?) -> SDKEffects {
        var effects = SDKEffects()
        guard case .active(let run) = phase, run.id == runID else { return effects }
        var discard = false
        if case .stopping(let flag) = run.stage { discard = flag }
        if !discard, let payload = finalUpdate?.metrics?.restricted(to: run.requested), !payload.isEmpty {
            publishMetrics(payload)
        }
        effects.resume = run.stopWaiters + run.drainWaiters.map(\.continuation)
        if let continuation = run.startContinuation {
            effects.resumeStart = (continuation, SmartSpectraError(
                code: .invalidState, message: "The SDK was stopped before start() completed.", retryable: true
            ))
        }
        phase = .idle
        publishValidation(nil)
        if discard { clearOutput() }
        publishStatus()
        effects.log.append((.info, "Run \(run.id) ended."))
        return effects
    }

    private mutating func clearOutput() {
        publishMetrics(nil)
        publishValidation(nil)
        publishError(nil)
        publishImage(nil)
    }

    // MARK: Frames

    /// First half of `sendFrame`: checks the handle, the state and the timestamp (nothing is recorded).
    func admit(generation: UInt64, timestampUs: Int64) -> Admission {
        guard case .custom(let current, let transform) = source, current == generation else {
            return .rejected(SmartSpectraError(
                code: .invalidState,
                message: "This custom-input handle was replaced by a newer source selection; use the handle the "
                    + "latest useCustomInput(frameTransform:) returned."
            ))
        }
        guard case .active(let run) = phase, case .accepting = run.stage else {
            return .rejected(SmartSpectraError(
                code: .invalidState,
                message: "Frames are accepted only between a completed start() and stop(); the SDK is \(status).",
                retryable: true
            ))
        }
        if let failure = run.timeline.check(timestampUs) { return .rejected(failure) }
        return .admitted(runID: run.id, transform: transform)
    }

    /// Second half of `sendFrame`: re-checks (the state may have moved during the copy) and enqueues the copy.
    ///
    /// A full queue drops its oldest frame, so `sendFrame` never waits for processing.
    mutating func commit(generation: UInt64, runID: UInt64, frame: QueuedFrame) -> (SmartSpectraError?, SDKEffects) {
        var effects = SDKEffects()
        switch admit(generation: generation, timestampUs: frame.timestampUs) {
        case .rejected(let failure):
            return (failure, effects)
        case .admitted(let current, _) where current != runID:
            return (SmartSpectraError(
                code: .invalidState, message: "The SDK was restarted while the frame was being copied.", retryable: true
            ), effects)
        case .admitted:
            break
        }
        guard case .active(var run) = phase else { return (nil, effects) }
        phase = .idle  // keep `run` uniquely referenced while it is modified
        run.timeline.record(frame.timestampUs)
        if run.queue.count >= queueCapacity {
            run.queue.removeFirst()
            statistics.dropped += 1
            if !run.reportedDrops {
                run.reportedDrops = true
                effects.log.append((
                    .warning,
                    "Processing is slower than input: the queue of \(queueCapacity) frames is full; dropping the "
                        + "oldest queued frames (counted in frameStatistics.dropped)."
                ))
            }
        }
        run.queue.append(frame)
        statistics.accepted += 1
        effects.wake = run.wake
        phase = .active(run)
        return (nil, effects)
    }

    /// Counts a rejected submission.
    mutating func countRejection() {
        statistics.rejected += 1
    }

    /// The worker asks for work.
    mutating func nextJob(runID: UInt64) -> WorkerJob {
        var job = WorkerJob.finish(discard: true)
        modifyRun(runID) { run in
            if !run.queue.isEmpty {
                job = .process(run.queue.removeFirst())
            } else if case .stopping(let discard) = run.stage {
                job = .finish(discard: discard)
            } else {
                job = .wait
            }
        }
        return job
    }

    /// The worker processed a frame and got `update`.
    mutating func frameProcessed(
        runID: UInt64, update: ProcessingUpdate, frame: PixelBuffer, imageOutputEnabled: Bool
    ) -> SDKEffects {
        var effects = SDKEffects()
        guard case .active(var run) = phase, run.id == runID else { return effects }
        statistics.processed += 1
        if case .stopping(discard: true) = run.stage {
            effects.resume = takeSatisfiedDrainWaiters(&run)
            phase = .active(run)
            return effects
        }
        // Payloads with no sample left after removing unrequested metrics are not published.
        if let payload = update.metrics?.restricted(to: run.requested), !payload.isEmpty { publishMetrics(payload) }
        if let verdict = update.validation, verdict != validation { publishValidation(verdict) }
        if imageOutputEnabled {
            publishImage(frame)
        } else if imageOutput != nil {
            publishImage(nil)
        }
        let first = !run.processedAny
        run.processedAny = true
        effects.resume = takeSatisfiedDrainWaiters(&run)
        phase = .active(run)
        if first { publishStatus() }
        return effects
    }

    /// `waitUntilProcessed()` (`allowedPending == 0`) and `waitForQueueSpace()` (`queueCapacity - 1`): resumes once
    /// at most `allowedPending` of the frames accepted so far are neither processed nor dropped, or the run ends.
    mutating func drainRequested(continuation: SDKWaiter, allowedPending: UInt64) -> SDKEffects {
        var effects = SDKEffects()
        guard case .active(var run) = phase else {
            effects.resume.append(continuation)
            return effects
        }
        let target = statistics.accepted > allowedPending ? statistics.accepted - allowedPending : 0
        run.drainWaiters.append((target, continuation))
        effects.resume = takeSatisfiedDrainWaiters(&run)
        phase = .active(run)
        return effects
    }

    private mutating func takeSatisfiedDrainWaiters(_ run: inout Run) -> [SDKWaiter] {
        let handled = statistics.processed + statistics.dropped
        var ready: [SDKWaiter] = []
        run.drainWaiters.removeAll { waiter in
            guard waiter.target <= handled else { return false }
            ready.append(waiter.continuation)
            return true
        }
        return ready
    }

    private mutating func modifyRun(_ runID: UInt64, _ body: (inout Run) -> Void) {
        guard case .active(var run) = phase, run.id == runID else { return }
        phase = .idle  // keep `run` uniquely referenced while it is modified
        body(&run)
        phase = .active(run)
    }

    // MARK: Publication

    /// The status the phase implies.
    private var derivedStatus: ProcessingStatus {
        switch phase {
        case .idle: .idle
        case .failed: .error
        case .active(let run):
            switch run.stage {
            case .launching: .starting
            case .accepting: run.processedAny ? .running : .starting
            case .stopping: .stopping
            }
        }
    }

    private mutating func publishStatus() {
        let next = derivedStatus
        guard next != status else { return }
        status = next
        outbox.append(.processingStatus(next))
    }

    private mutating func publishMetrics(_ value: Metrics?) {
        if value == nil && metrics == nil { return }
        metrics = value
        outbox.append(.metrics(value))
    }

    private mutating func publishValidation(_ value: ValidationStatus?) {
        guard value != validation else { return }
        validation = value
        outbox.append(.validation(value))
    }

    private mutating func publishError(_ value: SmartSpectraError?) {
        guard value != error else { return }
        error = value
        outbox.append(.error(value))
    }

    private mutating func publishImage(_ value: PixelBuffer?) {
        if value == nil && imageOutput == nil { return }
        imageOutput = value
        outbox.append(.imageOutput)
    }

    /// Claims delivery of the outbox; false when another thread is delivering (it will deliver ours too).
    mutating func beginDelivery() -> Bool {
        if delivering || outbox.isEmpty { return false }
        delivering = true
        return true
    }

    /// The next batch to deliver; an empty batch ends this thread's delivery.
    mutating func takeOutbox() -> [SDKNotification] {
        let batch = outbox
        outbox.removeAll(keepingCapacity: true)
        if batch.isEmpty { delivering = false }
        return batch
    }
}
