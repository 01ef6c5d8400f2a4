import Testing
@testable import WearablesKit

@Suite("DeviceSession")
struct DeviceSessionTests {
    private func session(_ rig: Rig) throws -> DeviceSession {
        rig.connect()
        return try rig.wearables.createSession(deviceSelector: AutoDeviceSelector(wearables: rig.wearables))
    }

    @Test("idle → starting → started → stopping → stopped, with the messages in order; streams finish")
    func lifecycle() async throws {
        let rig = try Rig()
        let session = try session(rig)
        #expect(session.state == .idle)
        #expect(session.deviceId == "glasses-1")
        #expect(session.device === rig.wearables.deviceForIdentifier("glasses-1"))
        let states = Recorder<DeviceSessionState>()
        let token = session.statePublisher.listen(states.callback)
        let stream = session.stateStream()
        let errors = session.errorStream()
        try session.start()
        #expect(session.state == .starting)
        #expect(rig.device.sent.last == .startSession)
        rig.run()
        #expect(session.state == .started)
        try session.start()  // no-op while started
        session.stop()
        #expect(session.state == .stopping)
        #expect(rig.device.sent.last == .stopSession)
        rig.run()
        #expect(session.state == .stopped)
        #expect(states.values == [.starting, .started, .stopping, .stopped])
        var streamed: [DeviceSessionState] = []
        for await state in stream { streamed.append(state) }
        #expect(streamed == [.idle, .starting, .started, .stopping, .stopped])
        var errorCount = 0
        for await _ in errors { errorCount += 1 }
        #expect(errorCount == 0)
        withExtendedLifetime(token) {}
    }

    @Test("stopped is terminal: start throws sessionAlreadyStopped; stop again does nothing")
    func terminal() throws {
        let rig = try Rig()
        let session = try session(rig)
        session.stop()  // from idle: straight to stopped
        #expect(session.state == .stopped)
        #expect(throws: DeviceSessionError.sessionAlreadyStopped) { try session.start() }
        session.stop()
        #expect(session.state == .stopped)
        #expect(rig.device.sentCount(\.isStopSession) == 0)
    }

    @Test("no eligible device: createSession and start throw noEligibleDevice")
    func noEligibleDevice() throws {
        let rig = try Rig()
        #expect(throws: DeviceSessionError.noEligibleDevice) {
            try rig.wearables.createSession(deviceSelector: AutoDeviceSelector(wearables: rig.wearables))
        }
        #expect(throws: DeviceSessionError.noEligibleDevice) {
            try rig.wearables.createSession(deviceSelector: SpecificDeviceSelector(device: "nobody"))
        }
        rig.connect()
        let session = try rig.wearables.createSession(deviceSelector: SpecificDeviceSelector(device: "glasses-1"))
        rig.device.drop()
        rig.run()
        #expect(throws: DeviceSessionError.noEligibleDevice) { try session.start() }
        #expect(session.state == .idle)
    }

    @Test("one session per device until the previous one has stopped")
    func oneSessionPerDevice() throws {
        var behaviour = TestDevice.Behaviour()
        behaviour.answersSession = false
        let rig = try Rig(behaviour: behaviour)
        let selector = SpecificDeviceSelector(device: "glasses-1")
        let first = try session(rig)
        let idleTwin = try rig.wearables.createSession(deviceSelector: selector)
        try first.start()
        #expect(throws: DeviceSessionError.sessionAlreadyExists) { try rig.wearables.createSession(deviceSelector: selector) }
        #expect(throws: DeviceSessionError.sessionAlreadyExists) { try idleTwin.start() }
        rig.device.deliver(.session(.started))
        rig.run()
        first.stop()
        #expect(first.state == .stopping)
        #expect(throws: DeviceSessionError.sessionAlreadyExists) { try rig.wearables.createSession(deviceSelector: selector) }
        rig.device.deliver(.session(.ended(reason: "ok")))
        rig.run()
        #expect(first.state == .stopped)
        let next = try rig.wearables.createSession(deviceSelector: selector)
        try next.start()
        #expect(next.state == .starting)
    }

    @Test("the glasses pause and resume the session")
    func pauseResume() throws {
        let rig = try Rig()
        let session = try rig.startedSession()
        let states = Recorder<DeviceSessionState>()
        let token = session.statePublisher.listen(states.callback)
        rig.device.deliver(.session(.paused))
        rig.run()
        #expect(session.state == .paused)
        try session.start()  // must not restart while paused
        #expect(rig.device.sentCount(\.isStartSession) == 1)
        rig.device.deliver(.session(.resumed))
        rig.run()
        #expect(states.values == [.paused, .started])
        withExtendedLifetime(token) {}
    }

    @Test("glasses that end the session: unexpectedError(\"Session ended by device\"), then stopped")
    func endedByDevice() async throws {
        let rig = try Rig()
        let session = try rig.startedSession()
        let errors = session.errorStream()
        let states = session.stateStream()
        rig.device.deliver(.session(.ended(reason: "folded")))
        rig.run()
        #expect(session.state == .stopped)
        var seenErrors: [DeviceSessionError] = []
        for await error in errors { seenErrors.append(error) }
        #expect(seenErrors == [.unexpectedError(description: "Session ended by device")])
        var seenStates: [DeviceSessionState] = []
        for await state in states { seenStates.append(state) }
        #expect(seenStates == [.started, .stopped])
        // The glasses are free again.
        let next = try rig.wearables.createSession(deviceSelector: SpecificDeviceSelector(device: "glasses-1"))
        try next.start()
    }

    @Test("glasses that never accept: unexpectedError after the start timeout")
    func startTimeout() throws {
        var behaviour = TestDevice.Behaviour()
        behaviour.answersSession = false
        let rig = try Rig(behaviour: behaviour)
        let session = try session(rig)
        let errors = Recorder<DeviceSessionError>()
        let token = session.errorPublisher.listen(errors.callback)
        try session.start()
        rig.scheduler.advance(by: .seconds(9))
        #expect(session.state == .starting)
        rig.scheduler.advance(by: .seconds(1))
        #expect(session.state == .stopped)
        #expect(errors.values == [.unexpectedError(description: DeviceSessionStateMachine.startNotAcknowledged)])
        withExtendedLifetime(token) {}
    }

    @Test("glasses that never acknowledge stop: stopped after the grace period")
    func stopGrace() throws {
        let rig = try Rig()
        let session = try rig.startedSession()
        rig.device.behaviour.answersSession = false
        session.stop()
        rig.scheduler.advance(by: .milliseconds(1999))
        #expect(session.state == .stopping)
        rig.scheduler.advance(by: .milliseconds(1))
        #expect(session.state == .stopped)
    }

    @Test("a lost link pauses the session; the same glasses coming back resume it")
    func linkLossAndReconnect() throws {
        let rig = try Rig()
        let session = try rig.startedSession()
        rig.device.drop()
        rig.run()
        #expect(session.state == .paused)
        rig.scheduler.advance(by: .seconds(30))
        let link = rig.reconnect()
        #expect(link.sent.contains(.startSession))
        #expect(session.state == .started)
        rig.scheduler.advance(by: .seconds(60))
        #expect(session.state == .started)  // the unavailable timer was cancelled
    }

    @Test("lost glasses that do not come back: unexpectedError(\"Device unavailable\") after the wait timeout")
    func deviceUnavailable() throws {
        let rig = try Rig(deviceWaitTimeout: .seconds(5))
        let session = try rig.startedSession()
        let errors = Recorder<DeviceSessionError>()
        let token = session.errorPublisher.listen(errors.callback)
        rig.device.drop()
        rig.run()
        rig.scheduler.advance(by: .seconds(5))
        #expect(session.state == .stopped)
        #expect(errors.values == [.unexpectedError(description: "Device unavailable")])
        withExtendedLifetime(token) {}
    }

    @Test("critical and emergency heat are session errors")
    func thermal() throws {
        let rig = try Rig()
        let session = try rig.startedSession()
        let errors = Recorder<DeviceSessionError>()
        let token = session.errorPublisher.listen(errors.callback)
        rig.device.report { $0.thermalLevel = .severe }
        rig.device.report { $0.thermalLevel = .critical }
        rig.device.report { $0.thermalLevel = .emergency }
        rig.run()
        #expect(errors.values == [.thermalCritical, .thermalEmergency])
        withExtendedLifetime(token) {}
    }

    @Test("every session error has an actionable, distinct message")
    func messages() {
        let errors: [DeviceSessionError] = [
            .noEligibleDevice, .sessionAlreadyStopped, .sessionAlreadyExists, .sessionIdle, .capabilityAlreadyActive,
            .capabilityNotFound, .unexpectedError(description: "Session ended by device"), .thermalCritical,
            .thermalEmergency, .peakPowerShutdown, .batteryCritical, .datAppOnTheGlassesUpdateRequired, .dwaUnavailable,
            .insufficientSDKVersion, .dwaOutOfStuRange,
        ]
        let messages = errors.map(\.localizedDescription)
        #expect(Set(messages).count == errors.count)
        #expect(messages.allSatisfy { $0.count > 20 })
        #expect(DeviceSessionError.unexpectedError(description: "Session ended by device").localizedDescription
            .contains("Session ended by device"))
    }
}

@Suite("Camera and cascades")
struct CameraTests {
    @Test("addCamera is nil unless the session is started")
    func nilUnlessStarted() throws {
        var behaviour = TestDevice.Behaviour()
        behaviour.answersSession = false
        let rig = try Rig(behaviour: behaviour)
        rig.connect()
        let session = try rig.wearables.createSession(deviceSelector: SpecificDeviceSelector(device: "glasses-1"))
        #expect(try session.addCamera(config: StreamConfiguration()) == nil)  // idle
        try session.start()
        #expect(try session.addCamera() == nil)  // starting
        rig.device.deliver(.session(.started))
        rig.device.deliver(.session(.paused))
        rig.run()
        #expect(try session.addCamera() == nil)  // paused
        rig.device.deliver(.session(.resumed))
        rig.run()
        let camera = try #require(try session.addCamera())
        #expect(camera.state == .started)
        #expect(session.camera === camera)
    }

    @Test("the camera's state stream starts with .started and finishes after .stopped")
    func cameraStateStream() async throws {
        let rig = try Rig()
        let (_, camera) = try rig.camera()
        let states = camera.stateStream()
        camera.stop()  // the stream never started: stopped at once
        var seen: [CameraState] = []
        for await state in states { seen.append(state) }
        #expect(seen == [.started, .stopping, .stopped])
    }

    @Test("a second camera: capabilityAlreadyActive")
    func secondCamera() throws {
        let rig = try Rig()
        let (session, _) = try rig.camera()
        #expect(throws: DeviceSessionError.capabilityAlreadyActive) { try session.addCamera() }
    }

    @Test("camera.stop() stops its stream, detaches, and a new camera can be added; the session keeps running")
    func cameraStop() throws {
        let rig = try Rig()
        let (session, camera, stream) = try rig.streaming()
        let cameraStates = Recorder<CameraState>()
        let token = camera.statePublisher.listen(cameraStates.callback)
        camera.stop()
        #expect(stream.state == .stopping)
        #expect(rig.device.sent.last == .stopStream(generation: 1))
        #expect(session.camera == nil)
        let next = try #require(try session.addCamera())
        next.stream.start()
        #expect(rig.device.sentCount(\.isStartStream) == 1)  // waits for the old stream's stop to be acknowledged
        rig.run()
        #expect(stream.state == .stopped)
        #expect(camera.state == .stopped)
        #expect(cameraStates.values == [.stopping, .stopped])
        #expect(next.stream.state == .streaming)
        #expect(rig.device.sentCount(\.isStartStream) == 2)
        #expect(session.state == .started)
        stream.start()  // a detached stream never starts again
        #expect(stream.state == .stopped)
        withExtendedLifetime(token) {}
    }

    @Test("a new camera's stream starts after the old stream's stop grace period, even if the old camera was dropped")
    func newCameraAfterUnacknowledgedStop() throws {
        let rig = try Rig()
        let session = try rig.startedSession()
        do {
            let old = try #require(try session.addCamera())
            old.stream.start()
            rig.run()
            rig.device.behaviour.answersStreamStop = false
            old.stop()
        }
        let next = try #require(try session.addCamera())
        next.stream.start()
        rig.run()
        #expect(next.stream.state == .waitingForDevice)
        #expect(rig.device.sentCount(\.isStartStream) == 1)
        rig.scheduler.advance(by: .seconds(2))
        #expect(next.stream.state == .streaming)
        #expect(rig.device.sentCount(\.isStartStream) == 2)
    }

    @Test("stream.stop() stops only the stream; it can start again while the camera is attached")
    func streamStop() throws {
        let rig = try Rig()
        let (session, camera, stream) = try rig.streaming()
        stream.stop()
        rig.run()
        #expect(stream.state == .stopped)
        #expect(camera.state == .started)
        #expect(session.state == .started)
        stream.start()
        rig.run()
        #expect(stream.state == .streaming)
    }

    @Test("session.stop() cascades down: stream, then camera, then the session; stopStream precedes stopSession")
    func sessionStopCascades() async throws {
        let rig = try Rig()
        let (session, camera, stream) = try rig.streaming()
        let streamStates = stream.stateStream()
        session.stop()
        #expect(session.state == .stopping)
        #expect(camera.state == .stopping)
        #expect(stream.state == .stopping)
        let tail = Array(rig.device.sent.suffix(2))
        #expect(tail == [.stopStream(generation: 1), .stopSession])
        rig.run()
        #expect(session.state == .stopped)
        #expect(camera.state == .stopped)
        #expect(stream.state == .stopped)
        var seen: [StreamState] = []
        for await state in streamStates { seen.append(state) }  // finishes: the camera is gone
        #expect(seen == [.streaming, .stopping, .stopped])
    }

    @Test("glasses that end the session stop the camera and stream at once")
    func endedSessionEndsCamera() throws {
        let rig = try Rig()
        let (session, camera, stream) = try rig.streaming()
        let errors = Recorder<StreamError>()
        let token = stream.errorPublisher.listen(errors.callback)
        rig.device.deliver(.session(.ended(reason: "doffed")))
        rig.run()
        #expect(session.state == .stopped)
        #expect(camera.state == .stopped)
        #expect(stream.state == .stopped)
        #expect(rig.device.sentCount(\.isStopStream) == 0)
        withExtendedLifetime(token) {}
    }
}
