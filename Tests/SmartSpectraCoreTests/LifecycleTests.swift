import Foundation
import Testing
@testable import SmartSpectraCore

@Suite("SDK lifecycle")
struct LifecycleTests {
    private func makeSDK(_ backend: RecordingBackend = RecordingBackend()) -> SmartSpectraSDK {
        SmartSpectraSDK(config: SmartSpectraConfig(logLevel: .none), backend: backend)
    }

    @Test("a new SDK is idle with no output")
    func initialState() {
        let sdk = makeSDK()
        #expect(sdk.processingStatus == .idle)
        #expect(sdk.metrics == nil)
        #expect(sdk.validationStatus == nil)
        #expect(sdk.error == nil)
        #expect(sdk.imageOutput == nil)
    }

    @Test("start() returns in starting; the first processed frame moves to running")
    func startingThenRunning() async throws {
        let harness = try await Harness.started()
        #expect(harness.sdk.processingStatus == .starting)
        #expect(harness.input.sendFrame(SubmissionCase.bgra(), timestampUs: 0) == .accepted)
        await harness.sdk.waitUntilProcessed()
        #expect(harness.sdk.processingStatus == .running)
        try await harness.sdk.stop()
        #expect(harness.sdk.processingStatus == .idle)
        #expect(harness.backend.finishCount == 1)
    }

    @Test("useCustomInput while running throws invalidState and keeps the old handle working")
    func selectWhileRunning() async throws {
        let harness = try await Harness.started()
        let error = #expect(throws: SmartSpectraError.self) { _ = try harness.sdk.useCustomInput(frameTransform: .rotate180) }
        #expect(error?.code == .invalidState)
        let cameraError = #expect(throws: SmartSpectraError.self) { try harness.sdk.useCamera() }
        #expect(cameraError?.code == .invalidState)
        #expect(harness.input.sendFrame(SubmissionCase.bgra(), timestampUs: 5) == .accepted)
        try await harness.sdk.stop()
    }

    @Test("useCamera while stopped throws inputUnavailable and leaves the custom input selected")
    func cameraUnavailable() async throws {
        let sdk = makeSDK()
        let input = try sdk.useCustomInput()
        let error = #expect(throws: SmartSpectraError.self) { try sdk.useCamera() }
        #expect(error?.code == .inputUnavailable)
        try await sdk.start()
        #expect(input.sendFrame(SubmissionCase.bgra(), timestampUs: 5) == .accepted)
        try await sdk.stop()
    }

    @Test("start() without a custom input fails with inputUnavailable and status error")
    func startWithoutInput() async throws {
        let sdk = makeSDK()
        let error = await #expect(throws: SmartSpectraError.self) { try await sdk.start() }
        #expect(error?.code == .inputUnavailable)
        #expect(sdk.processingStatus == .error)
        #expect(sdk.error?.code == .inputUnavailable)
        try await sdk.stop()
        #expect(sdk.processingStatus == .idle)
    }

    @Test("a backend that fails to start: start() throws, error is set, status is error; a retry can succeed")
    func backendFailsToStart() async throws {
        let backend = RecordingBackend(failingStartWith: SmartSpectraError(code: .processingFailed, message: "no model"))
        let sdk = makeSDK(backend)
        let input = try sdk.useCustomInput()
        let error = await #expect(throws: SmartSpectraError.self) { try await sdk.start() }
        #expect(error?.code == .processingFailed)
        #expect(error?.message == "no model")
        #expect(sdk.processingStatus == .error)
        #expect(sdk.error == error)
        #expect(input.sendFrame(SubmissionCase.bgra(), timestampUs: 0).code == .invalidState)
        backend.setStartFailure(nil)
        try await sdk.start()
        #expect(sdk.error == nil)
        #expect(sdk.processingStatus == .starting)
        #expect(input.sendFrame(SubmissionCase.bgra(), timestampUs: 0) == .accepted)
        try await sdk.stop()
    }

    @Test("a backend throwing a foreign error is reported as processingFailed")
    func foreignBackendError() async throws {
        struct Broken: ProcessingBackend {
            struct Oops: Error {}
            let name = "broken"
            let producedMetrics: Set<MetricType> = []
            func makeProcessor(configuration: ProcessingConfiguration) throws -> any FrameProcessor { throw Oops() }
        }
        let sdk = SmartSpectraSDK(config: SmartSpectraConfig(logLevel: .none), backend: Broken())
        _ = try sdk.useCustomInput()
        let error = await #expect(throws: SmartSpectraError.self) { try await sdk.start() }
        #expect(error?.code == .processingFailed)
        #expect(sdk.processingStatus == .error)
    }

    @Test("stop() or reset() during a start that then fails end idle (reset without the error); start() hears the failure",
          arguments: [false, true])
    func stopDuringAFailingStart(reset: Bool) async throws {
        final class GatedFailure: ProcessingBackend {
            let name = "gated"
            let producedMetrics: Set<MetricType> = []
            let entered = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
            func makeProcessor(configuration: ProcessingConfiguration) throws -> any FrameProcessor {
                entered.signal()
                release.wait()
                throw SmartSpectraError(code: .processingFailed, message: "no model")
            }
        }
        let backend = GatedFailure()
        let sdk = SmartSpectraSDK(config: SmartSpectraConfig(logLevel: .none), backend: backend)
        _ = try sdk.useCustomInput()
        let starting = Task { () -> SmartSpectraError? in
            do { try await sdk.start(); return nil } catch { return error as? SmartSpectraError }
        }
        await waitOffPool(backend.entered)
        let stopping = Task { if reset { try await sdk.reset() } else { try await sdk.stop() } }
        await eventuallyStopping(sdk)
        backend.release.signal()
        try await stopping.value
        #expect(await starting.value?.code == .processingFailed)
        #expect(sdk.processingStatus == .idle)
        #expect(reset ? sdk.error == nil : sdk.error?.code == .processingFailed)
    }

    /// Yields until the SDK has taken the stop request (its status says `stopping`).
    private func eventuallyStopping(_ sdk: SmartSpectraSDK) async {
        for _ in 0..<200_000 where sdk.processingStatus != .stopping { await Task.yield() }
        #expect(sdk.processingStatus == .stopping)
    }

    @Test("start() while started throws invalidState")
    func doubleStart() async throws {
        let harness = try await Harness.started()
        let error = await #expect(throws: SmartSpectraError.self) { try await harness.sdk.start() }
        #expect(error?.code == .invalidState)
        #expect(harness.sdk.processingStatus == .starting)
        try await harness.sdk.stop()
    }

    @Test("the handle survives stop/start and reset; each start begins a fresh timeline")
    func handleSurvives() async throws {
        let harness = try await Harness.started(transform: .mirrorVertical)
        let sdk = harness.sdk
        #expect(harness.input.sendFrame(SubmissionCase.bgra(), timestampUs: 9_000_000) == .accepted)
        try await sdk.stop()
        try await sdk.start()
        // A fresh timeline: an earlier timestamp is fine in the new run.
        #expect(harness.input.sendFrame(SubmissionCase.bgra(), timestampUs: 100) == .accepted)
        await sdk.waitUntilProcessed()
        try await sdk.reset()
        #expect(sdk.processingStatus == .idle)
        try await sdk.start()
        #expect(harness.input.sendFrame(SubmissionCase.bgra(), timestampUs: 50) == .accepted)
        try await sdk.stop()
        #expect(harness.backend.frames.map(\.timestampUs) == [9_000_000, 100, 50])
        #expect(harness.backend.configurations.count == 3)
    }

    @Test("reset clears metrics, validation, error and image output, and keeps the configuration")
    func resetClearsOutput() async throws {
        let backend = RecordingBackend { index, timestamp in
            var metrics = Metrics()
            metrics.breathing.rate = [MeasurementWithConfidence(value: 15, stable: true, confidence: 90, timestamp: timestamp)]
            return ProcessingUpdate(metrics: metrics, validation: ValidationStatus(code: .ok))
        }
        let harness = try await Harness.started(requestedMetrics: [.breathingRate, .breathingRate], backend: backend)
        let sdk = harness.sdk
        #expect(harness.input.sendFrame(SubmissionCase.bgra(), timestampUs: 1) == .accepted)
        await sdk.waitUntilProcessed()
        #expect(sdk.metrics?.breathing.rate.last?.value == 15)
        #expect(sdk.validationStatus?.code == .ok)
        #expect(sdk.imageOutput != nil)
        try await sdk.reset()
        #expect(sdk.metrics == nil)
        #expect(sdk.validationStatus == nil)
        #expect(sdk.imageOutput == nil)
        #expect(sdk.error == nil)
        #expect(sdk.processingStatus == .idle)
        #expect(sdk.config.requestedMetrics == [.breathingRate])
        // Reset while idle is safe.
        try await sdk.reset()
        #expect(sdk.processingStatus == .idle)
    }

    @Test("stop keeps the last payload; the next start clears it")
    func stopKeepsMetrics() async throws {
        let backend = RecordingBackend { _, timestamp in
            var metrics = Metrics()
            metrics.breathing.upperTrace = [Measurement(value: 0.5, stable: true, timestamp: timestamp)]
            return ProcessingUpdate(metrics: metrics, validation: ValidationStatus(code: .tooDark))
        }
        let harness = try await Harness.started(backend: backend)
        #expect(harness.input.sendFrame(SubmissionCase.bgra(), timestampUs: 7) == .accepted)
        try await harness.sdk.stop()
        #expect(harness.sdk.metrics?.breathing.upperTrace.map(\.timestamp) == [7])
        #expect(harness.sdk.validationStatus == nil)
        try await harness.sdk.start()
        #expect(harness.sdk.metrics == nil)
        try await harness.sdk.stop()
    }

    @Test("stop processes frames already accepted and publishes the backend's final update")
    func stopDrainsAndFinishes() async throws {
        var final = Metrics()
        final.breathing.rate = [MeasurementWithConfidence(value: 12, stable: false, confidence: 30, timestamp: 99)]
        let backend = RecordingBackend(finalUpdate: ProcessingUpdate(metrics: final))
        let harness = try await Harness.started(backend: backend)
        for timestamp in [Int64(1), 2, 3] {
            #expect(harness.input.sendFrame(SubmissionCase.bgra(), timestampUs: timestamp) == .accepted)
        }
        try await harness.sdk.stop()
        #expect(backend.frames.map(\.timestampUs) == [1, 2, 3])
        #expect(harness.sdk.metrics == final)
        #expect(harness.sdk.frameStatistics.processed == 3)
        #expect(harness.sdk.frameStatistics.accepted == 3)
    }

    @Test("the run's configuration carries the effective metric set and the API key")
    func runConfiguration() async throws {
        let backend = RecordingBackend()
        let config = SmartSpectraConfig(apiKey: "offline", logLevel: .none)
        let sdk = SmartSpectraSDK(config: config, backend: backend)
        _ = try sdk.useCustomInput()
        try await sdk.start()
        try await sdk.stop()
        config.requestedMetrics = SmartSpectraConfig.breathingMetrics + [.pulseRate, .pulseRate]
        try await sdk.start()
        try await sdk.stop()
        #expect(backend.configurations == [
            ProcessingConfiguration(requestedMetrics: Set(MetricType.breathingBundle), apiKey: "offline"),
            ProcessingConfiguration(requestedMetrics: Set(MetricType.breathingBundle + [.pulseRate]), apiKey: "offline"),
        ])
        #expect(config.requestedMetrics == MetricType.breathingBundle + [.pulseRate])
    }

    @Test("independent instances do not share state")
    func independentInstances() async throws {
        let first = try await Harness.started()
        let second = try await Harness.started()
        #expect(first.input.sendFrame(SubmissionCase.bgra(), timestampUs: 100) == .accepted)
        #expect(second.input.sendFrame(SubmissionCase.bgra(), timestampUs: 1) == .accepted)
        try await first.sdk.stop()
        #expect(second.sdk.processingStatus != .idle)
        #expect(second.input.sendFrame(SubmissionCase.bgra(), timestampUs: 2) == .accepted)
        try await second.sdk.stop()
        #expect(first.backend.frames.map(\.timestampUs) == [100])
        #expect(second.backend.frames.map(\.timestampUs) == [1, 2])
    }
}
