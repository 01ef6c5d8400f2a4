import SmartSpectraInput

/// Why a frame never reached custom input.
public enum FrameDropReason: String, Sendable, Hashable, CaseIterable, Codable {
    /// The source was behind: a file's frame already past its time in real time (skipped by the file source), or a
    /// frame pushed into a full hand-off. (Glasses drop late frames themselves, for lack of link credit.)
    case late
    /// Its presentation time equals the previous frame's.
    case duplicateTimestamp
    /// Its presentation time is earlier than a frame already submitted.
    case backwardTimestamp
    /// The decoder could not turn it into pixels (corrupt data, or a frame that depends on a lost keyframe).
    case decodeFailed
    /// The decoder is waiting for a keyframe after a loss and discarded the sample unseen.
    case awaitingKeyframe
    /// It arrived while custom input was not running (during a restart or teardown).
    case inputNotRunning
}

/// Maps device presentation times onto one monotonic microsecond timeline per run of the bridge.
///
/// Custom input wants strictly increasing, nonnegative timestamps with no gap over two seconds. The glasses'
/// clock keeps running through pauses and may restart with a new session, so the mapper:
/// - drops duplicates and backward frames (counted by the caller with the returned reason);
/// - asks for a restart of custom input (a fresh timeline) before a frame that would leave a gap over 2 s;
/// - rebases after the device clock jumps back by more than 2 s or after ``markDiscontinuity()`` (new session,
///   restarted camera), advancing the bridge's own timeline by the host time that passed.
///
/// A plain value with no I/O: the pipeline's worker owns one.
package struct TimestampMapper: Sendable, Hashable {
    /// What to do with a frame.
    package enum Decision: Sendable, Hashable {
        /// Submit at `timestampUs`; when `restartInputFirst`, stop and start custom input before submitting.
        case submit(timestampUs: Int64, restartInputFirst: Bool)
        /// Do not submit; count it with this reason.
        case drop(FrameDropReason)
    }

    /// How long before its arrival a first frame's capture estimate may lie and still place it (10 s; an estimate
    /// further back is a clock that has not settled).
    package static let maximumCaptureLeadUs: Int64 = 10_000_000

    /// The largest gap custom input accepts between two timestamps of one run: custom input's own limit.
    package static let maximumGapUs: Int64 = CustomInput.maximumTimestampGapUs

    /// The gap beyond which this mapper asks for a new timeline.
    package let maximumGapUs: Int64

    /// The nominal spacing used when a rebase has no better measure of elapsed time.
    package let nominalFrameIntervalUs: Int64

    /// Where the timeline starts on the host clock, when it is the run's clock (see ``init(frameRate:maximumGapUs:originHostUs:)``).
    package let originHostUs: Int64?

    private var lastDeviceUs: Int64?
    private var lastOutputUs: Int64?
    private var lastHostUs: Int64?
    private var discontinuity = false

    /// Creates a mapper; `frameRate` sets the spacing used after a rebase that has no host time to measure by.
    /// - Parameter maximumGapUs: the custom input's gap limit (``CustomInput/maximumTimestampGapUs`` by default).
    /// - Parameter originHostUs: the run's start on the host clock `map` is given. The first frame is then stamped
    ///   with its arrival since that start, so the timeline is the run's clock (a stream that took 5 s to start
    ///   begins at 5 s, and a reference logged on the wall clock lines up); nil starts the timeline at 0.
    package init(frameRate: UInt, maximumGapUs: Int64 = TimestampMapper.maximumGapUs, originHostUs: Int64? = nil) {
        self.nominalFrameIntervalUs = 1_000_000 / Int64(max(frameRate, 1))
        self.maximumGapUs = maximumGapUs
        self.originHostUs = originHostUs
    }

    /// The last timestamp handed out, if any.
    package var lastTimestampUs: Int64? { lastOutputUs }

    /// Declares that the next frame starts a new device timeline (new session, reconnect, restarted camera).
    package mutating func markDiscontinuity() {
        discontinuity = true
    }

    /// Decides what to do with a frame the device stamped `deviceUs`, received at host time `hostUs` (µs on any
    /// monotonic clock; used to measure the real pause across a rebase, and to place the first frame).
    /// - Parameter capturedUs: when the frame was captured, on the same host clock, if the link knows (its clock
    ///   estimate): the first frame is placed there rather than at its arrival, so that a first frame that came
    ///   late (a link still settling) does not put every later timestamp ahead of its own frame's arrival.
    package mutating func map(deviceUs: Int64, hostUs: Int64? = nil, capturedUs: Int64? = nil) -> Decision {
        guard let lastDevice = lastDeviceUs, let lastOutput = lastOutputUs else {
            var anchor = hostUs
            // The estimate comes from the device's clock: its lead over the arrival is computed without overflow.
            if let hostUs, let capturedUs, case let (lead, overflow) = hostUs.subtractingReportingOverflow(capturedUs),
               !overflow, lead >= 0, lead <= Self.maximumCaptureLeadUs {
                anchor = capturedUs
            }
            return accept(deviceUs: deviceUs, outputUs: firstOutputUs(hostUs: anchor), hostUs: hostUs, restart: false)
        }
        if discontinuity {
            discontinuity = false
            return rebase(deviceUs: deviceUs, lastOutput: lastOutput, hostUs: hostUs)
        }
        let (delta, overflow) = deviceUs.subtractingReportingOverflow(lastDevice)
        if overflow { return rebase(deviceUs: deviceUs, lastOutput: lastOutput, hostUs: hostUs) }
        if delta == 0 { return .drop(.duplicateTimestamp) }
        if delta < 0 {
            // A small step back is a stray frame; a large one means the device clock restarted.
            if delta >= -maximumGapUs { return .drop(.backwardTimestamp) }
            return rebase(deviceUs: deviceUs, lastOutput: lastOutput, hostUs: hostUs)
        }
        let (output, outputOverflow) = lastOutput.addingReportingOverflow(delta)
        if outputOverflow || output >= Int64.max - 2 {
            return accept(deviceUs: deviceUs, outputUs: 0, hostUs: hostUs, restart: true)
        }
        return accept(deviceUs: deviceUs, outputUs: output, hostUs: hostUs, restart: delta > maximumGapUs)
    }

    /// The first frame's timestamp: its arrival since ``originHostUs`` when both are known and sane (never negative,
    /// at most a day: a host clock that jumped is not a reason for an absurd timeline), else 0.
    private func firstOutputUs(hostUs: Int64?) -> Int64 {
        guard let hostUs, let originHostUs else { return 0 }
        let (since, overflow) = hostUs.subtractingReportingOverflow(originHostUs)
        guard !overflow, since > 0, since <= 86_400_000_000 else { return 0 }
        return since
    }

    private mutating func rebase(deviceUs: Int64, lastOutput: Int64, hostUs: Int64?) -> Decision {
        var elapsed = nominalFrameIntervalUs
        if let hostUs, let lastHostUs, hostUs > lastHostUs { elapsed = max(elapsed, hostUs - lastHostUs) }
        let output = lastOutput.addingReportingOverflow(elapsed)
        let value = output.overflow || output.partialValue >= Int64.max - 2 ? 0 : output.partialValue
        // The bridge's timeline advances by the real time that passed; a fresh run of custom input is needed only
        // when that is more than custom input tolerates (or the timeline had to wrap).
        return accept(
            deviceUs: deviceUs, outputUs: value, hostUs: hostUs,
            restart: elapsed > maximumGapUs || value <= lastOutput
        )
    }

    private mutating func accept(deviceUs: Int64, outputUs: Int64, hostUs: Int64?, restart: Bool) -> Decision {
        lastDeviceUs = deviceUs
        lastOutputUs = outputUs
        if let hostUs { lastHostUs = hostUs }
        return .submit(timestampUs: outputUs, restartInputFirst: restart)
    }
}
