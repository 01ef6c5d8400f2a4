import Foundation
import GlassesVideo
import Synchronization
import Testing
import WearablesKit
@testable import GlassesSimulator

/// DAT 1.0's standalone photo (`Camera.photo`) through WearablesKit, answered by the in-process simulated glasses, in
/// virtual time: the walkthrough of Meta's camera-capture skill, the camera's contention rules, and what a transfer
/// does to the IMU.
@Suite("Standalone photo: WearablesKit and the simulated glasses", .serialized)
struct StandalonePhotoTests {
    /// A started session with a camera attached (its stream not started), and the photo capability's publishers
    /// recorded.
    final class Rig: Sendable {
        let scheduler = ManualScheduler()
        let host: WearablesHost
        let glasses: SimulatedGlasses
        let session: DeviceSession
        let camera: Camera
        let states = Collected<PhotoState>()
        let photos = Collected<PhotoCaptureData>()
        let errors = Collected<String>()
        let progress = Collected<PhotoTransferProgress>()
        let tokens: Mutex<[any AnyListenerToken]>

        init(options: SimulatedGlasses.Options = .init(), profile: SubjectProfile = SubjectProfile(seed: 31)) throws {
            host = try WearablesHost(scheduler: scheduler)
            let kit = SimulatorKit(scheduler: scheduler, liveness: .disabled)
            glasses = try kit.pairGlasses(with: host.wearables, profile: profile, options: options)
            scheduler.advance(by: .milliseconds(10))
            session = try host.wearables.createSession(deviceSelector: SpecificDeviceSelector(device: glasses.info.identifier))
            try session.start()
            scheduler.advance(by: .milliseconds(10))
            camera = try #require(try session.addCamera(config: config(.raw, .low, 15)))
            let photo = camera.photo
            tokens = Mutex([
                photo.statePublisher.listen { [states] in states.append($0) },
                photo.photoDataPublisher.listen { [photos] in photos.append($0) },
                photo.errorPublisher.listen { [errors] in errors.append(Self.name($0)) },
                photo.transferProgressPublisher.listen { [progress] in progress.append($0) },
            ])
        }

        func run(_ seconds: Double) { scheduler.advance(by: .milliseconds(Int64(seconds * 1000))) }

        /// The error's case, with the reason for the two that carry one.
        static func name(_ error: PhotoError) -> String {
            switch error {
            case .notReady: "notReady"
            case .busy: "busy"
            case .serviceUnavailable: "serviceUnavailable"
            case .permissionDenied: "permissionDenied"
            case .deviceHealthCritical: "deviceHealthCritical"
            case .deviceDisconnected: "deviceDisconnected"
            case .captureFailure(let why): "captureFailure: \(why.map { "\($0)" } ?? "")"
            case .sessionSetupFailed(let why): "sessionSetupFailed: \(why.map { "\($0)" } ?? "")"
            }
        }
    }

    @Test("a capture in detail: the JPEG at the size asked, its metadata, progress after every chunk (the .full walkthrough: ExtrasWalkthroughTests)")
    func walkthrough() throws {
        let rig = try Rig()
        let photo = rig.camera.photo
        #expect(photo.state == .stopped)
        photo.start()
        #expect(photo.state == .starting)
        rig.run(0.2)
        #expect(photo.state == .started)
        photo.capturePhoto(resolution: .large, quality: .high)
        rig.run(2)
        #expect(rig.errors.values.isEmpty, "\(rig.errors.values)")
        let delivered = try #require(rig.photos.values.first)
        #expect(rig.photos.values.count == 1)
        // The picture decodes (libavcodec's mjpeg) at the sensor's size, portrait.
        let size = try JPEGDecoder.decodedSize(of: delivered.imageData)
        #expect(size.width == 1080 && size.height == 1920)
        let metadata = try #require(delivered.metadata)
        let fields = try #require(try JSONSerialization.jsonObject(with: metadata) as? [String: Any])
        #expect(fields["width"] as? Int == 1080 && fields["height"] as? Int == 1920 && fields["quality"] as? String == "high")
        // Progress after every chunk, rising to the whole photo.
        let steps = rig.progress.values
        #expect(steps.count == (delivered.imageData.count + SimulatedGlasses.standalonePhotoChunkBytes - 1) / SimulatedGlasses.standalonePhotoChunkBytes)
        #expect(zip(steps, steps.dropFirst()).allSatisfy { $0.bytesReceived < $1.bytesReceived })
        #expect(steps.last == PhotoTransferProgress(bytesReceived: UInt64(delivered.imageData.count),
                                                    totalBytes: UInt64(delivered.imageData.count)))
        #expect(steps.last?.fraction == 1)
        // A smaller, cheaper one next: the size follows the request, the quality the bytes.
        photo.capturePhoto(resolution: .small, quality: .low)
        rig.run(1)
        let small = try #require(rig.photos.values.last)
        #expect(rig.photos.values.count == 2)
        let smallSize = try JPEGDecoder.decodedSize(of: small.imageData)
        #expect(smallSize.width == 480 && smallSize.height == 640)
        // Stop; a stopped capability starts again.
        photo.stop()
        rig.run(0.1)
        photo.start()
        rig.run(0.2)
        #expect(rig.states.values == [.starting, .started, .stopping, .stopped, .starting, .started])
    }

    @Test("stream and photo compete for the camera: a capture during streaming fails in about 100 ms; after the stream stops it works")
    func contention() throws {
        let rig = try Rig()
        let photo = rig.camera.photo
        rig.camera.stream.start()
        rig.run(0.5)
        #expect(rig.camera.stream.state == .streaming)
        photo.start()
        rig.run(0.2)
        #expect(photo.state == .started)
        photo.capturePhoto()
        rig.run(0.09)
        #expect(rig.errors.values.isEmpty)
        rig.run(0.02)
        #expect(rig.errors.values.count == 1)
        #expect(rig.errors.values.first?.hasPrefix("captureFailure: the camera is streaming video") == true, "\(rig.errors.values)")
        #expect(rig.camera.stream.state == .streaming)  // the stream is untouched
        rig.camera.stream.stop()
        rig.run(0.5)
        photo.capturePhoto()
        rig.run(1)
        #expect(rig.photos.values.count == 1)
        #expect(rig.errors.values.count == 1)
        let size = try JPEGDecoder.decodedSize(of: try #require(rig.photos.values.first).imageData)
        #expect(size.width == 720 && size.height == 1280)
    }

    @Test("notReady before started, busy during a capture, stop while starting honoured when the start resolves")
    func rules() throws {
        let rig = try Rig()
        let photo = rig.camera.photo
        photo.capturePhoto()
        #expect(rig.errors.values == ["notReady"])
        photo.start()
        photo.stop()  // while starting
        rig.run(0.3)
        #expect(rig.states.values == [.starting, .started, .stopping, .stopped])
        photo.start()
        rig.run(0.2)
        photo.capturePhoto()
        photo.capturePhoto()
        #expect(rig.errors.values == ["notReady", "busy"])
        rig.run(1)
        #expect(rig.photos.values.count == 1)
    }

    @Test("a transfer stops the IMU (stopping, stopped) and nothing restarts it, as on real glasses")
    func transferStopsMotion() throws {
        let rig = try Rig()
        let motion = try #require(try rig.session.addMotion())
        let motionStates = Collected<MotionState>()
        let token = motion.statePublisher.listen { motionStates.append($0) }
        motion.start()
        rig.run(0.2)
        #expect(motion.state == .started)
        rig.camera.photo.start()
        rig.run(0.2)
        rig.camera.photo.capturePhoto()
        rig.run(1)
        #expect(rig.photos.values.count == 1)
        #expect(motion.state == .stopped)
        #expect(motionStates.values == [.starting, .started, .stopping, .stopped])
        _ = token
    }

    @Test("the camera stops mid-transfer: the capture fails, the capability closes for good, the glasses stop sending")
    func cameraStopsMidTransfer() throws {
        let rig = try Rig()
        let photo = rig.camera.photo
        photo.start()
        rig.run(0.2)
        photo.capturePhoto(resolution: .large, quality: .high)
        rig.run(0.3)  // the capture delay and a few chunks
        #expect(rig.progress.values.count >= 1)
        #expect(rig.photos.values.isEmpty)
        rig.camera.stop()
        rig.run(2)
        #expect(rig.photos.values.isEmpty)
        #expect(rig.errors.values == ["captureFailure: the camera stopped"])
        #expect(photo.state == .stopped)
        #expect(rig.states.values.suffix(2) == [.stopping, .stopped])
        photo.start()
        #expect(photo.state == .stopped)
        #expect(!rig.glasses.isStreaming)
        #expect(rig.glasses.state.withLock { $0.core.photoCapture == nil && !$0.core.photoStarted })
    }

    @Test("glasses that do not offer it: serviceUnavailable; the link drops while started: deviceDisconnected")
    func unavailableAndLinkLoss() throws {
        let none = try Rig(options: .init(hasStandalonePhoto: false))
        none.camera.photo.start()
        #expect(none.errors.values == ["serviceUnavailable"])
        #expect(none.camera.photo.state == .stopped)

        let rig = try Rig()
        rig.camera.photo.start()
        rig.run(0.2)
        rig.camera.photo.capturePhoto()
        rig.glasses.powerOff()
        rig.run(0.5)
        #expect(rig.errors.values == ["deviceDisconnected"])
        #expect(rig.camera.photo.state == .stopped)
        #expect(rig.photos.values.isEmpty)
    }

    @Test("a one-shot capture failure (the mock's simulateCaptureFailure) fails one capture, the next succeeds")
    func scriptedFailure() throws {
        let rig = try Rig()
        rig.camera.photo.start()
        rig.run(0.2)
        rig.glasses.simulateCaptureFailure()
        rig.camera.photo.capturePhoto()
        rig.run(0.5)
        #expect(rig.errors.values == ["captureFailure: simulated capture failure"])
        rig.camera.photo.capturePhoto()
        rig.run(1)
        #expect(rig.photos.values.count == 1)
    }
}

@Suite("Standalone photo over a socket link")
struct StandalonePhotoSocketTests {
    @Test("WearablesKit gets a standalone photo from a SimulatorServer, chunk by chunk through the wire encoding",
          arguments: ["unix", "tcp"])
    func sockets(kind: String) throws {
        let deviceScheduler = ManualScheduler()
        let hostScheduler = ManualScheduler()
        let glasses = try SimulatedGlasses(profile: SubjectProfile(seed: 33), scheduler: deviceScheduler)
        let (server, host, _) = try servedOverSocket(
            glasses, kind: kind, label: "sim-photo", deviceScheduler: deviceScheduler, hostScheduler: hostScheduler)
        defer { server.stop() }
        let session = try host.wearables.createSession(deviceSelector: SpecificDeviceSelector(device: glasses.info.identifier))
        try session.start()
        #expect(waitFor("session") { session.state == .started })
        let camera = try #require(try session.addCamera(config: config(.raw, .low, 15)))
        let photos = Collected<PhotoCaptureData>()
        let progress = Collected<PhotoTransferProgress>()
        let tokens = [camera.photo.photoDataPublisher.listen { photos.append($0) },
                      camera.photo.transferProgressPublisher.listen { progress.append($0) }]
        camera.photo.start()
        // Once the glasses have the request, their camera warms up on their clock.
        #expect(waitFor("photo starting") { glasses.state.withLock { $0.core.photoStarting } })
        deviceScheduler.advance(by: .milliseconds(200))
        #expect(waitFor("photo started") { camera.photo.state == .started })
        camera.photo.capturePhoto(resolution: .medium, quality: .high)
        // Once the request is at the glasses: the capture delay, then one chunk every 30 ms, all written to the
        // socket as the glasses' clock passes them.
        #expect(waitFor("request") { glasses.state.withLock { $0.core.photoCapture != nil } })
        deviceScheduler.advance(by: .seconds(2))
        #expect(waitFor("photo") { !photos.values.isEmpty })
        let photo = try #require(photos.values.first)
        let size = try JPEGDecoder.decodedSize(of: photo.imageData)
        #expect(size.width == 720 && size.height == 1280)
        #expect(progress.values.count >= 2)
        #expect(progress.values.last?.bytesReceived == UInt64(photo.imageData.count))
        camera.photo.stop()
        #expect(waitFor("photo stopped") { camera.photo.state == .stopped })
        _ = tokens
    }
}
