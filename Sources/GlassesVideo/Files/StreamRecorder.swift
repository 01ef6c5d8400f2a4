import Foundation
import GlassesMedia
import Synchronization

/// Keeps a stream of glasses frames in a file, the one recorder of the project (`glasses-bridge --record`,
/// `glasses-sim --write`): HEVC samples passed through byte for byte into MP4, Matroska or an Annex B stream (by
/// the path's extension), raw NV12 images into Y4M.
///
/// Frames are written on a private serial queue, so the caller never waits for the disk, and at most
/// `backlogLimit` frames wait. What happens beyond that is the ``Overflow`` policy: a live source skips the frame
/// (counted in ``skipped``, never queued without bound); a source that must lose nothing (the simulator in virtual
/// time) waits for the queue. The first write error stops the recording and is kept for ``finish()``.
public final class StreamRecorder: Sendable {
    /// What ``record(_:)`` does when `backlogLimit` frames already wait for the disk.
    public enum Overflow: Sendable {
        /// Leave the frame out of the recording and count it (live streams: never hold the caller).
        case skip
        /// Block the caller until the disk catches up (nothing may be lost).
        case wait
    }

    private struct State {
        var backlog = 0
        var skipped = 0
        var written = 0
        var failure: VideoCodecError?
    }

    /// The writers, confined to `queue`.
    private final class Writers: @unchecked Sendable {
        // @unchecked Sendable: only ever touched from the recorder's serial queue.
        var y4m: Y4MWriter?
        var hevc: HEVCFileWriter?
        var firstTimeUs: Int64?
        var finished = false
    }

    /// The file being written.
    public let path: String
    private let frameRate: Int
    private let backlogLimit: Int
    private let overflow: Overflow
    private let notice: @Sendable (String) -> Void
    // The mutex guards the bookkeeping shared with callers; file I/O happens outside it, on `queue`.
    private let state = Mutex(State())
    private let room: DispatchSemaphore
    private let writers = Writers()
    private let queue = DispatchQueue(label: "glasses.record")

    /// Prepares a recorder; the file is created with the first frame.
    /// - Parameters:
    ///   - frameRate: the Y4M header's frame rate for raw streams.
    ///   - notice: hears the first write error as it happens (it is also thrown by ``finish()``).
    public init(
        path: String, frameRate: Int, backlogLimit: Int = 64, overflow: Overflow = .skip,
        notice: @escaping @Sendable (String) -> Void = { _ in }
    ) {
        self.path = path
        self.frameRate = max(1, frameRate)
        self.backlogLimit = max(1, backlogLimit)
        self.overflow = overflow
        self.notice = notice
        self.room = DispatchSemaphore(value: max(1, backlogLimit))
    }

    /// Frames left out because the disk fell behind (``Overflow/skip`` only).
    public var skipped: Int { state.withLock { $0.skipped } }
    /// Frames written so far.
    public var written: Int { state.withLock { $0.written } }

    /// Queues a frame for writing.
    public func record(_ frame: VideoFrame) {
        switch overflow {
        case .wait:
            room.wait()
        case .skip:
            guard room.wait(timeout: .now()) == .success else {
                state.withLock { $0.skipped += 1 }
                return
            }
        }
        let healthy = state.withLock { state -> Bool in
            guard state.failure == nil else { return false }
            state.backlog += 1
            return true
        }
        guard healthy else {
            room.signal()
            return
        }
        queue.async { [self] in
            write(frame)
            room.signal()
        }
    }

    /// Writes what is queued and completes the file (MP4 and Matroska need this); later frames are ignored.
    /// - Throws: ``VideoCodecError`` when a write failed or the file could not be completed.
    public func finish() throws(VideoCodecError) {
        let failure: VideoCodecError? = queue.sync {
            guard !writers.finished else { return nil }
            writers.finished = true
            do throws(VideoCodecError) {
                try writers.hevc?.finish()
                try writers.y4m?.close()
            } catch {
                state.withLock { state in
                    if state.failure == nil { state.failure = error }
                }
            }
            writers.hevc = nil
            writers.y4m = nil
            return state.withLock { $0.failure }
        }
        if let failure { throw failure }
    }

    private func write(_ frame: VideoFrame) {
        let healthy = state.withLock { state -> Bool in
            state.backlog -= 1
            return state.failure == nil
        }
        guard healthy, !writers.finished else { return }
        do throws(VideoCodecError) {
            switch frame.content {
            case .raw(let image):
                guard writers.hevc == nil else { throw Self.codecChanged(path) }
                if writers.y4m == nil { writers.y4m = try Y4MWriter(path: path, frameRateNumerator: frameRate) }
                try writers.y4m?.write(image)
            case .hevc(let sample):
                guard writers.y4m == nil else { throw Self.codecChanged(path) }
                if writers.hevc == nil {
                    writers.hevc = try HEVCFileWriter(path: path, codecConfiguration: sample.codecConfiguration)
                }
                let first = writers.firstTimeUs ?? frame.presentationTimeUs
                writers.firstTimeUs = first
                let (offset, overflow) = frame.presentationTimeUs.subtractingReportingOverflow(first)
                try writers.hevc?.write(sample, presentationTimeUs: overflow ? 0 : max(0, offset))
            }
            state.withLock { $0.written += 1 }
        } catch {
            state.withLock { $0.failure = error }
            notice("recording \(path) stopped: \(error.reason)")
        }
    }

    private static func codecChanged(_ path: String) -> VideoCodecError {
        VideoCodecError(
            code: .invalidArgument,
            message: "the stream changed between raw and HEVC mid-recording; \(path) keeps what came before")
    }
}
