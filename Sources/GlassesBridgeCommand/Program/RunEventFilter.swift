import Foundation
import GlassesBridge
import Synchronization

/// The watch over a raw `--record` into Y4M, which has no timestamps and so cannot keep a gap: the first pause in
/// the stream ends the run with a clear error (exit 73) instead of a recording that replays the session faster than
/// it happened. (The pipeline has judged the events already: the frame-rate rule lives in ``FrameRateGate``.)
final class RunEventFilter: Sendable {
    private struct State {
        var recordPath: String?
        var streamed = false
        var deviceDropped: UInt64 = 0
        var recordFailure: BridgeFailure?
    }

    private let state: Mutex<State>
    private let stop: @Sendable () -> Void

    /// - Parameter stop: ends the run (called once, when a Y4M recording meets a gap).
    init(options: BridgeOptions, stop: @escaping @Sendable () -> Void) {
        var initial = State()
        if let path = options.recordPath, path.lowercased().hasSuffix(".y4m") { initial.recordPath = path }
        state = Mutex(initial)
        self.stop = stop
    }

    /// Why the recording ended the run, if it did.
    var recordFailure: BridgeFailure? { state.withLock { $0.recordFailure } }

    /// The events to print for `event`: itself, after an error when a Y4M recording met a gap.
    func process(_ event: BridgeEvent, at seconds: Double) -> [BridgeEvent] {
        var stopNow = false
        let events = state.withLock { state -> [BridgeEvent] in
            var out: [BridgeEvent] = []
            if state.recordPath != nil, state.recordFailure == nil, let gap = gapMessage(event, at: seconds, &state) {
                let failure = BridgeFailure(.outputFailed, gap)
                state.recordFailure = failure
                out.append(.error(code: failure.kind.rawValue, message: failure.message))
                stopNow = true
            }
            var shown = event
            if case .summary(var summary) = shown, let failure = state.recordFailure, summary.failure == nil {
                summary.failure = failure
                summary.reason = failure.kind.rawValue
                shown = .summary(summary)
            }
            out.append(shown)
            return out
        }
        if stopNow { stop() }
        return events
    }

    /// The error when `event` shows a gap in a raw stream being kept in Y4M.
    private func gapMessage(_ event: BridgeEvent, at seconds: Double, _ state: inout State) -> String? {
        let path = state.recordPath ?? ""
        let advice = "A Y4M file has no timestamps, so its replay would close the gap and play the session faster than "
            + "it happened. \(path) keeps the frames before the gap; to record sessions with pauses use --codec hvc1 "
            + "--record NAME.mkv (or .mp4), which keep every frame's time."
        switch event {
        case .state(let phase, _):
            if phase == .streaming {
                state.streamed = true
                return nil
            }
            guard state.streamed, phase != .finished else { return nil }
            return String(format: "--record %@: the stream stopped (%@) at %.1f s. ", path, phase.rawValue, seconds) + advice
        case .stats(let stats, _, _, _):
            defer { state.deviceDropped = stats.deviceDroppedFrames }
            guard stats.deviceDroppedFrames > state.deviceDropped else { return nil }
            return String(format: "--record %@: the glasses dropped %d frame(s) near %.1f s (the host fell behind). ",
                          path, Int(stats.deviceDroppedFrames - state.deviceDropped), seconds) + advice
        default:
            return nil
        }
    }
}
