import Testing
@testable import EmbeddedVitals

/// The gyroscope's way to a run of the embedded engine (``RotationRateFeed``): bounded, in order, finite only.
@Suite("RotationRateFeed")
struct RotationRateFeedTests {
    @Test("readings wait in order until taken, once; non-finite ones are dropped; past the capacity the oldest go and are counted")
    func boundedAndOrdered() {
        let feed = RotationRateFeed()
        feed.add(at: 1, across: 0.1, down: -0.1)
        feed.add(at: .nan, across: 0, down: 0)
        feed.add(at: 2, across: .infinity, down: 0)
        feed.add(at: 3, across: 0.3, down: -0.3)
        let taken = feed.take()
        #expect(taken.map(\.t) == [1, 3] && taken[1].across == 0.3 && taken[1].down == -0.3)
        #expect(feed.take().isEmpty && feed.dropped == 0 && feed.taken == 2 && feed.alignment == nil)
        for k in 0 ..< RotationRateFeed.capacity + 5 { feed.add(at: Double(k), across: 0, down: 0) }
        let kept = feed.take()
        #expect(kept.count == RotationRateFeed.capacity && kept.first?.t == 5 && feed.dropped == 5)
    }
}
