import Foundation
import GlassesLink
import Synchronization
import Testing
import WearablesKit
@testable import GlassesSimulator

/// Collects values published by WearablesKit.
final class Collected<T: Sendable>: Sendable {
    private let items = Mutex<[T]>([])
    func append(_ value: T) { items.withLock { $0.append(value) } }
    var values: [T] { items.withLock { $0 } }
}

/// Waits (bounded) for socket I/O to deliver something; virtual time is advanced by the caller.
func waitFor(_ what: String, timeout: Double = 10, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while !condition() {
        if Date() > deadline { return false }
        usleep(2_000)
    }
    return true
}

/// `glasses` served by a ``SimulatorServer`` on a Unix socket (`kind` "unix", a fresh path named after `label`) or on
/// loopback TCP (any other kind, port 0), and a ``WearablesHost`` dialled to it; both ends on manual schedulers with
/// liveness off. Waits (bounded) until the host has the glasses' hello. The caller stops the server.
func servedOverSocket(
    _ glasses: SimulatedGlasses, kind: String, label: String, deviceScheduler: ManualScheduler, hostScheduler: ManualScheduler,
    sourceLocation: SourceLocation = #_sourceLocation
) throws -> (server: SimulatorServer, host: WearablesHost, link: any DeviceLink) {
    let address: LinkAddress = kind == "unix"
        ? .unix(path: FileManager.default.temporaryDirectory.appendingPathComponent("\(label)-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).sock").path)
        : .tcp(host: "127.0.0.1", port: 0)
    let server = try SimulatorServer(glasses: glasses, address: address,
                                     options: LinkListenerOptions(scheduler: deviceScheduler, liveness: .disabled))
    let host = try WearablesHost(scheduler: hostScheduler)
    let link: any DeviceLink
    do {
        link = try LinkConnector.connect(to: server.address,
                                         options: LinkConnectionOptions(scheduler: hostScheduler, liveness: .disabled))
    } catch {
        server.stop()
        throw error
    }
    host.wearables.attach(link: link)
    #expect(waitFor("hello") { host.wearables.devices == [glasses.info.identifier] }, sourceLocation: sourceLocation)
    return (server, host, link)
}

/// WearablesKit on one side, simulated glasses on the other, with listeners recorded.
final class WearablesHost: Sendable {
    let wearables: WearablesInstance
    let states = Collected<StreamState>()
    let frames = Collected<VideoFrame>()
    let errors = Collected<StreamError>()
    let photos = Collected<PhotoData>()
    let tokens = Mutex<[any AnyListenerToken]>([])

    init(scheduler: any EventScheduler) throws {
        wearables = Wearables.makeInstance(configuration: try WearablesConfiguration(scheduler: scheduler))
    }

    /// Starts a session, lets `settle` deliver the glasses' answer, then adds a camera and starts its stream.
    func openStream(device: DeviceIdentifier, _ configuration: StreamConfiguration,
                    settle: (DeviceSession) -> Void) throws -> (DeviceSession, WearablesKit.Stream) {
        let session = try wearables.createSession(deviceSelector: SpecificDeviceSelector(device: device))
        try session.start()
        settle(session)
        return (session, try stream(session, configuration))
    }

    func stream(_ session: DeviceSession, _ configuration: StreamConfiguration) throws -> WearablesKit.Stream {
        guard let camera = try session.addCamera(config: configuration) else { throw CancellationError() }
        let stream = camera.stream
        let t = [stream.statePublisher.listen { [states] in states.append($0) },
                 stream.videoFramePublisher.listen { [frames] in frames.append($0) },
                 stream.errorPublisher.listen { [errors] in errors.append($0) },
                 stream.photoDataPublisher.listen { [photos] in photos.append($0) }]
        tokens.withLock { $0 += t }
        stream.start()
        return stream
    }
}

@Suite("WearablesKit drives the simulated glasses end to end")
struct EndToEndTests {
    @Test("in-process: states, frames, photo, tap, fold as the DAT contract says")
    func inProcess() throws {
        let scheduler = ManualScheduler()
        let host = try WearablesHost(scheduler: scheduler)
        let kit = SimulatorKit(scheduler: scheduler, liveness: .disabled)
        let glasses = try kit.pairGlasses(with: host.wearables, profile: SubjectProfile(seed: 11))
        scheduler.advance(by: .milliseconds(10))
        #expect(host.wearables.devices == [glasses.info.identifier])
        let (session, stream) = try host.openStream(device: glasses.info.identifier, config(.raw, .low, 15)) { _ in
            scheduler.advance(by: .milliseconds(10))
        }
        scheduler.advance(by: .seconds(1))
        #expect(session.state == .started)
        #expect(host.states.values == [.waitingForDevice, .starting, .streaming])
        #expect(host.frames.values.count >= 14)
        if case .raw(let image) = host.frames.values.last?.content {
            #expect(image.width == 360 && image.height == 640)
        } else { Issue.record("expected raw frames") }
        #expect(stream.capturePhoto(format: .jpeg))
        scheduler.advance(by: .seconds(1))
        #expect(host.photos.values.count == 1)
        #expect(host.states.values.suffix(2) == [.paused, .streaming])
        glasses.tap()
        scheduler.advance(by: .milliseconds(100))
        #expect(host.states.values.last == .paused)
        #expect(session.state == .paused)
        glasses.tap()
        scheduler.advance(by: .milliseconds(100))
        #expect(host.states.values.last == .streaming)
        glasses.fold()
        scheduler.advance(by: .seconds(1))
        #expect(host.errors.values.contains(.hingesClosed))
        #expect(host.states.values.last == .stopped)
        #expect(session.state == .stopped)
        #expect(host.wearables.deviceForIdentifier(glasses.info.identifier)?.hingeState == .closed)
    }

    @Test("in-process HEVC: frames carry length-prefixed samples with parameter sets")
    func inProcessHEVC() throws {
        let scheduler = ManualScheduler()
        let host = try WearablesHost(scheduler: scheduler)
        let kit = SimulatorKit(scheduler: scheduler, liveness: .disabled)
        let glasses = try kit.pairGlasses(with: host.wearables, profile: SubjectProfile(seed: 12))
        scheduler.advance(by: .milliseconds(10))
        _ = try host.openStream(device: glasses.info.identifier, config(.hvc1, .low, 15)) { _ in
            scheduler.advance(by: .milliseconds(10))
        }
        scheduler.advance(by: .seconds(1))
        let frames = host.frames.values
        #expect(frames.count >= 14)
        guard case .hevc(let first) = frames.first?.content else { Issue.record("expected HEVC"); return }
        #expect(first.isKeyframe)
        #expect(!first.codecConfiguration.sequenceParameterSets.isEmpty)
        #expect(host.errors.values.isEmpty)
    }

    @Test("several glasses at once, each with its own person")
    func severalDevices() throws {
        let scheduler = ManualScheduler()
        let host = try WearablesHost(scheduler: scheduler)
        let kit = SimulatorKit(scheduler: scheduler, liveness: .disabled)
        let a = try kit.pairGlasses(with: host.wearables, name: "A", profile: SubjectProfile(pulseRate: 60, seed: 1))
        let b = try kit.pairGlasses(with: host.wearables, name: "B", profile: SubjectProfile(pulseRate: 90, seed: 2))
        scheduler.advance(by: .milliseconds(10))
        #expect(Set(host.wearables.devices) == [a.info.identifier, b.info.identifier])
        #expect(kit.pairedGlasses.count == 2)
        let ta = a.scene.groundTruth(through: 60).meanPulseRate(in: 5...60) ?? 0
        let tb = b.scene.groundTruth(through: 60).meanPulseRate(in: 5...60) ?? 0
        #expect(abs(ta - 60) < 3 && abs(tb - 90) < 3)
    }

    @Test("socket transports: WearablesKit streams from a SimulatorServer", arguments: ["unix", "tcp"])
    func sockets(kind: String) throws {
        let deviceScheduler = ManualScheduler()
        let hostScheduler = ManualScheduler()
        let glasses = try SimulatedGlasses(profile: SubjectProfile(seed: 13), scheduler: deviceScheduler)
        let (server, host, _) = try servedOverSocket(
            glasses, kind: kind, label: "sim", deviceScheduler: deviceScheduler, hostScheduler: hostScheduler)
        defer { server.stop() }
        let (session, _) = try host.openStream(device: glasses.info.identifier, config(.raw, .low, 15)) { session in
            _ = waitFor("session") { session.state == .started }
        }
        #expect(session.state == .started)
        #expect(waitFor("stream request") { glasses.isStreaming })
        for _ in 0..<10 {
            deviceScheduler.advance(by: .milliseconds(100))
            _ = waitFor("frames") { host.frames.values.count >= 1 }
        }
        #expect(waitFor("frames") { host.frames.values.count >= 10 })
        #expect(host.states.values.contains(.streaming))
        glasses.doff()
        #expect(waitFor("doff") { host.errors.values.contains(.hingesClosed) && host.states.values.last == .paused })
    }

    @Test("a SimulatorServer serves the next host after one leaves (a finished relay no longer shuts down reused descriptors)")
    func secondHostAfterFirstLeaves() throws {
        let deviceScheduler = ManualScheduler()
        let glasses = try SimulatedGlasses(profile: SubjectProfile(seed: 13), scheduler: deviceScheduler)
        let server = try SimulatorServer(glasses: glasses, address: .tcp(host: "127.0.0.1", port: 0),
                                         options: LinkListenerOptions(scheduler: deviceScheduler, liveness: .disabled))
        defer { server.stop() }
        for round in 1...3 {
            let hostScheduler = ManualScheduler()
            let host = try WearablesHost(scheduler: hostScheduler)
            let link = try LinkConnector.connect(to: server.address,
                                                 options: LinkConnectionOptions(scheduler: hostScheduler, liveness: .disabled))
            host.wearables.attach(link: link)
            #expect(waitFor("hello from host \(round)") { host.wearables.devices == [glasses.info.identifier] }, "host \(round) got no hello")
            link.close()
            #expect(waitFor("glasses free") { !glasses.isStreaming })
        }
    }

    @Test("faults frameRate and dropPhoto: frames at the wrong rate while claiming the configured one; a photo never sent")
    func frameRateAndDropPhoto() throws {
        let scheduler = ManualScheduler()
        let glasses = try SimulatedGlasses(profile: SubjectProfile(seed: 13), scheduler: scheduler)
        let scenario = try Scenario(json: Data("""
        {"events": [{"at": 0, "do": "frameRate", "fps": 10}, {"at": 0, "do": "dropPhoto"}]}
        """.utf8))
        guard case .fault(.frameRate(let fps)) = scenario.events[0].action, case .fault(.dropPhoto) = scenario.events[1].action else {
            Issue.record("parsed \(scenario.events)")
            return
        }
        #expect(fps == 10)
        #expect(throws: SimulatorError.self) { try Scenario(json: Data(#"{"events": [{"at": 0, "do": "frameRate", "fps": 0}]}"#.utf8)) }
        let counted = Collected<DeviceMessage>()
        glasses.setSampleObserver { counted.append($0) }
        let pair = InProcessLink.makePair(scheduler: scheduler, liveness: .disabled)
        glasses.attach(pair.device)
        pair.host.open { _ in }
        pair.host.send(.hello(protocolVersion: linkProtocolVersion, pairingToken: nil))
        pair.host.send(.frameCredit(1_000))
        pair.host.send(.startSession)
        scheduler.advance(by: .seconds(1))
        pair.host.send(.startStream(StreamConfiguration(videoCodec: .raw, resolution: .low, frameRate: 24)))
        scheduler.advance(by: .seconds(1))
        glasses.inject(.frameRate(fps: 10))
        let before = counted.values.count
        scheduler.advance(by: .seconds(2))
        let sent = counted.values.count - before
        #expect((19...21).contains(sent), "\(sent) samples in 2 s at 10 fps")
        glasses.inject(.frameRate(fps: nil))
        let restored = counted.values.count
        scheduler.advance(by: .seconds(1))
        #expect((23...25).contains(counted.values.count - restored))
        glasses.inject(.dropPhoto)
        pair.host.send(.capturePhoto(.jpeg, requestID: 1))
        scheduler.advance(by: .seconds(3))
        #expect(glasses.statistics.photosDelivered == 0)
        pair.host.send(.capturePhoto(.jpeg, requestID: 2))
        scheduler.advance(by: .seconds(3))
        #expect(glasses.statistics.photosDelivered == 1)
    }
}
