import Foundation
@_exported import GlassesJSON
@_exported import GlassesMedia
import Observation
import Synchronization

/// The SmartSpectra SDK facade on Linux: select custom input, start, submit frames, read metrics.
///
/// Observable with the Observation framework, like the iOS SDK: read ``metrics``, ``processingStatus``,
/// ``validationStatus``, ``error`` and ``imageOutput`` inside `withObservationTracking` (or `Observations`), or
/// consume ``metricsUpdates(bufferingPolicy:)`` and ``statusUpdates(bufferingPolicy:)`` outside a UI.
///
/// Isolation: the SDK is a `Sendable` final class, not main-actor bound. Its state lives in one `Mutex`; property
/// reads register with an `ObservationRegistrar` and return the current value. Changes are queued in order and
/// delivered (observer notifications, then stream elements) outside the lock, by whichever thread made them,
/// so observers may call back into the SDK, and nothing needs a main run loop. A backend's processor runs on a
/// thread the SDK owns, never on the cooperative pool.
///
/// Lifecycle operations (`useCustomInput`, `start`, `stop`, `reset`) should be serialized by the caller, as on iOS.
public final class SmartSpectraSDK: Observable, Sendable {
    /// The version of this implementation of the SmartSpectra Swift contract.
    public static let version = "3.4.0-linux.1"

    /// The settings; mutate in place before `start()`.
    public let config: SmartSpectraConfig
    /// The processing backend that turns frames into metrics.
    public let backend: any ProcessingBackend

    private let core: Mutex<SDKStateMachine>
    private let subscribers = Mutex(Subscribers())
    private let registrar = ObservationRegistrar()
    private let pool: PixelBufferPool

    private struct Subscribers {
        var nextID: UInt64 = 0
        var metrics: [UInt64: AsyncStream<Metrics>.Continuation] = [:]
        var status: [UInt64: AsyncStream<SmartSpectraStatusEvent>.Continuation] = [:]
        var updates: [UInt64: AsyncStream<SDKUpdate>.Continuation] = [:]
    }

    /// Creates an independent instance (for tests, or one per pair of glasses).
    ///
    /// - Parameters:
    ///   - config: the settings.
    ///   - backend: the processing backend (`SmartSpectraInput` adds an initializer, and ``shared``, that use the
    ///     embedded, offline vitals engine).
    ///   - frameQueueCapacity: how many accepted frames may wait for the backend; when full, the oldest is dropped.
    ///     Clamped to 1...``maximumFrameQueueCapacity``.
    public init(
        config: SmartSpectraConfig = SmartSpectraConfig(),
        backend: any ProcessingBackend,
        frameQueueCapacity: Int = 8
    ) {
        self.config = config
        self.backend = backend
        self.core = Mutex(SDKStateMachine(queueCapacity: frameQueueCapacity))
        // Clamped like the queue's own capacity (`Int.max`, "unbounded", overflowed here).
        self.pool = PixelBufferPool(maximumIdleBuffers: min(max(1, frameQueueCapacity), Self.maximumFrameQueueCapacity) + 4)
    }

    /// The most frames the queue holds, whatever `frameQueueCapacity` asks (a queue of pictures without bound is
    /// memory without bound).
    public static let maximumFrameQueueCapacity = 1024

    deinit {
        let (metrics, status, updates) = subscribers.withLock { subscribers in
            let taken = (Array(subscribers.metrics.values), Array(subscribers.status.values), Array(subscribers.updates.values))
            subscribers.metrics.removeAll()
            subscribers.status.removeAll()
            subscribers.updates.removeAll()
            return taken
        }
        for continuation in metrics { continuation.finish() }
        for continuation in status { continuation.finish() }
        for continuation in updates { continuation.finish() }
    }

    // MARK: Observable state

    /// The latest metrics payload: only the samples new since the previous payload. Nil before the first payload
    /// of a run (`start()` and `reset()` clear it); kept after `stop()`.
    public var metrics: Metrics? {
        registrar.access(self, keyPath: \.metrics)
        return core.withLock { $0.metrics }
    }

    /// The lifecycle status.
    public var processingStatus: ProcessingStatus {
        registrar.access(self, keyPath: \.processingStatus)
        return core.withLock { $0.status }
    }

    /// The latest validation verdict; meaningful only while running, nil when no run is active.
    public var validationStatus: ValidationStatus? {
        registrar.access(self, keyPath: \.validationStatus)
        return core.withLock { $0.validation }
    }

    /// The last lifecycle error (a failed `start()`); cleared by the next `start()` and by `reset()`.
    public var error: SmartSpectraError? {
        registrar.access(self, keyPath: \.error)
        return core.withLock { $0.error }
    }

    /// The latest processed frame (transformed, tightly packed, in its submitted format) when
    /// ``SmartSpectraConfig/imageOutputEnabled`` is on: the Linux stand-in for the iOS `UIImage` preview. Read-only.
    public var imageOutput: PixelBuffer? {
        registrar.access(self, keyPath: \.imageOutput)
        return core.withLock { $0.imageOutput }
    }

    /// Frame counters of the current or last run (a snapshot; not observable).
    public var frameStatistics: FrameStatistics {
        core.withLock { $0.statistics }
    }

    // MARK: Source selection

    /// Selects caller-owned frames as the input, while stopped; returns the handle to submit them through.
    ///
    /// Selecting a source invalidates older handles. Needs no camera, capture session or permission.
    /// - Throws: `invalidState` while starting, running or stopping.
    public func useCustomInput(frameTransform: FrameTransform = .none) throws -> CustomInput {
        let selection = core.withLock { $0.selectCustomInput(transform: frameTransform) }
        switch selection {
        case .success(let generation):
            log(.info, "Custom input selected (transform \(frameTransform)).")
            return CustomInput(sdk: self, generation: generation, frameTransform: frameTransform)
        case .failure(let failure):
            throw failure
        }
    }

    /// Would select SDK-owned camera capture; on Linux there is none, so this always throws and changes nothing.
    ///
    /// - Throws: `invalidState` while starting, running or stopping; otherwise `inputUnavailable`.
    public func useCamera() throws {
        let failure = core.withLock { $0.selectCamera() }
        log(.warning, failure.message)
        throw failure
    }

    // MARK: Lifecycle

    /// Begins processing the selected custom input. Submit frames once this returns (no need to wait for `running`).
    ///
    /// Each run starts a fresh timestamp timeline and clears ``metrics``, ``validationStatus``, ``error`` and
    /// ``imageOutput``. The status is `starting` until the first frame has been processed, then `running`.
    /// - Throws: `invalidState` if already started; `inputUnavailable` if no custom input was selected (the default
    ///   source, the SDK camera, does not exist on Linux); the backend's error (e.g. `processingFailed`) if it cannot
    ///   start. In the last two cases ``error`` is set and the status is `error`.
    public func start() async throws {
        let configuration = config.untrackedProcessingConfiguration
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let effects = core.withLock { $0.startRequested(continuation: .task(continuation), configuration: configuration) }
            perform(effects)
        }
    }

    /// Stops processing: frames already accepted are processed, the backend's final update is published, then the
    /// status returns to `idle`. ``metrics`` keeps the last payload. A no-op while idle; from `error` it returns to
    /// `idle`. The custom-input handle stays valid; `start()` again to resume on a fresh timeline.
    public func stop() async throws {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let effects = core.withLock { $0.stopRequested(discard: false, continuation: .task(continuation)) }
            perform(effects)
        }
    }

    /// Stops processing, discarding queued frames, and clears measurement output (``metrics``,
    /// ``validationStatus``, ``error``, ``imageOutput``), keeping the configuration, the selected source, its
    /// transform and handle. Safe while idle; await it before restarting.
    public func reset() async throws {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let effects = core.withLock { $0.stopRequested(discard: true, continuation: .task(continuation)) }
            perform(effects)
        }
    }

    /// Returns once every frame accepted before the call has been processed (and its update published) or dropped,
    /// or the run has ended. Returns at once when no run is active.
    public func waitUntilProcessed() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let effects = core.withLock { $0.drainRequested(continuation: .task(continuation), allowedPending: 0) }
            perform(effects)
        }
    }

    /// Returns once the processing queue has room for another frame (or no run is active), so that a source faster
    /// than the backend, such as a file read as fast as possible, can submit without frames being dropped.
    ///
    /// Live sources should not wait: their frames keep coming, and dropping the oldest is the right policy.
    public func waitForQueueSpace() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let effects = core.withLock {
                $0.drainRequested(continuation: .task(continuation), allowedPending: UInt64($0.queueCapacity - 1))
            }
            perform(effects)
        }
    }

    /// Blocks the calling thread until at most `pending` of the frames accepted so far wait to be processed (or no
    /// run is active): the synchronous way for a producer that owns its thread to keep pace with the backend.
    ///
    /// Call it from a thread of your own (never from a task on the cooperative pool); on the SDK's own thread (an
    /// observer's callback runs there) it returns at once, since the wait would be for that thread itself. `pending` below zero counts as zero.
    public func waitForQueueRoom(allowingPending pending: Int) {
        // On the SDK's own thread (an observer's callback) the wait would be for that thread itself: a deadlock.
        guard !ProcessingWorker.isCurrentThreadWorker else { return }
        let semaphore = DispatchSemaphore(value: 0)
        let effects = core.withLock {
            $0.drainRequested(continuation: .thread(semaphore), allowedPending: UInt64(max(0, pending)))
        }
        perform(effects)
        semaphore.wait()
    }

    /// Whether `generation` is the selected custom input's handle.
    func isCurrent(generation: UInt64) -> Bool {
        core.withLock { core in
            if case .custom(let current, _) = core.source { return current == generation }
            return false
        }
    }

    /// `stop()` then `start()`, blocking the calling thread: what ``CustomInput/beginNewTimeline()`` does.
    func restartBlocking() throws(SmartSpectraError) {
        guard !ProcessingWorker.isCurrentThreadWorker else {
            // The run can only end on this very thread, which would wait here for ever.
            throw SmartSpectraError(code: .invalidState, message: "beginNewTimeline() was called on the SDK's own thread (from an observer's "
                + "callback), where it would wait for itself: call it from the thread that submits frames")
        }
        let stopped = DispatchSemaphore(value: 0)
        perform(core.withLock { $0.stopRequested(discard: false, continuation: .thread(stopped)) })
        stopped.wait()
        let start = BlockingStart()
        let configuration = config.untrackedProcessingConfiguration
        perform(core.withLock { $0.startRequested(continuation: .thread(start), configuration: configuration) })
        if let failure = start.wait() { throw failure }
    }

    // MARK: Streams

    /// A stream of metrics payloads, each holding only the samples new since the previous one.
    ///
    /// Every call makes an independent stream (one consumer each). It spans runs, and ends when the consumer stops
    /// iterating or the SDK is deallocated. Subscribe before `start()` to miss nothing. If the consumer falls
    /// behind, `bufferingPolicy` decides which payloads are kept (by default the newest 256, about 8 s at 30 Hz).
    public func metricsUpdates(
        bufferingPolicy: AsyncStream<Metrics>.Continuation.BufferingPolicy = .bufferingNewest(256)
    ) -> AsyncStream<Metrics> {
        subscribe(\.metrics, bufferingPolicy: bufferingPolicy)
    }

    /// A stream of status changes (processing status, validation status, error), in the order they happened.
    ///
    /// Every call makes an independent stream. It spans runs, and ends when the consumer stops iterating or the SDK
    /// is deallocated. It does not replay the current values; read the properties for those.
    public func statusUpdates(
        bufferingPolicy: AsyncStream<SmartSpectraStatusEvent>.Continuation.BufferingPolicy = .bufferingNewest(64)
    ) -> AsyncStream<SmartSpectraStatusEvent> {
        subscribe(\.status, bufferingPolicy: bufferingPolicy)
    }

    /// Metrics payloads and status changes in one stream, in the order they happened (the two public streams
    /// cannot say which of a payload and a verdict came first). Every call makes an independent stream, as above.
    package func updates(
        bufferingPolicy: AsyncStream<SDKUpdate>.Continuation.BufferingPolicy = .bufferingNewest(4096)
    ) -> AsyncStream<SDKUpdate> {
        subscribe(\.updates, bufferingPolicy: bufferingPolicy)
    }

    /// A new stream registered under `subscribers[keyPath:]`, removed again when its consumer stops.
    private func subscribe<Element: Sendable>(
        _ list: any WritableKeyPath<Subscribers, [UInt64: AsyncStream<Element>.Continuation]> & Sendable,
        bufferingPolicy: AsyncStream<Element>.Continuation.BufferingPolicy
    ) -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream.makeStream(of: Element.self, bufferingPolicy: bufferingPolicy)
        let id = subscribers.withLock { subscribers in
            subscribers.nextID += 1
            subscribers[keyPath: list][subscribers.nextID] = continuation
            return subscribers.nextID
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.subscribers.withLock { $0[keyPath: list].removeValue(forKey: id) }
        }
        return stream
    }

    // MARK: Internals used by CustomInput and the worker

    /// `CustomInput.sendFrame`: admit, check pixels, copy through the transform, commit.
    func submit(_ buffer: PixelBuffer, timestampUs: Int64, generation: UInt64) -> FrameSubmissionResult {
        let admission = core.withLock { $0.admit(generation: generation, timestampUs: timestampUs) }
        let runID: UInt64
        let transform: FrameTransform
        switch admission {
        case .rejected(let failure):
            return reject(failure)
        case .admitted(let admittedRun, let admittedTransform):
            runID = admittedRun
            transform = admittedTransform
        }
        let layout: CustomInputLayout
        switch buffer.checkCustomInputLayout() {
        case .success(let checked): layout = checked
        case .failure(let failure): return reject(failure)
        }
        let copy = transform.transformedCopy(of: buffer, layout: layout, allocate: pool.makeBuffer)
        FrameCopyCounter.record(.customInputCopy, bytes: copy.byteCount)
        let (failure, effects) = core.withLock {
            $0.commit(generation: generation, runID: runID, frame: QueuedFrame(frame: copy, timestampUs: timestampUs))
        }
        perform(effects)
        if let failure { return reject(failure) }
        return .accepted
    }

    private func reject(_ failure: SmartSpectraError) -> FrameSubmissionResult {
        core.withLock { $0.countRejection() }
        log(.debug, "Frame rejected: \(failure)")
        return .rejected(failure)
    }

    /// Applies a worker event and performs its effects.
    func workerEvent(_ event: (inout SDKStateMachine) -> SDKEffects) {
        let effects = core.withLock { event(&$0) }
        perform(effects)
    }

    /// The worker's next job.
    func nextJob(runID: UInt64) -> WorkerJob {
        core.withLock { $0.nextJob(runID: runID) }
    }

    /// Performs effects outside the lock: log, deliver notifications, launch or wake the worker, resume callers.
    private func perform(_ effects: SDKEffects) {
        for (level, message) in effects.log { log(level, message) }
        deliverNotifications()
        if let launch = effects.launch {
            ProcessingWorker(sdk: self, launch: launch, backend: backend).startThread()
        }
        effects.wake?.signal()
        if let (waiter, failure) = effects.resumeStart { waiter.resume(failure: failure) }
        for waiter in effects.resume { waiter.resume() }
    }

    /// Delivers queued changes in order; only one thread delivers at a time, the others leave their changes to it.
    private func deliverNotifications() {
        guard core.withLock({ $0.beginDelivery() }) else { return }
        while true {
            let batch = core.withLock { $0.takeOutbox() }
            if batch.isEmpty { return }
            let (metricsStreams, statusStreams, updateStreams) = subscribers.withLock {
                (Array($0.metrics.values), Array($0.status.values), Array($0.updates.values))
            }
            for notification in batch {
                switch notification {
                case .processingStatus(let status):
                    registrar.withMutation(of: self, keyPath: \.processingStatus) {}
                    for stream in statusStreams { stream.yield(.processingStatus(status)) }
                    for stream in updateStreams { stream.yield(.status(.processingStatus(status))) }
                case .metrics(let payload):
                    registrar.withMutation(of: self, keyPath: \.metrics) {}
                    if let payload {
                        for stream in metricsStreams { stream.yield(payload) }
                        for stream in updateStreams { stream.yield(.metrics(payload)) }
                    }
                case .validation(let verdict):
                    registrar.withMutation(of: self, keyPath: \.validationStatus) {}
                    for stream in statusStreams { stream.yield(.validationStatus(verdict)) }
                    for stream in updateStreams { stream.yield(.status(.validationStatus(verdict))) }
                case .error(let failure):
                    registrar.withMutation(of: self, keyPath: \.error) {}
                    for stream in statusStreams { stream.yield(.error(failure)) }
                    for stream in updateStreams { stream.yield(.status(.error(failure))) }
                case .imageOutput:
                    registrar.withMutation(of: self, keyPath: \.imageOutput) {}
                }
            }
        }
    }

    private func log(_ level: SmartSpectraLogLevel, _ message: String) {
        guard level != .none, level >= config.untrackedLogLevel else { return }
        try? FileHandle.standardError.write(contentsOf: Data("[SmartSpectra] \(level): \(message)\n".utf8))  // never traps on a full disk
    }
}

/// What ``SmartSpectraSDK/updates(bufferingPolicy:)`` delivers: a metrics payload or a status change.
package enum SDKUpdate: Sendable {
    /// A metrics payload (only the samples new since the previous one).
    case metrics(Metrics)
    /// A status change.
    case status(SmartSpectraStatusEvent)
}
