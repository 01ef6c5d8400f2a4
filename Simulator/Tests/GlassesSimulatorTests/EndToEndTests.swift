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
        let address: LinkAddress = kind == "unix"
            ? .unix(path: FileManager.default.temporaryDirectory.appendingPathComponent("sim-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).sock").path)
            : .tcp(host: "127.0.0.1", port: 0)
        let server = try SimulatorServer(glasses: glasses, address: address,
                                         options: LinkListenerOptions(scheduler: deviceScheduler, liveness: .disabled))
        defer { server.stop() }
        let host = try WearablesHost(scheduler: hostScheduler)
        let link = try LinkConnector.connect(to: server.address,
                                             options: LinkConnectionOptions(scheduler: hostScheduler, liveness: .disabled))
        host.wearables.attach(link: link)
        #expect(waitFor("hello") { host.wearables.devices == [glasses.info.identifier] })
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
}
