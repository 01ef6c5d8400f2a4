// SmartSpectraInput: the SmartSpectra custom-input contract with its default engine, as an app imports it.
//
// The contract itself (SDK facade, custom input, pixel and timestamp rules, metrics, the processing-backend seam)
// lives in SmartSpectraCore and is read and tested without any engine; the embedded, offline vitals engine is the
// EmbeddedVitals backend beside it. This module joins the two so that the seeds' code (`SmartSpectraSDK.shared`,
// `SmartSpectraSDK(config:)`) works out of the box.
@_exported import EmbeddedVitals
@_exported import SmartSpectraCore

extension SmartSpectraSDK {
    /// The process-wide instance, using the default (embedded, offline) backend.
    public static let shared = SmartSpectraSDK(config: SmartSpectraConfig(), backend: EmbeddedVitalsBackend())

    /// Creates an independent instance backed by the embedded, offline vitals engine.
    /// - Parameters:
    ///   - config: the settings.
    ///   - frameQueueCapacity: how many accepted frames may wait for the backend; when full, the oldest is dropped.
    public convenience init(config: SmartSpectraConfig = SmartSpectraConfig(), frameQueueCapacity: Int = 8) {
        self.init(config: config, backend: EmbeddedVitalsBackend(), frameQueueCapacity: frameQueueCapacity)
    }
}
