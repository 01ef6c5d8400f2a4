import Synchronization
import Testing
import WearablesKit

@Suite("ManualScheduler: time order with many actions and cancellations")
struct ManualSchedulerOrderTests {
    @Test("actions run by deadline, same deadlines in scheduling order, cancelled ones never")
    func orderAndCancellation() {
        let scheduler = ManualScheduler()
        let ran = Mutex<[Int]>([])
        var expected: [(deadline: Int, index: Int)] = []
        var handles: [ScheduledAction] = []
        var generator = SplitMix(seed: 42)
        for index in 0 ..< 5_000 {
            let deadline = Int(generator.next() % 700)
            handles.append(scheduler.schedule(after: .milliseconds(deadline)) { ran.withLock { $0.append(index) } })
            expected.append((deadline, index))
        }
        // Cancel every third action.
        for index in stride(from: 0, to: 5_000, by: 3) { handles[index].cancel() }
        scheduler.advance(by: .seconds(1))
        let survivors = expected.filter { $0.index % 3 != 0 }.sorted { ($0.deadline, $0.index) < ($1.deadline, $1.index) }
        #expect(ran.withLock { $0 } == survivors.map(\.index))
        #expect(scheduler.pendingCount == 0)
        #expect(scheduler.now == .seconds(1))
    }

    @Test("actions scheduled by actions for the same instant run in the same advance")
    func nestedScheduling() {
        let scheduler = ManualScheduler()
        let ran = Mutex<[String]>([])
        scheduler.schedule(after: .seconds(1)) {
            ran.withLock { $0.append("a") }
            scheduler.schedule(after: .zero) { ran.withLock { $0.append("c") } }
        }
        scheduler.schedule(after: .seconds(1)) { ran.withLock { $0.append("b") } }
        scheduler.advance(by: .seconds(1))
        #expect(ran.withLock { $0 } == ["a", "b", "c"])
    }
}

/// A small deterministic generator for test data.
private struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
