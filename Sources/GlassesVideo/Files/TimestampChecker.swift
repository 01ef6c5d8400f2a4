internal import CFFmpeg
import Foundation

/// Checks the presentation times of a file's frames, in file order, against ``VideoFileLimits``, so that a file
/// whose timing is broken (a track timescale of 0 or 1, all-zero or shuffled timestamps) is refused with
/// `.brokenTimestamps` instead of making a player wait for hours of stream time or spin forever.
///
/// Allowed: times that advance by at most ``VideoFileLimits/maximumFrameGapUs`` past the latest so far (a pause in
/// a recording is a gap, and replays as one), and reordered times (B-frames in decoding order) up to
/// ``VideoFileLimits/maximumReorderUs`` before the latest, as long as the latest advances at least once every
/// ``VideoFileLimits/maximumFramesWithoutProgress`` frames.
struct TimestampChecker {
    private(set) var latestUs: Int64?
    private var framesWithoutProgress = 0

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
            framesWithoutProgress = 0
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
        framesWithoutProgress += 1
        guard framesWithoutProgress < VideoFileLimits.maximumFramesWithoutProgress else {
            throw VideoCodecError(
                code: .brokenTimestamps,
                message: "\(path): its timestamps stop increasing at frame \(frame + 1) (\(framesWithoutProgress) frames "
                    + "in a row not after \(Self.seconds(latest)) s)\(hint)\(fix)",
                context: context
            )
        }
    }

    private static func seconds(_ microseconds: Int64) -> String {
        let value = Double(microseconds) / 1_000_000
        return abs(value) >= 100 ? String(Int64(value.rounded())) : String(format: "%.3f", value)
    }
}
