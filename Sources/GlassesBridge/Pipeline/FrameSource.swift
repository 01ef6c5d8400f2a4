/// Where a run's frames come from, behind one seam: glasses through WearablesKit (``GlassesController``) or a
/// recording played back (``FilePlaybackSource``).
///
/// A source pushes frames into the run's ``FrameHandoff`` and owns everything about getting them: connecting,
/// pacing, lifecycle policy, and lateness (it drops late frames itself). ``BridgePipeline`` owns the run's
/// lifecycle around it: the SDK, the worker, timers, teardown and the summary.
protocol FrameSource: AnyObject, Sendable {
    /// Starts delivering frames.
    func start()
    /// Ends the run normally (duration, signal, end of input); the source reports back through its finish hook.
    func stop()
    /// Ends the run with a failure from outside the source (the SDK, the decoder).
    func fail(_ failure: BridgeFailure)
    /// Stops delivering frames (the first step of teardown).
    func stopDelivery()
    /// Asks the device for a photo mid-stream; false where the source cannot take one.
    func capturePhoto() -> Bool
    /// Stream restarts, reconnects and session restarts so far.
    var restartCounts: (stalls: Int, reconnects: Int, sessions: Int) { get }
    /// Frames the device dropped at the source because this host was slow to grant credit (0 for files).
    var deviceDroppedFrames: UInt64 { get }
    /// In virtual time, whether the pipeline advances the clock (glasses), or the source paces time itself (files).
    var pipelineDrivesVirtualTime: Bool { get }
    /// The device's own words with its latest stream fault (nil for files, or when it gave none).
    var lastDeviceFault: String? { get }
    /// What a network stream brought, as last received (nil for glasses and files).
    var receivedStream: ReceivedStream? { get }
}

extension FrameSource {
    var receivedStream: ReceivedStream? { nil }
}

extension GlassesController: FrameSource {
    var pipelineDrivesVirtualTime: Bool { true }
}
