import WearablesKit

/// Counters of what the simulated glasses did, for tests and logs.
public struct GlassesStatistics: Sendable, Hashable {
    /// Video samples handed to the link.
    public var samplesSent: UInt64 = 0
    /// Keyframes among them.
    public var keyframesSent: UInt64 = 0
    /// Payload bytes handed to the link.
    public var bytesSent: UInt64 = 0
    /// Camera images rendered from the simulated scene (the samples of a burst share one).
    public var framesRendered: UInt64 = 0
    /// Samples withheld by faults (drops, zombie, gaps).
    public var samplesWithheld: UInt64 = 0
    /// Samples damaged by faults (corrupt, truncated).
    public var samplesDamaged: UInt64 = 0
    /// Photos delivered.
    public var photosDelivered: UInt64 = 0
    /// Video samples the link dropped for lack of host credit.
    public var droppedForCredit: UInt64 = 0
    /// Scheduled scenario events that could not be performed (see ``SimulatedGlasses/setFailureHandler(_:)``).
    public var failedEvents: UInt64 = 0
    /// Garbage bytes handed to the raw-byte writer (``SimulatedFault/garbageBytes(count:)``).
    public var garbageBytesWritten: UInt64 = 0
}
