import Synchronization
import VitalsEngine

/// Hands a gyroscope's readings to a run of the embedded engine (``EmbeddedVitalsBackend/takingRotationRates(from:)``),
/// which uses them to take the camera's rotation out of the skin's colour (`docs/VITALS-ENGINE.md`, *The wearer's own
/// motion*).
///
/// Any thread may ``add(at:across:down:)``; the run takes what was added before each frame it processes, on its own
/// thread. Times are seconds on the IMU's clock, expressed near the frames' timeline: an IMU instant within half a
/// second of the video frame stamped the same (the engine finds the offset between them, ``alignment``). Readings
/// wait at most ``capacity`` at a time (the oldest go first); non-finite ones are dropped.
public final class RotationRateFeed: Sendable {
    /// The most readings that wait for the run (about two minutes at 60 Hz).
    public static let capacity = 8192

    private struct State {
        var pending: [(t: Double, across: Double, down: Double)] = []
        var dropped = 0
        var taken = 0
        var alignment: MotionClockAlignment.Estimate?
    }

    private let state = Mutex(State())

    /// Creates an empty feed.
    public init() {}

    /// Adds a reading: `seconds` (see the type's description) and the rotation rates (rad/s) about the axis that
    /// moves the picture across and the one that moves it down (DAT glasses: the gyroscope's X and Y).
    public func add(at seconds: Double, across: Double, down: Double) {
        guard seconds.isFinite, across.isFinite, down.isFinite else { return }
        state.withLock { state in
            state.pending.append((seconds, across, down))
            if state.pending.count > Self.capacity {
                state.dropped += state.pending.count - Self.capacity
                state.pending.removeFirst(state.pending.count - Self.capacity)
            }
        }
    }

    /// The IMU's clock against the frames' as the run's engine last estimated it; nil before it has.
    public var alignment: MotionClockAlignment.Estimate? { state.withLock { $0.alignment } }

    /// Readings dropped because the run did not take them in time.
    public var dropped: Int { state.withLock { $0.dropped } }

    /// Readings the run has taken (its engine uses them from the first on).
    public var taken: Int { state.withLock { $0.taken } }

    /// Takes the waiting readings, oldest first (the run's thread).
    func take() -> [(t: Double, across: Double, down: Double)] {
        state.withLock { state in
            defer { state.pending.removeAll(keepingCapacity: true) }
            state.taken += state.pending.count
            return state.pending
        }
    }

    /// The run's engine estimated the clocks (the run's thread).
    func aligned(_ estimate: MotionClockAlignment.Estimate?) {
        state.withLock { $0.alignment = estimate }
    }
}
