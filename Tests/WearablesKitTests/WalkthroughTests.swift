import Foundation
import Synchronization
import Testing
import WearablesKit

@Suite("Quick-start walkthrough")
struct WalkthroughTests {
    @Test("the seed's camera-streaming walkthrough runs on Linux against test glasses")
    func walkthrough() async throws {
        var behaviour = TestDevice.Behaviour()
        behaviour.sendsFrames = true
        behaviour.permissions[.camera] = .denied  // so the walkthrough asks, and the wearer grants
        behaviour.requestAnswer = .granted
        let rig = try Rig(behaviour: behaviour)
        rig.wearables.attach(link: rig.device)
        let log = WalkthroughLog()
        let finished = Atomic<Bool>(false)
        let scheduler = rig.scheduler
        // Virtual time moves only while the walkthrough waits for the glasses: 1 ms per turn, no sleeping.
        let driver = Task.detached {
            while !finished.load(ordering: .acquiring) {
                scheduler.advance(by: .milliseconds(1))
                await Task.yield()
            }
        }
        try await cameraStreamingWalkthrough(wearables: rig.wearables, log: log) {
            await eventually { log.frames >= 24 && log.photos.count == 1 }
        }
        await eventually { rig.device.sent.contains(.stopSession) }
        finished.store(true, ordering: .releasing)
        await driver.value
        rig.run()

        #expect(log.permission == .granted)
        #expect(rig.device.sent.contains { if case .requestPermission(.camera, _) = $0 { true } else { false } })
        #expect(log.photoAccepted)
        #expect(log.photos.first?.format == .jpeg)
        #expect(log.frames >= 24)
        #expect(log.lastImageWidth == 360)  // the test glasses send .low-sized NV12
        #expect(log.errors.isEmpty)
        #expect(Array(log.streamStates.prefix(3)) == [.waitingForDevice, .starting, .streaming])
        #expect(log.streamStates.contains(.paused))  // video paused for the photo
        let device = try #require(rig.wearables.deviceForIdentifier("glasses-1"))
        #expect(device.linkState == .connected)
        let sent = rig.device.sent
        let kinds: [(HostMessage) -> Bool] = [{ $0.isStartSession }, { $0.isStopStream }, { $0.isStopSession }]
        let order = kinds.map { kind in sent.firstIndex(where: kind) ?? -1 }
        #expect(order.allSatisfy { $0 >= 0 } && order == order.sorted())
    }
}
