import Foundation
import Synchronization
import Testing
import WearablesKit

@testable import GlassesLink
@testable import GlassesLinkCore

/// A scheduler reading another scheduler's clock shifted by a fixed offset: a device whose link clock has another
/// epoch than the host's, advanced in step with it.
final class OffsetScheduler: EventScheduler {
    let base: ManualScheduler
    let offset: Duration

    init(base: ManualScheduler, offset: Duration) {
        self.base = base
        self.offset = offset
    }

    var now: Duration { base.now + offset }

    func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) -> ScheduledAction {
        base.schedule(after: delay, action)
    }
}

/// Two link ends on different clocks over a real socket: the host maps the device's sample times onto its own clock
/// with the offset the heartbeats measured (PROTOCOL.md 7.5).
@Suite("Clock offset over real sockets", .serialized)
struct ClockOffsetSocketTests {
    static let unixPath = SocketTransportTests.temporarySocketPath()

    @Test(
        "mapped capture time = the device's capture time minus the clocks' offset",
        arguments: [("unix", Duration.microseconds(10_800_123_457)), ("tcp", Duration.microseconds(-250_000))])
    func mappedOverSocket(transport: String, offset: Duration) throws {
        let clock = ManualScheduler()
        let deviceClock = OffsetScheduler(base: clock, offset: offset)
        let deviceLink = Mutex<(any HostLink)?>(nil)
        let deviceEvents = EventRecorder<HostLinkEvent>()
        let listenAddress: LinkAddress =
            transport == "unix" ? .unix(path: SocketTransportTests.temporarySocketPath()) : .tcp(host: "127.0.0.1", port: 0)
        let listener = try LinkListener.listen(on: listenAddress, options: LinkListenerOptions(scheduler: deviceClock)) {
            link in
            deviceLink.withLock { $0 = link }
            link.open(eventHandler: deviceEvents.handler)
        }
        defer { listener.stop() }
        let host = try LinkConnector.connect(to: listener.address, options: LinkConnectionOptions(scheduler: clock))
        defer { host.close() }
        let hostEvents = EventRecorder<DeviceLinkEvent>()
        host.open(eventHandler: hostEvents.handler)
        host.send(.hello(protocolVersion: linkProtocolVersion, pairingToken: nil))
        #expect(deviceEvents.wait { $0.contains { if case .message(.hello) = $0 { true } else { false } } })
        guard let device = deviceLink.withLock({ $0 }), let deviceClockReader = device as? any LinkClockReading else {
            Issue.record("no device link")
            return
        }
        #expect(deviceClockReader.linkClockUs == offset.wholeMicroseconds)
        #expect((host as? any LinkClockReading)?.linkClockUs == 0)

        func send(captureAgoUs: Int64) {
            let sent = deviceClockReader.linkClockUs
            device.send(.videoSample(VideoSample(
                presentationTimeUs: sent, isKeyframe: true, format: .hevc, payload: Data([1, 2, 3]),
                timing: SampleTiming(captureUs: sent - captureAgoUs, sentUs: sent))))
        }
        func timings() -> [SampleTiming?] {
            hostEvents.all.compactMap { event -> SampleTiming?? in
                if case .message(.videoSample(let sample)) = event { return .some(sample.timing) }
                return nil
            }
        }

        // Before any exchange: delivered on the device's clock, marked unmapped.
        send(captureAgoUs: 5_000)
        #expect(hostEvents.wait { _ in timings().count == 1 })
        #expect(timings().first == SampleTiming(captureUs: offset.wholeMicroseconds - 5_000, sentUs: offset.wholeMicroseconds))

        // 1 s: the host's heartbeat carries t0 = 1 s; wait until the device has it (t1 = 1 s + offset).
        clock.advance(by: .seconds(1))
        #expect(deviceEvents.wait { $0.contains { if case .message(.heartbeat(_, 1_000_000?)) = $0 { true } else { false } } })
        // The device beats at 1 s too. Its beat is taken on the host before time moves on: one still on its way
        // when the clock reaches 2 s would be taken then, and read as a round trip of 1 s (seen on a loaded machine).
        #expect(hostEvents.wait { $0.contains { if case .message(.heartbeat) = $0 { true } else { false } } })
        // 2 s: the device's heartbeat echoes it (t2 = 2 s + offset); the host takes it at t3 = 2 s.
        clock.advance(by: .seconds(1))
        #expect(hostEvents.wait { events in
            events.contains { if case .message(.heartbeat(_, _, _?)) = $0 { true } else { false } }
        })
        let statistics = (host as? any LinkDiagnosticsReporting)?.diagnostics.clock
        #expect(statistics?.offsetUs == offset.wholeMicroseconds)
        #expect(statistics?.roundTripUs == 0)  // virtual time stood still while the bytes travelled
        // One or two exchanges: both ends beat at the same virtual instants, and whether the host's beat of 1 s (or
        // of 2 s) reaches the device before the device's own timer fires in that instant depends on the socket's
        // threads. Every exchange measures the same offset; none may be rejected.
        #expect((1...2).contains(statistics?.exchangesAccepted ?? 0))
        #expect(statistics?.exchangesRejected == 0)

        // After it: capture 12.5 ms before sending, on the device's clock, arrives on the host's clock.
        send(captureAgoUs: 12_500)
        #expect(hostEvents.wait { _ in timings().count == 2 })
        #expect(timings().last == SampleTiming(captureUs: 2_000_000 - 12_500, sentUs: 2_000_000, receivedUs: 2_000_000))
    }
}

@Suite("Sample timing in process")
struct InProcessTimingTests {
    @Test("one scheduler for both ends: samples arrive stamped on the host clock from the first, with no heartbeats")
    func stampedAtOnce() {
        let scheduler = ManualScheduler()
        let (host, device) = InProcessLink.makePair(scheduler: scheduler, liveness: .disabled)
        let hostEvents = EventRecorder<DeviceLinkEvent>()
        host.open(eventHandler: hostEvents.handler)
        device.open(eventHandler: { _ in })
        scheduler.advance(by: .milliseconds(1_500))
        let sent = (device as? any LinkClockReading)?.linkClockUs ?? -1
        #expect(sent == 1_500_000)
        var sample = Fixtures.sample(0)
        sample.timing = SampleTiming(captureUs: sent - 40_000, sentUs: sent)
        device.send(.videoSample(sample))
        device.send(.videoSample(Fixtures.sample(1)))
        scheduler.advance(by: .milliseconds(3))
        scheduler.runUntilIdle()
        let timings = hostEvents.all.compactMap { event -> SampleTiming?? in
            if case .message(.videoSample(let sample)) = event { return .some(sample.timing) }
            return nil
        }
        // Delivered on the scheduler's next turn at 1.5 s: received then (the 3 ms advance came after).
        #expect(timings == [SampleTiming(captureUs: 1_460_000, sentUs: 1_500_000, receivedUs: 1_500_000), nil])
    }
}
