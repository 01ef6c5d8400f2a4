import Dispatch
import Observation
import Synchronization
import Testing
@testable import SmartSpectraCore

@Suite("Processing pipeline with a recording backend")
struct ProcessingPipelineTests {
    /// A payload with one pulse sample and one chest-trace sample at `timestamp`.
    static func payload(_ timestamp: Int64) -> Metrics {
        var metrics = Metrics()
        metrics.cardio.pulseRate = [MeasurementWithConfidence(value: 60 + Float(timestamp), stable: true, confidence: 80, timestamp: timestamp)]
        metrics.breathing.upperTrace = [Measurement(value: Float(timestamp) / 10, stable: false, timestamp: timestamp)]
        return metrics
    }

    @Test("frames arrive transformed, in order, as private copies, on the SDK's own thread")
    func framesArriveTransformedInOrder() async throws {
        let harness = try await Harness.started(transform: .rotate90CCW)
        let buffer = Pictures.bgra(width: 2, height: 1) { x, _ in UInt8(x + 1) }
        for timestamp in [Int64(10), 20, 30] {
            #expect(harness.input.sendFrame(buffer, timestampUs: timestamp) == .accepted)
            // The caller reuses its buffer at once: the SDK must have copied it already.
            buffer.withUnsafeMutableBytes(ofPlane: 0) { bytes in for index in bytes.indices { bytes[index] = 0 } }
            buffer.withUnsafeMutableBytes(ofPlane: 0) { bytes in bytes[0] = 1; bytes[4] = 2 }
        }
        try await harness.sdk.stop()
        let frames = harness.backend.frames
        #expect(frames.map(\.timestampUs) == [10, 20, 30])
        // 2×1 `1 2` rotated counter-clockwise is 1×2 `2 / 1`.
        #expect(frames.allSatisfy { $0.width == 1 && $0.height == 2 })
        #expect(frames[0].planes == [[2, 102, 52, 255, 1, 101, 51, 255]])
        #expect(frames[1].planes == [[2, 0, 0, 0, 1, 0, 0, 0]])
        #expect(frames.allSatisfy { $0.onWorkerThread && !$0.isMainThread })
    }

    // The limit catches a stream that never ends (shown hanging without the finish); it is generous because the
    // parallel suite's blocking tests can starve the cooperative pool for minutes on a loaded 2-core machine (one
    // minute was exceeded so, with three builds beside the suite).
    @Test("the combined updates stream carries payloads and verdicts in the order they happened, and ends when the SDK is released",
          .timeLimit(.minutes(10)))
    func combinedUpdatesAreOrderedAndEndWithTheSDK() async throws {
        let verdicts: [ValidationCode] = [.noFaceFound, .ok, .ok]
        let backend = RecordingBackend { index, timestamp in
            ProcessingUpdate(metrics: Self.payload(timestamp), validation: ValidationStatus(code: verdicts[index]))
        }
        let config = SmartSpectraConfig(requestedMetrics: SmartSpectraConfig.breathingMetrics + [.pulseRate], logLevel: .none)
        let sdk = SmartSpectraSDK(config: config, backend: backend)
        let updates = sdk.updates()
        let input = try sdk.useCustomInput()
        try await sdk.start()
        for timestamp in [Int64(1), 2, 3] {
            #expect(input.sendFrame(SubmissionCase.bgra(), timestampUs: timestamp) == .accepted)
            await sdk.waitUntilProcessed()
        }
        try await sdk.stop()
        var seen: [String] = []
        for await update in updates {
            switch update {
            case .metrics(let payload): seen.append("m\(payload.cardio.pulseRate.first?.timestamp ?? -1)")
            case .status(.validationStatus(let verdict?)): seen.append("v:\(verdict.code)")
            case .status: break
            }
            if seen.filter({ $0.hasPrefix("m") }).count == 3 { break }
        }
        #expect(seen.filter { $0.hasPrefix("m") } == ["m1", "m2", "m3"], "\(seen)")
        // Each frame's verdict change comes with its payload, in the SDK's order: noFaceFound by the first, ok by the second.
        let noFace = try #require(seen.firstIndex(of: "v:noFaceFound")), ok = try #require(seen.firstIndex(of: "v:ok"))
        let first = try #require(seen.firstIndex(of: "m1"))
        #expect(noFace < ok && first < ok, "\(seen)")

        // Released, the SDK finishes the stream: the loop ends (a stream left open kept a pipeline's consumer waiting
        // for its 5 s guard at the end of every run). An SDK never started has nothing else holding it.
        let released = SmartSpectraSDK(config: config, backend: backend).updates()
        var after = 0
        for await _ in released { after += 1 }
        #expect(after == 0)
    }

    @Test("updates reach metrics, validationStatus and both async streams, in order")
    func updatesReachPropertiesAndStreams() async throws {
        let verdicts: [ValidationCode] = [.noFaceFound, .noFaceFound, .ok]
        let backend = RecordingBackend { index, timestamp in
            ProcessingUpdate(metrics: Self.payload(timestamp), validation: ValidationStatus(code: verdicts[index]))
        }
        let config = SmartSpectraConfig(requestedMetrics: SmartSpectraConfig.breathingMetrics + [.pulseRate], logLevel: .none)
        let sdk = SmartSpectraSDK(config: config, backend: backend)
        let metricsStream = sdk.metricsUpdates()
        let statusStream = sdk.statusUpdates()
        let input = try sdk.useCustomInput()
        try await sdk.start()
        for timestamp in [Int64(1), 2, 3] {
            #expect(input.sendFrame(SubmissionCase.bgra(), timestampUs: timestamp) == .accepted)
            await sdk.waitUntilProcessed()
            #expect(sdk.metrics == Self.payload(timestamp))
        }
        #expect(sdk.validationStatus == ValidationStatus(code: .ok))
        try await sdk.stop()

        var payloads: [Metrics] = []
        for await payload in metricsStream.prefix(3) { payloads.append(payload) }
        #expect(payloads == [1, 2, 3].map(Self.payload))

        var events: [SmartSpectraStatusEvent] = []
        for await event in statusStream.prefix(7) { events.append(event) }
        #expect(events == [
            .processingStatus(.starting),
            .validationStatus(ValidationStatus(code: .noFaceFound)),
            .processingStatus(.running),
            .validationStatus(ValidationStatus(code: .ok)),
            .processingStatus(.stopping),
            .validationStatus(nil),
            .processingStatus(.idle),
        ])
    }

    @Test("metrics not requested are removed from payloads; payloads left empty are not published")
    func unrequestedMetricsRemoved() async throws {
        let backend = RecordingBackend { index, timestamp in
            var payload = Self.payload(timestamp)
            if index == 0 { payload.clearBreathing() }  // cardio only: nothing requested is left
            return ProcessingUpdate(metrics: payload)
        }
        let harness = try await Harness.started(backend: backend)  // nil: breathing bundle only
        let stream = harness.sdk.metricsUpdates()
        #expect(harness.input.sendFrame(SubmissionCase.bgra(), timestampUs: 3) == .accepted)
        await harness.sdk.waitUntilProcessed()
        #expect(harness.sdk.metrics == nil)
        #expect(harness.input.sendFrame(SubmissionCase.bgra(), timestampUs: 4) == .accepted)
        try await harness.sdk.stop()
        let metrics = try #require(harness.sdk.metrics)
        #expect(!metrics.hasCardio)
        #expect(metrics.cardio.pulseRate.isEmpty)
        #expect(metrics.breathing.upperTrace.map(\.timestamp) == [4])
        var first: Metrics?
        for await payload in stream { first = payload; break }
        #expect(first == metrics)
    }

    @Test("observers are notified through the Observation framework without a run loop")
    func observationTracking() async throws {
        let backend = RecordingBackend { _, timestamp in ProcessingUpdate(metrics: Self.payload(timestamp)) }
        let harness = try await Harness.started(backend: backend)
        let changes = Mutex(0)
        withObservationTracking {
            _ = harness.sdk.metrics
        } onChange: {
            changes.withLock { $0 += 1 }
        }
        let statusChanges = Mutex(0)
        withObservationTracking {
            _ = harness.sdk.processingStatus
        } onChange: {
            statusChanges.withLock { $0 += 1 }
        }
        #expect(changes.withLock { $0 } == 0)
        #expect(harness.input.sendFrame(SubmissionCase.bgra(), timestampUs: 1) == .accepted)
        await harness.sdk.waitUntilProcessed()
        #expect(changes.withLock { $0 } == 1)
        #expect(statusChanges.withLock { $0 } == 1)
        try await harness.sdk.stop()
        // withObservationTracking fires once per registration.
        #expect(changes.withLock { $0 } == 1)

        let configChanges = Mutex(0)
        withObservationTracking {
            _ = harness.sdk.config.requestedMetrics
        } onChange: {
            configChanges.withLock { $0 += 1 }
        }
        harness.sdk.config.requestedMetrics = [.pulseRate]
        #expect(configChanges.withLock { $0 } == 1)
    }

    @Test("an observer's callback runs on the SDK's thread: beginNewTimeline there throws, waitForQueueRoom returns, nothing deadlocks")
    func callsFromAnObserverDoNotDeadlock() async throws {
        let harness = try await Harness.started()
        let outcome = Mutex<SmartSpectraError?>(nil)
        let called = DispatchSemaphore(value: 0)
        withObservationTracking {
            _ = harness.sdk.processingStatus
        } onChange: {
            harness.sdk.waitForQueueRoom(allowingPending: 0)
            do { try harness.input.beginNewTimeline() } catch { outcome.withLock { $0 = error as? SmartSpectraError } }
            called.signal()
        }
        #expect(harness.input.sendFrame(SubmissionCase.bgra(), timestampUs: 1) == .accepted)
        await waitOffPool(called)
        #expect(outcome.withLock { $0?.code } == .invalidState)
        #expect(outcome.withLock { $0?.message.contains("from the thread that submits frames") } == true)
        // The SDK goes on: a later frame is processed, and stop returns.
        #expect(harness.input.sendFrame(SubmissionCase.bgra(), timestampUs: 2) == .accepted)
        await harness.sdk.waitUntilProcessed()
        #expect(harness.sdk.frameStatistics.processed == 2)
        try await harness.sdk.stop()
    }

    @Test("a frame queue asked for without bound is clamped, not a crash")
    func unboundedQueueIsClamped() {
        let sdk = SmartSpectraSDK(config: SmartSpectraConfig(logLevel: .none), backend: RecordingBackend(), frameQueueCapacity: Int.max)
        #expect(sdk.frameStatistics.processed == 0)
    }

    @Test("image output follows imageOutputEnabled")
    func imageOutput() async throws {
        let harness = try await Harness.started(transform: .rotate90CW)
        #expect(harness.input.sendFrame(Pictures.bgra(width: 3, height: 2), timestampUs: 1) == .accepted)
        await harness.sdk.waitUntilProcessed()
        let image = try #require(harness.sdk.imageOutput)
        #expect(image.width == 2 && image.height == 3 && image.format == .bgra32)
        harness.sdk.config.imageOutputEnabled = false
        #expect(harness.input.sendFrame(Pictures.bgra(width: 3, height: 2), timestampUs: 2) == .accepted)
        await harness.sdk.waitUntilProcessed()
        #expect(harness.sdk.imageOutput == nil)
        try await harness.sdk.stop()
    }

    @Test("sendFrame never waits for processing: a full queue drops its oldest frame")
    func boundedQueueDropsOldest() async throws {
        let backend = RecordingBackend(gated: true)
        let harness = try await Harness.started(queueCapacity: 4, backend: backend)
        let gate = try #require(backend.gate)
        #expect(harness.input.sendFrame(SubmissionCase.bgra(), timestampUs: 0) == .accepted)
        await waitOffPool(gate.entered)  // the worker now holds frame 0 inside the backend
        for timestamp in Int64(1) ... 7 {
            #expect(harness.input.sendFrame(SubmissionCase.bgra(), timestampUs: timestamp) == .accepted)
        }
        #expect(harness.sdk.frameStatistics.dropped == 3)
        for _ in 0 ..< 5 { gate.gate.signal() }
        await harness.sdk.waitUntilProcessed()
        try await harness.sdk.stop()
        #expect(backend.frames.map(\.timestampUs) == [0, 4, 5, 6, 7])
        #expect(harness.sdk.frameStatistics == {
            var expected = FrameStatistics()
            expected.accepted = 8
            expected.processed = 5
            expected.dropped = 3
            return expected
        }())
    }

    @Test("waitForQueueSpace gives a fast source lossless backpressure")
    func queueSpaceBackpressure() async throws {
        let backend = RecordingBackend(gated: true)
        let harness = try await Harness.started(queueCapacity: 2, backend: backend)
        let gate = try #require(backend.gate)
        let feeder = Task {
            for timestamp in Int64(0) ..< 6 {
                await harness.sdk.waitForQueueSpace()
                #expect(harness.input.sendFrame(SubmissionCase.bgra(), timestampUs: timestamp) == .accepted)
            }
        }
        for _ in 0 ..< 6 {
            await waitOffPool(gate.entered)
            gate.gate.signal()
        }
        await feeder.value
        try await harness.sdk.stop()
        #expect(backend.frames.map(\.timestampUs) == [0, 1, 2, 3, 4, 5])
        #expect(harness.sdk.frameStatistics.dropped == 0)
    }

    @Test("reset discards queued frames")
    func resetDiscardsQueue() async throws {
        let backend = RecordingBackend(gated: true)
        let harness = try await Harness.started(backend: backend)
        let gate = try #require(backend.gate)
        #expect(harness.input.sendFrame(SubmissionCase.bgra(), timestampUs: 0) == .accepted)
        await waitOffPool(gate.entered)
        for timestamp in Int64(1) ... 3 {
            #expect(harness.input.sendFrame(SubmissionCase.bgra(), timestampUs: timestamp) == .accepted)
        }
        async let reset: Void = harness.sdk.reset()
        // Let frame 0 finish; the queued frames 1…3 are discarded by the reset.
        await waitUntil { harness.sdk.processingStatus == .idle || harness.sdk.processingStatus == .stopping }
        gate.gate.signal()
        try await reset
        #expect(backend.frames.map(\.timestampUs) == [0])
        #expect(harness.sdk.frameStatistics.dropped == 3)
        #expect(harness.sdk.metrics == nil)
    }

    @Test("a stream ends when its consumer stops iterating, and others keep receiving")
    func streamTermination() async throws {
        let backend = RecordingBackend { _, timestamp in ProcessingUpdate(metrics: Self.payload(timestamp)) }
        let harness = try await Harness.started(backend: backend)
        let early = harness.sdk.metricsUpdates(bufferingPolicy: .bufferingOldest(1))
        let late = harness.sdk.metricsUpdates(bufferingPolicy: .unbounded)
        for timestamp in [Int64(1), 2, 3] {
            #expect(harness.input.sendFrame(SubmissionCase.bgra(), timestampUs: timestamp) == .accepted)
        }
        try await harness.sdk.stop()
        var first: [Int64] = []
        for await payload in early { first.append(payload.breathing.upperTrace[0].timestamp); break }
        #expect(first == [1])  // bufferingOldest(1) kept only the first payload
        var all: [Int64] = []
        for await payload in late.prefix(3) { all.append(payload.breathing.upperTrace[0].timestamp) }
        #expect(all == [1, 2, 3])
    }
}

/// Polls a condition with task yields (no sleeping); used only where the SDK gives no event to await.
func waitUntil(_ condition: () -> Bool) async {
    while !condition() { await Task.yield() }
}
