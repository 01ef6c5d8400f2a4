import Dispatch
import Foundation
import Synchronization
@testable import SmartSpectraCore

/// What a ``RecordingBackend`` saw for one frame: a byte-exact snapshot of every plane, plus where it ran.
struct RecordedFrame: Sendable, Hashable {
    let timestampUs: Int64
    let format: PixelFormat
    let width: Int
    let height: Int
    let planes: [[UInt8]]
    let onWorkerThread: Bool
    let isMainThread: Bool
}

/// A processing backend for tests: records every frame it is given and answers with scripted updates.
final class RecordingBackend: ProcessingBackend {
    struct Log {
        var frames: [RecordedFrame] = []
        var configurations: [ProcessingConfiguration] = []
        var finishCount = 0
    }

    let name = "recording"
    let producedMetrics = Set(MetricType.allCases)
    private let log = Mutex(Log())
    private let script: @Sendable (_ index: Int, _ timestampUs: Int64) -> ProcessingUpdate
    private let finalUpdate: ProcessingUpdate
    private let startFailure: Mutex<SmartSpectraError?>
    /// When set, `process` signals `entered` then waits on `gate` for each frame.
    let gate: (entered: DispatchSemaphore, gate: DispatchSemaphore)?

    init(
        failingStartWith failure: SmartSpectraError? = nil,
        gated: Bool = false,
        finalUpdate: ProcessingUpdate = ProcessingUpdate(),
        script: @escaping @Sendable (_ index: Int, _ timestampUs: Int64) -> ProcessingUpdate = { _, _ in ProcessingUpdate() }
    ) {
        self.startFailure = Mutex(failure)
        self.script = script
        self.finalUpdate = finalUpdate
        self.gate = gated ? (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0)) : nil
    }

    var frames: [RecordedFrame] { log.withLock { $0.frames } }
    var configurations: [ProcessingConfiguration] { log.withLock { $0.configurations } }
    var finishCount: Int { log.withLock { $0.finishCount } }

    func setStartFailure(_ failure: SmartSpectraError?) { startFailure.withLock { $0 = failure } }

    func makeProcessor(configuration: ProcessingConfiguration) throws -> any FrameProcessor {
        if let failure = startFailure.withLock({ $0 }) { throw failure }
        log.withLock { $0.configurations.append(configuration) }
        return Processor(backend: self)
    }

    fileprivate func record(_ frame: PixelBuffer, _ timestampUs: Int64) -> ProcessingUpdate {
        if let gate {
            gate.entered.signal()
            gate.gate.wait()
        }
        let planes = (0 ..< frame.planes.count).map { index in frame.withUnsafeBytes(ofPlane: index) { Array($0) } }
        let entry = RecordedFrame(
            timestampUs: timestampUs, format: frame.format, width: frame.width, height: frame.height, planes: planes,
            onWorkerThread: ProcessingWorker.isCurrentThreadWorker, isMainThread: Thread.isMainThread
        )
        let index = log.withLock { log in
            log.frames.append(entry)
            return log.frames.count - 1
        }
        return script(index, timestampUs)
    }

    fileprivate func finished() -> ProcessingUpdate {
        log.withLock { $0.finishCount += 1 }
        return finalUpdate
    }

    private final class Processor: FrameProcessor {
        let backend: RecordingBackend
        init(backend: RecordingBackend) { self.backend = backend }
        func process(_ frame: PixelBuffer, timestampUs: Int64) -> ProcessingUpdate { backend.record(frame, timestampUs) }
        func finish() -> ProcessingUpdate { backend.finished() }
    }
}

/// Builders of small, known pictures.
enum Pictures {
    /// A BGRA buffer whose pixel (x, y) is `label(x, y)` in every channel but alpha (255), rows padded by `padding`
    /// bytes of 0xEE.
    static func bgra(width: Int, height: Int, padding: Int = 0, label: (Int, Int) -> UInt8 = { x, y in UInt8(y * 16 + x) }) -> PixelBuffer {
        let buffer = PixelBuffer.makeBGRA(width: width, height: height, bytesPerRow: width * 4 + padding)
        let stride = width * 4 + padding
        buffer.withUnsafeMutableBytes(ofPlane: 0) { bytes in
            for index in bytes.indices { bytes[index] = 0xEE }
            for y in 0 ..< height {
                for x in 0 ..< width {
                    let value = label(x, y)
                    bytes[y * stride + x * 4 + 0] = value
                    bytes[y * stride + x * 4 + 1] = value &+ 100
                    bytes[y * stride + x * 4 + 2] = value &+ 50
                    bytes[y * stride + x * 4 + 3] = 255
                }
            }
        }
        return buffer
    }

    /// An NV12 buffer from explicit luma rows and CbCr rows (pairs), with optional row padding (0xEE).
    static func nv12(luma: [[UInt8]], chroma: [[(UInt8, UInt8)]], fullRange: Bool = false, padding: Int = 0) -> PixelBuffer {
        let width = luma[0].count
        let height = luma.count
        let buffer = PixelBuffer.makeNV12(
            width: width, height: height, fullRange: fullRange,
            lumaBytesPerRow: width + padding, chromaBytesPerRow: width + padding
        )
        buffer.withUnsafeMutableBytes(ofPlane: 0) { bytes in
            for index in bytes.indices { bytes[index] = 0xEE }
            for (y, row) in luma.enumerated() {
                for (x, value) in row.enumerated() { bytes[y * (width + padding) + x] = value }
            }
        }
        buffer.withUnsafeMutableBytes(ofPlane: 1) { bytes in
            for index in bytes.indices { bytes[index] = 0xEE }
            for (y, row) in chroma.enumerated() {
                for (x, pair) in row.enumerated() {
                    bytes[y * (width + padding) + 2 * x] = pair.0
                    bytes[y * (width + padding) + 2 * x + 1] = pair.1
                }
            }
        }
        return buffer
    }

    /// A plain NV12 frame of the given size (odd sizes allowed, to be rejected).
    static func nv12(width: Int, height: Int, fullRange: Bool = false) -> PixelBuffer {
        PixelBuffer.makeNV12(width: width, height: height, fullRange: fullRange)
    }
}

/// A started SDK with a recording backend and a custom-input handle.
struct Harness {
    let sdk: SmartSpectraSDK
    let backend: RecordingBackend
    let input: CustomInput

    static func started(
        transform: FrameTransform = .none,
        requestedMetrics: [MetricType]? = nil,
        queueCapacity: Int = 8,
        backend: RecordingBackend = RecordingBackend()
    ) async throws -> Harness {
        let config = SmartSpectraConfig(requestedMetrics: requestedMetrics, logLevel: .none)
        let sdk = SmartSpectraSDK(config: config, backend: backend, frameQueueCapacity: queueCapacity)
        let input = try sdk.useCustomInput(frameTransform: transform)
        try await sdk.start()
        return Harness(sdk: sdk, backend: backend, input: input)
    }
}

/// Waits for a semaphore without blocking a cooperative thread for long (the signal comes from the worker).
func waitOffPool(_ semaphore: DispatchSemaphore) async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        DispatchQueue.global().async {
            semaphore.wait()
            continuation.resume()
        }
    }
}

extension FrameSubmissionResult {
    /// The rejection code, or nil when accepted.
    var code: SmartSpectraError.Code? { error?.code }
}
