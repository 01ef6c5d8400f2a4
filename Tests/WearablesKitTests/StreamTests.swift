import Foundation
import Testing
@testable import WearablesKit

@Suite("Stream lifecycle")
struct StreamLifecycleTests {
    @Test("stopped → waitingForDevice → starting → streaming ⇄ paused → stopping → stopped")
    func lifecycle() throws {
        let rig = try Rig()
        let (_, camera) = try rig.camera(StreamConfiguration(videoCodec: .hvc1, resolution: .low, frameRate: 24))
        let stream = camera.stream
        let states = Recorder<StreamState>()
        let token = stream.statePublisher.listen(states.callback)
        #expect(stream.state == .stopped)
        stream.start()
        #expect(stream.state == .waitingForDevice)  // synchronous
        #expect(rig.device.sent.last == .startStream(stream.streamConfiguration, generation: 1))
        rig.run()
        #expect(stream.state == .streaming)
        rig.device.deliver(.stream(.paused))
        rig.device.deliver(.stream(.streaming(stream.streamConfiguration)))
        rig.run()
        stream.start()  // no-op while streaming
        stream.stop()
        #expect(stream.state == .stopping)
        rig.run()
        #expect(states.values == [.waitingForDevice, .starting, .streaming, .paused, .streaming, .stopping, .stopped])
        #expect(rig.device.sentCount(\.isStartStream) == 1)
        withExtendedLifetime(token) {}
    }

    @Test("stop while waiting, before the glasses were asked, goes straight to stopped")
    func stopWhileWaiting() throws {
        let rig = try Rig()
        let (_, camera) = try rig.camera()
        rig.device.deliver(.session(.paused))
        rig.run()
        let states = Recorder<StreamState>()
        let token = camera.stream.statePublisher.listen(states.callback)
        camera.stream.start()
        #expect(rig.device.sentCount(\.isStartStream) == 0)  // session paused: the stream waits
        camera.stream.stop()
        #expect(states.values == [.waitingForDevice, .stopping, .stopped])
        #expect(rig.device.sentCount(\.isStopStream) == 0)
        withExtendedLifetime(token) {}
    }

    @Test("a stream started while the session is paused starts when the glasses resume it")
    func waitsForResume() throws {
        let rig = try Rig()
        let (_, camera) = try rig.camera()
        rig.device.deliver(.session(.paused))
        rig.run()
        camera.stream.start()
        rig.scheduler.advance(by: .seconds(10))
        #expect(camera.stream.state == .waitingForDevice)
        rig.device.deliver(.session(.resumed))
        rig.run()
        #expect(camera.stream.state == .streaming)
    }

    @Test("waiting ends in deviceNotConnected after the configured timeout", arguments: [Duration.seconds(31), .seconds(5)])
    func waitingTimeout(timeout: Duration) throws {
        let rig = try Rig(deviceWaitTimeout: timeout)
        let (_, camera) = try rig.camera()
        rig.device.deliver(.session(.paused))
        rig.run()
        let errors = Recorder<StreamError>()
        let token = camera.stream.errorPublisher.listen(errors.callback)
        camera.stream.start()
        rig.scheduler.advance(by: timeout - .milliseconds(1))
        #expect(camera.stream.state == .waitingForDevice)
        #expect(errors.values.isEmpty)
        rig.scheduler.advance(by: .milliseconds(1))
        #expect(camera.stream.state == .stopped)
        #expect(errors.values == [.deviceNotConnected("glasses-1")])
        withExtendedLifetime(token) {}
    }

    @Test("glasses that never answer startStream: timeout after the wait; stuck in starting: timeout after the start timeout")
    func startTimeouts() throws {
        var behaviour = TestDevice.Behaviour()
        behaviour.answersStreamStart = false
        let rig = try Rig(behaviour: behaviour)
        let (_, camera) = try rig.camera()
        let errors = Recorder<StreamError>()
        let token = camera.stream.errorPublisher.listen(errors.callback)
        camera.stream.start()
        rig.scheduler.advance(by: .seconds(31))
        #expect(camera.stream.state == .stopped)
        #expect(errors.values == [.timeout])
        #expect(rig.device.sent.last == .stopStream(generation: 1))
        rig.device.behaviour.answersStreamStart = true
        rig.device.behaviour.reachesStreaming = false
        camera.stream.start()
        rig.run()
        #expect(camera.stream.state == .starting)
        rig.scheduler.advance(by: .seconds(10))
        #expect(camera.stream.state == .stopped)
        #expect(errors.values == [.timeout, .timeout])
        withExtendedLifetime(token) {}
    }

    @Test("glasses that hold a new stream paused (doffed): paused without a timeout, streaming when they resume it")
    func startsPaused() throws {
        var behaviour = TestDevice.Behaviour()
        behaviour.reachesStreaming = false
        let rig = try Rig(behaviour: behaviour)
        let (_, camera) = try rig.camera()
        let states = Recorder<StreamState>()
        let token = camera.stream.statePublisher.listen(states.callback)
        camera.stream.start()
        rig.device.deliver(.stream(.paused))
        rig.run()
        rig.scheduler.advance(by: .seconds(120))
        #expect(camera.stream.state == .paused)
        rig.device.deliver(.stream(.streaming(camera.stream.streamConfiguration)))
        rig.run()
        #expect(states.values == [.waitingForDevice, .starting, .paused, .streaming])
        withExtendedLifetime(token) {}
    }

    @Test("glasses that never acknowledge stopStream: stopped after the grace period")
    func stopGrace() throws {
        let rig = try Rig()
        let (_, _, stream) = try rig.streaming()
        rig.device.behaviour.answersStreamStop = false
        stream.stop()
        rig.scheduler.advance(by: .seconds(1))
        #expect(stream.state == .stopping)
        rig.scheduler.advance(by: .seconds(1))
        #expect(stream.state == .stopped)
    }

    @Test("a stop acknowledged after the grace period: the late stopped does not stop the stream started since")
    func lateStopAcknowledgement() throws {
        var behaviour = TestDevice.Behaviour()
        behaviour.stopAcknowledgementDelay = .seconds(3)  // the grace period is 2 s
        let rig = try Rig(behaviour: behaviour)
        let (_, _, stream) = try rig.streaming(StreamConfiguration(videoCodec: .raw, resolution: .low, frameRate: 30))
        let frames = Recorder<VideoFrame>()
        let token = stream.videoFramePublisher.listen(frames.callback)
        stream.stop()
        rig.scheduler.advance(by: .seconds(2))
        #expect(stream.state == .stopped)  // gave up waiting for the acknowledgement
        stream.start()
        #expect(rig.device.sent.last == .startStream(stream.streamConfiguration, generation: 2))
        rig.run()
        #expect(stream.state == .streaming)
        rig.scheduler.advance(by: .seconds(1))  // the first stop's acknowledgement arrives now
        #expect(stream.state == .streaming)
        #expect(stream.staleStreamEvents == 1)
        rig.device.sendRawFrame(pts: 1_000)
        rig.run()
        #expect(frames.count == 1)
        #expect(stream.sampleCounters.discarded == 0)
        withExtendedLifetime(token) {}
    }

    @Test("a late stop acknowledgement while the restarted stream waits for its answer is ignored too")
    func lateStopAcknowledgementWhileWaiting() throws {
        var behaviour = TestDevice.Behaviour()
        behaviour.stopAcknowledgementDelay = .seconds(3)
        let rig = try Rig(behaviour: behaviour)
        let (_, _, stream) = try rig.streaming()
        stream.stop()
        rig.scheduler.advance(by: .seconds(2))
        rig.device.behaviour.answersStreamStart = false  // the glasses are slow to answer the new start
        stream.start()
        rig.scheduler.advance(by: .seconds(1))
        #expect(stream.state == .waitingForDevice)
        #expect(stream.staleStreamEvents == 1)
        rig.device.deliver(rig.device.streamEvent(.streaming(stream.streamConfiguration)))
        rig.run()
        #expect(stream.state == .streaming)
    }

    @Test("a new camera's stream after an unacknowledged stop of the last camera's: not stopped by the late answer")
    func lateStopAcknowledgementOfAnotherCamera() throws {
        var behaviour = TestDevice.Behaviour()
        behaviour.stopAcknowledgementDelay = .seconds(3)
        let rig = try Rig(behaviour: behaviour)
        let (session, camera, _) = try rig.streaming()
        camera.stop()
        let next = try #require(try session.addCamera())
        next.stream.start()
        rig.scheduler.advance(by: .seconds(2))  // the old stream gives up; the new one starts
        #expect(rig.device.sent.last == .startStream(next.stream.streamConfiguration, generation: 2))
        #expect(next.stream.state == .streaming)
        rig.scheduler.advance(by: .seconds(1))
        #expect(next.stream.state == .streaming)
        #expect(next.stream.staleStreamEvents == 1)
    }

    @Test("glasses that echo no generation: a late stop acknowledgement stops the restarted stream, as before")
    func lateStopAcknowledgementWithoutGenerations() throws {
        var behaviour = TestDevice.Behaviour()
        behaviour.stopAcknowledgementDelay = .seconds(3)
        behaviour.echoesGeneration = false
        let rig = try Rig(behaviour: behaviour)
        let (_, _, stream) = try rig.streaming()
        stream.stop()
        rig.scheduler.advance(by: .seconds(2))
        stream.start()
        rig.run()
        #expect(stream.state == .streaming)
        rig.scheduler.advance(by: .seconds(1))
        #expect(stream.state == .stopped)  // the limitation generations remove (docs/PROTOCOL.md 7.6)
        #expect(stream.staleStreamEvents == 0)
    }

    @Test("glasses that stop the stream themselves: stopped")
    func deviceStops() throws {
        let rig = try Rig()
        let (_, _, stream) = try rig.streaming()
        rig.device.deliver(.stream(.stopped))
        rig.run()
        #expect(stream.state == .stopped)
    }

    @Test("link loss: deviceNotConnected, back to waitingForDevice, streaming again when the glasses return in time")
    func linkLossResumes() throws {
        let rig = try Rig()
        let (session, _, stream) = try rig.streaming()
        let errors = Recorder<StreamError>()
        let states = Recorder<StreamState>()
        let tokens = ListenerTokenBag()
        stream.errorPublisher.listen(errors.callback).store(in: tokens)
        stream.statePublisher.listen(states.callback).store(in: tokens)
        rig.device.drop()
        rig.run()
        #expect(errors.values == [.deviceNotConnected("glasses-1")])
        #expect(stream.state == .waitingForDevice)
        rig.scheduler.advance(by: .seconds(20))
        let link = rig.reconnect()
        #expect(session.state == .started)
        #expect(stream.state == .streaming)
        #expect(link.sent.filter(\.isStartStream).count == 1)
        #expect(states.values == [.waitingForDevice, .starting, .streaming])
        rig.scheduler.advance(by: .seconds(60))
        #expect(stream.state == .streaming)
        #expect(errors.count == 1)
    }

    @Test("link loss without return: the stream stops with deviceNotConnected, then the session ends")
    func linkLossTimeout() throws {
        let rig = try Rig()
        let (session, camera, stream) = try rig.streaming()
        let errors = Recorder<StreamError>()
        let token = stream.errorPublisher.listen(errors.callback)
        rig.device.drop()
        rig.run()
        rig.scheduler.advance(by: .seconds(31))
        #expect(stream.state == .stopped)
        #expect(errors.values == [.deviceNotConnected("glasses-1"), .deviceNotConnected("glasses-1")])
        #expect(session.state == .stopped)
        #expect(camera.state == .stopped)
        withExtendedLifetime(token) {}
    }
}

@Suite("Stream errors")
struct StreamErrorTests {
    private func streamingWithErrors(_ rig: Rig) throws -> (WearablesKit.Stream, Recorder<StreamError>, any AnyListenerToken) {
        let (_, _, stream) = try rig.streaming()
        let errors = Recorder<StreamError>()
        return (stream, errors, stream.errorPublisher.listen(errors.callback))
    }

    @Test("device faults map to stream errors", arguments: DeviceStreamFault.allCases)
    func faults(fault: DeviceStreamFault) throws {
        let rig = try Rig()
        let (stream, errors, token) = try streamingWithErrors(rig)
        rig.device.deliver(.fault(fault, message: "from the glasses"))
        rig.run()
        let expected: [DeviceStreamFault: StreamError] = [
            .internalError: .internalError, .videoStreamingError: .videoStreamingError,
            .permissionDenied: .permissionDenied, .hingesClosed: .hingesClosed, .thermalHot: .thermalHot,
            .batteryLow: .batteryLow, .peakPowerLimit: .peakPowerLimit, .photoCaptureFailed: .photoCaptureFailed,
            .audioStreamingError: .audioStreamingError,
        ]
        #expect(errors.values == [expected[fault]])
        #expect(stream.state == .streaming)  // the glasses decide whether the stream stops
        withExtendedLifetime(token) {}
    }

    @Test("a denied camera permission makes start fail with permissionDenied")
    func permissionDenied() throws {
        var behaviour = TestDevice.Behaviour()
        behaviour.startFault = .permissionDenied
        let rig = try Rig(behaviour: behaviour)
        let (_, camera) = try rig.camera()
        let errors = Recorder<StreamError>()
        let token = camera.stream.errorPublisher.listen(errors.callback)
        camera.stream.start()
        rig.run()
        #expect(errors.values == [.permissionDenied])
        #expect(camera.stream.state == .stopped)
        withExtendedLifetime(token) {}
    }

    @Test("fold and doff both raise hingesClosed", arguments: [true, false])
    func hingesClosed(fold: Bool) throws {
        let rig = try Rig()
        let (_, errors, token) = try streamingWithErrors(rig)
        rig.device.report { if fold { $0.hingeState = .closed } else { $0.donState = .doffed } }
        rig.run()
        #expect(errors.values == [.hingesClosed])
        rig.device.deliver(.fault(.hingesClosed, message: "same event, reported as a fault too"))
        rig.run()
        #expect(errors.values == [.hingesClosed])  // reported once
        withExtendedLifetime(token) {}
    }

    @Test("thermal severe or worse raises thermalHot; cooler levels do not", arguments: ThermalLevel.allCases)
    func thermal(level: ThermalLevel) throws {
        let rig = try Rig()
        let (_, errors, token) = try streamingWithErrors(rig)
        rig.device.report { $0.thermalLevel = level }
        rig.run()
        #expect(errors.values == (level >= .severe ? [.thermalHot] : []))
        withExtendedLifetime(token) {}
    }

    @Test("battery at or below the threshold raises batteryLow once")
    func battery() throws {
        let rig = try Rig()
        let (_, errors, token) = try streamingWithErrors(rig)
        rig.device.report { $0.batteryLevel = 6 }
        rig.device.report { $0.batteryLevel = 5 }
        rig.device.report { $0.batteryLevel = 4 }
        rig.run()
        #expect(errors.values == [.batteryLow])
        withExtendedLifetime(token) {}
    }

    @Test("device events do not raise errors on a stopped stream")
    func quietWhenStopped() throws {
        let rig = try Rig()
        let (_, camera) = try rig.camera()
        let errors = Recorder<StreamError>()
        let token = camera.stream.errorPublisher.listen(errors.callback)
        rig.device.report { $0.hingeState = .closed; $0.thermalLevel = .critical; $0.batteryLevel = 1 }
        rig.device.deliver(.fault(.internalError, message: "late"))
        rig.run()
        #expect(errors.values.isEmpty)
        withExtendedLifetime(token) {}
    }

    @Test("every stream error has an actionable, distinct message")
    func messages() {
        let errors: [StreamError] = [
            .internalError, .deviceNotFound("g"), .deviceNotConnected("g"), .timeout, .videoStreamingError,
            .audioStreamingError, .permissionDenied, .hingesClosed, .thermalHot, .batteryLow, .peakPowerLimit,
            .photoCaptureFailed,
        ]
        let messages = errors.map(\.localizedDescription)
        #expect(Set(messages).count == errors.count)
        #expect(StreamError.hingesClosed.localizedDescription.contains("unfold"))
        #expect(StreamError.permissionDenied.localizedDescription.contains("requestPermission"))
        #expect(StreamError.deviceNotConnected("g").localizedDescription.contains("\"g\""))
    }
}

@Suite("Photo capture")
struct PhotoTests {
    @Test("capturePhoto is false unless streaming")
    func notStreaming() throws {
        let rig = try Rig()
        let (_, camera) = try rig.camera()
        #expect(!camera.stream.capturePhoto(format: .jpeg))
        rig.device.deliver(.session(.paused))
        rig.run()
        camera.stream.start()
        #expect(!camera.stream.capturePhoto(format: .jpeg))
        #expect(rig.device.sentCount(\.isCapturePhoto) == 0)
    }

    @Test("video pauses during the capture and resumes after the photo; one capture at a time")
    func capture() throws {
        let rig = try Rig()
        let (_, _, stream) = try rig.streaming()
        let photos = Recorder<PhotoData>()
        let states = Recorder<StreamState>()
        let tokens = ListenerTokenBag()
        stream.photoDataPublisher.listen(photos.callback).store(in: tokens)
        stream.statePublisher.listen(states.callback).store(in: tokens)
        #expect(stream.capturePhoto(format: .jpeg))
        #expect(!stream.capturePhoto(format: .jpeg))  // in flight
        rig.run()
        #expect(photos.values == [PhotoData(data: Data([0xFF, 0xD8, 0xFF, 0xD9]), format: .jpeg)])
        #expect(states.values == [.paused, .streaming])
        #expect(rig.device.sentCount(\.isCapturePhoto) == 1)
        #expect(stream.capturePhoto(format: .jpeg))  // free again
        rig.run()
        #expect(photos.count == 2)
    }

    @Test("a format the glasses cannot capture is refused")
    func unsupportedFormat() throws {
        let rig = try Rig(photoFormats: [.jpeg])
        let (_, _, stream) = try rig.streaming()
        #expect(!stream.capturePhoto(format: .heic))
    }

    @Test("a failed capture reports photoCaptureFailed and frees the camera for the next capture")
    func failed() throws {
        var behaviour = TestDevice.Behaviour()
        behaviour.answersPhoto = false
        let rig = try Rig(behaviour: behaviour)
        let (_, _, stream) = try rig.streaming()
        let errors = Recorder<StreamError>()
        let photos = Recorder<PhotoData>()
        let tokens = ListenerTokenBag()
        stream.errorPublisher.listen(errors.callback).store(in: tokens)
        stream.photoDataPublisher.listen(photos.callback).store(in: tokens)
        #expect(stream.capturePhoto(format: .jpeg))
        rig.device.deliver(.fault(.photoCaptureFailed, message: "sensor busy"))
        rig.run()
        #expect(errors.values == [.photoCaptureFailed])
        #expect(stream.capturePhoto(format: .jpeg))
        rig.scheduler.advance(by: .seconds(10))  // the glasses never answer: the capture times out
        #expect(errors.values == [.photoCaptureFailed, .photoCaptureFailed])
        #expect(photos.values.isEmpty)
        rig.device.deliver(.photo(PhotoData(data: Data([1]), format: .jpeg), requestID: 2))  // too late: ignored
        rig.run()
        #expect(photos.values.isEmpty)
    }
}

@Suite("Streams made after the end")
struct LateStreamTests {
    @Test("a stream's and a session's async streams made after they stopped finish at once, on an idle instance",
          .timeLimit(.minutes(1)))
    func lateStreamsFinish() async throws {
        let rig = try Rig()
        let (session, camera, stream) = try rig.streaming()
        camera.stop()
        rig.run()
        #expect(stream.state == .stopped)
        // Nothing else happens on this instance: a finish left for a later drain would never come.
        var frames = stream.videoFrameStream().makeAsyncIterator()
        var photos = stream.photoDataStream().makeAsyncIterator()
        var errors = stream.errorStream().makeAsyncIterator()
        #expect(await frames.next() == nil)
        #expect(await photos.next() == nil)
        #expect(await errors.next() == nil)
        session.stop()
        rig.run()
        var sessionErrors = session.errorStream().makeAsyncIterator()
        #expect(await sessionErrors.next() == nil)
    }
}
