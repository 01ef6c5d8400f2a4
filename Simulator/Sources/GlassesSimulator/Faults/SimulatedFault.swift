import Foundation
import WearablesKit

/// A fault the simulated glasses can inject, on demand or from a scenario.
public enum SimulatedFault: Sendable, Hashable {
    /// The link drops: the device closes its end (the host sees the link close).
    case linkLoss
    /// Zombie stream: the glasses keep reporting `streaming` but send no samples (true) or recover (false).
    case zombieStream(Bool)
    /// The next `count` video samples are not sent.
    case dropFrames(count: Int)
    /// The next keyframe is not sent (HEVC: the following samples cannot be decoded until the next keyframe).
    case dropKeyframe
    /// The next `count` samples have bytes overwritten with random values (headers included).
    case corruptSamples(count: Int)
    /// The next `count` samples are cut to a random shorter length.
    case truncateSamples(count: Int)
    /// Every sample is held back by `latencyMs` plus a random 0...`jitterMs` (order kept); zeros switch it off.
    case latency(latencyMs: Double, jitterMs: Double)
    /// The next sample repeats the previous sample's presentation time.
    case duplicateTimestamp
    /// Presentation times jump by `ms` from now on (negative = backwards).
    case timestampJump(ms: Double)
    /// A gap: the next `durationMs` of frames are skipped and time jumps ahead (frames resume after it).
    case frameGap(durationMs: Double)
    /// The glasses report a stream fault with a message.
    case deviceFault(DeviceStreamFault, message: String)
    /// The glasses send `count` samples per frame tick (a burst), overrunning a slow host's credit.
    case burst(count: Int)
    /// Bytes that violate the link protocol, written below the message layer (socket transports only).
    case garbageBytes(count: Int)
    /// Wrong frame rate: frames are sent at `fps` while the stream still claims its configured rate; nil restores it.
    case frameRate(fps: Double?)
    /// The next photo the host asks for is never sent (no photo, no fault): a capture that never arrives.
    case dropPhoto
    /// The next photo is sent damaged: its bytes after the JPEG header are overwritten, so it does not decode.
    case corruptPhoto
    /// After the next photo the video does not come back: the stream stays `streaming` and sends no samples (a
    /// zombie stream, cleared by `zombieStream(false)`), as glasses whose camera hangs after a capture.
    case stallAfterPhoto
}

/// Fault injection state consumed by the frame path.
struct FaultState: Sendable {
    var zombie = false
    var dropRemaining = 0
    var dropNextKeyframe = false
    var corruptRemaining = 0
    var truncateRemaining = 0
    var latencyMs = 0.0
    var jitterMs = 0.0
    var duplicateNext = false
    var timestampOffsetUs: Int64 = 0
    var skipUntil: Duration?
    var burst = 1
    var frameRateOverride: Double?
    var dropNextPhoto = false
    var corruptNextPhoto = false
    var stallAfterNextPhoto = false
}
