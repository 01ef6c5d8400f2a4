/// A handle for submitting caller-owned frames, returned by ``SmartSpectraSDK/useCustomInput(frameTransform:)``.
///
/// The handle survives `stop()`/`start()` and `reset()`; selecting another source (another `useCustomInput` or
/// `useCamera()`) invalidates it, after which every submission is rejected with `invalidState`. Await
/// ``SmartSpectraSDK/start()`` before submitting, from one serial queue or task; you need not wait for
/// ``ProcessingStatus/running``. Safe to share across threads, but the caller orders timestamps.
public final class CustomInput: Sendable {
    private let sdk: SmartSpectraSDK
    private let generation: UInt64

    /// The transform applied to every frame submitted through this handle.
    public let frameTransform: FrameTransform

    init(sdk: SmartSpectraSDK, generation: UInt64, frameTransform: FrameTransform) {
        self.sdk = sdk
        self.generation = generation
        self.frameTransform = frameTransform
    }

    /// Submits one frame with its timestamp in microseconds.
    ///
    /// The frame is checked, in this order, and the first failing check decides the result:
    /// 1. the handle is current and the SDK is started (`start()` returned, `stop()`/`reset()` not called), else
    ///    `invalidState`;
    /// 2. `timestampUs` is non-negative and below `Int64.max - 2`, else `nonMonotonicTimestamp`;
    /// 3. `timestampUs` is greater than the previous accepted timestamp of this run, else `nonMonotonicTimestamp`;
    /// 4. `timestampUs` is at most 2 000 000 µs after the previous accepted timestamp, else `timestampGap`;
    /// 5. the pixels are BGRA (padded rows allowed) or 8-bit bi-planar NV12, video or full range, with even
    ///    dimensions and consistent planes, else `frameConversionFailed`.
    ///
    /// On `.accepted` the pixels have been copied (through the frame transform) into SDK-owned memory, so the caller
    /// may reuse or release `pixelBuffer` as soon as this returns; keep it unchanged until then. The call never
    /// waits for processing: when the SDK's queue is full, its oldest queued frame is dropped (counted in
    /// ``SmartSpectraSDK/frameStatistics``). A rejected frame leaves the timeline unchanged.
    public func sendFrame(_ pixelBuffer: PixelBuffer, timestampUs: Int64) -> FrameSubmissionResult {
        sdk.submit(pixelBuffer, timestampUs: timestampUs, generation: generation)
    }

    /// The largest distance allowed between consecutive timestamps of one timeline (2 s): a longer pause needs a
    /// new timeline (``beginNewTimeline()``), or the next frame is rejected with `timestampGap`.
    public static let maximumTimestampGap: Duration = .microseconds(TimestampTimeline.maximumGapUs)

    /// The same limit in microseconds, as timestamps are given.
    public static let maximumTimestampGapUs: Int64 = TimestampTimeline.maximumGapUs

    /// Begins a fresh timeline from the thread that submits frames, without leaving it: the frames accepted so far
    /// are processed and the run's final update is published (as `stop()` does), then a new run starts (as
    /// `start()` does); the next frame may carry any valid timestamp.
    ///
    /// Blocks the calling thread until the new run accepts frames. Call it from your own submitting thread, never
    /// from a task on the cooperative pool.
    /// - Throws: `invalidState` when this handle is no longer current, or when called on the SDK's own thread (an
    ///   observer's callback, which runs there); the backend's error if it cannot restart.
    public func beginNewTimeline() throws(SmartSpectraError) {
        guard sdk.isCurrent(generation: generation) else {
            throw SmartSpectraError(
                code: .invalidState,
                message: "This custom-input handle is no longer current: another input was selected.")
        }
        try sdk.restartBlocking()
    }
}
