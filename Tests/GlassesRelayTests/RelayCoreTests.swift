import Foundation
import GlassesLink
import GlassesSimulator
import Synchronization
import Testing
import WearablesKit

@testable import GlassesRelay

/// Simulated glasses → the relay's DAT (WearablesKit) → RelayDATClient → RelayLinkServer → an in-process link →
/// a host's WearablesKit: the whole relay core, deterministic, on one virtual clock.
final class RelayCore: Sendable {
    let scheduler = ManualScheduler()
    let relayWearables: WearablesInstance
    let hostWearables: WearablesInstance
    let glasses: SimulatedGlasses
    let client: RelayDATClient
    let server: RelayLinkServer
    let link: InProcessLink

    init(pulse: Double = 72, headMotion: Bool = false, options: SimulatedGlasses.Options = .init(), audio: Bool = true) throws {
        relayWearables = Wearables.makeInstance(configuration: try WearablesConfiguration(scheduler: scheduler))
        hostWearables = Wearables.makeInstance(configuration: try WearablesConfiguration(scheduler: scheduler))
        glasses = try SimulatorKit(scheduler: scheduler, liveness: .disabled)
            .pairGlasses(with: relayWearables, profile: SubjectProfile(pulseRate: pulse, headMotion: headMotion, seed: 9),
                         options: options)
        client = RelayDATClient(wearables: relayWearables, clock: SchedulerRelayClock(scheduler),
                                frameAdapter: RelayFrameAdapter.read, audioAdapter: audio ? RelayFrameAdapter.readAudio : nil)
        link = InProcessLink(scheduler: scheduler, initialCredit: 64, liveness: .disabled)
        server = RelayLinkServer(link: link.device, client: client, clock: SchedulerRelayClock(scheduler))
        client.start()
        server.open()
        hostWearables.attach(link: link.host)
        advance(0.05)
    }

    func advance(_ seconds: Double) {
        scheduler.advance(by: .milliseconds(Int64(seconds * 1000)))
    }

    /// The host's view of the relayed glasses.
    var hostDevice: Device? { hostWearables.devices.first.flatMap { hostWearables.deviceForIdentifier($0) } }

    /// A started session and a camera streaming `configuration`, from the host's side.
    func startStream(_ configuration: StreamConfiguration) throws -> (DeviceSession, Camera) {
        let session = try hostWearables.createSession(deviceSelector: AutoDeviceSelector(wearables: hostWearables))
        try session.start()
        advance(0.1)
        guard session.state == .started, let camera = try session.addCamera(config: configuration) else {
            throw RelayTestError("the session did not start: \(session.state)")
        }
        camera.stream.start()
        advance(0.2)
        return (session, camera)
    }
}

struct RelayTestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Collects values from a listener.
final class Collected<Value: Sendable>: Sendable {
    private let items = Mutex<[Value]>([])
    func append(_ value: Value) { items.withLock { $0.append(value) } }
    var values: [Value] { items.withLock { $0 } }
}

@Suite("Relay core: DAT client and link server", .serialized)
struct RelayCoreTests {
    @Test("the host sees the glasses DAT lists: identity, type and state")
    func identityAndState() throws {
        let core = try RelayCore()
        let device = try #require(core.hostDevice)
        #expect(device.identifier == core.glasses.info.identifier)
        #expect(device.name == core.glasses.info.name)
        #expect(device.deviceUUID == core.glasses.info.uuid)
        #expect(device.deviceType() == core.glasses.info.deviceType)
        #expect(device.linkState == .connected)
        core.glasses.doff()
        core.advance(0.1)
        #expect(device.donState == .doffed)
    }

    @Test("frames flow raw and hvc1, with the stream states DAT reported", arguments: [VideoCodec.raw, .hvc1])
    func frames(codec: VideoCodec) throws {
        let core = try RelayCore()
        let frames = Collected<VideoFrame>()
        let states = Collected<StreamState>()
        let configuration = try StreamConfiguration.validated(videoCodec: codec, resolution: .low, frameRate: 15)
        let (_, camera) = try core.startStream(configuration)
        let tokens = ListenerTokenBag()
        camera.stream.videoFramePublisher.listen { frames.append($0) }.store(in: tokens)
        camera.stream.statePublisher.listen { states.append($0) }.store(in: tokens)
        core.advance(2)
        #expect(camera.stream.state == .streaming)
        #expect(frames.values.count >= 25, "\(frames.values.count) frames")
        #expect(frames.values.allSatisfy { $0.isCompressed == (codec == .hvc1) })
        if codec == .hvc1 { #expect(core.server.counters.codecConfigurationsSent >= 1) }
        #expect(core.client.counters.framesForwarded >= 25)
        #expect(core.server.counters.samplesSent == core.client.counters.framesForwarded)
    }

    @Test("a photo the host asks for arrives through the relay, and video resumes")
    func photoThroughTheRelay() throws {
        let core = try RelayCore()
        let configuration = try StreamConfiguration.validated(videoCodec: .raw, resolution: .low, frameRate: 15)
        let (_, camera) = try core.startStream(configuration)
        let photos = Collected<PhotoData>()
        let frames = Collected<VideoFrame>()
        let tokens = ListenerTokenBag()
        camera.stream.photoDataPublisher.listen { photos.append($0) }.store(in: tokens)
        camera.stream.videoFramePublisher.listen { frames.append($0) }.store(in: tokens)
        core.advance(1)
        #expect(camera.stream.capturePhoto(format: .jpeg))
        core.advance(3)
        let photo = try #require(photos.values.first)
        #expect(photo.format == .jpeg)
        #expect(photo.data.starts(with: [0xFF, 0xD8]), "not a JPEG")
        #expect(core.server.counters.photosSent == 1)
        let before = frames.values.count
        core.advance(1)
        #expect(frames.values.count > before + 10, "video did not resume after the photo")
        #expect(camera.stream.state == .streaming)
    }

    @Test("a photo in a format the glasses refuse comes back as photoCaptureFailed, not silence")
    func photoFailureIsReported() throws {
        let core = try RelayCore()
        let configuration = try StreamConfiguration.validated(videoCodec: .raw, resolution: .low, frameRate: 15)
        let (_, camera) = try core.startStream(configuration)
        let errors = Collected<StreamError>()
        let tokens = ListenerTokenBag()
        camera.stream.errorPublisher.listen { errors.append($0) }.store(in: tokens)
        let started = camera.stream.capturePhoto(format: .heic)
        core.advance(1)
        #expect(errors.values.contains(.photoCaptureFailed), "started \(started), faults relayed \(core.server.counters.faultsSent), \(errors.values)")
    }

    @Test("one session per device: a second start reports the running session instead of creating one")
    func oneSessionPerDevice() throws {
        let core = try RelayCore()
        core.client.handle(.startSession)
        core.advance(0.1)
        core.client.handle(.startSession)
        core.advance(0.1)
        #expect(core.client.counters.sessionsCreated == 1)
    }

    @Test("a session restart waits until 2 s after the last one stopped")
    func sessionRestartSpacing() throws {
        let core = try RelayCore()
        let events = Collected<(RelayEvent, Int64)>()
        let clock = SchedulerRelayClock(core.scheduler)
        core.client.setEventHandler { events.append(($0, clock.nowUs)) }
        core.client.handle(.startSession)
        core.advance(0.5)
        core.client.handle(.stopSession)
        core.advance(0.1)
        let stoppedAt = try #require(events.values.last { if case .session(.ended) = $0.0 { true } else { false } }?.1)
        core.client.handle(.startSession)
        core.advance(0.5)
        #expect(core.client.counters.sessionsCreated == 1, "started again within 2 s of the stop")
        core.advance(2)
        #expect(core.client.counters.sessionsCreated == 2)
        #expect(core.client.counters.sessionStartsDelayed == 1)
        let restartedAt = try #require(events.values.last { if case .session(.started) = $0.0 { true } else { false } }?.1)
        #expect(restartedAt - stoppedAt >= RelayRules.sessionRestartSpacingUs, "restarted \(restartedAt - stoppedAt) µs after the stop")
    }

    @Test("a restarted relay waits out the session its predecessor still holds, then starts its own")
    func restartedRelayWaitsForTheOldSession() throws {
        let core = try RelayCore()
        core.client.handle(.startSession)
        core.advance(0.2)
        #expect(core.client.counters.sessionsCreated == 1)
        // A second client on the same DAT instance, as after a relay restart with the old session not yet gone.
        let successor = RelayDATClient(wearables: core.relayWearables, clock: SchedulerRelayClock(core.scheduler),
                                       frameAdapter: RelayFrameAdapter.read)
        let events = Collected<RelayEvent>()
        successor.setEventHandler { events.append($0) }
        successor.start()
        successor.handle(.startSession)
        core.advance(0.1)
        #expect(successor.counters.sessionsCreated == 0)
        #expect(!events.values.contains { if case .session(.ended) = $0 { true } else { false } },
                "the successor gave up at once: \(events.values)")
        core.client.hostLeft()
        core.advance(2.5)
        #expect(successor.counters.sessionsCreated == 1, "\(events.values)")
        #expect(events.values.contains(.session(.started)), "\(events.values)")
    }

    @Test("a zombie stream is passed on as it is: streaming, no frames, nothing faked; a camera restart cures it")
    func zombieIsReportedNotHidden() throws {
        let core = try RelayCore()
        let configuration = try StreamConfiguration.validated(videoCodec: .raw, resolution: .low, frameRate: 15)
        let (session, camera) = try core.startStream(configuration)
        let frames = Collected<VideoFrame>()
        let tokens = ListenerTokenBag()
        camera.stream.videoFramePublisher.listen { frames.append($0) }.store(in: tokens)
        core.advance(1)
        core.glasses.inject(.zombieStream(true))
        core.advance(0.2)
        let atZombie = frames.values.count
        core.advance(3)
        #expect(frames.values.count == atZombie, "the relay made up frames during a zombie stream")
        #expect(camera.stream.state == .streaming, "the zombie was hidden as another state")
        // The host's cure (what the bridge's watchdog does): stop the camera, add and start a new one.
        core.glasses.inject(.zombieStream(false))
        camera.stop()
        core.advance(0.1)
        let fresh = try #require(try session.addCamera(config: configuration))
        fresh.stream.videoFramePublisher.listen { frames.append($0) }.store(in: tokens)
        fresh.stream.start()
        core.advance(2)
        #expect(frames.values.count > atZombie + 20)
        #expect(core.client.counters.camerasAdded == 2)
    }

    @Test("folding the glasses reaches the host as hingesClosed")
    func faultsAreMapped() throws {
        let core = try RelayCore()
        let configuration = try StreamConfiguration.validated(videoCodec: .raw, resolution: .low, frameRate: 15)
        let (_, camera) = try core.startStream(configuration)
        let errors = Collected<StreamError>()
        let tokens = ListenerTokenBag()
        camera.stream.errorPublisher.listen { errors.append($0) }.store(in: tokens)
        core.glasses.fold()
        core.advance(1)
        #expect(errors.values.contains(.hingesClosed), "\(errors.values)")
    }

    @Test("when the host's link closes, the relay stops the glasses' camera and session")
    func hostLeavingFreesTheGlasses() throws {
        let core = try RelayCore()
        let configuration = try StreamConfiguration.validated(videoCodec: .raw, resolution: .low, frameRate: 15)
        _ = try core.startStream(configuration)
        #expect(core.glasses.isStreaming)
        core.link.host.close()
        core.advance(0.5)
        #expect(core.server.isClosed)
        #expect(!core.glasses.isStreaming)
    }

    @Test("fault names the link has no code for travel as internalError or videoStreamingError, with DAT's words")
    func faultNames() {
        #expect(RelayLinkServer.fault(named: "hingesClosed") == .hingesClosed)
        #expect(RelayLinkServer.fault(named: "thermalHot") == .thermalHot)
        #expect(RelayLinkServer.fault(named: "timeout") == .videoStreamingError)
        #expect(RelayLinkServer.fault(named: "deviceNotConnected") == .internalError)
        #expect(RelayDATClient.faultName(.deviceNotFound("abc")) == "deviceNotFound")
        #expect(RelayDATClient.faultName(.photoCaptureFailed) == "photoCaptureFailed")
        #expect(RelayDATClient.faultName(.hingesClosed) == "hingesClosed")
    }
}
