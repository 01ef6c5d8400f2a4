import Dispatch
import Foundation

/// The thread that runs one run's ``FrameProcessor``: off the cooperative pool, fed through the SDK's bounded queue.
///
/// It creates the processor (so a slow backend start never blocks a Swift concurrency thread), reports readiness,
/// then takes frames until the run stops, and finally hands the processor's last update back to the SDK.
final class ProcessingWorker: Sendable {
    /// A key set in the processing thread's `threadDictionary`, so tests can tell the thread apart (thread names
    /// cannot be set reliably from Swift on Linux).
    static let threadMarker = "SmartSpectraInput.ProcessingWorker"

    /// Whether the calling thread is a processing worker's thread.
    static var isCurrentThreadWorker: Bool { Thread.current.threadDictionary[threadMarker] != nil }

    private let sdk: SmartSpectraSDK
    private let launch: RunLaunch
    private let backend: any ProcessingBackend

    init(sdk: SmartSpectraSDK, launch: RunLaunch, backend: any ProcessingBackend) {
        self.sdk = sdk
        self.launch = launch
        self.backend = backend
    }

    /// Starts the worker's own thread.
    func startThread() {
        let thread = Thread { [self] in
            Thread.current.threadDictionary[Self.threadMarker] = true
            run()
        }
        thread.start()
    }

    private func run() {
        let processor: any FrameProcessor
        do {
            processor = try backend.makeProcessor(configuration: launch.configuration)
        } catch let failure as SmartSpectraError {
            sdk.workerEvent { $0.processorFailed(runID: launch.runID, error: failure) }
            return
        } catch {
            let failure = SmartSpectraError(
                code: .processingFailed, message: "Backend \(backend.name) failed to start: \(error)"
            )
            sdk.workerEvent { $0.processorFailed(runID: launch.runID, error: failure) }
            return
        }
        sdk.workerEvent { $0.processorReady(runID: launch.runID) }
        while true {
            switch sdk.nextJob(runID: launch.runID) {
            case .wait:
                launch.wake.wait()
            case .process(let queued):
                let update = processor.process(queued.frame, timestampUs: queued.timestampUs)
                let imageOutput = sdk.config.untrackedImageOutputEnabled
                sdk.workerEvent {
                    $0.frameProcessed(runID: launch.runID, update: update, frame: queued.frame, imageOutputEnabled: imageOutput)
                }
            case .finish(let discard):
                let update = processor.finish()
                sdk.workerEvent { $0.runFinished(runID: launch.runID, finalUpdate: discard ? nil : update) }
                return
            }
        }
    }
}
