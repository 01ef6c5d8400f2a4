import Foundation
import GlassesLink
import Synchronization
import Testing
import WearablesKit
@testable import GlassesSimulator

/// The glasses' end of a link whose messages to the host arrive `latency` late, in order (a slow radio); what the
/// host sends reaches the glasses at once.
final class SlowHostLink: HostLink {
    private let inner: any HostLink
    private let scheduler: any EventScheduler
    private let latency: Duration

    init(_ inner: any HostLink, scheduler: any EventScheduler, latency: Duration) {
        self.inner = inner
        self.scheduler = scheduler
        self.latency = latency
    }

    func open(eventHandler: @escaping @Sendable (HostLinkEvent) -> Void) { inner.open(eventHandler: eventHandler) }
    func send(_ message: DeviceMessage) {
        scheduler.schedule(after: latency) { [inner] in inner.send(message) }
    }
    var droppedVideoSamples: UInt64 { inner.droppedVideoSamples }
    func close() { inner.close() }
}

@Suite("A late stop acknowledgement over a slow link")
struct LateAcknowledgementTests {
    /// WearablesKit and simulated glasses over an in-process link whose device-to-host direction takes 3 s, more
    /// than the host's 2 s stop grace period: the glasses' `stopped` for the first stop arrives after the host gave
    /// up on it and started the stream again.
    @Test("the restarted stream streams on, and its frames are delivered")
    func restartAfterUnacknowledgedStop() throws {
        let scheduler = ManualScheduler()
        let host = try WearablesHost(scheduler: scheduler)
        let glasses = try SimulatedGlasses(name: "Slow glasses", profile: SubjectProfile(seed: 5), scheduler: scheduler)
        let link = InProcessLink(scheduler: scheduler, liveness: .disabled)
        glasses.attach(SlowHostLink(link.device, scheduler: scheduler, latency: .seconds(3)))
        host.wearables.attach(link: link.host)
        scheduler.advance(by: .seconds(3.1))  // the glasses' hello
        #expect(host.wearables.devices == [glasses.info.identifier])
        let (_, stream) = try host.openStream(device: glasses.info.identifier, config(.raw, .low, 15)) { _ in
            scheduler.advance(by: .seconds(3.1))  // session started
        }
        scheduler.advance(by: .seconds(4))
        #expect(stream.state == .streaming)
        #expect(!host.frames.values.isEmpty)

        stream.stop()
        scheduler.advance(by: .seconds(2))  // the grace period: no acknowledgement yet
        #expect(stream.state == .stopped)
        stream.start()  // generation 2; the acknowledgement of generation 1's stop is 1 s away
        let framesBefore = host.frames.values.count
        scheduler.advance(by: .seconds(1.5))
        #expect(stream.state == .waitingForDevice)
        #expect(stream.staleStreamEvents == 1)
        scheduler.advance(by: .seconds(3))
        #expect(stream.state == .streaming)
        #expect(host.frames.values.count > framesBefore + 10)
        #expect(host.states.values == [
            .waitingForDevice, .starting, .streaming, .stopping, .stopped, .waitingForDevice, .starting, .streaming,
        ])
        glasses.powerOff()
        scheduler.runUntilIdle()
    }
}
