import Synchronization
import Testing
@testable import WearablesKit

@Suite("Announcer, tokens and bags")
struct AnnouncerTests {
    private func makeBroadcaster() -> (Broadcaster<Int>, EffectQueue) {
        let effects = EffectQueue()
        return (Broadcaster<Int>(effects: effects), effects)
    }

    private func publish(_ broadcaster: Broadcaster<Int>, _ effects: EffectQueue, _ values: Int...) {
        for value in values { broadcaster.publish(value) }
        effects.drain()
    }

    @Test("a kept token receives every value, in order")
    func delivers() {
        let (broadcaster, effects) = makeBroadcaster()
        let recorder = Recorder<Int>()
        let token = broadcaster.listen(recorder.callback)
        publish(broadcaster, effects, 1, 2, 3)
        #expect(recorder.values == [1, 2, 3])
        withExtendedLifetime(token) {}
    }

    @Test("dropping the token ends the listener")
    func droppingEnds() {
        let (broadcaster, effects) = makeBroadcaster()
        let recorder = Recorder<Int>()
        var token: (any AnyListenerToken)? = broadcaster.listen(recorder.callback)
        publish(broadcaster, effects, 1)
        #expect(token != nil)
        token = nil
        publish(broadcaster, effects, 2)
        #expect(recorder.values == [1])
        #expect(broadcaster.subscriberCount == 0)
    }

    @Test("a discarded token never delivers")
    func discardedToken() {
        let (broadcaster, effects) = makeBroadcaster()
        let recorder = Recorder<Int>()
        _ = broadcaster.listen(recorder.callback)
        publish(broadcaster, effects, 1)
        #expect(recorder.values.isEmpty)
    }

    @Test("cancel() ends the listener, even for values already queued")
    func cancelEnds() async {
        let (broadcaster, effects) = makeBroadcaster()
        let recorder = Recorder<Int>()
        let token = broadcaster.listen(recorder.callback)
        broadcaster.publish(1)  // queued, not yet delivered
        await token.cancel()
        effects.drain()
        publish(broadcaster, effects, 2)
        #expect(recorder.values.isEmpty)
        await token.cancel()  // idempotent
    }

    @Test("a bag keeps tokens alive; clear() ends them")
    func bagClear() {
        let (broadcaster, effects) = makeBroadcaster()
        let recorder = Recorder<Int>()
        let bag = ListenerTokenBag()
        broadcaster.listen(recorder.callback).store(in: bag)
        bag.insert(broadcaster.listen(recorder.callback))
        bag.insert(nil)
        #expect(bag.count == 2)
        publish(broadcaster, effects, 1)
        #expect(recorder.values == [1, 1])
        bag.clear()
        #expect(bag.count == 0)
        publish(broadcaster, effects, 2)
        #expect(recorder.values == [1, 1])
    }

    @Test("cancelAll() cancels every token in the bag")
    func bagCancelAll() async {
        let (broadcaster, effects) = makeBroadcaster()
        let recorder = Recorder<Int>()
        let bag = ListenerTokenBag()
        let kept = broadcaster.listen(recorder.callback)
        bag.insert(kept)
        await bag.cancelAll()
        publish(broadcaster, effects, 1)
        #expect(recorder.values.isEmpty)
        #expect(bag.count == 0)
        withExtendedLifetime(kept) {}
    }

    @Test("async streams get values, then finish when the announcer finishes")
    func streamsFinish() async {
        let (broadcaster, effects) = makeBroadcaster()
        let stream = broadcaster.makeStream(bufferingPolicy: .unbounded, initial: 0)
        publish(broadcaster, effects, 1, 2)
        broadcaster.finish()
        effects.drain()
        var seen: [Int] = []
        for await value in stream { seen.append(value) }
        #expect(seen == [0, 1, 2])
        let late = broadcaster.makeStream(bufferingPolicy: .unbounded, initial: 9)
        effects.drain()
        var lateSeen: [Int] = []
        for await value in late { lateSeen.append(value) }
        #expect(lateSeen == [9])
    }

    @Test("frame streams keep only the newest values when the consumer lags")
    func bufferingNewest() async {
        let (broadcaster, effects) = makeBroadcaster()
        let stream = broadcaster.makeStream(bufferingPolicy: .bufferingNewest(2), initial: nil)
        publish(broadcaster, effects, 1, 2, 3, 4, 5)
        broadcaster.finish()
        effects.drain()
        var seen: [Int] = []
        for await value in stream { seen.append(value) }
        #expect(seen == [4, 5])
    }

    @Test("a listener may call back into the announcer without deadlock; order is kept")
    func reentrancy() {
        let (broadcaster, effects) = makeBroadcaster()
        let recorder = Recorder<Int>()
        let token = broadcaster.listen { value in
            recorder.record(value)
            if value == 1 {
                broadcaster.publish(10)
                effects.drain()  // returns at once: the outer drain delivers 10 after 2
            }
        }
        publish(broadcaster, effects, 1, 2)
        #expect(recorder.values == [1, 2, 10])
        withExtendedLifetime(token) {}
    }
}
