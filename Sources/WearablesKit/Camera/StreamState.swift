/// The lifecycle of a camera ``Stream``: DAT's `StreamState`.
///
/// `stopped → waitingForDevice → starting → streaming ⇄ paused`, and `stopping → stopped` on the way out.
public enum StreamState: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// `stop()` was called; waiting for the glasses to acknowledge.
    case stopping
    /// Not streaming; `start()` can be called (while the camera is attached).
    case stopped
    /// Started, waiting for the glasses to be connected and the session to be started.
    case waitingForDevice
    /// The glasses are powering the camera up.
    case starting
    /// Frames are flowing.
    case streaming
    /// The glasses paused the stream (tap, photo capture, doff); it resumes by itself.
    case paused

    /// The case name.
    public var description: String { rawValue }
}

/// The lifecycle of a ``Camera``: DAT's `CameraState`.
public enum CameraState: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Being attached.
    case starting
    /// Attached to its session; its stream can run.
    case started
    /// `stop()` was called; its stream is stopping.
    case stopping
    /// Detached; make a new camera with `addCamera(config:)`.
    case stopped

    /// The case name.
    public var description: String { rawValue }
}
