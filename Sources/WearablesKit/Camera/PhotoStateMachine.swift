import Foundation

/// The pure lifecycle of a standalone ``Photo`` capability: one mutating method per event, each returning the
/// actions to perform.
///
/// No I/O, no locks, no clock: the owner (``Photo``) performs the actions outside its lock and runs the capture
/// timer. DAT 1.0's documented rules (`shared/reference/dat-1.0-extras.md` §3): the capability is created
/// `.stopped`; `start()` asks the glasses (`.starting`, then `.started`); `stop()` while `.starting` is recorded and
/// honoured as soon as the start resolves; a stopped capability can start again; `capturePhoto` needs `.started`
/// (else `notReady`) and one capture at a time (else `busy`). The camera's stop (or its session's) closes it for
/// good. A photo arrives as chunks in order (``PhotoChunk``); one that breaks the transfer's rules fails the capture,
/// and no chunk's numbers are trusted before they are checked.
struct PhotoStateMachine: Sendable {
    /// A failure to report, before the owner turns it into a ``PhotoError`` (which is not `Hashable`).
    enum Failure: Hashable, Sendable {
        case notReady, busy, serviceUnavailable, permissionDenied, deviceHealthCritical, deviceDisconnected
        case captureFailure(String)
        case sessionSetupFailed(String)
    }

    /// What the owner must do.
    enum Action: Hashable, Sendable {
        case send(HostMessage)
        case state(PhotoState)
        case error(Failure)
        case progress(PhotoTransferProgress)
        /// A whole photo arrived.
        case photo(imageData: Data, metadata: Data?)
        /// Arm the capture timer for this request (``Photo/captureTimeout``); it reports back with `timedOut`.
        case armTimer(requestID: UInt32)
        case cancelTimer
        /// Closed for good: finish every publisher.
        case finish
    }

    /// The largest photo accepted, in bytes (checked against the size the glasses announce, before any byte is
    /// kept). A full-resolution JPEG or HEIC at high quality is a few megabytes.
    static let maximumPhotoBytes: UInt64 = 64 << 20
    /// The largest metadata accepted, in bytes.
    static let maximumMetadataBytes = 64 << 10

    private struct Capture: Sendable {
        var requestID: UInt32
        var totalBytes: UInt64?
        var data = Data()
        var metadata: Data?
    }

    private(set) var state: PhotoState = .stopped
    /// Whether the session is started and the link up.
    private(set) var deviceReady = false
    /// Whether the glasses offer standalone photos (their hello).
    let deviceOffersPhoto: Bool
    /// Closed with its camera: never starts again.
    private(set) var closed = false
    /// `stop()` came while `.starting`: honoured when the start resolves.
    private(set) var stopPending = false
    private var capture: Capture?
    private var lastRequestID: UInt32 = 0

    init(deviceOffersPhoto: Bool) {
        self.deviceOffersPhoto = deviceOffersPhoto
    }

    /// Whether a capture is waiting for its photo.
    var capturing: Bool { capture != nil }

    // MARK: Calls from the app

    /// `start()`: from `.stopped` to `.starting`, asking the glasses; ignored in any other state. Glasses that do not
    /// offer standalone photos give `serviceUnavailable`, glasses out of reach `sessionSetupFailed`; it stays stopped.
    mutating func start() -> [Action] {
        guard !closed, state == .stopped else { return [] }
        guard deviceOffersPhoto else { return [.error(.serviceUnavailable)] }
        guard deviceReady else { return [.error(.sessionSetupFailed("the glasses are not connected or the session is not started"))] }
        stopPending = false
        return [transition(.starting), .send(.startPhoto)]
    }

    /// `stop()`: `.started` to `.stopping`, asking the glasses (a capture in progress fails); while `.starting`, the
    /// stop is recorded and honoured once the start resolves.
    mutating func stop() -> [Action] {
        guard !closed else { return [] }
        switch state {
        case .starting:
            stopPending = true
            return []
        case .started:
            return endCapture(.captureFailure("the photo capability was stopped")) + [transition(.stopping), .send(.stopPhoto)]
        case .stopped, .stopping:
            return []
        }
    }

    /// `capturePhoto(resolution:quality:)`: needs `.started` and no capture in progress.
    mutating func capture(resolution: PhotoResolution, quality: PhotoQuality) -> [Action] {
        guard !closed, state == .started else { return [.error(.notReady)] }
        guard capture == nil else { return [.error(.busy)] }
        lastRequestID = lastRequestID == .max ? 1 : lastRequestID + 1
        capture = Capture(requestID: lastRequestID)
        return [.send(.standalonePhoto(resolution, quality, requestID: lastRequestID)), .armTimer(requestID: lastRequestID)]
    }

    // MARK: Events from the session and the glasses

    /// The session is started and the link up (true), or not.
    mutating func deviceReadinessChanged(_ ready: Bool) -> [Action] {
        deviceReady = ready
        return []
    }

    /// The glasses reported the capability's state or a capture's failure.
    mutating func deviceReported(_ event: DevicePhotoEvent) -> [Action] {
        guard !closed else { return [] }
        switch (event, state) {
        case (.started, .starting):
            guard stopPending else { return [transition(.started)] }
            stopPending = false
            return [transition(.started), transition(.stopping), .send(.stopPhoto)]
        case (.stopped, .stopping):
            return [transition(.stopped)]
        case (.stopped, .started), (.stopped, .starting):
            // The glasses stopped it on their own.
            stopPending = false
            return endCapture(.captureFailure("the glasses stopped the photo capability")) + [transition(.stopping), transition(.stopped)]
        case (.unavailable(let failure, let message), .starting):
            stopPending = false
            return [.error(Self.startFailure(failure, message)), transition(.stopping), transition(.stopped)]
        case (.unavailable, .stopping):
            return [transition(.stopped)]
        case (.captureFailed(let id, let failure, let message), _):
            guard let capture, capture.requestID == id else { return [] }
            return endCapture(Self.captureFailure(failure, message))
        default:
            return []
        }
    }

    /// A piece of a photo. Chunks of no capture in progress (a late one after a failure) are dropped; one that
    /// breaks the rules (a size over ``maximumPhotoBytes`` or changing mid-way, bytes out of order or past the
    /// size, metadata after the first chunk or over ``maximumMetadataBytes``) fails the capture.
    mutating func chunkArrived(_ chunk: PhotoChunk) -> [Action] {
        guard !closed, var current = capture, current.requestID == chunk.requestID else { return [] }
        func broken(_ why: String) -> [Action] {
            endCapture(.captureFailure("the glasses sent a malformed photo transfer: \(why)"))
        }
        guard chunk.totalBytes <= Self.maximumPhotoBytes else {
            return broken("a photo of \(chunk.totalBytes) bytes, over the \(Self.maximumPhotoBytes) accepted")
        }
        if let total = current.totalBytes, total != chunk.totalBytes {
            return broken("the size changed from \(total) to \(chunk.totalBytes) bytes")
        }
        let received = UInt64(current.data.count)
        guard chunk.offset == received else { return broken("bytes at \(chunk.offset) where \(received) were expected") }
        guard UInt64(chunk.bytes.count) <= chunk.totalBytes - received else {
            return broken("\(chunk.bytes.count) bytes at \(received) pass the \(chunk.totalBytes)-byte size")
        }
        if let metadata = chunk.metadata {
            guard received == 0 else { return broken("metadata after the first chunk") }
            guard metadata.count <= Self.maximumMetadataBytes else {
                return broken("\(metadata.count) bytes of metadata, over the \(Self.maximumMetadataBytes) accepted")
            }
            current.metadata = metadata
        }
        current.totalBytes = chunk.totalBytes
        current.data.append(chunk.bytes)
        let now = UInt64(current.data.count)
        var actions: [Action] = [.progress(PhotoTransferProgress(bytesReceived: now, totalBytes: chunk.totalBytes))]
        if now == chunk.totalBytes {
            capture = nil
            actions += [.cancelTimer, .photo(imageData: current.data, metadata: current.metadata)]
        } else {
            capture = current
        }
        return actions
    }

    /// The capture timer of `requestID` ran out.
    mutating func timedOut(requestID: UInt32) -> [Action] {
        guard !closed, let capture, capture.requestID == requestID else { return [] }
        self.capture = nil
        return [.error(.captureFailure("no photo within the capture timeout"))]
    }

    /// The link dropped: an active capability reports ``PhotoError/deviceDisconnected`` and stops (it may start again
    /// once the glasses are back).
    mutating func linkLost() -> [Action] {
        deviceReady = false
        guard !closed else { return [] }
        stopPending = false
        let failed: [Action] = capture == nil ? [] : [.cancelTimer]
        capture = nil
        switch state {
        case .starting, .started:
            return failed + [.error(.deviceDisconnected), transition(.stopping), transition(.stopped)]
        case .stopping:
            return failed + [transition(.stopped)]
        case .stopped:
            return failed
        }
    }

    /// The camera stopped (by the app or with its session): terminal. An active capability asks the glasses to
    /// stop when `tellGlasses` (they are reachable), a capture in progress fails, and every publisher finishes.
    mutating func close(tellGlasses: Bool) -> [Action] {
        guard !closed else { return [] }
        var actions = endCapture(.captureFailure("the camera stopped"))
        closed = true
        stopPending = false
        switch state {
        case .starting, .started:
            if tellGlasses { actions.append(.send(.stopPhoto)) }
            actions += [transition(.stopping), transition(.stopped)]
        case .stopping:
            actions.append(transition(.stopped))
        case .stopped:
            break
        }
        return actions + [.finish]
    }

    // MARK: Helpers

    /// Ends the capture in progress, if any, with `failure` (its timer cancelled).
    private mutating func endCapture(_ failure: Failure) -> [Action] {
        guard capture != nil else { return [] }
        capture = nil
        return [.cancelTimer, .error(failure)]
    }

    private static func startFailure(_ failure: DevicePhotoFailure, _ message: String) -> Failure {
        switch failure {
        case .serviceUnavailable: .serviceUnavailable
        case .permissionDenied: .permissionDenied
        case .deviceHealthCritical: .deviceHealthCritical
        case .busy, .captureFailure, .sessionSetupFailed: .sessionSetupFailed(message)
        }
    }

    private static func captureFailure(_ failure: DevicePhotoFailure, _ message: String) -> Failure {
        switch failure {
        case .busy: .busy
        case .serviceUnavailable: .serviceUnavailable
        case .permissionDenied: .permissionDenied
        case .deviceHealthCritical: .deviceHealthCritical
        case .captureFailure, .sessionSetupFailed: .captureFailure(message)
        }
    }

    private mutating func transition(_ next: PhotoState) -> Action {
        state = next
        return .state(next)
    }
}
