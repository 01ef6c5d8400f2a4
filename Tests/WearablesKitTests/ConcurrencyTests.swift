import Testing
@testable import WearablesKit

@Suite("Concurrency")
struct ConcurrencyTests {
    private static let legal: Set<[StreamState]> = [
        [.stopped, .waitingForDevice],
        [.waitingForDevice, .starting], [.waitingForDevice, .streaming], [.waitingForDevice, .paused],
        [.waitingForDevice, .stopping], [.waitingForDevice, .stopped],
        [.starting, .streaming], [.starting, .paused], [.starting, .stopping], [.starting, .stopped],
        [.starting, .waitingForDevice],
        [.streaming, .paused], [.streaming, .stopping], [.streaming, .stopped], [.streaming, .waitingForDevice],
        [.paused, .streaming], [.paused, .stopping], [.paused, .stopped], [.paused, .waitingForDevice],
        [.stopping, .stopped],
    ]

    @Test("app calls racing link events and timers: no trap, no deadlock, states arrive in a legal order")
    func racingCalls() async throws {
        var behaviour = TestDevice.Behaviour()
        behaviour.sendsFrames = true
        let rig = try Rig(behaviour: behaviour)
        let (session, _, stream) = try rig.streaming(StreamConfiguration(videoCodec: .raw, resolution: .low, frameRate: 30))
        let states = Recorder<StreamState>()
        let frames = Recorder<Int64>()
        let tokens = ListenerTokenBag()
        stream.statePublisher.listen(states.callback).store(in: tokens)
        stream.videoFramePublisher.listen { frames.record($0.presentationTimeUs) }.store(in: tokens)
        // A listener that calls back into WearablesKit from inside a callback.
        stream.statePublisher.listen { state in if state == .paused { _ = stream.capturePhoto(format: .jpeg) } }
            .store(in: tokens)
        let scheduler = rig.scheduler
        let driver = Task.detached {
            for _ in 0..<3_000 {
                scheduler.advance(by: .milliseconds(7))
                await Task.yield()
            }
        }
        let caller = Task.detached {
            for index in 0..<600 {
                if index % 3 == 0 { stream.stop() } else { stream.start() }
                _ = stream.capturePhoto(format: .jpeg)
                await Task.yield()
            }
        }
        await caller.value
        await driver.value
        // Whatever the race left behind, the stream still works.
        stream.stop()
        rig.scheduler.advance(by: .seconds(5))
        stream.start()
        rig.scheduler.advance(by: .seconds(1))
        #expect(stream.state == .streaming)
        stream.stop()
        rig.run()
        rig.scheduler.advance(by: .seconds(5))
        #expect(stream.state == .stopped)
        #expect(session.state == .started)
        let seen = [StreamState.streaming] + states.values
        for index in seen.indices.dropLast() {
            let pair = [seen[index], seen[index + 1]]
            #expect(Self.legal.contains(pair), "illegal transition \(pair) at \(index)")
        }
        #expect(states.count > 2)
        #expect(frames.count > 0)
    }
}
