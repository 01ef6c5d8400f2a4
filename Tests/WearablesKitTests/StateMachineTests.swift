import Testing
@testable import WearablesKit

@Suite("State machines, event by event")
struct StateMachineTests {
    private let configuration = StreamConfiguration()

    @Test("stream: start with the device ready asks for the stream at once")
    func streamStartReady() {
        var machine = StreamStateMachine(deviceID: "g", configuration: configuration, batteryLowThreshold: 5)
        #expect(machine.deviceReadinessChanged(true, nextGeneration: { 1 }).isEmpty)
        #expect(machine.start(nextGeneration: { 1 }) == [.state(.waitingForDevice), .schedule(.wait), .resetSamples, .send(.startStream(configuration, generation: 1))])
        #expect(machine.deviceReported(.starting(configuration)) == [.cancel(.wait), .state(.starting), .schedule(.start)])
        #expect(machine.deviceReported(.streaming(configuration)) == [.cancel(.wait), .cancel(.start), .state(.streaming)])
        #expect(machine.state == .streaming)
    }

    @Test("stream: start without the device waits, and asks when it becomes ready")
    func streamStartWaits() {
        var machine = StreamStateMachine(deviceID: "g", configuration: configuration, batteryLowThreshold: 5)
        #expect(machine.start(nextGeneration: { 1 }) == [.state(.waitingForDevice), .schedule(.wait)])
        #expect(machine.deviceReadinessChanged(true, nextGeneration: { 1 }) == [.resetSamples, .send(.startStream(configuration, generation: 1))])
        #expect(machine.deviceReadinessChanged(true, nextGeneration: { 1 }).isEmpty)  // asked once
    }

    @Test("stream: ignores events that do not apply")
    func streamIgnores() {
        var machine = StreamStateMachine(deviceID: "g", configuration: configuration, batteryLowThreshold: 5)
        #expect(machine.deviceReported(.streaming(configuration)).isEmpty)
        #expect(machine.deviceReported(.stopped).isEmpty)
        #expect(machine.deviceFault(.internalError).isEmpty)
        #expect(machine.timerFired(.wait).isEmpty)
        #expect(machine.stop().isEmpty)
        #expect(machine.photoDelivered(PhotoData(data: .init(), format: .jpeg), requestID: 1).isEmpty)
        #expect(machine.state == .stopped)
    }

    @Test("stream: detach of a stopped stream finishes it and it never starts again")
    func streamDetach() {
        var machine = StreamStateMachine(deviceID: "g", configuration: configuration, batteryLowThreshold: 5)
        #expect(machine.detach() == [.finish])
        #expect(machine.start(nextGeneration: { 1 }).isEmpty)
    }

    /// A stream that streamed with generation 1, was stopped, gave up waiting for the acknowledgement (grace
    /// period) and was started again with generation 2, which the glasses accepted.
    private func restartedAfterUnacknowledgedStop() -> StreamStateMachine {
        var machine = StreamStateMachine(deviceID: "g", configuration: configuration, batteryLowThreshold: 5)
        _ = machine.deviceReadinessChanged(true, nextGeneration: { 1 })
        _ = machine.start(nextGeneration: { 1 })
        _ = machine.deviceReported(.starting(configuration), generation: 1)
        _ = machine.deviceReported(.streaming(configuration), generation: 1)
        #expect(machine.stop().contains(.send(.stopStream(generation: 1))))
        #expect(machine.timerFired(.stop).contains(.state(.stopped)))  // the stop grace period expired
        #expect(machine.start(nextGeneration: { 2 }).contains(.send(.startStream(configuration, generation: 2))))
        #expect(machine.state == .waitingForDevice)
        return machine
    }

    @Test("stream: a late stopped of an earlier stop (old generation) is ignored, while waiting and while streaming")
    func lateStopAcknowledgementIgnored() {
        var machine = restartedAfterUnacknowledgedStop()
        #expect(machine.deviceReported(.stopped, generation: 1).isEmpty)
        #expect(machine.state == .waitingForDevice)
        #expect(machine.staleEventsIgnored == 1)
        _ = machine.deviceReported(.starting(configuration), generation: 2)
        #expect(machine.deviceReported(.streaming(configuration), generation: 2).contains(.state(.streaming)))
        #expect(machine.deviceReported(.stopped, generation: 1).isEmpty)
        #expect(machine.state == .streaming)
        #expect(machine.acceptsSamples)  // frames are delivered, not discarded
        #expect(machine.staleEventsIgnored == 2)
    }

    @Test("stream: late starting and streaming of an earlier start are ignored; the current generation's are not")
    func lateStartAnswersIgnored() {
        var machine = restartedAfterUnacknowledgedStop()
        #expect(machine.deviceReported(.starting(configuration), generation: 1).isEmpty)
        #expect(machine.deviceReported(.streaming(configuration), generation: 1).isEmpty)
        #expect(machine.deviceReported(.paused, generation: 1).isEmpty)
        #expect(machine.state == .waitingForDevice)
        #expect(machine.staleEventsIgnored == 3)
        // A generation the host never sent answers nothing either.
        #expect(machine.deviceReported(.streaming(configuration), generation: 9).isEmpty)
        #expect(machine.deviceReported(.starting(configuration), generation: 2) == [
            .cancel(.wait), .state(.starting), .schedule(.start),
        ])
    }

    @Test("stream: stopped with the current generation stops the restarted stream")
    func currentGenerationStops() {
        var machine = restartedAfterUnacknowledgedStop()
        _ = machine.deviceReported(.streaming(configuration), generation: 2)
        #expect(machine.deviceReported(.stopped, generation: 2).contains(.state(.stopped)))
        #expect(machine.state == .stopped)
        #expect(machine.staleEventsIgnored == 0)
    }

    @Test("stream: events without a generation (glasses from before generations) are taken as they come")
    func eventsWithoutGeneration() {
        var machine = restartedAfterUnacknowledgedStop()
        // As before generations: the late stopped cannot be told from an answer to the new start, and stops it.
        #expect(machine.deviceReported(.stopped).contains(.state(.stopped)))
        #expect(machine.state == .stopped)
        var other = restartedAfterUnacknowledgedStop()
        _ = other.deviceReported(.starting(configuration))
        #expect(other.deviceReported(.streaming(configuration)).contains(.state(.streaming)))
        #expect(other.staleEventsIgnored == 0)
    }

    @Test("stream: every stop after a start carries that start's generation")
    func stopsCarryTheGeneration() {
        var machine = StreamStateMachine(deviceID: "g", configuration: configuration, batteryLowThreshold: 5)
        _ = machine.deviceReadinessChanged(true, nextGeneration: { 4 })
        _ = machine.start(nextGeneration: { 7 })
        #expect(machine.generation == 7)
        #expect(machine.timerFired(.wait).contains(.send(.stopStream(generation: 7))))  // abandoned start
        _ = machine.start(nextGeneration: { 8 })
        _ = machine.deviceReported(.starting(configuration), generation: 8)
        #expect(machine.timerFired(.start).contains(.send(.stopStream(generation: 8))))  // start timeout
        // Readiness without a pending start draws no generation.
        var untouched = StreamStateMachine(deviceID: "g", configuration: configuration, batteryLowThreshold: 5)
        _ = untouched.deviceReadinessChanged(true, nextGeneration: {
            Issue.record("no start was sent, so no generation should be drawn")
            return 1
        })
        #expect(untouched.generation == nil)
    }

    @Test("session: start, device started, stop, device ended")
    func sessionHappyPath() throws {
        var machine = DeviceSessionStateMachine()
        #expect(try machine.start().get() == [.state(.starting), .send(.startSession), .schedule(.start)])
        #expect(machine.deviceReported(.started) == [.cancel(.start), .cancel(.deviceUnavailable), .state(.started)])
        #expect(machine.stop() == [
            .cancel(.start), .cancel(.deviceUnavailable), .state(.stopping), .stopCamera, .send(.stopSession), .schedule(.stop),
        ])
        let ended = machine.deviceReported(.ended(reason: "bye"))
        #expect(ended.suffix(3) == [.endCamera, .state(.stopped), .finish])
        #expect(!ended.contains { if case .error = $0 { true } else { false } })
        #expect(machine.start() == .failure(.sessionAlreadyStopped))
    }

    @Test("session: pause, resume, and events that do not apply")
    func sessionPause() throws {
        var machine = DeviceSessionStateMachine()
        #expect(machine.deviceReported(.started).isEmpty)  // idle
        _ = try machine.start().get()
        #expect(machine.deviceReported(.paused).isEmpty)  // starting
        _ = machine.deviceReported(.started)
        #expect(machine.deviceReported(.paused) == [.state(.paused)])
        #expect(!machine.isReady)
        #expect(machine.deviceReported(.resumed) == [.cancel(.start), .cancel(.deviceUnavailable), .state(.started)])
        #expect(machine.isReady)
    }

    @Test("session: link lost while stopping ends it at once")
    func sessionLinkLostWhileStopping() throws {
        var machine = DeviceSessionStateMachine()
        _ = try machine.start().get()
        _ = machine.deviceReported(.started)
        _ = machine.stop()
        #expect(machine.linkLost().suffix(3) == [.endCamera, .state(.stopped), .finish])
    }
}
