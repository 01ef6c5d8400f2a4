import Foundation
import Testing
import WearablesKit

@testable import GlassesLink
@testable import GlassesLinkCore

@Suite("Flow control and heartbeats (virtual time)")
struct FlowControlAndHeartbeatTests {
    @Test("a host that is not consuming makes the device drop video samples, counted; other messages never drop")
    func slowHostDrops() {
        let scheduler = ManualScheduler()
        let (host, device) = InProcessLink.makePair(scheduler: scheduler, initialCredit: 3, liveness: .disabled)
        let hostEvents = EventRecorder<DeviceLinkEvent>()
        host.open(eventHandler: hostEvents.handler)
        device.open(eventHandler: { _ in })
        for index in 0..<10 { device.send(.videoSample(Fixtures.sample(index))) }
        for _ in 0..<20 { device.send(.deviceState(DeviceState(batteryLevel: 50))) }
        #expect(device.droppedVideoSamples == 7)
        #expect((device as? any LinkDiagnosticsReporting)?.diagnostics == LinkDiagnostics(droppedVideoSamples: 7))
        scheduler.runUntilIdle()
        #expect(hostEvents.all.filter(\.isVideoSample).count == 3)
        #expect(hostEvents.all.filter { $0.message == .deviceState(DeviceState(batteryLevel: 50)) }.count == 20)
        // The host handled three samples, so three credits came back. Samples 3…9 were lost, so 10 and 11 (which
        // refer to them) are dropped too; keyframe 12 resumes the stream, and 13 and 14 spend the rest.
        for index in 10..<15 { device.send(.videoSample(Fixtures.sample(index, keyframe: index == 12))) }
        #expect(device.droppedVideoSamples == 9)
        for index in 15..<17 { device.send(.videoSample(Fixtures.sample(index))) }
        #expect(device.droppedVideoSamples == 11)
        scheduler.runUntilIdle()
        let delivered = hostEvents.all.compactMap { event -> Int64? in
            if case .message(.videoSample(let sample)) = event { return sample.presentationTimeUs / 33_333 }
            return nil
        }
        #expect(delivered == [0, 1, 2, 12, 13, 14])
    }

    @Test("after an HEVC drop the device holds samples until a keyframe; raw images resume at once")
    func holdUntilKeyframe() {
        var machine = EndpointStateMachine(configuration: EndpointConfiguration(role: .device, liveness: .disabled))
        _ = machine.open(handler: { _ in }, now: .zero)
        #expect(machine.send(.device(.videoSample(Fixtures.sample(0)))).isEmpty)
        _ = machine.received(.host(.frameCredit(5)), now: .zero)
        // Credit is there, but sample 1 depends on the lost keyframe 0.
        #expect(machine.send(.device(.videoSample(Fixtures.sample(1)))).isEmpty)
        #expect(machine.droppedVideoSamples == 2)
        #expect(machine.availableCredit == 5)
        #expect(machine.send(.device(.videoSample(Fixtures.sample(2, keyframe: true)))).count == 1)
        #expect(machine.send(.device(.videoSample(Fixtures.sample(3)))).count == 1)
        #expect(machine.availableCredit == 3)

        var raw = EndpointStateMachine(configuration: EndpointConfiguration(role: .device, liveness: .disabled))
        _ = raw.open(handler: { _ in }, now: .zero)
        let image = VideoSample(presentationTimeUs: 0, isKeyframe: false,
                                format: .nv12(width: 2, height: 2, lumaBytesPerRow: 2, chromaBytesPerRow: 2),
                                payload: Data(count: 6))
        #expect(raw.send(.device(.videoSample(image))).isEmpty)
        _ = raw.received(.host(.frameCredit(1)), now: .zero)
        #expect(raw.send(.device(.videoSample(image))).count == 1)
    }

    @Test("credit comes back only after the host's handler returned")
    func creditAfterHandler() {
        let scheduler = ManualScheduler()
        let (host, device) = InProcessLink.makePair(scheduler: scheduler, initialCredit: 1, liveness: .disabled)
        let droppedDuringHandler = EventRecorder<UInt64>()
        host.open { event in
            if case .message(.videoSample) = event {
                device.send(.videoSample(Fixtures.sample(99, keyframe: true)))
                droppedDuringHandler.handler(device.droppedVideoSamples)
            }
        }
        device.open(eventHandler: { _ in })
        device.send(.videoSample(Fixtures.sample(0)))
        scheduler.runUntilIdle()
        #expect(droppedDuringHandler.all == [1])
        device.send(.videoSample(Fixtures.sample(1, keyframe: true)))
        scheduler.runUntilIdle()
        // All keyframes here, so only credit decides. Sample 1 used the credit the first delivery returned; sample
        // 99, sent inside the handler, had none.
        #expect(device.droppedVideoSamples == 2)
        #expect(droppedDuringHandler.all == [1, 2])
    }

    @Test("heartbeats flow every second and carry the device's dropped count")
    func heartbeats() {
        let scheduler = ManualScheduler()
        let (host, device) = InProcessLink.makePair(scheduler: scheduler, initialCredit: 0)
        let hostEvents = EventRecorder<DeviceLinkEvent>()
        let deviceEvents = EventRecorder<HostLinkEvent>()
        host.open(eventHandler: hostEvents.handler)
        device.open(eventHandler: deviceEvents.handler)
        device.send(.videoSample(Fixtures.sample(0)))
        device.send(.videoSample(Fixtures.sample(1)))
        scheduler.advance(by: .seconds(3))
        let beats = hostEvents.all.compactMap { event -> DeviceMessage? in
            if case .message(let message) = event, case .heartbeat = message { return message }
            return nil
        }
        let counts = beats.compactMap { beat -> [UInt64]? in
            if case .heartbeat(let sequence, let dropped, _) = beat { return [UInt64(sequence), dropped] }
            return nil
        }
        #expect(counts == [[1, 2], [2, 2], [3, 2]])
        // The host end keeps the device's latest count (the bridge reports it as deviceDroppedFrames).
        #expect((host as? any DeviceDropReporting)?.deviceReportedDrops == 2)
        #expect((host as? any LinkDiagnosticsReporting)?.diagnostics.deviceReportedDrops == 2)
        // Each host heartbeat carries the host's clock (virtual time here: 1 s, 2 s, 3 s).
        #expect(deviceEvents.all.compactMap(\.message) == [1, 2, 3].map {
            .heartbeat(sequence: $0, hostClockUs: Int64($0) * 1_000_000)
        })
    }

    @Test("a dead link closes both ends with heartbeatTimeout after exactly the timeout", arguments: [5, 2])
    func heartbeatTimeout(seconds: Int) {
        let scheduler = ManualScheduler()
        let link = InProcessLink(
            scheduler: scheduler, liveness: LinkLiveness(timeout: .seconds(seconds)))
        let hostEvents = EventRecorder<DeviceLinkEvent>()
        let deviceEvents = EventRecorder<HostLinkEvent>()
        link.host.open(eventHandler: hostEvents.handler)
        link.device.open(eventHandler: deviceEvents.handler)
        scheduler.advance(to: .seconds(60))
        #expect(hostEvents.all.compactMap(\.closeError).isEmpty)
        #expect(deviceEvents.all.compactMap(\.closeError).isEmpty)
        link.blackhole()
        scheduler.advance(to: .seconds(60 + seconds) - .milliseconds(1))
        #expect(hostEvents.all.compactMap(\.closeError).isEmpty)
        scheduler.advance(to: .seconds(60 + seconds))
        #expect(hostEvents.all.compactMap(\.closeError).map(\.code) == [.heartbeatTimeout])
        #expect(deviceEvents.all.compactMap(\.closeError).map(\.code) == [.heartbeatTimeout])
        scheduler.advance(by: .seconds(30))
        #expect(scheduler.pendingCount == 0)
    }

    @Test("the host's hello must speak this protocol version")
    func versionMismatch() {
        let scheduler = ManualScheduler()
        let (host, device) = InProcessLink.makePair(scheduler: scheduler, liveness: .disabled)
        let hostEvents = EventRecorder<DeviceLinkEvent>()
        let deviceEvents = EventRecorder<HostLinkEvent>()
        host.open(eventHandler: hostEvents.handler)
        device.open(eventHandler: deviceEvents.handler)
        host.send(.hello(protocolVersion: linkProtocolVersion + 1, pairingToken: nil))
        scheduler.runUntilIdle()
        #expect(deviceEvents.all.compactMap(\.closeError).map(\.code) == [.incompatible])
        #expect(hostEvents.all.compactMap(\.closeError).map(\.code) == [.incompatible])
    }

    @Test("the endpoint state machine discards video without credit and caps absurd grants")
    func stateMachine() {
        var machine = EndpointStateMachine(configuration: EndpointConfiguration(role: .device, liveness: .disabled))
        _ = machine.open(handler: { _ in }, now: .zero)
        #expect(machine.send(.device(.videoSample(Fixtures.sample(0)))).isEmpty)
        #expect(machine.droppedVideoSamples == 1)
        _ = machine.received(.host(.frameCredit(.max)), now: .zero)
        _ = machine.received(.host(.frameCredit(.max)), now: .zero)
        #expect(machine.availableCredit == 1 << 20)
        #expect(machine.send(.device(.videoSample(Fixtures.sample(1, size: 0, keyframe: true)))).count == 1)
        #expect(machine.availableCredit == (1 << 20) - 1)
    }
}
