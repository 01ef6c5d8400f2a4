import Foundation
import Synchronization
import WearablesKit

// The seed's camera-streaming walkthrough and its log, apart from the test: this file imports nothing but
// WearablesKit (and Foundation, Synchronization), so PublicSurfaceTests type-checks it as an outside app would, against
// the public products alone.


/// What the walkthrough saw, for the test to check.
final class WalkthroughLog: Sendable {
    private struct Seen {
        var sessionStarted = false
        var permission: PermissionStatus?
        var streamStates: [StreamState] = []
        var frames = 0
        var lastImageSize: (Int, Int)?
        var errors: [String] = []
        var photos: [PhotoData] = []
        var photoAccepted = false
    }

    private let seen = Mutex(Seen())

    var frames: Int { seen.withLock { $0.frames } }
    var photos: [PhotoData] { seen.withLock { $0.photos } }
    var streamStates: [StreamState] { seen.withLock { $0.streamStates } }
    var errors: [String] { seen.withLock { $0.errors } }
    var permission: PermissionStatus? { seen.withLock { $0.permission } }
    var photoAccepted: Bool { seen.withLock { $0.photoAccepted } }
    var lastImageWidth: Int? { seen.withLock { $0.lastImageSize?.0 } }

    func sessionStarted() { seen.withLock { $0.sessionStarted = true } }
    func permission(_ status: PermissionStatus) { seen.withLock { $0.permission = status } }
    func state(_ state: StreamState) { seen.withLock { $0.streamStates.append(state) } }
    func frame(width: Int, height: Int) { seen.withLock { $0.frames += 1; $0.lastImageSize = (width, height) } }
    func error(_ message: String) { seen.withLock { $0.errors.append(message) } }
    func photo(_ photo: PhotoData) { seen.withLock { $0.photos.append(photo) } }
    func photoAccepted(_ accepted: Bool) { seen.withLock { $0.photoAccepted = accepted } }
}

/// The seed's camera-streaming walkthrough written for Linux: the same calls in the same order
/// (docs/DAT-ON-LINUX.md shows this code as the quick-start). `appRuns` stands for the app's life while streaming.
func cameraStreamingWalkthrough(
    wearables: any WearablesInterface, log: WalkthroughLog, appRuns: () async -> Void
) async throws {
    // Creating a DeviceSession
    let deviceSelector = AutoDeviceSelector(wearables: wearables)
    // Or for a specific device: SpecificDeviceSelector(device: deviceId)
    // Linux: glasses appear once an attached link says hello; wait for an eligible pair
    for await device in deviceSelector.activeDeviceStream() where device != nil { break }
    let deviceSession = try wearables.createSession(deviceSelector: deviceSelector)
    try deviceSession.start()

    // Wait for the device session to reach the started state
    for await state in deviceSession.stateStream() {
        if state == .started { break }
    }
    log.sessionStarted()

    // Check camera permission: a silent query, then a request the wearer answers on the glasses
    if try await wearables.checkPermissionStatus(.camera) != .granted {
        guard try await wearables.requestPermission(.camera) == .granted else { return }
    }
    log.permission(.granted)

    // Attach the camera (DAT 1.0: the configuration does not throw; addCamera refuses an unsupported rate)
    let config = StreamConfiguration(
        videoCodec: .raw,
        resolution: .medium,  // 504x896
        frameRate: 24
    )
    guard let camera = try deviceSession.addCamera(config: config) else {
        // DeviceSession must be in the started state before adding a camera
        return
    }
    let stream = camera.stream

    // Observing stream state
    let stateToken = stream.statePublisher.listen { state in
        switch state {
        case .streaming: log.state(state)  // frames are flowing
        case .waitingForDevice: log.state(state)  // waiting for the glasses to connect
        case .stopped: log.state(state)  // stream ended: release resources
        case .paused: log.state(state)  // temporarily suspended: keep the last frame, wait
        default: log.state(state)
        }
    }

    // Receiving video frames (rawImage is the Linux makeUIImage(): an NV12 image with strides)
    let frameToken = stream.videoFramePublisher.listen { frame in
        guard let image = frame.rawImage else { return }
        log.frame(width: image.width, height: image.height)
    }

    // Observing stream errors
    let errorToken = stream.errorPublisher.listen { error in
        log.error(error.localizedDescription)
    }

    // Keeping tokens alive together
    let streamTokens = ListenerTokenBag()
    stream.statePublisher.listen { _ in }.store(in: streamTokens)
    stream.videoFramePublisher.listen { _ in }.store(in: streamTokens)

    // Starting the stream
    stream.start()

    // In-stream photo capture (while streaming)
    let photoToken = stream.photoDataPublisher.listen { photoData in
        log.photo(photoData)
    }
    for await state in stream.stateStream() where state == .streaming { break }
    log.photoAccepted(stream.capturePhoto(format: .jpeg))

    await appRuns()

    // On teardown: tokens, then the camera (cascades to its stream), then the session
    streamTokens.clear()
    camera.stop()
    deviceSession.stop()
    withExtendedLifetime((stateToken, frameToken, errorToken, photoToken)) {}
}
