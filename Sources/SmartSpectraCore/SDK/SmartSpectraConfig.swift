import Observation
import Synchronization

/// How much the SDK writes to standard error. Raw values match SmartSpectra's log levels.
public enum SmartSpectraLogLevel: Int, Sendable, Hashable, CaseIterable, Comparable {
    /// Everything, including every rejected frame.
    case debug = 0
    /// Lifecycle changes.
    case info = 1
    /// Problems the SDK worked around (the default).
    case warning = 2
    /// Failures only.
    case error = 3
    /// Nothing.
    case none = 4

    /// The default level, `warning`.
    public static let `default` = SmartSpectraLogLevel.warning

    /// Orders levels by verbosity (debug first).
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// The SDK's settings. Mutate `sdk.config` in place (it is a shared reference); do not replace it.
///
/// Settings are read when ``SmartSpectraSDK/start()`` begins a run, except ``imageOutputEnabled``, which takes
/// effect with the next processed frame. Safe to use from any thread; observable like the SDK itself.
///
/// On Linux the processing backend decides what ``apiKey`` means: the default, embedded engine runs fully
/// offline and needs no key (it is passed on, unused); a backend that wraps the hosted SDK would authenticate with it.
public final class SmartSpectraConfig: Observable, Sendable {
    /// The breathing bundle, requested when ``requestedMetrics`` is nil.
    public static let breathingMetrics: [MetricType] = MetricType.breathingBundle
    /// The cardio bundle: pulse rate, arterial pressure trace, HRV.
    public static let cardioMetrics: [MetricType] = MetricType.cardioBundle
    /// The face bundle: landmarks, blinking, talking, expressions.
    public static let faceMetrics: [MetricType] = MetricType.faceBundle
    /// The EDA bundle: the EDA proxy trace.
    public static let edaMetrics: [MetricType] = MetricType.edaBundle

    private struct Values: Sendable {
        var apiKey: String?
        var requestedMetrics: [MetricType]?
        var imageOutputEnabled: Bool
        var logLevel: SmartSpectraLogLevel
        var enableTelemetry: Bool
    }

    private let values: Mutex<Values>
    private let registrar = ObservationRegistrar()

    /// Creates a configuration.
    public init(
        apiKey: String? = nil,
        requestedMetrics: [MetricType]? = nil,
        imageOutputEnabled: Bool = true,
        logLevel: SmartSpectraLogLevel = .default,
        enableTelemetry: Bool = true
    ) {
        values = Mutex(Values(
            apiKey: apiKey,
            requestedMetrics: requestedMetrics.map(MetricType.deduplicated),
            imageOutputEnabled: imageOutputEnabled,
            logLevel: logLevel,
            enableTelemetry: enableTelemetry
        ))
    }

    /// The API key. Not required by the embedded, offline engine (see the type's documentation).
    public var apiKey: String? {
        get { read(\.apiKey) { $0.apiKey } }
        set { write(\.apiKey) { $0.apiKey = newValue } }
    }

    /// The metrics to measure; nil means ``breathingMetrics``. Duplicates are removed on assignment (first kept).
    public var requestedMetrics: [MetricType]? {
        get { read(\.requestedMetrics) { $0.requestedMetrics } }
        set { write(\.requestedMetrics) { $0.requestedMetrics = newValue.map(MetricType.deduplicated) } }
    }

    /// Whether the SDK publishes the latest processed frame as ``SmartSpectraSDK/imageOutput``.
    public var imageOutputEnabled: Bool {
        get { read(\.imageOutputEnabled) { $0.imageOutputEnabled } }
        set { write(\.imageOutputEnabled) { $0.imageOutputEnabled = newValue } }
    }

    /// How much the SDK logs to standard error.
    public var logLevel: SmartSpectraLogLevel {
        get { read(\.logLevel) { $0.logLevel } }
        set { write(\.logLevel) { $0.logLevel = newValue } }
    }

    /// Kept for parity with the iOS SDK; this implementation sends no telemetry anywhere.
    public var enableTelemetry: Bool {
        get { read(\.enableTelemetry) { $0.enableTelemetry } }
        set { write(\.enableTelemetry) { $0.enableTelemetry = newValue } }
    }

    /// The set a run measures: ``requestedMetrics`` or, when nil, the breathing bundle.
    public var effectiveMetrics: Set<MetricType> { MetricType.effectiveSet(for: requestedMetrics) }

    /// The log level, read without registering an observation (for the SDK's own threads).
    var untrackedLogLevel: SmartSpectraLogLevel { values.withLock { $0.logLevel } }

    /// Whether image output is on, read without registering an observation (for the SDK's own threads).
    var untrackedImageOutputEnabled: Bool { values.withLock { $0.imageOutputEnabled } }

    /// The run configuration for the backend, read without registering an observation.
    var untrackedProcessingConfiguration: ProcessingConfiguration {
        values.withLock {
            ProcessingConfiguration(requestedMetrics: MetricType.effectiveSet(for: $0.requestedMetrics), apiKey: $0.apiKey)
        }
    }

    private func read<T>(_ keyPath: KeyPath<SmartSpectraConfig, T>, _ body: (Values) -> T) -> T {
        registrar.access(self, keyPath: keyPath)
        return values.withLock { body($0) }
    }

    private func write<T>(_ keyPath: KeyPath<SmartSpectraConfig, T>, _ body: (inout Values) -> Void) {
        registrar.withMutation(of: self, keyPath: keyPath) { values.withLock { body(&$0) } }
    }
}
