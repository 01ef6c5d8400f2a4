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

/// Where a run's frames come from: glasses reached through links, or a file.
public struct BridgeSource: Sendable {
    enum Kind: Sendable {
        case glasses(connect: @Sendable () throws -> any DeviceLink, deviceDials: Bool, connectBlocks: Bool)
        case file(path: String)
    }

    let kind: Kind
    /// Ground truth over the trailing `seconds` of device time, for simulated glasses.
    let truth: (@Sendable (_ trailingSeconds: Double) -> VitalsSnapshot?)?
    /// What the source is, for messages.
    public let description: String

    /// Whether frames come from a file.
    var isFile: Bool {
        if case .file = kind { return true }
        return false
    }

    /// Glasses reached by opening links with `connect` (called again to reconnect after a loss).
    /// - Parameters:
    ///   - truth: ground truth over the trailing seconds of device time, when known (simulators).
    ///   - connectBlocks: `connect` may take a while (a socket dial that waits for its listener): it then runs on a
    ///     thread of its own, so that the run's timers, and a stop (Ctrl-C), are not held up by it.
    public static func glasses(
        _ description: String,
        truth: (@Sendable (_ trailingSeconds: Double) -> VitalsSnapshot?)? = nil,
        connectBlocks: Bool = false,
        connect: @escaping @Sendable () throws -> any DeviceLink
    ) -> BridgeSource {
        BridgeSource(kind: .glasses(connect: connect, deviceDials: false, connectBlocks: connectBlocks), truth: truth,
                     description: description)
    }

    /// Glasses that dial this host (a relay on a phone, `--listen`): `waitForDevice` blocks until one has paired,
    /// and is called again after a loss. There is no backoff before waiting again: the relay decides when it
    /// dials, and it keeps DAT's own spacing between sessions (new sessions after a loss still back off).
    /// - Parameter truth: ground truth over the trailing seconds of device time, when known (simulators).
    public static func dialledGlasses(
        _ description: String,
        truth: (@Sendable (_ trailingSeconds: Double) -> VitalsSnapshot?)? = nil,
        waitForDevice: @escaping @Sendable () throws -> any DeviceLink
    ) -> BridgeSource {
        BridgeSource(kind: .glasses(connect: waitForDevice, deviceDials: true, connectBlocks: true), truth: truth,
                     description: description)
    }

    /// A recording (`.y4m`, `.mp4`, `.mkv`, Annex B HEVC) played as if glasses sent it.
    public static func file(_ path: String) -> BridgeSource {
        BridgeSource(kind: .file(path: path), truth: nil, description: "file:\(path)")
    }
}
