// PLACEHOLDER owned by the vitals-engine work: replaced by the adapter over VitalsEngine.
// Until then it produces nothing, and says so in its name.

/// The default processing backend: the embedded, offline vitals engine.
public struct EmbeddedVitalsBackend: ProcessingBackend {
    /// Creates the backend.
    public init() {}

    /// The backend's name.
    public var name: String { "embedded (not implemented yet)" }

    /// Starts a run.
    public func makeProcessor(configuration: ProcessingConfiguration) throws -> any FrameProcessor {
        throw SmartSpectraError(code: .processingFailed, message: "The embedded vitals engine is not built yet.")
    }
}
