import Foundation

// DAT 1.0's standalone photo (`Camera.photo`, experimental): the types, with DAT's names and semantics
// (`shared/reference/dat-1.0-extras.md` §3; docs/DAT-ON-LINUX.md).

/// The lifecycle of a ``Photo`` capability: DAT 1.0's `PhotoState`.
public enum PhotoState: Sendable, Hashable, CustomStringConvertible {
    case stopped, starting, started, stopping

    public var description: String {
        switch self {
        case .stopped: "stopped"
        case .starting: "starting"
        case .started: "started"
        case .stopping: "stopping"
        }
    }
}

/// How large a standalone photo is: DAT 1.0's `PhotoResolution`.
public enum PhotoResolution: String, CaseIterable, Sendable {
    /// 480p.
    case small
    /// 720p.
    case medium
    /// 1080p.
    case large
    /// The sensor's native resolution (4032×3024).
    case full

    /// The picture's size in pixels, width × height. DAT names the classes (480p … 1080p, and 4032×3024 for the
    /// sensor) but not the orientation; the glasses' camera streams portrait (504×896), so these are portrait too
    /// (WearablesKit's choice, which the simulator renders).
    public var pixelSize: (width: Int, height: Int) {
        switch self {
        case .small: (480, 640)
        case .medium: (720, 1280)
        case .large: (1080, 1920)
        case .full: (3024, 4032)
        }
    }
}

/// How strongly a standalone photo is compressed: DAT 1.0's `PhotoQuality`.
public enum PhotoQuality: String, CaseIterable, Sendable {
    case low, medium, high
}

/// A photo the glasses delivered: DAT 1.0's `PhotoCaptureData`.
public struct PhotoCaptureData: Sendable {
    /// The image bytes (JPEG from the simulated glasses; DAT says "e.g. JPEG or HEIC" and has no format parameter).
    public let imageData: Data
    /// What the glasses said about the capture (camera settings, orientation), if anything; its format is the
    /// glasses' own (DAT does not document it; the simulated glasses send a small JSON object).
    public let metadata: Data?
    /// When the photo was received (the host's clock, as DAT's "the time the photo was received").
    public let timestamp: Date

    /// Creates capture data.
    public init(imageData: Data, metadata: Data?, timestamp: Date) {
        self.imageData = imageData
        self.metadata = metadata
        self.timestamp = timestamp
    }
}

/// How much of a photo has arrived: DAT 1.0's `PhotoTransferProgress`.
public struct PhotoTransferProgress: Sendable, Hashable {
    /// Bytes received so far.
    public let bytesReceived: UInt64
    /// The photo's size, as the glasses announced it.
    public let totalBytes: UInt64

    /// Creates progress.
    public init(bytesReceived: UInt64, totalBytes: UInt64) {
        self.bytesReceived = bytesReceived
        self.totalBytes = totalBytes
    }

    /// `bytesReceived / totalBytes`, from 0 to 1 (1 for an empty photo).
    public var fraction: Double {
        totalBytes == 0 ? 1 : Double(bytesReceived) / Double(totalBytes)
    }
}

/// What the glasses said went wrong, as an error for ``PhotoError``'s `underlying` values.
public struct PhotoFailureDetail: Error, Sendable, Hashable, CustomStringConvertible {
    /// The glasses' (or WearablesKit's) message.
    public let message: String

    /// Creates a detail.
    public init(_ message: String) { self.message = message }

    public var description: String { message }
}

/// What can go wrong with a standalone photo: DAT 1.0's `PhotoError`.
public enum PhotoError: DatError, CustomStringConvertible {
    /// ``Photo/capturePhoto(resolution:quality:)`` was called while the capability was not `.started`.
    case notReady
    /// The capture failed (the camera is streaming video, the transfer broke off or timed out, the glasses refused).
    /// `underlying` is a ``PhotoFailureDetail`` with the reason.
    case captureFailure(underlying: (any Error)?)
    /// The capability could not start (the glasses are not reachable, or refused). `underlying` says why.
    case sessionSetupFailed(underlying: (any Error)?)
    /// A capture is already in progress.
    case busy
    /// The glasses do not offer standalone photos (an older peer, or glasses that said so).
    case serviceUnavailable
    /// The camera permission is denied on the glasses.
    case permissionDenied
    /// The glasses are too hot, or their power or battery too low.
    case deviceHealthCritical
    /// The link to the glasses dropped while the capability was active. (DAT declares it and says it is "not emitted
    /// yet" on iOS, where the loss surfaces as `captureFailure` after a watchdog; WearablesKit reports it at once.)
    case deviceDisconnected

    /// A message a person can act on.
    public var description: String {
        func reason(_ error: (any Error)?) -> String { error.map { ": \($0)" } ?? "" }
        return switch self {
        case .notReady: "The photo capability is not started: call start() and wait for .started before capturePhoto."
        case .captureFailure(let underlying): "The photo could not be captured\(reason(underlying))."
        case .sessionSetupFailed(let underlying): "The photo capability could not start\(reason(underlying))."
        case .busy: "A photo is already being captured; wait for it before asking for another."
        case .serviceUnavailable: "These glasses do not offer standalone photos."
        case .permissionDenied: "Camera permission is denied on the glasses: grant it with requestPermission(.camera)."
        case .deviceHealthCritical: "The glasses are too hot or their battery too low to take a photo."
        case .deviceDisconnected: "The glasses disconnected while the photo capability was active."
        }
    }

    /// Same as ``description``.
    public var errorDescription: String? { description }
}
