import Foundation
import GlassesMedia
import GlassesVideo
import SmartSpectraInput
import Synchronization

/// Submits the glasses' ``VideoFrame``s to SmartSpectra custom input: the Linux `sendFrame(CMSampleBuffer)`.
///
/// On iOS an app hands DAT's `frame.sampleBuffer` to `customInput.sendFrame(_:)`, which reads the pixels and the
/// presentation time from it. Here ``send(_:receivedAtUs:)`` does the same with a WearablesKit `VideoFrame`:
/// - `.raw` frames (NV12 video range, `420v`) are wrapped as they are, with no copy
///   (`RawVideoImage.pixelBufferView()`), and submitted;
/// - `.hvc1` frames are decoded with libavcodec (GlassesVideo's ``VideoFrameDecoder``), using the codec
///   configuration each frame carries (its VPS/SPS/PPS stand in for the `CMVideoFormatDescription`), and every
///   picture that comes out is submitted; decoding starts at the first keyframe;
/// - the device's presentation time is mapped onto one monotonic microsecond timeline per run by a
///   ``TimestampMapper``: a duplicate or slightly earlier device time is rejected (`nonMonotonicTimestamp`), the
///   device clock restarting (a new session) is bridged without a gap, and a real pause of more than 2 s reaches
///   the SDK as such, which rejects it with `timestampGap`: then stop and start the SDK and keep sending.
///
/// ```swift
/// let sdk = SmartSpectraSDK(config: SmartSpectraConfig(requestedMetrics: SmartSpectraConfig.cardioMetrics))
/// let input = GlassesFrameInput(customInput: try sdk.useCustomInput())
/// try await sdk.start()
/// let token = stream.videoFramePublisher.listen { frame in
///     do {
///         for result in try input.send(frame) where !result.isAccepted { print(result.error?.message ?? "") }
///     } catch { print(error.localizedDescription) }
/// }
/// ```
///
/// Call it from one serial context, as SmartSpectra asks of `sendFrame` (a stream's listener callbacks never
/// overlap, so sending from `videoFramePublisher.listen` is fine); an overlapping call is refused with
/// ``GlassesFrameInputError/Code/concurrentUse`` instead of racing. Decoding blocks the calling thread (a few ms per
/// frame): keep it off the cooperative pool. A rejected result leaves the input usable.
public final class GlassesFrameInput: @unchecked Sendable {
    // @unchecked Sendable: `core` is touched only by the one call that holds `busy`.

    /// How frames are turned into pixels.
    public struct Options: Sendable, Hashable {
        /// The layout decoded `.hvc1` pictures are submitted in: `.nv12VideoRange` (the default: what the stream
        /// holds, no colour conversion), `.nv12FullRange` or `.bgra32`. `.raw` frames are always submitted as the
        /// `420v` the glasses sent.
        public var decodedFormat: PixelFormat
        /// The HEVC decoder's settings (threads, stall timeout, row alignment, pool size).
        public var decoder: VideoDecoderOptions
        /// The frame rate asked of the glasses: the spacing the timeline advances by when the device clock restarts.
        public var frameRate: UInt

        /// Creates options: NV12 video range, the decoder's defaults, 30 fps.
        public init(decodedFormat: PixelFormat = .nv12VideoRange, decoder: VideoDecoderOptions = VideoDecoderOptions(), frameRate: UInt = 30) {
            self.decodedFormat = decodedFormat
            self.decoder = decoder
            self.frameRate = frameRate
        }
    }

    /// Where frames go.
    public let customInput: CustomInput
    /// The settings in use.
    public let options: Options

    private let busy = Mutex(false)
    /// Decoding, time mapping and drop classification: the same core the pipeline's worker runs.
    private var core: FrameSubmissionCore
    private let statisticsStore = Mutex(VideoDecoderStatistics())
    private let lastTimestamp = Mutex<Int64?>(nil)

    /// Creates an input that submits to `customInput` (from ``SmartSpectraSDK/useCustomInput(frameTransform:)``).
    /// The HEVC decoder opens with the first `.hvc1` frame.
    public init(customInput: CustomInput, options: Options = Options()) {
        self.customInput = customInput
        self.options = options
        self.core = FrameSubmissionCore(
            outputFormat: options.decodedFormat, decoderOptions: options.decoder, rawFrames: .asSent,
            frameRate: options.frameRate
        )
    }

    /// What the HEVC decoder has done so far (all zero until the first `.hvc1` frame).
    public var decoderStatistics: VideoDecoderStatistics { statisticsStore.withLock { $0 } }

    /// Decodes or wraps one frame and submits every picture it yields, each at its mapped timestamp.
    ///
    /// - Parameters:
    ///   - frame: a frame from `stream.videoFramePublisher` (or a file reader).
    ///   - receivedAtUs: when the frame arrived, in µs on any monotonic host clock; optional. With it, the timeline
    ///     advances by the real time that passed when the device clock restarts, so a long pause is reported.
    /// - Returns: one result per picture submitted: usually one; none while an `.hvc1` stream waits for its first
    ///   keyframe or skips a damaged sample (see ``decoderStatistics``), or while a multi-threaded decoder holds a
    ///   picture back for reordering (it comes with a later frame, or from ``flush()``); occasionally two, when a
    ///   held picture comes out with the current one. `.rejected` carries SmartSpectra's error:
    ///   `nonMonotonicTimestamp` for a duplicate or earlier device time (not submitted), or whatever
    ///   ``CustomInput/sendFrame(_:timestampUs:)`` answered (`invalidState` before `start()`, `timestampGap` after
    ///   a pause over 2 s, `frameConversionFailed`).
    /// - Throws: ``GlassesFrameInputError`` when the HEVC decoder cannot open, fails, or has decoded nothing for its
    ///   stall timeout, and when called while another call is still running.
    public func send(_ frame: VideoFrame, receivedAtUs: Int64? = nil) throws(GlassesFrameInputError) -> [FrameSubmissionResult] {
        try exclusively { () throws(GlassesFrameInputError) -> [FrameSubmissionResult] in
            defer { noteStatistics() }
            let outcome: FrameSubmissionCore.FrameOutcome
            do throws(FrameSubmissionCore.DecodeFailure) {
                outcome = try core.frameArrived(frame)
            } catch .decoderUnavailable(let error) {
                throw GlassesFrameInputError(
                    code: .decoderUnavailable, message: "The HEVC decoder could not open: \(error.message)",
                    presentationTimeUs: frame.presentationTimeUs
                )
            } catch {
                throw GlassesFrameInputError(code: .decodeFailed, message: error.codecError.message, presentationTimeUs: frame.presentationTimeUs)
            }
            // A frame awaiting a keyframe, damaged or held back yields no result; its kind shows in the statistics.
            guard case .pictures(let pictures) = outcome else { return [] }
            return pictures.map { submit($0, receivedAtUs: receivedAtUs) }
        }
    }

    /// Submits the pictures the HEVC decoder still holds (end of the stream, or before a new one) and readies it
    /// for a stream that starts with a keyframe. Nothing to do for `.raw` streams or single-threaded decoding.
    /// - Throws: ``GlassesFrameInputError`` (`concurrentUse`) when called while another call is still running.
    public func flush() throws(GlassesFrameInputError) -> [FrameSubmissionResult] {
        try exclusively { () throws(GlassesFrameInputError) -> [FrameSubmissionResult] in
            defer { noteStatistics() }
            // Every picture that comes out is submitted, including any the worker's accounting would leave out.
            return core.flush().pictures.map { submit($0, receivedAtUs: nil) }
        }
    }

    /// Declares that the next frame starts a new device timeline (a new session or camera): its timestamp then
    /// continues this input's timeline instead of being compared with the old device clock.
    /// - Throws: ``GlassesFrameInputError`` (`concurrentUse`) when called while another call is still running.
    public func markDiscontinuity() throws(GlassesFrameInputError) {
        try exclusively { () throws(GlassesFrameInputError) in core.markDiscontinuity() }
    }

    /// The last timestamp submitted (or rejected by the SDK), in µs on this input's timeline; nil before the first.
    public var lastTimestampUs: Int64? { lastTimestamp.withLock { $0 } }

    // MARK: Internals (run only while `busy` is held)

    private func submit(_ picture: FrameSubmissionCore.Picture, receivedAtUs: Int64?) -> FrameSubmissionResult {
        switch core.timestamp(for: picture, receivedAtUs: receivedAtUs) {
        case .drop(let reason):
            let what = reason == .duplicateTimestamp ? "repeats the previous frame's" : "is earlier than an already submitted"
            return .rejected(SmartSpectraError(
                code: .nonMonotonicTimestamp,
                message: "The frame at \(picture.presentationTimeUs) µs (device clock) \(what) presentation time; it was not submitted."
            ))
        case .submit(let timestampUs, _):
            lastTimestamp.withLock { $0 = timestampUs }
            // A pause over 2 s keeps its length: custom input answers `timestampGap`, and the caller restarts the run.
            return customInput.sendFrame(picture.pixelBuffer, timestampUs: timestampUs)
        }
    }

    private func noteStatistics() {
        let statistics = core.decoderStatistics
        statisticsStore.withLock { $0 = statistics }
    }

    /// Runs `body` as the only call in progress; refuses overlapping calls instead of waiting or racing.
    private func exclusively<T>(_ body: () throws(GlassesFrameInputError) -> T) throws(GlassesFrameInputError) -> T {
        let claimed = busy.withLock { inUse in
            guard !inUse else { return false }
            inUse = true
            return true
        }
        guard claimed else {
            throw GlassesFrameInputError(
                code: .concurrentUse,
                message: "GlassesFrameInput was called while another call was still running: send frames from one serial queue.",
                presentationTimeUs: nil
            )
        }
        defer { busy.withLock { $0 = false } }
        return try body()
    }
}

/// Why ``GlassesFrameInput`` could not turn a frame into pixels for custom input.
public struct GlassesFrameInputError: Error, Sendable, Hashable, CustomStringConvertible, LocalizedError {
    /// The kind of failure.
    public enum Code: String, Sendable, Hashable, CaseIterable {
        /// libavcodec's HEVC decoder could not be opened (FFmpeg without the `hevc` decoder, or out of memory).
        case decoderUnavailable
        /// The HEVC decoder failed, or has produced no picture for its stall timeout (damaged or missing
        /// keyframes). Decoding goes on with the next frame.
        case decodeFailed
        /// Another call on the same input was still running: calls must come from one serial context.
        case concurrentUse
    }

    /// The kind of failure.
    public let code: Code
    /// What went wrong, for a person.
    public let message: String
    /// The presentation time (device clock, µs) of the frame concerned, if any.
    public let presentationTimeUs: Int64?

    /// Creates an error.
    public init(code: Code, message: String, presentationTimeUs: Int64?) {
        self.code = code
        self.message = message
        self.presentationTimeUs = presentationTimeUs
    }

    /// `code: message`.
    public var description: String { "\(code.rawValue): \(message)" }

    /// The message, so `localizedDescription` reads as it.
    public var errorDescription: String? { message }
}
