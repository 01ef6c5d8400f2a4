import Foundation
import GlassesVideo
import SmartSpectraInput
import Synchronization
import WearablesKit

/// What the frame worker needs from the rest of the pipeline.
struct FrameWorkerContext: Sendable {
    /// The SDK whose queue the worker keeps pace with.
    let sdk: SmartSpectraSDK
    /// Where frames go.
    let input: CustomInput
    /// Shared counters.
    let counters: BridgeCounters
    /// The layout submitted.
    let outputFormat: PixelFormat
    /// Frames per second asked of the device (for the mapper and the Y4M header).
    let frameRate: UInt
    /// Where to write the frames exactly as submitted, if anywhere.
    let videoOutPath: String?
    /// Frames that may wait inside the engine before new ones are dropped as late.
    let engineQueueLimit: Int
    /// Now on the host's clock, µs: the scheduler the link's host end runs on (latency is measured against it).
    let hostClockUs: @Sendable () -> Int64
    /// The run's start on that clock, µs: custom input's timeline is the run's clock from there.
    let runStartHostUs: Int64
    /// Reports a notable event.
    let notice: @Sendable (String) -> Void
    /// Reports a failure that must end the run.
    let fatal: @Sendable (BridgeFailure) -> Void
    /// Told each frame submitted with its device time, when the run relates an IMU to its video.
    var motion: MotionClockMonitor? = nil
}

/// The one serial worker that decodes, maps timestamps and submits frames to custom input, on its own thread.
///
/// Decoding (libavcodec) and file writing block, so they never run on the cooperative pool. Everything the
/// worker owns (its ``FrameSubmissionCore``, the decoder and timestamp mapper that public ``GlassesFrameInput`` runs
/// too, and the writer) is confined to its thread. The core decides what becomes of each frame; the worker acts on
/// it: waits for the engine, restarts and submits to custom input, counts, and writes `--video-out`.
final class FrameWorker: @unchecked Sendable {
    // @unchecked Sendable: the mutable state below is touched only by the worker thread, after `start()`.

    private let handoff: FrameHandoff
    private let context: FrameWorkerContext
    private let exited = DispatchSemaphore(value: 0)
    /// Decoding, time mapping, drop classification and the frames' timing until their picture comes out.
    private var core: FrameSubmissionCore
    private var videoOut: Y4MWriter?
    private var failed = false

    init(handoff: FrameHandoff, context: FrameWorkerContext) {
        self.handoff = handoff
        self.context = context
        // Raw frames go through the decoder too: a view when the output is `420v`, converted for `--pixel-format bgra`.
        self.core = FrameSubmissionCore(
            outputFormat: context.outputFormat, rawFrames: .inOutputFormat, frameRate: context.frameRate,
            originHostUs: context.runStartHostUs
        )
    }

    /// Starts the worker thread. Call once, after the SDK's `start()` returned.
    func start() {
        let thread = Thread { [self] in run() }
        thread.name = "glasses-bridge.worker"
        thread.start()
    }

    /// Blocks until the worker has drained the hand-off up to `.finish` and ended.
    func waitUntilExited() {
        exited.wait()
        exited.signal()
    }

    private func run() {
        defer { exited.signal() }
        do {
            try core.openDecoder()
        } catch {
            fail(BridgeFailure(.internalError, "The video decoder could not start: \(error.message)."))
        }
        if let path = context.videoOutPath {
            do {
                videoOut = try Y4MWriter(path: path, frameRateNumerator: Int(context.frameRate))
            } catch {
                fail(BridgeFailure(.outputFailed, "Cannot write --video-out \(path): \(error.message)."))
            }
        }
        while true {
            let item = handoff.next()
            switch item {
            case .frame(let frame, let hostUs):
                handle(frame, hostUs: hostUs)
            case .discontinuity:
                flushDecoder(hostUs: nil)
                core.markDiscontinuity()
            case .finish:
                flushDecoder(hostUs: nil)
                do {
                    try videoOut?.close()
                } catch {
                    fail(BridgeFailure(.outputFailed, "--video-out was not completed: \(error.message)."))
                }
                handoff.done()
                return
            }
            handoff.done()
        }
    }

    private func handle(_ frame: VideoFrame, hostUs: Int64) {
        // A decoder that could not open failed the run.
        guard !failed else {
            context.counters.update { $0.recordDropped(.inputNotRunning) }
            return
        }
        let outcome: FrameSubmissionCore.FrameOutcome
        do throws(FrameSubmissionCore.DecodeFailure) {
            outcome = try core.frameArrived(frame)
        } catch {
            context.counters.update { $0.recordDropped(.decodeFailed) }
            context.notice("The decoder skipped a frame: \(error.codecError.message)")
            return
        }
        switch outcome {
        case .pictures(let pictures):
            submit(pictures, hostUs: hostUs)
        case .dropped(let reason):
            context.counters.update { $0.recordDropped(reason) }
        case .heldBack:
            // The decoder holds the picture back (reordering delay); it comes out later.
            break
        }
    }

    private func flushDecoder(hostUs: Int64?) {
        guard core.picturesInDecoder > 0 else { return }
        let flushed = core.flush()
        submit(flushed.pictures, hostUs: hostUs)
        if flushed.lost > 0 {
            let lost = flushed.lost
            context.counters.update { for _ in 0..<lost { $0.recordDropped(.decodeFailed) } }
        }
    }

    /// Submits the pictures that stand for frames; a surplus picture's frame was already counted.
    private func submit(_ pictures: [FrameSubmissionCore.Picture], hostUs: Int64?) {
        for picture in pictures where picture.isAccounted {
            submitOne(picture, hostUs: hostUs)
        }
    }

    private func submitOne(_ picture: FrameSubmissionCore.Picture, hostUs: Int64?) {
        let timing = picture.timing
        guard !failed else {
            context.counters.update { $0.recordDropped(.inputNotRunning) }
            return
        }
        // The engine is behind: wait here, on the worker's thread, until it has room. The worker then takes no
        // more frames from the hand-off, the link grants the device no more credit, and the device drops late frames
        // at the source. Waiting happens before the mapper sees the frame, so an engine that stalls for more than
        // 2 s gets a new timeline rather than a run of gap rejections.
        handoff.setWorkerWaitsForEngine(true)
        context.sdk.waitForQueueRoom(allowingPending: max(1, context.engineQueueLimit) - 1)
        handoff.setWorkerWaitsForEngine(false)
        switch core.timestamp(for: picture, receivedAtUs: hostUs) {
        case .drop(let reason):
            context.counters.update { $0.recordDropped(reason) }
            return
        case .submit(let timestampUs, let restartFirst):
            if restartFirst, !restartInput(reason: "a pause of more than 2 s") {
                context.counters.update { $0.recordDropped(.inputNotRunning) }
                return
            }
            switch context.input.sendFrame(picture.pixelBuffer, timestampUs: timestampUs) {
            case .accepted:
                context.counters.update { $0.recordSubmitted() }
                context.motion?.frameSubmitted(timestampUs: timestampUs, deviceUs: picture.presentationTimeUs)
                if let timing {
                    // Latency ends here: capture (host clock) → sendFrame accepted.
                    context.counters.recordLatency(timing, acceptedUs: context.hostClockUs())
                }
                if let videoOut {
                    do { try videoOut.write(picture.pixelBuffer) } catch {
                        self.videoOut = nil
                        fail(BridgeFailure(.outputFailed, "--video-out stopped: \(error.message)."))
                    }
                }
            case .rejected(let error):
                context.counters.update { $0.recordRejected(code: "\(error.code)") }
            }
        }
    }

    /// Begins a fresh timeline for the next frame, without leaving the worker thread; false if the SDK failed.
    private func restartInput(reason: String) -> Bool {
        do {
            try context.input.beginNewTimeline()
            context.counters.updateStats { $0.inputRestarts += 1 }
            context.notice("custom input restarted for a fresh timeline after \(reason)")
            return true
        } catch {
            fail(BridgeFailure(.internalError, "Custom input could not be restarted after \(reason): \(error.message)."))
            return false
        }
    }

    private func fail(_ failure: BridgeFailure) {
        guard !failed else { return }
        failed = true
        context.fatal(failure)
    }
}
