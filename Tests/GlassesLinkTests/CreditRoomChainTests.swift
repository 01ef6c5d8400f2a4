import Foundation
import Synchronization
import Testing
import WearablesKit

@testable import GlassesLink
@testable import GlassesLinkCore

@Suite("Gated credit over a long stream")
struct CreditRoomChainTests {
    /// Regression: the room closure was stored as a Mutex's value and gained two reabstraction thunks per delivered
    /// sample; freeing the endpoint after a long stream released that chain recursively and overflowed the stack of
    /// the thread that dropped it (a segfault after about 40 minutes of a soak). Many samples, then the last
    /// reference goes away on a thread with a small stack.
    @Test("many gated samples, then the link is freed on a small stack: no crash")
    func longGatedStream() {
        let scheduler = ManualScheduler()
        var pair: (host: any DeviceLink, device: any HostLink)? = InProcessLink.makePair(
            scheduler: scheduler, initialCredit: 4, liveness: .disabled)
        let delivered = Atomic<Int>(0)
        (pair!.host as? any VideoCreditGating)?.gateVideoCredit { 4 }
        pair!.host.open { event in
            if case .message(.videoSample) = event { delivered.add(1, ordering: .relaxed) }
        }
        pair!.device.open { _ in }
        scheduler.runUntilIdle()
        let samples = 30_000
        for index in 0 ..< samples {
            pair!.device.send(.videoSample(Fixtures.sample(index, size: 8)))
            if index % 4 == 3 { scheduler.runUntilIdle() }
        }
        scheduler.runUntilIdle()
        #expect(delivered.load(ordering: .relaxed) == samples)
        let box = Mutex<(host: any DeviceLink, device: any HostLink)?>(pair)
        pair = nil
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            box.withLock { $0 = nil }  // the last references: the endpoints are freed here
            done.signal()
        }
        thread.stackSize = 128 * 1024
        thread.start()
        #expect(done.wait(timeout: .now() + 60) == .success)
    }
}
