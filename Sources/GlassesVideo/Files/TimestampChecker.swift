internal import CFFmpeg
import Foundation

/// Checks the presentation times of a file's frames, in file order, against ``VideoFileLimits``, so that a file
/// whose timing is broken (a track timescale of 0 or 1, all-zero or shuffled timestamps) is refused with
/// `.brokenTimestamps` instead of making a player wait for hours of stream time or spin forever.
///
/// Allowed: times that advance by at most ``VideoFileLimits/maximumFrameGapUs`` past the latest so far (a pause in
/// a recording is a gap, and replays as one), and reordered times (B-frames in decoding order) up to
/// ``VideoFileLimits/maximumReorderUs`` before the latest, as long as the latest advances by at least
/// ``VideoFileLimits/minimumProgressUs`` over every ``VideoFileLimits/maximumFramesWithoutProgress`` frames.
struct TimestampChecker {
    private(set) var latestUs: Int64?
    /// The latest time after each of the last frames (a ring of ``VideoFileLimits/maximumFramesWithoutProgress``).
    private var history: [Int64] = []
    private var frames = 0

    /// Checks the time of frame `frame` (0-based) and takes it into account.
    mutating func check(_ timeUs: Int64, frame: Int, path: String, timeBase: AVRational? = nil) throws(VideoCodecError) {
        let context = ["path": path, "frame": "\(frame)"]
        let hint = timeBase.map { " (its video track counts time in units of \($0.num)/\($0.den) s)" } ?? ""
        let fix = "; re-time it, e.g. ffmpeg -i \(path) -vf setpts=N/30/TB -c:v libx265 out.mp4"
        guard abs(timeUs) <= VideoFileLimits.maximumTimestampUs else {
            throw VideoCodecError(
                code: .brokenTimestamps,
                message: "\(path): frame \(frame + 1) is stamped \(Self.seconds(timeUs)) s, beyond the "
                    + "\(VideoFileLimits.maximumTimestampUs / 3_600_000_000) hours a file may last\(hint)\(fix)",
                context: context
            )
        }
        guard let latest = latestUs else {
            latestUs = timeUs
            try noteProgress(timeUs, frame: frame, context: context, hint: hint, fix: fix)
            return
        }
        // Both times are within ±maximumTimestampUs, so differences cannot overflow.
        if timeUs > latest {
            guard timeUs - latest <= VideoFileLimits.maximumFrameGapUs else {
                throw VideoCodecError(
                    code: .brokenTimestamps,
                    message: "\(path): frame \(frame + 1) comes \(Self.seconds(timeUs - latest)) s after the frame before it "
                        + "(more than \(VideoFileLimits.maximumFrameGapUs / 1_000_000) s): its timestamps are broken\(hint)\(fix)",
                    context: context
                )
            }
            latestUs = timeUs
            try noteProgress(timeUs, frame: frame, context: context, hint: hint, fix: fix)
            return
        }
        guard latest - timeUs <= VideoFileLimits.maximumReorderUs else {
            throw VideoCodecError(
                code: .brokenTimestamps,
                message: "\(path): frame \(frame + 1) goes \(Self.seconds(latest - timeUs)) s back in time: its timestamps "
                    + "are out of order\(hint)\(fix)",
                context: context
            )
        }
        try noteProgress(latest, frame: frame, context: context, hint: hint, fix: fix)
    }

    /// Records the latest time after this frame and checks the advance over the window.
    private mutating func noteProgress(
        _ latest: Int64, frame: Int, context: [String: String], hint: String, fix: String
    ) throws(VideoCodecError) {
        let window = VideoFileLimits.maximumFramesWithoutProgress
        let slot = frames % window
        frames += 1
        if history.count < window {
            history.append(latest)
            return
        }
        let before = history[slot]
        history[slot] = latest
        guard latest - before >= VideoFileLimits.minimumProgressUs else {
            throw VideoCodecError(
                code: .brokenTimestamps,
                message: "\(path(context)): its timestamps stop increasing at frame \(frame + 1) (the last \(window) frames "
                    + "span \(latest - before) µs, faster than \(2 * VideoFileLimits.maximumFrameRate) fps)\(hint)\(fix)",
                context: context
            )
        }
    }

    private func path(_ context: [String: String]) -> String { context["path"] ?? "the file" }

    private static func seconds(_ microseconds: Int64) -> String {
        let value = Double(microseconds) / 1_000_000
        return abs(value) >= 100 ? String(Int64(value.rounded())) : String(format: "%.3f", value)
    }
}
