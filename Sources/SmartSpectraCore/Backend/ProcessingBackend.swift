/// What a processing backend produced from the frames it was given since its last update.
public struct ProcessingUpdate: Sendable, Hashable {
    /// New metric samples, if any (only samples new since the previous update; only requested metrics).
    public var metrics: Metrics?
    /// The current validation verdict, if it changed or is (re)asserted.
    public var validation: ValidationStatus?

    /// Creates an update.
    public init(metrics: Metrics? = nil, validation: ValidationStatus? = nil) {
        self.metrics = metrics
        self.validation = validation
    }
}

/// How a run of a processing backend is configured.
public struct ProcessingConfiguration: Sendable, Hashable {
    /// The metrics to produce (already expanded from bundles; nil in the SDK config means the breathing bundle).
    public var requestedMetrics: Set<MetricType>
    /// The API key from ``SmartSpectraConfig/apiKey``, for backends that authenticate; the embedded engine ignores it.
    public var apiKey: String?

    /// Creates a configuration.
    public init(requestedMetrics: Set<MetricType>, apiKey: String? = nil) {
        self.requestedMetrics = requestedMetrics
        self.apiKey = apiKey
    }
}

/// One run of a backend: frames in, updates out. Used from one thread at a time (the SDK's processing worker).
///
/// Frames arrive in timestamp order, already transformed, in the submitted format (BGRA, or NV12 of the same range),
/// tightly packed (`bytesPerRow` is `4 · width` for BGRA and `width` for both NV12 planes). The SDK never writes to
/// a frame after handing it over, but may publish it as ``SmartSpectraSDK/imageOutput``: treat it as read-only.
public protocol FrameProcessor: AnyObject {
    /// Processes one frame (already transformed; a private copy the processor may keep). `timestampUs` is strictly
    /// increasing within a run.
    func process(_ frame: PixelBuffer, timestampUs: Int64) -> ProcessingUpdate
    /// Ends the run, returning whatever is still pending.
    func finish() -> ProcessingUpdate
}

/// A source of frame processors: the pluggable engine behind ``SmartSpectraSDK``.
///
/// The default is the embedded, offline vitals engine; tests may plug in a recording backend.
public protocol ProcessingBackend: Sendable {
    /// A short name for logs and reports.
    var name: String { get }
    /// The metric types this backend fills; a caller refuses others up front instead of waiting for nothing.
    var producedMetrics: Set<MetricType> { get }
    /// Starts a run; throws a ``SmartSpectraError`` if the backend cannot start.
    func makeProcessor(configuration: ProcessingConfiguration) throws -> any FrameProcessor
}
