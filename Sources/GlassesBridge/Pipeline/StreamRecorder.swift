import Foundation
import GlassesVideo
import Synchronization
import WearablesKit

/// Keeps what the glasses sent (`--record`): HEVC samples passed through into MP4 or Matroska, raw images into Y4M.
///
/// Frames are written on a private serial queue so delivery never waits for the disk; at most `backlogLimit`
/// frames wait, and frames beyond that are left out of the recording (counted in ``skipped``), never queued
/// without bound.
final class StreamRecorder: Sendable {
    private struct State {
        var backlog = 0
        var skipped = 0
        var written = 0
        var failure: String?
    }

    /// The writers, confined to `queue`.
    private final class Writers: @unchecked Sendable {
        // @unchecked Sendable: only ever touched from the recorder's serial queue.
        var y4m: Y4MWriter?
        var hevc: HEVCFileWriter?
        var firstTimeUs: Int64?
    }

    // The mutex guards the bookkeeping shared with delivery threads; file I/O happens outside it, on `queue`.
    private let state = Mutex(State())
    private let writers = Writers()
    private let queue = DispatchQueue(label: "glasses-bridge.record")
    private let path: String
    private let frameRate: UInt
    private let backlogLimit = 64
    private let notice: @Sendable (String) -> Void

    init(path: String, frameRate: UInt, notice: @escaping @Sendable (String) -> Void) {
        self.path = path
        self.frameRate = frameRate
        self.notice = notice
    }

    /// Frames left out because the disk fell behind.
    var skipped: Int { state.withLock { $0.skipped } }
    /// Frames written.
    var written: Int { state.withLock { $0.written } }

    /// Queues a frame for writing.
    func record(_ frame: VideoFrame) {
        let accepted = state.withLock { state -> Bool in
            guard state.failure == nil, state.backlog < backlogLimit else {
                state.skipped += 1
                return false
            }
            state.backlog += 1
            return true
        }
        guard accepted else { return }
        queue.async { [self] in write(frame) }
    }

    /// Writes what is queued and completes the file.
    func finish() {
        queue.sync {
            do {
                try writers.hevc?.finish()
                try writers.y4m?.close()
            } catch {
                notice("--record could not complete \(path): \(error)")
            }
            writers.hevc = nil
            writers.y4m = nil
        }
    }

    private func write(_ frame: VideoFrame) {
        let healthy = state.withLock { state -> Bool in
            state.backlog -= 1
            return state.failure == nil
        }
        guard healthy else { return }
        do {
            switch frame.content {
            case .raw(let image):
                if writers.y4m == nil { writers.y4m = try Y4MWriter(path: path, frameRateNumerator: Int(frameRate)) }
                try writers.y4m?.write(image)
            case .hevc(let sample):
                if writers.hevc == nil {
                    writers.hevc = try HEVCFileWriter(path: path, codecConfiguration: sample.codecConfiguration)
                }
                let first = writers.firstTimeUs ?? frame.presentationTimeUs
                writers.firstTimeUs = first
                try writers.hevc?.write(sample, presentationTimeUs: frame.presentationTimeUs - first)
            }
            state.withLock { $0.written += 1 }
        } catch {
            state.withLock { $0.failure = "\(error)" }
            notice("--record stopped: \(error)")
        }
    }
}
