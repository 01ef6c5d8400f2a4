import Foundation
import Testing
import WearablesKit

@testable import GlassesLink
@testable import GlassesLinkCore

@Suite("In-process link")
struct InProcessLinkTests {
    @Test("messages are delivered through the scheduler, never inside send")
    func deliveryThroughScheduler() {
        let scheduler = ManualScheduler()
        let (host, device) = InProcessLink.makePair(scheduler: scheduler, liveness: .disabled)
        let hostEvents = EventRecorder<DeviceLinkEvent>()
        let deviceEvents = EventRecorder<HostLinkEvent>()
        host.open(eventHandler: hostEvents.handler)
        device.open(eventHandler: deviceEvents.handler)
        host.send(.hello(protocolVersion: linkProtocolVersion, pairingToken: nil))
        device.send(.hello(Fixtures.info))
        device.send(.deviceState(DeviceState()))
        #expect(hostEvents.all.isEmpty)
        #expect(deviceEvents.all.isEmpty)
        scheduler.runUntilIdle()
        #expect(hostEvents.all.compactMap(\.message) == [.hello(Fixtures.info), .deviceState(DeviceState())])
        #expect(
            deviceEvents.all.compactMap(\.message) == [.hello(protocolVersion: linkProtocolVersion, pairingToken: nil)])
    }

    @Test("close on either side delivers .closed to both, exactly once and last")
    func closeReachesBoth() {
        let scheduler = ManualScheduler()
        let (host, device) = InProcessLink.makePair(scheduler: scheduler)
        let hostEvents = EventRecorder<DeviceLinkEvent>()
        let deviceEvents = EventRecorder<HostLinkEvent>()
        host.open(eventHandler: hostEvents.handler)
        device.open(eventHandler: deviceEvents.handler)
        device.send(.fault(.thermalHot, message: "hot"))
        device.close()
        device.send(.deviceState(DeviceState()))
        device.close()
        #expect(hostEvents.all.isEmpty)
        scheduler.runUntilIdle()
        #expect(hostEvents.all.compactMap(\.message) == [.fault(.thermalHot, message: "hot")])
        #expect(hostEvents.all.compactMap(\.closeError).map(\.code) == [.connectionLost])
        #expect(hostEvents.all.last?.closeError != nil)
        #expect(deviceEvents.all.compactMap(\.closeError).map(\.code) == [.closedLocally])
        #expect(deviceEvents.all.count == 1)
        scheduler.advance(by: .seconds(30))
        #expect(hostEvents.all.count == 2)
        #expect(scheduler.pendingCount == 0)
    }

    @Test("sever closes both ends with connectionLost")
    func sever() {
        let scheduler = ManualScheduler()
        let link = InProcessLink(scheduler: scheduler)
        let hostEvents = EventRecorder<DeviceLinkEvent>()
        let deviceEvents = EventRecorder<HostLinkEvent>()
        link.host.open(eventHandler: hostEvents.handler)
        link.device.open(eventHandler: deviceEvents.handler)
        scheduler.advance(by: .seconds(2))
        link.sever()
        link.device.send(.deviceState(DeviceState()))
        scheduler.runUntilIdle()
        #expect(hostEvents.all.compactMap(\.closeError).map(\.code) == [.connectionLost])
        #expect(deviceEvents.all.compactMap(\.closeError).map(\.code) == [.connectionLost])
        #expect(!hostEvents.all.contains { $0.message == .deviceState(DeviceState()) })
    }
}
