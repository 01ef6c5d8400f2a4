import Dispatch
import Foundation
import Synchronization
import Testing
@testable import SmartSpectraCore

@Suite("Custom input: a new timeline from the submitting thread, and waiting for queue room")
struct TimelineTests {
    /// Runs `body` on a thread of its own (as the bridge's worker does) and waits for it off the pool.
    private func onOwnThread(_ body: @escaping @Sendable () -> Void) async {
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            body()
            done.signal()
        }
        thread.start()
        await waitOffPool(done)
    }

    @Test("the gap limit is custom input's own 2 s, exposed for callers")
    func gapLimit() {
        #expect(CustomInput.maximumTimestampGapUs == 2_000_000)
        #expect(CustomInput.maximumTimestampGap == .seconds(2))
    }

    @Test("beginNewTimeline restarts the run without leaving the submitting thread; the next frame may start anywhere")
    func newTimelineOnTheSameThread() async throws {
        let harness = try await Harness.started()
        let results = Mutex<[FrameSubmissionResult]>([])
        let threads = Mutex<Set<ObjectIdentifier>>([])
        let failure = Mutex<SmartSpectraError?>(nil)
        let input = harness.input
        let sdk = harness.sdk
        await onOwnThread {
            let record = { threads.withLock { _ = $0.insert(ObjectIdentifier(Thread.current)) } }
            record()
            results.withLock { $0.append(input.sendFrame(Pictures.nv12(width: 4, height: 4), timestampUs: 10_000_000)) }
            // Without a new timeline, a frame 5 s later is a gap.
            results.withLock { $0.append(input.sendFrame(Pictures.nv12(width: 4, height: 4), timestampUs: 15_000_000)) }
            do throws(SmartSpectraError) {
                try input.beginNewTimeline()
            } catch {
                failure.withLock { $0 = error }
            }
            record()
            // A fresh timeline: even an earlier timestamp is the first of its run.
            results.withLock { $0.append(input.sendFrame(Pictures.nv12(width: 4, height: 4), timestampUs: 1_000)) }
            sdk.waitForQueueRoom(allowingPending: 0)
            record()
        }
        #expect(failure.withLock { $0 } == nil)
        let codes = results.withLock { $0 }.map(\.code)
        #expect(codes == [nil, .timestampGap, nil])
        #expect(threads.withLock { $0.count } == 1, "everything ran on the one submitting thread")
        // Two runs: the backend made a processor for each, finished the first, and processed both accepted frames.
        #expect(harness.backend.configurations.count == 2)
        #expect(harness.backend.finishCount == 1)
        #expect(harness.backend.frames.map(\.timestampUs) == [10_000_000, 1_000])
        try await sdk.stop()
    }

    @Test("waitForQueueRoom blocks a producer thread until the backend has caught up")
    func waitForRoom() async throws {
        let backend = RecordingBackend(gated: true)
        let harness = try await Harness.started(backend: backend)
        let input = harness.input
        let sdk = harness.sdk
        let passed = Atomic<Bool>(false)
        let producerDone = DispatchSemaphore(value: 0)
        let thread = Thread {
            for index in 0 ..< 3 {
                _ = input.sendFrame(Pictures.nv12(width: 4, height: 4), timestampUs: Int64(index + 1) * 33_000)
            }
            sdk.waitForQueueRoom(allowingPending: 0)
            passed.store(true, ordering: .releasing)
            producerDone.signal()
        }
        thread.start()
        let gate = try #require(backend.gate)
        // The backend holds each frame until released: the producer cannot pass while frames are pending.
        for _ in 0 ..< 3 {
            await waitOffPool(gate.entered)
            let early = passed.load(ordering: .acquiring)
            #expect(!early)
            gate.gate.signal()
        }
        await waitOffPool(producerDone)
        let late = passed.load(ordering: .acquiring)
        #expect(late)
        #expect(sdk.frameStatistics.processed == 3)
        try await sdk.stop()
    }
}

@Suite("Custom input: absurd caller geometry is refused, never a trap")
struct AbsurdGeometryTests {
    @Test("a BGRA buffer wider than Int.max / 4 is rejected with frameConversionFailed (found by fuzzing)")
    func bgraWidthOverflow() async throws {
        let harness = try await Harness.started()
        let width = Int.max / 4 + 1
        let buffer = PixelBuffer(
            format: .bgra32, width: width, height: 1,
            planes: [PixelPlane(width: width, height: 1, bytesPerRow: 8, offset: 0)], byteCount: 8)
        let result = harness.input.sendFrame(buffer, timestampUs: 1_000)
        #expect(result.code == .frameConversionFailed)
        try await harness.sdk.stop()
    }
}
