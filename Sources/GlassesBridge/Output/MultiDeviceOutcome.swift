import CommandSupport

/// What happened to one device of a run: its label, its summary and the exit code it alone would have given.
package struct DeviceOutcome: Sendable, Hashable {
    /// The device's label in the output (`sim#1`, `tcp:127.0.0.1:7001`).
    package var device: String
    /// Its summary (counters, vitals, why it ended).
    package var summary: BridgeSummary
    /// The exit code a run of this device alone would have ended with.
    package var exitCode: BridgeExitCode

    /// Creates an outcome.
    package init(device: String, summary: BridgeSummary, exitCode: BridgeExitCode) {
        self.device = device
        self.summary = summary
        self.exitCode = exitCode
    }
}

/// The end of a run of several devices: every device's outcome, the totals of their counters and the one exit code.
///
/// The exit code is 0 only when every device did what was asked; otherwise it is the most severe of the devices'
/// codes, in the order of ``severity(_:)``: internal error (70), an output that cannot be written (73), device
/// unavailable (69), bad input data (65), then any other code.
package struct MultiDeviceTotals: Sendable, Hashable {
    /// Each device's outcome, in command-line order.
    package var devices: [DeviceOutcome]
    /// A failure of the run as a whole (its output stopped), on top of the devices' own outcomes.
    package var runFailure: BridgeFailure?

    /// Creates the totals of `devices`.
    package init(devices: [DeviceOutcome], runFailure: BridgeFailure? = nil) {
        self.devices = devices
        self.runFailure = runFailure
    }

    /// Frames received from every device.
    package var framesReceived: UInt64 { devices.reduce(0) { $0 + $1.summary.stats.accounting.received } }
    /// Frames custom input accepted, over every device.
    package var framesSubmitted: UInt64 { devices.reduce(0) { $0 + $1.summary.stats.accounting.submitted } }
    /// Frames custom input rejected, over every device.
    package var framesRejected: UInt64 { devices.reduce(0) { $0 + $1.summary.stats.accounting.rejected } }
    /// Frames dropped before custom input, over every device.
    package var framesDropped: UInt64 { devices.reduce(0) { $0 + $1.summary.stats.accounting.dropped } }
    /// Frames the devices dropped for lack of link credit (never received), over every device.
    package var deviceDroppedFrames: UInt64 { devices.reduce(0) { $0 + $1.summary.stats.deviceDroppedFrames } }
    /// Frames the engines' queues discarded, over every device.
    package var engineDroppedFrames: UInt64 { devices.reduce(0) { $0 + $1.summary.stats.engineDroppedFrames } }

    /// Drops by reason, summed over every device.
    package var droppedByReason: [FrameDropReason: UInt64] {
        devices.reduce(into: [:]) { sum, outcome in
            for (reason, count) in outcome.summary.stats.accounting.droppedByReason { sum[reason, default: 0] += count }
        }
    }

    /// Rejections by custom input's code name, summed over every device.
    package var rejectedByCode: [String: UInt64] {
        devices.reduce(into: [:]) { sum, outcome in
            for (code, count) in outcome.summary.stats.accounting.rejectedByCode { sum[code, default: 0] += count }
        }
    }

    /// The run's exit code: 0 when every device did what was asked, else the most severe code of a device (or of
    /// the run's own failure).
    package var exitCode: BridgeExitCode {
        Self.combined(devices.map(\.exitCode) + [runFailure?.exitCode].compactMap { $0 })
    }

    /// The devices that did not do what was asked.
    package var failedDevices: [DeviceOutcome] { devices.filter { $0.exitCode != .success } }

    /// The most severe of `codes`; 0 when every code is 0 (or there is none).
    package static func combined(_ codes: [BridgeExitCode]) -> BridgeExitCode {
        codes.max { severity($0) < severity($1) } ?? .success
    }

    /// How severe a code is, for ``combined(_:)``: 0 for success; internal error 5, output 4, unavailable 3,
    /// bad data 2; any other failing code 1.
    package static func severity(_ code: BridgeExitCode) -> Int {
        switch code {
        case .success: 0
        case .internalError: 5
        case .cannotWriteOutput: 4
        case .deviceUnavailable: 3
        case .dataError: 2
        default: 1
        }
    }
}
