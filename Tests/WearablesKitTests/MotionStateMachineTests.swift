import Testing
@testable import WearablesKit

/// Every transition of the motion capability's state machine (DAT 1.0's MWDATMotion rules).
@Suite("MotionStateMachine")
struct MotionStateMachineTests {
    private func ready(_ rate: MotionSamplingRate = .hz10) -> MotionStateMachine {
        var machine = MotionStateMachine(configuration: MotionConfiguration(samplingRate: rate))
        _ = machine.deviceReadinessChanged(true)
        return machine
    }

    private func started() -> MotionStateMachine {
        var machine = ready()
        _ = machine.start()
        _ = machine.deviceReported(.started(.hz10))
        return machine
    }

    private let sample = MotionSample(timestampNs: 1, gyroscope: Vector3(x: 1, y: 2, z: 3))

    @Test("created stopped, with the default configuration at 10 Hz")
    func createdStopped() {
        let machine = MotionStateMachine(configuration: MotionConfiguration())
        #expect(machine.state == .stopped)
        #expect(machine.configuration.samplingRate == .hz10)
    }

    @Test("start: stopped → starting, asking the glasses at the configured rate")
    func start() {
        var machine = ready(.hz60)
        #expect(machine.start() == [.state(.starting), .send(.startMotion(.hz60))])
        #expect(machine.state == .starting)
    }

    @Test("start is silently ignored unless stopped")
    func startIgnoredUnlessStopped() {
        var machine = ready()
        _ = machine.start()
        #expect(machine.start().isEmpty)  // starting
        _ = machine.deviceReported(.started(.hz10))
        #expect(machine.start().isEmpty)  // started
        _ = machine.stop()
        #expect(machine.state == .stopping)
        #expect(machine.start().isEmpty)  // stopping
        #expect(machine.state == .stopping)
    }

    @Test("start with no glasses to ask: deviceDisconnected, still stopped")
    func startNotReady() {
        var machine = MotionStateMachine(configuration: MotionConfiguration())
        #expect(machine.start() == [.error(.deviceDisconnected)])
        #expect(machine.state == .stopped)
    }

    @Test("the glasses' started: starting → started; samples flow only then")
    func deviceStarted() {
        var machine = ready()
        #expect(machine.samplesArrived([sample]).isEmpty)  // stopped: dropped
        _ = machine.start()
        #expect(machine.deviceReported(.started(.hz10)) == [.state(.started)])
        #expect(machine.samplesArrived([sample]) == [.samples([sample])])
        #expect(machine.deviceReported(.started(.hz10)).isEmpty)  // a repeat changes nothing
    }

    @Test("stop: started → stopping → stopped when the glasses answer; then it can start again")
    func stopAndRestart() {
        var machine = started()
        #expect(machine.stop() == [.state(.stopping), .send(.stopMotion)])
        #expect(machine.samplesArrived([sample]).isEmpty)
        #expect(machine.stop().isEmpty)
        #expect(machine.deviceReported(.stopped) == [.state(.stopped)])
        #expect(machine.start() == [.state(.starting), .send(.startMotion(.hz10))])
    }

    @Test("stop while starting asks the glasses to stop; a late started is ignored")
    func stopWhileStarting() {
        var machine = ready()
        _ = machine.start()
        #expect(machine.stop() == [.state(.stopping), .send(.stopMotion)])
        #expect(machine.deviceReported(.started(.hz10)).isEmpty)
        #expect(machine.state == .stopping)
        #expect(machine.deviceReported(.stopped) == [.state(.stopped)])
    }

    @Test("stop when stopped does nothing")
    func stopWhenStopped() {
        var machine = ready()
        #expect(machine.stop().isEmpty)
        #expect(machine.state == .stopped)
    }

    @Test("the glasses stop on their own: stopping, stopped (as a photo does on real glasses)")
    func deviceStopped() {
        var machine = started()
        #expect(machine.deviceReported(.stopped) == [.state(.stopping), .state(.stopped)])
        var starting = ready()
        _ = starting.start()
        #expect(starting.deviceReported(.stopped) == [.state(.stopping), .state(.stopped)])
    }

    @Test("the glasses' sensor is unavailable: sensorUnavailable, then stopped")
    func unavailable() {
        var machine = ready()
        _ = machine.start()
        #expect(machine.deviceReported(.unavailable) == [.error(.sensorUnavailable), .state(.stopping), .state(.stopped)])
        var stopping = started()
        _ = stopping.stop()
        #expect(stopping.deviceReported(.unavailable) == [.state(.stopped)])
    }

    @Test("link lost while active: deviceDisconnected, stopped, and it may start again when the glasses are back")
    func linkLost() {
        var machine = started()
        #expect(machine.linkLost() == [.error(.deviceDisconnected), .state(.stopping), .state(.stopped)])
        #expect(machine.start() == [.error(.deviceDisconnected)])
        _ = machine.deviceReadinessChanged(true)
        #expect(machine.start() == [.state(.starting), .send(.startMotion(.hz10))])
        var idle = ready()
        #expect(idle.linkLost().isEmpty)
        var stopping = started()
        _ = stopping.stop()
        #expect(stopping.linkLost() == [.state(.stopped)])
    }

    @Test("removal is terminal: stops the glasses, finishes, and nothing starts it again")
    func removal() {
        var machine = started()
        #expect(machine.remove() == [.send(.stopMotion), .state(.stopping), .state(.stopped), .finish])
        #expect(machine.remove().isEmpty)
        #expect(machine.start().isEmpty)
        #expect(machine.stop().isEmpty)
        #expect(machine.deviceReported(.started(.hz10)).isEmpty)
        #expect(machine.samplesArrived([sample]).isEmpty)
        #expect(machine.state == .stopped)
        var idle = ready()
        #expect(idle.remove() == [.finish])
        var stopping = started()
        _ = stopping.stop()
        #expect(stopping.remove() == [.state(.stopped), .finish])
    }

    @Test("the session closes: capabilityClosed if active, then terminal")
    func sessionClosed() {
        var machine = started()
        #expect(machine.sessionClosed() == [.error(.capabilityClosed), .state(.stopping), .state(.stopped), .finish])
        #expect(machine.start().isEmpty)
        var idle = ready()
        #expect(idle.sessionClosed() == [.finish])
        #expect(idle.sessionClosed().isEmpty)
    }
}
