import Testing
@testable import WearablesKit

@Suite("State machines, event by event")
struct StateMachineTests {
    private let configuration = StreamConfiguration()

    @Test("stream: start with the device ready asks for the stream at once")
    func streamStartReady() {
        var machine = StreamStateMachine(deviceID: "g", configuration: configuration, batteryLowThreshold: 5)
        #expect(machine.deviceReadinessChanged(true).isEmpty)
        #expect(machine.start() == [.state(.waitingForDevice), .schedule(.wait), .resetSamples, .send(.startStream(configuration))])
        #expect(machine.deviceReported(.starting(configuration)) == [.cancel(.wait), .state(.starting), .schedule(.start)])
        #expect(machine.deviceReported(.streaming(configuration)) == [.cancel(.wait), .cancel(.start), .state(.streaming)])
        #expect(machine.state == .streaming)
    }

    @Test("stream: start without the device waits, and asks when it becomes ready")
    func streamStartWaits() {
        var machine = StreamStateMachine(deviceID: "g", configuration: configuration, batteryLowThreshold: 5)
        #expect(machine.start() == [.state(.waitingForDevice), .schedule(.wait)])
        #expect(machine.deviceReadinessChanged(true) == [.resetSamples, .send(.startStream(configuration))])
        #expect(machine.deviceReadinessChanged(true).isEmpty)  // asked once
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
        #expect(machine.start().isEmpty)
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
