import Foundation
import GlassesVideo
import Synchronization
import WearablesKit

/// Writes what simulated glasses stream to a file: HEVC as Annex B, MP4 or Matroska (by extension), raw frames as
/// Y4M. Install with ``attach(to:)``; call ``finish()`` at the end.
public final class StreamRecorder: Sendable {
    private enum Sink {
        case none
        case hevc(HEVCFileWriter)
        case y4m(Y4MWriter)
        case failed
    }

    private struct State {
        var sink: Sink = .none
        var configuration: HEVCCodecConfiguration?
        var written = 0
        var lastError: String?
    }

    /// The file being written.
    public let path: String
    private let frameRate: Int
    // Mutex makes the non-Sendable writers safe to share: they are only touched under the lock.
    private let state = Mutex(State())

    /// Prepares a recorder; the file is created with the first sample.
    /// - Parameter frameRate: the Y4M header's frame rate for raw streams.
    public init(path: String, frameRate: Int = 30) {
        self.path = path
        self.frameRate = frameRate
    }

    /// Records every codec configuration and sample the glasses send from now on.
    public func attach(to glasses: SimulatedGlasses) {
        glasses.setSampleObserver { [weak self] message in self?.record(message) }
    }

    /// Samples written so far.
    public var samplesWritten: Int { state.withLock { $0.written } }
    /// The last write error, if any (recording stops after one).
    public var lastError: String? { state.withLock { $0.lastError } }

    /// Records one message (codec configurations and video samples; others are ignored).
    public func record(_ message: DeviceMessage) {
        state.withLock { s in
            switch message {
            case .codecConfiguration(let c):
                s.configuration = c
            case .videoSample(let sample):
                do throws(VideoCodecError) {
                    switch (sample.format, s.sink) {
                    case (_, .failed):
                        return
                    case (.hevc, .none):
                        guard let c = s.configuration else { return }
                        let writer = try HEVCFileWriter(path: path, codecConfiguration: c)
                        s.sink = .hevc(writer)
                        try writer.write(HEVCSample(data: sample.payload, isKeyframe: sample.isKeyframe, codecConfiguration: c),
                                         presentationTimeUs: sample.presentationTimeUs)
                    case (.hevc, .hevc(let writer)):
                        guard let c = s.configuration else { return }
                        try writer.write(HEVCSample(data: sample.payload, isKeyframe: sample.isKeyframe, codecConfiguration: c),
                                         presentationTimeUs: sample.presentationTimeUs)
                    case (.nv12(let w, let h, let ls, let cs), .none):
                        let writer = try Y4MWriter(path: path, frameRateNumerator: frameRate)
                        s.sink = .y4m(writer)
                        if let image = RawVideoImage(width: w, height: h, lumaBytesPerRow: ls, chromaBytesPerRow: cs, data: sample.payload) {
                            try writer.write(image)
                        }
                    case (.nv12(let w, let h, let ls, let cs), .y4m(let writer)):
                        if let image = RawVideoImage(width: w, height: h, lumaBytesPerRow: ls, chromaBytesPerRow: cs, data: sample.payload) {
                            try writer.write(image)
                        }
                    default:
                        s.lastError = "the stream changed codec mid-recording; recording stopped"
                        s.sink = .failed
                        return
                    }
                    s.written += 1
                } catch {
                    s.lastError = "\(error)"
                    s.sink = .failed
                }
            default:
                return
            }
        }
    }

    /// Completes the file (MP4 needs this).
    /// - Throws: ``SimulatorError`` `outputFailed` when the file could not be completed or a write failed.
    public func finish() throws(SimulatorError) {
        let result: String? = state.withLock { s in
            do throws(VideoCodecError) {
                switch s.sink {
                case .hevc(let w): try w.finish()
                case .y4m(let w): try w.close()
                case .none, .failed: break
                }
            } catch {
                s.lastError = "\(error)"
            }
            s.sink = .failed
            return s.lastError
        }
        if let result { throw SimulatorError(.outputFailed, "writing \(path) failed: \(result)", context: ["file": path]) }
    }
}
