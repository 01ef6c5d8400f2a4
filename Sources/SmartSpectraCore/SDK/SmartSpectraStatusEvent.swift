/// A change of the SDK's status, as ``SmartSpectraSDK/statusUpdates(bufferingPolicy:)`` delivers it.
public enum SmartSpectraStatusEvent: Sendable, Hashable {
    /// ``SmartSpectraSDK/processingStatus`` changed.
    case processingStatus(ProcessingStatus)
    /// ``SmartSpectraSDK/validationStatus`` changed (nil when no run is active or output was cleared).
    case validationStatus(ValidationStatus?)
    /// ``SmartSpectraSDK/error`` changed (nil when a new run starts or `reset()` clears it).
    case error(SmartSpectraError?)
}
