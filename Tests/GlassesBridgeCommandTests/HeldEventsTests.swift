import GlassesBridge
@testable import GlassesBridgeCommand
import Synchronization
import Testing

/// The pipeline's events held until the output opens.
@Suite("Events held until the output opens")
struct HeldEventsTests {
    @Test("events before the output opens arrive first and in order; later ones pass straight on")
    func heldThenPassedOn() {
        let held = HeldEvents()
        let seen = Mutex<[String]>([])
        held.emit(.warning("one"), at: 0)
        held.emit(.warning("two"), at: 0.5)
        held.open { event, _ in
            if case .warning(let text) = event { seen.withLock { $0.append(text) } }
            // An event emitted while the held ones are passed on keeps its place behind them.
            if case .warning("one") = event { held.emit(.warning("during"), at: 0.7) }
        }
        held.emit(.warning("three"), at: 1)
        #expect(seen.withLock { $0 } == ["one", "two", "during", "three"])
    }
}
