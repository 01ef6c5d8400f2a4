import Foundation

/// DAT's common error protocol: every WearablesKit error a DAT app reads is a `DatError`.
///
/// As in DAT 1.0, a `DatError` is a `LocalizedError`, so `error.localizedDescription` is the error's own message
/// (never Foundation's generic "The operation couldn't be completed" text).
public protocol DatError: LocalizedError, Sendable {}

/// Why ``Wearables/configure(_:)`` failed: DAT's `WearablesError`, with DAT's cases and numbers.
///
/// The cases about the app bundle (`missingInfoDictionary` … `missingBuildNumber`) exist so that DAT code compiles
/// unchanged, but are never raised on Linux: there is no `Info.plist` or bundle to read; the settings come from
/// ``WearablesConfiguration``.
public enum WearablesError: Int, DatError, Hashable, CustomStringConvertible {
    /// Something inside WearablesKit went wrong.
    case internalError = 0
    /// `configure` was already called (or ``Wearables/shared`` was already used) in this process.
    case alreadyConfigured = 1
    /// The configuration is invalid (see ``WearablesConfigurationError`` for the detail).
    case configurationError = 2
    /// The app's `Info.plist` is missing (never raised on Linux: there is no `Info.plist`).
    case missingInfoDictionary = 3
    /// The app's bundle identifier is missing (never raised on Linux: there is no bundle).
    case missingBundleIdentifier = 4
    /// The app's name is missing (never raised on Linux: there is no bundle).
    case missingAppName = 5
    /// The app's version is missing (never raised on Linux: there is no bundle).
    case missingAppVersion = 6
    /// The app's build number is missing (never raised on Linux: there is no bundle).
    case missingBuildNumber = 7

    /// A message a person can act on.
    public var description: String {
        switch self {
        case .internalError: "Internal error in WearablesKit."
        case .alreadyConfigured:
            "Wearables is already configured in this process: call Wearables.configure once, before first using Wearables.shared, or use Wearables.makeInstance for independent instances."
        case .configurationError: "The Wearables configuration is invalid."
        case .missingInfoDictionary: "The app's Info.plist is missing (never the case on Linux)."
        case .missingBundleIdentifier: "The app's bundle identifier is missing (never the case on Linux)."
        case .missingAppName: "The app's name is missing from its bundle (never the case on Linux)."
        case .missingAppVersion: "The app's version is missing from its bundle (never the case on Linux)."
        case .missingBuildNumber: "The app's build number is missing from its bundle (never the case on Linux)."
        }
    }

    /// Same as ``description``.
    public var errorDescription: String? { description }
}

/// A ``WearablesConfiguration`` value is out of range.
public struct WearablesConfigurationError: Error, Sendable, Hashable, CustomStringConvertible, LocalizedError {
    /// The offending setting.
    public let setting: String
    /// A message a person can act on.
    public let message: String

    /// Creates a configuration error.
    public init(setting: String, message: String) {
        self.setting = setting
        self.message = message
    }

    /// `setting: message`.
    public var description: String { "\(setting): \(message)" }
    /// Same as ``description``.
    public var errorDescription: String? { description }
}

/// Why a permission query or request failed: DAT's `PermissionError`.
public enum PermissionError: Int, DatError, Hashable, CustomStringConvertible {
    /// No glasses are known (none was ever attached).
    case noDevice
    /// Glasses are known but none is connected.
    case noDeviceWithConnection
    /// The link dropped before the glasses answered.
    case connectionError
    /// Never raised on Linux: there is no Meta AI app; the glasses answer over the link.
    case metaAINotInstalled
    /// A request for the same permission is already waiting for the user.
    case requestInProgress
    /// The glasses did not answer in time.
    case requestTimeout
    /// Something inside WearablesKit went wrong.
    case internalError

    /// A message a person can act on.
    public var description: String {
        switch self {
        case .noDevice: "No glasses are known yet: attach a link to the glasses (or the simulator) first."
        case .noDeviceWithConnection: "No glasses are connected: check that the glasses are on, unfolded and in range."
        case .connectionError: "The connection to the glasses dropped before they answered the permission query; try again."
        case .metaAINotInstalled: "The Meta AI app is not installed (never the case on Linux)."
        case .requestInProgress: "A permission request is already waiting for an answer on the glasses."
        case .requestTimeout: "The glasses did not answer the permission request in time; ask again."
        case .internalError: "Internal error while asking for a permission."
        }
    }

    /// Same as ``description``.
    public var errorDescription: String? { description }
}

/// Errors of a ``DeviceSession``: DAT 1.0's `DeviceSessionError`.
public enum DeviceSessionError: DatError, Hashable, CustomStringConvertible {
    /// The selector has no eligible (known, connected, compatible) device.
    case noEligibleDevice
    /// The session is stopping or stopped; create a new one.
    case sessionAlreadyStopped
    /// Another session on this device has not stopped yet.
    case sessionAlreadyExists
    /// The session has not been started (kept for DAT parity; `addCamera` returns nil instead of throwing this).
    case sessionIdle
    /// The capability (the camera, or motion) is already attached to this session.
    case capabilityAlreadyActive
    /// The capability is not attached to this session (kept for DAT parity; not raised on Linux).
    case capabilityNotFound
    /// Something unexpected ended or disturbed the session (for example "Session ended by device").
    case unexpectedError(description: String)
    /// The glasses reached a critical temperature.
    case thermalCritical
    /// The glasses reached an emergency temperature.
    case thermalEmergency
    /// The glasses shut down for peak power (not raised on Linux; faults arrive as stream errors).
    case peakPowerShutdown
    /// The battery is critically low (not raised on Linux; see ``StreamError/batteryLow``).
    case batteryCritical
    /// The glasses' DAT app needs an update (not raised on Linux).
    case datAppOnTheGlassesUpdateRequired
    /// The glasses' DAT app is unavailable (not raised on Linux).
    case dwaUnavailable
    /// The glasses need a newer SDK: the device speaks a newer link protocol.
    case insufficientSDKVersion
    /// Warning: the glasses' DAT app version is outside the supported range (not raised on Linux).
    case dwaOutOfStuRange

    /// A message a person can act on.
    public var description: String {
        switch self {
        case .noEligibleDevice:
            "No eligible glasses: attach a link to connected, compatible glasses (or the simulator) before starting a session."
        case .sessionAlreadyStopped: "This session has stopped; create a new session to start again."
        case .sessionAlreadyExists: "Another session is still active on these glasses; stop it and wait for .stopped first."
        case .sessionIdle: "The session has not been started; call start() first."
        case .capabilityAlreadyActive: "This capability is already attached to this session (a camera, or motion); stop or remove it before adding another."
        case .capabilityNotFound: "The capability is not attached to this session."
        case .unexpectedError(let description):
            "Unexpected session error: \(description)" + (description.hasSuffix(".") ? "" : ".")
        case .thermalCritical: "The glasses are critically hot; let them cool down before streaming again."
        case .thermalEmergency: "The glasses are dangerously hot and are shutting features down; take them off and let them cool."
        case .peakPowerShutdown: "The glasses hit their peak power limit and shut down the session."
        case .batteryCritical: "The glasses' battery is critically low; charge them."
        case .datAppOnTheGlassesUpdateRequired: "The app on the glasses needs an update."
        case .dwaUnavailable: "The app on the glasses is unavailable."
        case .insufficientSDKVersion: "The glasses need a newer version of this software: update WearablesKit."
        case .dwaOutOfStuRange: "The glasses' app version is outside the supported range."
        }
    }

    /// Same as ``description``.
    public var errorDescription: String? { description }
}

extension DeviceSessionError {
    /// What ``DeviceSession/addCamera(config:)`` throws for a configuration the glasses cannot stream: an
    /// ``unexpectedError(description:)`` whose description is the ``StreamConfigurationError``'s message.
    ///
    /// DAT 1.0 has no dedicated case (and a Linux-only case would break the `switch` statements DAT code writes),
    /// so the refusal travels in the case DAT keeps for messages; compare with this value to recognise it:
    /// `error == .unsupportedStreamConfiguration(StreamConfigurationError(frameRate: 25))`.
    public static func unsupportedStreamConfiguration(_ error: StreamConfigurationError) -> DeviceSessionError {
        .unexpectedError(description: error.message)
    }
}

/// Errors of a camera ``Stream``: DAT 1.0's `StreamError`.
public enum StreamError: DatError, Hashable, CustomStringConvertible {
    /// The glasses reported an unspecified error.
    case internalError
    /// The stream's device is not known.
    case deviceNotFound(DeviceIdentifier)
    /// The glasses disconnected, or did not connect within the waiting timeout.
    case deviceNotConnected(DeviceIdentifier)
    /// The glasses did not start streaming in time.
    case timeout
    /// Video could not be delivered (including malformed samples from the link).
    case videoStreamingError
    /// Audio could not be delivered: the glasses cannot give the audio the configuration asked for, or sent audio
    /// that is malformed or not what was asked (reported once per stream; the video goes on).
    case audioStreamingError
    /// The camera permission is denied on the glasses.
    case permissionDenied
    /// The glasses were folded or taken off.
    case hingesClosed
    /// The glasses are too hot to stream.
    case thermalHot
    /// The glasses' battery is too low to stream.
    case batteryLow
    /// The glasses hit their peak power limit.
    case peakPowerLimit
    /// A photo could not be captured.
    case photoCaptureFailed

    /// A message a person can act on.
    public var description: String {
        switch self {
        case .internalError: "The glasses reported an internal error; stop the camera and start it again."
        case .deviceNotFound(let id): "Glasses \"\(id)\" are not known: attach a link to them first."
        case .deviceNotConnected(let id):
            "Glasses \"\(id)\" are not connected: check that they are on, unfolded and in range (the stream resumes if they come back in time)."
        case .timeout: "The glasses did not start streaming in time; stop the camera and try again."
        case .videoStreamingError: "Video from the glasses could not be delivered (bad or missing samples)."
        case .audioStreamingError: "Audio from the glasses could not be delivered (check the configuration's audio codec: rate and channel count)."
        case .permissionDenied: "Camera permission is denied on the glasses: grant it with requestPermission(.camera) and start again."
        case .hingesClosed: "The glasses were folded or taken off: unfold them and put them on to stream."
        case .thermalHot: "The glasses are too hot to stream: let them cool down, then start again."
        case .batteryLow: "The glasses' battery is too low to stream: charge them."
        case .peakPowerLimit: "The glasses hit their peak power limit: lower the resolution or frame rate."
        case .photoCaptureFailed: "The photo could not be captured; try again while the stream is streaming."
        }
    }

    /// Same as ``description``.
    public var errorDescription: String? { description }
}
