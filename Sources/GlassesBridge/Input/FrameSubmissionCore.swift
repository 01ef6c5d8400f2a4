import GlassesMedia
import GlassesVideo

/// Turns glasses frames into pictures timed on custom input's timeline: the one core behind ``GlassesFrameInput``
/// (the public path) and the pipeline's `FrameWorker` (the product's path), so both decode, map time and classify
/// drops with the same code.
///
/// A plain value its caller owns and confines to one thread; it does no waiting, sending, counting or writing.
/// Each event is a method that answers what happened, and the caller acts on it:
/// - ``frameArrived(_:)``: a frame came in. It is wrapped (`.raw`, see ``RawFrames``) or decoded, and the answer is
///   the pictures ready now, or why there are none: the decoder awaits a keyframe or found the sample damaged
///   (``FrameOutcome/dropped(_:)``, with the ``FrameDropReason`` to count), or it holds the picture back (reordering
///   delay; it comes out with a later frame or ``flush()``).
/// - ``timestamp(for:receivedAtUs:)``: a picture is about to be submitted; the answer is the ``TimestampMapper``'s
///   decision. A caller that must wait (for the engine's queue room) waits before asking, so a long wait is measured.
/// - ``flush()``: the pictures the decoder still holds, and how many frames it took that will never come out.
/// - ``markDiscontinuity()``: the next frame starts a new device timeline.
///
/// Bookkeeping: the core counts the frames inside the decoder (``picturesInDecoder``), so every frame given to it
/// ends exactly once, as a picture, a drop or a loss at ``flush()``; and it keeps each frame's ``FrameTiming`` by
/// presentation time until its picture comes out (at most ``timingLimit``, the oldest forgotten first: frames that
/// never yield a picture leave theirs behind).
struct FrameSubmissionCore {
    /// How `.raw` frames become pictures.
    enum RawFrames: Sendable, Hashable {
        /// Wrapped as the `420v` the glasses sent (`RawVideoImage.pixelBufferView()`, no copy), without the decoder,
        /// whatever ``outputFormat`` is: ``GlassesFrameInput``'s promise.
        case asSent
        /// Through the decoder into ``outputFormat``: a view over the received bytes when that is `420v`, a
        /// converted copy otherwise (the product's `--pixel-format bgra`).
        case inOutputFormat
    }

    /// One picture ready to be timed and submitted.
    struct Picture {
        /// The pixels.
        let pixelBuffer: PixelBuffer
        /// Presentation time on the device's clock, µs.
        let presentationTimeUs: Int64
        /// When the frame it came from was captured, sent and received, if the link measured it.
        let timing: FrameTiming?
        /// Whether it stands for a frame the core counted as inside the decoder. False for a surplus picture: one
        /// more than the frames given and not yet ended (the decoder let out a picture of a frame already answered
        /// as dropped); it has no timing, and a caller that counts every frame once leaves it out.
        let isAccounted: Bool
    }

    /// What became of a frame.
    enum FrameOutcome {
        /// The pictures ready now (this frame's, or ones held back before it), in output order.
        case pictures([Picture])
        /// No picture, and none will come of this frame: ``FrameDropReason/awaitingKeyframe`` (skipped until the
        /// next keyframe: at the start, or after damage) or ``FrameDropReason/decodeFailed`` (found damaged).
        case dropped(FrameDropReason)
        /// No picture yet: the decoder holds it back (reordering delay) and lets it out later.
        case heldBack
    }

    /// What ``flush()`` returns.
    struct Flushed {
        /// The pictures the decoder still held, in output order.
        let pictures: [Picture]
        /// Frames counted as inside the decoder that yielded no picture: lost.
        let lost: Int
    }

    /// Why ``frameArrived(_:)`` has no answer for a frame.
    enum DecodeFailure: Error {
        /// The HEVC decoder could not be opened.
        case decoderUnavailable(VideoCodecError)
        /// The decoder threw: nothing decoded for its stall timeout, or a failure not about the stream. The frame
        /// has ended (it is no longer counted as inside the decoder).
        case decodeFailed(VideoCodecError)

        /// The decoder's error.
        var codecError: VideoCodecError {
            switch self {
            case .decoderUnavailable(let error), .decodeFailed(let error): error
            }
        }
    }

    /// Timings kept for frames inside the decoder, at most.
    static let timingLimit = 32

    /// The layout decoded pictures (and, with ``RawFrames/inOutputFormat``, raw frames) come out in.
    let outputFormat: PixelFormat
    /// The HEVC decoder's settings.
    let decoderOptions: VideoDecoderOptions
    /// How `.raw` frames become pictures.
    let rawFrames: RawFrames

    private var decoder: VideoFrameDecoder?
    private var mapper: TimestampMapper
    /// Frames given to the decoder that have not yet come out as a picture or been answered as dropped.
    private(set) var picturesInDecoder = 0
    /// Timing of frames given to the decoder whose picture has not come out, by presentation time; oldest first.
    private var pendingTimings: [(presentationTimeUs: Int64, timing: FrameTiming)] = []

    /// Creates a core; the decoder opens with the first frame that needs it, or at ``openDecoder()``.
    /// - Parameters:
    ///   - frameRate: the frame rate asked of the device: the spacing the timeline advances by when the device clock
    ///     restarts with no host time to measure by.
    ///   - originHostUs: the run's start on the host clock the caller's `receivedAtUs` are on, to start the
    ///     timeline at the first frame's arrival since then (``TimestampMapper/init(frameRate:maximumGapUs:originHostUs:)``);
    ///     nil starts it at 0.
    init(
        outputFormat: PixelFormat, decoderOptions: VideoDecoderOptions = VideoDecoderOptions(), rawFrames: RawFrames,
        frameRate: UInt, originHostUs: Int64? = nil
    ) {
        self.outputFormat = outputFormat
        self.decoderOptions = decoderOptions
        self.rawFrames = rawFrames
        self.mapper = TimestampMapper(frameRate: frameRate, originHostUs: originHostUs)
    }

    /// What the decoder has done so far (all zero before it opened).
    var decoderStatistics: VideoDecoderStatistics { decoder?.statistics ?? VideoDecoderStatistics() }

    /// The last timestamp handed out by ``timestamp(for:receivedAtUs:)``, if any.
    var lastTimestampUs: Int64? { mapper.lastTimestampUs }

    /// How many frames' timings are kept, waiting for their picture (at most ``timingLimit``).
    var heldTimings: Int { pendingTimings.count }

    /// Opens the decoder now if it is not open (a caller that wants a failure at its start rather than at the first
    /// frame).
    mutating func openDecoder() throws(VideoCodecError) {
        _ = try openedDecoder()
    }

    /// A frame came in: wraps or decodes it.
    mutating func frameArrived(_ frame: VideoFrame) throws(DecodeFailure) -> FrameOutcome {
        if case .raw(let image) = frame.content, rawFrames == .asSent {
            return .pictures([Picture(
                pixelBuffer: image.pixelBufferView(), presentationTimeUs: frame.presentationTimeUs,
                timing: frame.timing, isAccounted: true
            )])
        }
        let decoder: VideoFrameDecoder
        do throws(VideoCodecError) {
            decoder = try openedDecoder()
        } catch {
            throw .decoderUnavailable(error)
        }
        let before = decoder.statistics
        if let timing = frame.timing {
            if pendingTimings.count == Self.timingLimit { pendingTimings.removeFirst() }
            pendingTimings.append((frame.presentationTimeUs, timing))
        }
        picturesInDecoder += 1
        let decoded: [DecodedVideoFrame]
        do throws(VideoCodecError) {
            decoded = try decoder.decode(frame)
        } catch {
            picturesInDecoder -= 1
            throw .decodeFailed(error)
        }
        guard decoded.isEmpty else { return .pictures(pictures(of: decoded)) }
        let after = decoder.statistics
        if after.skippedUntilKeyframe > before.skippedUntilKeyframe {
            picturesInDecoder -= 1
            return .dropped(.awaitingKeyframe)
        }
        if after.corrupt > before.corrupt {
            picturesInDecoder -= 1
            return .dropped(.decodeFailed)
        }
        return .heldBack
    }

    /// Where `picture` goes on custom input's timeline, `receivedAtUs` being when its frame arrived (µs on the host
    /// clock the core's origin is on; nil when unknown, as at a flush). Ask right before submitting: after any wait.
    mutating func timestamp(for picture: Picture, receivedAtUs: Int64?) -> TimestampMapper.Decision {
        mapper.map(deviceUs: picture.presentationTimeUs, hostUs: receivedAtUs, capturedUs: picture.timing?.captureUs)
    }

    /// Drains the pictures the decoder still holds and readies it for a stream that starts with a keyframe (nothing
    /// to do before it opened). Every frame still counted as inside the decoder ends: as a picture, or as lost.
    mutating func flush() -> Flushed {
        guard let decoder else { return Flushed(pictures: [], lost: 0) }
        let drained = pictures(of: (try? decoder.flush()) ?? [])
        let lost = picturesInDecoder
        picturesInDecoder = 0
        return Flushed(pictures: drained, lost: lost)
    }

    /// Declares that the next frame starts a new device timeline (new session, reconnect, restarted camera): its
    /// timestamp continues the timeline instead of being compared with the old device clock.
    mutating func markDiscontinuity() {
        mapper.markDiscontinuity()
    }

    // MARK: Internals

    private mutating func openedDecoder() throws(VideoCodecError) -> VideoFrameDecoder {
        if let decoder { return decoder }
        let opened = try VideoFrameDecoder(outputFormat: outputFormat, options: decoderOptions)
        decoder = opened
        return opened
    }

    /// Ends one counted frame per picture, while any are counted, with its frame's timing; the rest are surplus.
    private mutating func pictures(of decoded: [DecodedVideoFrame]) -> [Picture] {
        var pictures: [Picture] = []
        pictures.reserveCapacity(decoded.count)
        for picture in decoded {
            let isAccounted = picturesInDecoder > 0
            if isAccounted { picturesInDecoder -= 1 }
            pictures.append(Picture(
                pixelBuffer: picture.pixelBuffer, presentationTimeUs: picture.presentationTimeUs,
                timing: isAccounted ? takeTiming(presentationTimeUs: picture.presentationTimeUs) : nil,
                isAccounted: isAccounted
            ))
        }
        return pictures
    }

    /// The timing of the frame a picture came from (the newest with its presentation time), forgotten once taken.
    private mutating func takeTiming(presentationTimeUs: Int64) -> FrameTiming? {
        guard let index = pendingTimings.lastIndex(where: { $0.presentationTimeUs == presentationTimeUs }) else {
            return nil
        }
        return pendingTimings.remove(at: index).timing
    }
}
