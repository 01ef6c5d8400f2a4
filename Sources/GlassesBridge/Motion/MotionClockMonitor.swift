import EmbeddedVitals
import Synchronization
import VitalsEngine
import WearablesKit

/// A run's IMU against its video (`--motion`): takes the glasses' motion samples, the frames the worker submitted
/// and the camera motion the engine measured on them, and relates the IMU's clock to the video's
/// (``MotionClockAlignment``) for the summary.
///
/// Both series are kept on the glasses' own clocks: a frame's camera motion arrives stamped on custom input's
/// timeline, and is put back on the device's clock by the worker's record of what it submitted (the last
/// ``mappingCapacity`` frames). Fed from three threads (the link's event queue, the worker, the SDK's processing
/// thread); nothing is called out under its lock, and the estimate is computed outside it.
package final class MotionClockMonitor: Sendable {
    /// Frames whose custom-input timestamp is remembered with their device time.
    package static let mappingCapacity = 512

    private struct State {
        var alignment = MotionClockAlignment()
        /// (custom input µs, device µs) of the last frames submitted, oldest first.
        var submitted: [(timestampUs: Int64, deviceUs: Int64)] = []
        var samples = 0
        var gyroscopeSamples = 0
        var framesMeasured = 0
        /// Why the glasses' side is missing (no IMU, refused), and the picture's (an engine that does not measure).
        var glassesUnavailable: String?
        var engineUnavailable: String?
        var attached = false
    }

    private let state = Mutex(State())
    /// Where the gyroscope's readings go on to the engine's run, on the frames' timeline (nil: the engine does not
    /// take them).
    package let rotationRates: RotationRateFeed?

    /// A monitor; with `rotationRates`, the glasses' gyroscope readings also go on to the engine's run through it.
    package init(rotationRates: RotationRateFeed? = nil) {
        self.rotationRates = rotationRates
    }

    /// The worker submitted the frame the device stamped `deviceUs` at custom input's `timestampUs`.
    package func frameSubmitted(timestampUs: Int64, deviceUs: Int64) {
        state.withLock { state in
            state.submitted.append((timestampUs, deviceUs))
            if state.submitted.count > Self.mappingCapacity { state.submitted.removeFirst(state.submitted.count - Self.mappingCapacity) }
        }
    }

    /// The engine measured the camera's motion on the frame submitted at `timestampUs` (see
    /// `EmbeddedVitalsBackend.CameraMotionObserver`).
    package func cameraMotion(timestampUs: Int64, across: Double?, down: Double?) {
        state.withLock { state in
            // Searched from the newest: the engine is at most its queue behind the worker.
            guard let frame = state.submitted.last(where: { $0.timestampUs == timestampUs }) else { return }
            state.framesMeasured += 1
            state.alignment.addFrame(at: Double(frame.deviceUs) / 1e6, across: across, down: down)
        }
    }

    /// Motion was attached to a session and started (said in the summary as used).
    package func attached() {
        state.withLock { $0.attached = true }
    }

    /// The glasses' motion could not be used: `reason` says why, for the summary.
    package func glassesUnavailable(_ reason: String) {
        state.withLock { if $0.glassesUnavailable == nil { $0.glassesUnavailable = reason } }
    }

    /// The engine does not measure the camera's motion: `reason` says so, for the summary.
    package func engineUnavailable(_ reason: String) {
        state.withLock { $0.engineUnavailable = reason }
    }

    /// Samples from the glasses, oldest first: the gyroscope's X and Y (the rotations that move the picture across
    /// and down, on the axes a worn pair measured: `docs/DAT-ON-LINUX.md`) go to the alignment, and on to the engine
    /// moved onto custom input's timeline by the last frame submitted (its timestamp minus its device time), so that
    /// the engine is left to find only the IMU's own offset; none go on before the first frame.
    package func samples(_ batch: [MotionSample]) {
        let forward = state.withLock { state -> [(t: Double, across: Double, down: Double)] in
            var forward: [(t: Double, across: Double, down: Double)] = []
            let shift = state.submitted.last.map { Double($0.timestampUs - $0.deviceUs) / 1e6 }
            for sample in batch {
                state.samples += 1
                guard let gyroscope = sample.gyroscope else { continue }
                state.gyroscopeSamples += 1
                let t = Double(sample.timestampNs) / 1e9
                state.alignment.addRotationRate(at: t, across: Double(gyroscope.x), down: Double(gyroscope.y))
                if rotationRates != nil, let shift { forward.append((t + shift, Double(gyroscope.x), Double(gyroscope.y))) }
            }
            return forward
        }
        // Outside the lock: the feed has its own.
        for reading in forward { rotationRates?.add(at: reading.t, across: reading.across, down: reading.down) }
    }

    /// What the run's IMU came to.
    package func summary() -> MotionSummary {
        let (alignment, snapshot) = state.withLock { ($0.alignment, $0) }
        var summary = MotionSummary()
        summary.samples = snapshot.samples
        summary.engineReadings = rotationRates?.taken ?? 0
        summary.engineClockOffsetSeconds = rotationRates?.alignment?.offset
        summary.framesMeasured = snapshot.framesMeasured
        if let estimate = alignment.estimate() {
            summary.clockOffsetSeconds = estimate.offset
            summary.fit = estimate.fit
            summary.pixelsPerRadianAcross = estimate.pixelsPerRadianAcross
            summary.pixelsPerRadianDown = estimate.pixelsPerRadianDown
        } else if let reason = snapshot.glassesUnavailable, snapshot.samples == 0 {
            summary.absence = reason
        } else if !snapshot.attached {
            summary.absence = "the glasses' motion was never started (no stream reached streaming)"
        } else if snapshot.gyroscopeSamples == 0 {
            summary.absence = "no IMU sample carried a gyroscope reading"
        } else if let reason = snapshot.engineUnavailable {
            summary.absence = reason
        } else if snapshot.framesMeasured == 0 {
            summary.absence = "the engine measured no camera motion (it does on frames that show a face and a textured background)"
        } else {
            summary.absence = "too little, too still or too periodic a head motion to relate the IMU's clock to the video's (docs/VITALS-ENGINE.md, The IMU's clock against the video's)"
        }
        return summary
    }
}
