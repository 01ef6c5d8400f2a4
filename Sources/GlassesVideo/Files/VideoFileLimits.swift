/// The limits every number read from a video file is checked against before it is used in arithmetic or for an
/// allocation. A file outside them is refused with `VideoCodecError` code `.fileLimitExceeded` (sizes, rates,
/// frame counts) or `.brokenTimestamps` (timing).
///
/// Why these values: the glasses stream at most 720×1280 at 30 fps (``WearablesKit/StreamingResolution/high``);
/// phones record up to 4K UHD at up to 240 fps (slow motion). The limits leave that margin and no more, so that a
/// hostile header cannot make the reader allocate more than about 25 MB per frame or compute a time that does not
/// fit in 64 bits.
public enum VideoFileLimits {
    /// The largest width or height, in pixels.
    public static let maximumDimension = 4096
    /// The largest picture, in pixels (4096×2048, 3840×2160 and their portrait forms fit).
    public static let maximumPixels = 4096 * 2048
    /// The lowest frame rate a file may declare, in frames per second.
    public static let minimumFrameRate = 1
    /// The highest frame rate a file may declare, in frames per second.
    public static let maximumFrameRate = 240
    /// The largest numerator or denominator of a declared frame rate (`F30000:1001` is NTSC's 29.97 fps).
    public static let maximumFrameRateTerm = 1_000_000
    /// The largest step between one frame's presentation time and the latest one before it: 1 hour. A session
    /// recorded with a pause (glasses folded, then worn again) replays with its pause; a longer gap is taken for a
    /// broken timescale (a track timescale of 1 puts 30 fps frames 9 hours apart), not a pause.
    public static let maximumFrameGapUs: Int64 = 3_600_000_000
    /// How far a frame's presentation time may lie before the latest one already read (B-frame reordering in
    /// decoding order): 2 s.
    public static let maximumReorderUs: Int64 = 2_000_000
    /// The window, in frames, over which the latest presentation time must advance by at least
    /// ``minimumProgressUs`` (more than any B-frame reordering depth; libx265 and libx264 use at most 16).
    public static let maximumFramesWithoutProgress = 32
    /// How far the latest presentation time must advance over ``maximumFramesWithoutProgress`` frames: half of what
    /// ``maximumFrameRate`` takes (66.7 ms), so that all-zero timestamps, or a Matroska TimecodeScale that squeezes
    /// a file into microseconds, are refused rather than played as a burst.
    public static let minimumProgressUs = Int64(maximumFramesWithoutProgress) * 1_000_000 / Int64(2 * maximumFrameRate)
    /// The latest presentation time a file may hold: 100 hours.
    public static let maximumTimestampUs: Int64 = 100 * 3600 * 1_000_000

    /// Checks a picture size from a file.
    /// - Throws: `.fileLimitExceeded` naming the file, the size and the limit.
    static func checkSize(width: Int, height: Int, path: String, what: String) throws(VideoCodecError) {
        guard width > 0, height > 0 else {
            throw VideoCodecError(code: .fileLimitExceeded,
                                  message: "\(path): \(what) declares a picture size of \(width)×\(height), which is not a picture",
                                  context: ["path": path, "limit": "size"])
        }
        guard width <= maximumDimension, height <= maximumDimension, width * height <= maximumPixels else {
            throw VideoCodecError(
                code: .fileLimitExceeded,
                message: "\(path): \(what) declares pictures of \(width)×\(height); the largest this reads is "
                    + "\(maximumDimension) pixels a side and \(maximumPixels) pixels in all (the glasses send 720×1280)",
                context: ["path": path, "limit": "size"]
            )
        }
    }
}
