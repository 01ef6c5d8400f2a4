import Foundation
import Testing
import WearablesKit

@testable import GlassesRelay

/// What the phone relay's screen shows comes from the tested core: the last error in DAT's words, and a rescan of
/// DAT's device list.
@Suite("Relay screen: the last DAT error and a rescan, from the core", .serialized)
struct RelayScreenTests {
    @Test("the last error is DAT's own: folding the glasses leaves hingesClosed with DAT's description")
    func lastErrorIsDATs() throws {
        let core = try RelayCore()
        #expect(core.client.lastError == nil)
        let configuration = try StreamConfiguration.validated(videoCodec: .raw, resolution: .low, frameRate: 15)
        _ = try core.startStream(configuration)
        #expect(core.client.lastError == nil)
        core.glasses.fold()
        core.advance(1)
        let error = try #require(core.client.lastError)
        #expect(error.name == "hingesClosed")
        #expect(error.message == StreamError.hingesClosed.localizedDescription)
        #expect(error.description == "hingesClosed: \(StreamError.hingesClosed.localizedDescription)")
    }

    @Test("rescan starts a client not started yet, and reports the listed glasses afresh to one that is")
    func rescanReportsTheGlassesAgain() throws {
        let core = try RelayCore()
        let client = RelayDATClient(wearables: core.relayWearables, clock: SchedulerRelayClock(core.scheduler),
                                    frameAdapter: RelayFrameAdapter.read)
        #expect(client.currentDevice == nil)
        client.rescan()
        core.advance(0.05)
        #expect(client.currentDevice?.identifier == core.relayWearables.devices.first)
        let events = Collected<RelayEvent>()
        client.setEventHandler { events.append($0) }
        core.advance(0.5)
        #expect(!events.values.contains { if case .deviceAvailable = $0 { true } else { false } })
        client.rescan()
        core.advance(0.05)
        #expect(events.values.contains { if case .deviceAvailable = $0 { true } else { false } }, "\(events.values)")
        #expect(events.values.contains { if case .deviceState = $0 { true } else { false } }, "\(events.values)")
    }
}
