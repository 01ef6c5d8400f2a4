import WearablesKit

/// What a file played in real time does with a frame whose time has come: push it, wait a little for room, or skip
/// it. A plain value with no clock and no I/O; ``FilePlaybackSource`` owns one and acts on what it returns.
///
/// - A frame with room in the hand-off is pushed.
/// - A frame without room waits for it up to ``tolerance`` past its due time (an HEVC frame up to
///   ``encodedTolerance``, when that is longer), so a moment of contention (every stream of a process starting at
///   once, a keyframe, another process's burst) costs no frame. Only a frame still without room then is skipped, as
///   ``FrameDropReason/late``.
/// - An HEVC frame predicts from the frames before it up to the last keyframe, so once one is skipped, every frame
///   after it up to the next keyframe is undecodable: those are skipped here too, as
///   ``FrameDropReason/awaitingKeyframe``, instead of being decoded into damaged pictures (which cost the CPU that
///   was already short, and counted as `decodeFailed`). A raw frame stands alone: skipping it costs only itself.
///
/// Glasses need none of this: they drop late frames before encoding, for lack of link credit.
struct LateFramePolicy: Sendable, Hashable {
    /// How a frame depends on the frames before it.
    enum Dependence: Sendable, Hashable {
        /// A raw image: decodable alone, nothing depends on it.
        case independent
        /// An HEVC keyframe: decodable alone, and the frames after it predict from it.
        case keyframe
        /// An HEVC frame that predicts from earlier frames.
        case predicted

        /// How `frame` depends on the frames before it.
        init(of frame: VideoFrame) {
            switch frame.content {
            case .raw: self = .independent
            case .hevc(let sample): self = sample.isKeyframe ? .keyframe : .predicted
            }
        }
    }

    /// What the source does next.
    enum Action: Sendable, Hashable {
        /// Push the frame now.
        case push
        /// Wait for room until this offset from the start of playback, then call ``waitEnded(_:gotRoom:)``.
        case waitForRoom(until: Duration)
        /// Skip the frame and count it with this reason.
        case skip(FrameDropReason)
    }

    /// How late past its due time a frame may still be pushed.
    let tolerance: Duration
    /// How late an HEVC frame may still be pushed: never less than ``tolerance``. One skipped costs every frame up to
    /// the next keyframe, so HEVC may wait longer (``BridgeSettings/encodedBacklog``).
    let encodedTolerance: Duration
    /// Whether a skipped HEVC frame left the frames up to the next keyframe undecodable.
    private(set) var awaitingKeyframe = false

    /// A policy that lets a frame wait up to `tolerance` for room, and an HEVC frame up to `encodedTolerance` if
    /// that is longer (negative values count as zero).
    init(tolerance: Duration, encodedTolerance: Duration = .zero) {
        self.tolerance = max(.zero, tolerance)
        self.encodedTolerance = max(self.tolerance, encodedTolerance)
    }

    /// A frame that is due at `due` (offset from the start of playback) has reached its time, and the hand-off has
    /// `room` free places.
    mutating func frameDue(_ dependence: Dependence, due: Duration, room: Int) -> Action {
        if awaitingKeyframe {
            guard dependence != .predicted else { return .skip(.awaitingKeyframe) }
            awaitingKeyframe = false
        }
        if room > 0 { return .push }
        return .waitForRoom(until: due + (dependence == .independent ? tolerance : encodedTolerance))
    }

    /// The wait that ``frameDue(_:due:room:)`` asked for has ended, with room for the frame or without.
    mutating func waitEnded(_ dependence: Dependence, gotRoom: Bool) -> Action {
        if gotRoom { return .push }
        // A keyframe or a predicted frame lost: what follows it up to the next keyframe cannot be decoded.
        if dependence != .independent { awaitingKeyframe = true }
        return .skip(.late)
    }
}
