import Foundation
import WearablesKit

/// How time passes in a run.
public enum BridgeClock: Sendable {
    /// Wall-clock time: the scheduler runs actions when they fall due.
    case realTime(any EventScheduler)
    /// Virtual time: the pipeline advances the scheduler itself, as fast as the worker keeps up (tests,
    /// `--no-realtime`). Nothing is dropped for lateness, because time waits for the worker.
    case virtual(ManualScheduler)

    /// The scheduler every part of the run shares.
    public var scheduler: any EventScheduler {
        switch self {
        case .realTime(let scheduler): scheduler
        case .virtual(let scheduler): scheduler
        }
    }
}

/// The stretch of a run a ground-truth snapshot covers (``BridgeSource`` truth, for simulated glasses).
public enum TruthSpan: Sendable, Hashable {
    /// Rates over the trailing `rates` seconds and RMSSD over the trailing `hrv` seconds of device time: what the
    /// live values are compared with (the `stats` lines' `truth`: 10 and 30 s).
    case trailing(rates: Double, hrv: Double)
    /// The whole run, as the summary's values are: pulse and breathing the median of their 10 s means (the run's
    /// values are medians of windows), RMSSD over every interval of the run.
    case wholeRun
}

/// Where a run's frames come from: glasses reached through links, or a file.
public struct BridgeSource: Sendable {
    package enum Kind: Sendable {
        case glasses(connect: @Sendable () throws -> any DeviceLink, deviceDials: Bool, connectBlocks: Bool)
        case file(path: String)
        case network(NetworkStreamAddress, connectTimeout: Duration)
    }

    package let kind: Kind
    /// Ground truth over a span of the run, for simulated glasses.
    package let truth: (@Sendable (TruthSpan) -> VitalsSnapshot?)?
    /// What the source is, for messages.
    public let description: String

    /// A source of `kind` (`check` wraps a source's connect to watch its links).
    package init(kind: Kind, truth: (@Sendable (TruthSpan) -> VitalsSnapshot?)?, description: String) {
        self.kind = kind
        self.truth = truth
        self.description = description
    }

    /// Whether frames come from a file.
    package var isFile: Bool {
        if case .file = kind { return true }
        return false
    }

    /// Whether frames come from glasses over a link (real or simulated), which get credit for the hand-off's room.
    package var isGlasses: Bool {
        if case .glasses = kind { return true }
        return false
    }

    /// Glasses reached by opening links with `connect` (called again to reconnect after a loss).
    /// - Parameters:
    ///   - truth: ground truth over a span of the run, when known (simulators).
    ///   - connectBlocks: `connect` may take a while (a socket dial that waits for its listener): it then runs on a
    ///     thread of its own, so that the run's timers, and a stop (Ctrl-C), are not held up by it.
    public static func glasses(
        _ description: String,
        truth: (@Sendable (TruthSpan) -> VitalsSnapshot?)? = nil,
        connectBlocks: Bool = false,
        connect: @escaping @Sendable () throws -> any DeviceLink
    ) -> BridgeSource {
        BridgeSource(kind: .glasses(connect: connect, deviceDials: false, connectBlocks: connectBlocks), truth: truth,
                     description: description)
    }

    /// Glasses that dial this host (a relay on a phone, `--listen`): `waitForDevice` blocks until one has paired,
    /// and is called again after a loss. There is no backoff before waiting again: the relay decides when it
    /// dials, and it keeps DAT's own spacing between sessions (new sessions after a loss still back off).
    /// - Parameter truth: ground truth over a span of the run, when known (simulators).
    public static func dialledGlasses(
        _ description: String,
        truth: (@Sendable (TruthSpan) -> VitalsSnapshot?)? = nil,
        waitForDevice: @escaping @Sendable () throws -> any DeviceLink
    ) -> BridgeSource {
        BridgeSource(kind: .glasses(connect: waitForDevice, deviceDials: true, connectBlocks: true), truth: truth,
                     description: description)
    }

    /// A network stream a phone app publishes (RTMP, SRT, UDP MPEG-TS), under the same lifecycle policy as glasses.
    /// - Parameter connectTimeout: how long each wait for a publisher (or, dialling, for the publisher to answer)
    ///   may take; the first wait that ends without one ends the run (exit 69).
    public static func stream(_ address: NetworkStreamAddress, connectTimeout: Duration) -> BridgeSource {
        BridgeSource(kind: .network(address, connectTimeout: connectTimeout), truth: nil, description: address.description)
    }

    /// Whether frames come from a network stream.
    package var isNetworkStream: Bool {
        if case .network = kind { return true }
        return false
    }

    /// A recording (`.y4m`, `.mp4`, `.mkv`, Annex B HEVC) played as if glasses sent it.
    public static func file(_ path: String) -> BridgeSource {
        BridgeSource(kind: .file(path: path), truth: nil, description: "file:\(path)")
    }
}
