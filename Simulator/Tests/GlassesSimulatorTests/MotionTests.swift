import Foundation
import GlassesLink
import Synchronization
import Testing
import WearablesKit
@testable import GlassesSimulator

/// DAT 1.0's Motion (IMU) through WearablesKit, answered by the in-process simulated glasses, in virtual time.
@Suite("Motion: WearablesKit and the simulated glasses' IMU")
struct MotionTests {
    /// A started session whose camera stream is streaming (where DAT's sample attaches Motion).
    private struct Rig {
        let scheduler: ManualScheduler
        let host: WearablesHost
        let glasses: SimulatedGlasses
        let session: DeviceSession
        let stream: WearablesKit.Stream
    }

    private func streamingRig(profile: SubjectProfile = SubjectProfile(seed: 21),
                              options: SimulatedGlasses.Options = .init()) throws -> Rig {
        let scheduler = ManualScheduler()
        let host = try WearablesHost(scheduler: scheduler)
        let kit = SimulatorKit(scheduler: scheduler, liveness: .disabled)
        let glasses = try kit.pairGlasses(with: host.wearables, profile: profile, options: options)
        scheduler.advance(by: .milliseconds(10))
        let (session, stream) = try host.openStream(device: glasses.info.identifier, config(.raw, .low, 15)) { _ in
            scheduler.advance(by: .milliseconds(10))
        }
        scheduler.advance(by: .milliseconds(200))
        #expect(stream.state == .streaming)
        return Rig(scheduler: scheduler, host: host, glasses: glasses, session: session, stream: stream)
    }

    /// Takes what `samples` has buffered (it never ends while the capability lives, so count what is there).
    private func drain(_ iterator: inout AsyncStream<MotionSample>.Iterator, count: Int) async -> [MotionSample] {
        var taken: [MotionSample] = []
        for _ in 0..<count {
            guard let sample = await iterator.next() else { break }
            taken.append(sample)
        }
        return taken
    }

    @Test("the DAT motion walkthrough: add after streaming, observe, start, read samples, stop, remove")
    func walkthrough() async throws {
        let rig = try streamingRig()
        // addMotion after the camera stream is streaming; returned stopped.
        let motion = try #require(try rig.session.addMotion(configuration: MotionConfiguration(samplingRate: .hz30)))
        #expect(motion.state == .stopped)
        #expect(motion.configuration.samplingRate == .hz30)
        let states = Collected<MotionState>()
        let errors = Collected<MotionError>()
        let tokens = [motion.statePublisher.listen { states.append($0) },
                      motion.errorPublisher.listen { errors.append($0) }]
        motion.start()
        #expect(motion.state == .starting)
        rig.scheduler.advance(by: .seconds(1))
        #expect(motion.state == .started)
        #expect(states.values == [.starting, .started])
        var iterator = motion.samples.makeAsyncIterator()
        let samples = await drain(&iterator, count: 25)
        #expect(samples.count == 25)
        #expect(samples.allSatisfy { $0.source == .glasses && $0.gyroscope != nil && $0.accelerometer != nil
            && $0.orientation != nil && $0.magnetometer == nil })
        // Timestamps: the device clock, increasing by one sampling interval (1/30 s).
        let steps = zip(samples.dropFirst(), samples).map { $0.timestampNs - $1.timestampNs }
        #expect(steps.allSatisfy { abs($0 - 33_333_333) <= 1 }, "\(steps)")
        motion.stop()
        #expect(motion.state == .stopping)
        rig.scheduler.advance(by: .milliseconds(100))
        #expect(motion.state == .stopped)
        #expect(rig.glasses.isStreaming)  // the camera stream is untouched
        try rig.session.removeMotion()
        #expect(rig.session.motion == nil)
        #expect(states.values == [.starting, .started, .stopping, .stopped])
        #expect(errors.values.isEmpty)
        // Removal finished the sample stream: what was buffered drains, then it ends.
        var left = 0
        while await iterator.next() != nil { left += 1 }
        #expect(left <= 256)
        _ = tokens
    }

    @Test("samples arrive at the configured rate, within one sample over 4 virtual seconds",
          arguments: [MotionSamplingRate.hz5, .hz10, .hz15, .hz24, .hz30, .hz60])
    func rate(_ rate: MotionSamplingRate) async throws {
        let rig = try streamingRig()
        let motion = try #require(try rig.session.addMotion(configuration: MotionConfiguration(samplingRate: rate)))
        motion.start()
        rig.scheduler.advance(by: .milliseconds(1))
        #expect(motion.state == .started)
        rig.scheduler.advance(by: .seconds(4))
        try rig.session.removeMotion()
        var iterator = motion.samples.makeAsyncIterator()
        var samples: [MotionSample] = []
        while let sample = await iterator.next() { samples.append(sample) }
        #expect(abs(samples.count - 4 * rate.hertz) <= 1, "\(samples.count) samples at \(rate.hertz) Hz")
        // On the video frames' clock: the last sample was taken within one interval of the device's now.
        let nowNs = Int64((rig.glasses.deviceTime * 1e9).rounded())
        let last = try #require(samples.last).timestampNs
        #expect(last <= nowNs && nowNs - last <= 1_000_000_000 / Int64(rate.hertz))
        // The video frames' presentation times are on the same clock: the last frame is as recent (15 fps).
        let lastFrameNs = try #require(rig.host.frames.values.last).presentationTimeUs * 1000
        #expect(lastFrameNs <= nowNs && nowNs - lastFrameNs <= 1_000_000_000 / 15)
    }

    @Test("head motion on: the integrated gyroscope matches the rendered rotation within 1e-4 rad (0.02 px at 360 wide)")
    func gyroscopeMatchesRenderedMotion() async throws {
        let rig = try streamingRig(profile: SubjectProfile(headMotion: true, seed: 33))
        let motion = try #require(try rig.session.addMotion(configuration: MotionConfiguration(samplingRate: .hz60)))
        motion.start()
        rig.scheduler.advance(by: .seconds(4))
        try rig.session.removeMotion()
        var iterator = motion.samples.makeAsyncIterator()
        var samples: [MotionSample] = []
        while let sample = await iterator.next() { samples.append(sample) }
        #expect(samples.count >= 230)
        // The rendered rotation: the scene's pixel shift over the focal length in pixels (0.6 × width), and its roll.
        let width = 360, focal = SimulatedScene.focalLengthPerWidth * Double(width)
        func rendered(_ ns: Int64) -> (Double, Double, Double) {
            let shift = rig.glasses.scene.frameInfo(at: Double(ns) / 1e9, width: width, height: 640).cameraShift
            return (shift.x / focal, shift.y / focal, shift.roll)
        }
        let start = rendered(samples[0].timestampNs)
        var integrated = (0.0, 0.0, 0.0)
        var worst = 0.0, excursion = 0.0
        for (previous, sample) in zip(samples, samples.dropFirst()) {
            let dt = Double(sample.timestampNs - previous.timestampNs) / 1e9
            let a = try #require(previous.gyroscope), b = try #require(sample.gyroscope)
            integrated.0 += dt * Double(a.x + b.x) / 2
            integrated.1 += dt * Double(a.y + b.y) / 2
            integrated.2 += dt * Double(a.z + b.z) / 2
            let now = rendered(sample.timestampNs)
            let truth = (now.0 - start.0, now.1 - start.1, now.2 - start.2)
            worst = max(worst, abs(integrated.0 - truth.0), abs(integrated.1 - truth.1), abs(integrated.2 - truth.2))
            excursion = max(excursion, abs(truth.0), abs(truth.1))
        }
        #expect(worst < 1e-4, "worst gyro integration error \(worst) rad")
        #expect(excursion > 2e-3, "the head moved \(excursion) rad: the check must see motion")
        // Gravity is still all there, whatever the pose.
        for sample in samples {
            let a = try #require(sample.accelerometer)
            #expect(abs(Double((a.simd * a.simd).sum()).squareRoot() - SimulatedIMU.gravity) < 1e-3)
        }
    }

    @Test("head motion off: gyroscope ~0, accelerometer ~9.81 m/s² on +X (up), identity orientation")
    func stillHead() async throws {
        let rig = try streamingRig(profile: SubjectProfile(headMotion: false, seed: 34))
        let motion = try #require(try rig.session.addMotion())
        motion.start()
        rig.scheduler.advance(by: .seconds(2))
        try rig.session.removeMotion()
        var iterator = motion.samples.makeAsyncIterator()
        var samples: [MotionSample] = []
        while let sample = await iterator.next() { samples.append(sample) }
        #expect(samples.count >= 19)
        for sample in samples {
            let g = try #require(sample.gyroscope), a = try #require(sample.accelerometer)
            #expect(abs(g.x) < 1e-6 && abs(g.y) < 1e-6 && abs(g.z) < 1e-6)
            #expect(abs(Double(a.x) - 9.81) < 0.01 && abs(a.y) < 1e-4 && abs(a.z) < 1e-4)
            #expect(sample.orientation == Quaternion(x: 0, y: 0, z: 0, w: 1))
        }
    }

    @Test("samples keeps the newest 256 when nobody reads")
    func buffersNewest256() async throws {
        let rig = try streamingRig()
        let motion = try #require(try rig.session.addMotion(configuration: MotionConfiguration(samplingRate: .hz60)))
        motion.start()
        rig.scheduler.advance(by: .seconds(10))  // 601 samples, nobody reading
        try rig.session.removeMotion()
        var iterator = motion.samples.makeAsyncIterator()
        var samples: [MotionSample] = []
        while let sample = await iterator.next() { samples.append(sample) }
        #expect(samples.count == Motion.sampleBufferSize)
        // The newest: the last one taken within one interval of now, and none missing in between.
        let nowNs = Int64((rig.glasses.deviceTime * 1e9).rounded())
        #expect(nowNs - (samples.last?.timestampNs ?? 0) < 1_000_000_000 / 60)
        let steps = zip(samples.dropFirst(), samples).map { $0.timestampNs - $1.timestampNs }
        #expect(steps.allSatisfy { abs($0 - 16_666_667) <= 1 })
    }

    @Test("start is ignored unless stopped; stop then start restarts the same capability")
    func startIgnoredUnlessStopped() throws {
        let rig = try streamingRig()
        let motion = try #require(try rig.session.addMotion())
        let states = Collected<MotionState>()
        let token = motion.statePublisher.listen { states.append($0) }
        motion.start()
        motion.start()  // starting: ignored
        rig.scheduler.advance(by: .milliseconds(50))
        motion.start()  // started: ignored
        rig.scheduler.advance(by: .milliseconds(50))
        motion.stop()
        motion.start()  // stopping: ignored
        rig.scheduler.advance(by: .milliseconds(50))
        #expect(motion.state == .stopped)
        #expect(states.values == [.starting, .started, .stopping, .stopped])
        motion.start()  // stopped: starts again
        rig.scheduler.advance(by: .milliseconds(50))
        #expect(motion.state == .started)
        _ = token
    }

    @Test("removal is terminal: the glasses stop sampling and the capability never starts again")
    func removalIsTerminal() async throws {
        let rig = try streamingRig()
        let motion = try #require(try rig.session.addMotion())
        motion.start()
        rig.scheduler.advance(by: .milliseconds(500))
        try rig.session.removeMotion()
        #expect(motion.state == .stopped)
        motion.start()
        rig.scheduler.advance(by: .seconds(1))
        #expect(motion.state == .stopped)
        var iterator = motion.samples.makeAsyncIterator()
        var count = 0
        while await iterator.next() != nil { count += 1 }
        #expect(count <= 6)  // only what arrived before removal (10 Hz for 0.5 s)
        // A new capability can be attached after removal.
        let again = try #require(try rig.session.addMotion())
        #expect(again !== motion)
        #expect(again.state == .stopped)
    }

    @Test("addMotion returns nil before the session is started, and for glasses without an IMU")
    func nilWhenNotStartedOrNoIMU() throws {
        let scheduler = ManualScheduler()
        let host = try WearablesHost(scheduler: scheduler)
        let kit = SimulatorKit(scheduler: scheduler, liveness: .disabled)
        let glasses = try kit.pairGlasses(with: host.wearables, profile: SubjectProfile(seed: 5))
        scheduler.advance(by: .milliseconds(10))
        let session = try host.wearables.createSession(
            deviceSelector: SpecificDeviceSelector(device: glasses.info.identifier))
        #expect(try session.addMotion() == nil)  // idle
        try session.start()
        #expect(session.state == .starting)
        #expect(try session.addMotion() == nil)  // starting
        scheduler.advance(by: .milliseconds(10))
        #expect(session.state == .started)
        let motion = try #require(try session.addMotion())
        #expect(throws: DeviceSessionError.capabilityAlreadyActive) { try session.addMotion() }
        // The session stops: the capability closes for good.
        let errors = Collected<MotionError>()
        let token = motion.errorPublisher.listen { errors.append($0) }
        motion.start()
        scheduler.advance(by: .milliseconds(10))
        session.stop()
        scheduler.advance(by: .seconds(1))
        #expect(motion.state == .stopped)
        #expect(errors.values == [.capabilityClosed])
        _ = token

        let scheduler2 = ManualScheduler()
        let host2 = try WearablesHost(scheduler: scheduler2)
        let kit2 = SimulatorKit(scheduler: scheduler2, liveness: .disabled)
        let noIMU = try kit2.pairGlasses(with: host2.wearables, profile: SubjectProfile(seed: 6),
                                         options: .init(hasIMU: false))
        scheduler2.advance(by: .milliseconds(10))
        let session2 = try host2.wearables.createSession(
            deviceSelector: SpecificDeviceSelector(device: noIMU.info.identifier))
        try session2.start()
        scheduler2.advance(by: .milliseconds(10))
        #expect(session2.state == .started)
        #expect(try session2.addMotion() == nil)
    }

    @Test("the link drops while sampling: deviceDisconnected, stopped")
    func linkDrops() throws {
        let rig = try streamingRig()
        let motion = try #require(try rig.session.addMotion())
        let errors = Collected<MotionError>()
        let token = motion.errorPublisher.listen { errors.append($0) }
        motion.start()
        rig.scheduler.advance(by: .milliseconds(200))
        rig.glasses.powerOff()
        rig.scheduler.advance(by: .milliseconds(200))
        #expect(motion.state == .stopped)
        #expect(errors.values == [.deviceDisconnected])
        _ = token
    }
}

@Suite("Motion over a socket link")
struct MotionSocketTests {
    @Test("WearablesKit gets the simulated IMU's samples from a SimulatorServer", arguments: ["unix", "tcp"])
    func sockets(kind: String) async throws {
        let deviceScheduler = ManualScheduler()
        let hostScheduler = ManualScheduler()
        let glasses = try SimulatedGlasses(profile: SubjectProfile(headMotion: true, seed: 14), scheduler: deviceScheduler)
        let (server, host, _) = try servedOverSocket(
            glasses, kind: kind, label: "sim-motion", deviceScheduler: deviceScheduler, hostScheduler: hostScheduler)
        defer { server.stop() }
        let session = try host.wearables.createSession(deviceSelector: SpecificDeviceSelector(device: glasses.info.identifier))
        try session.start()
        #expect(waitFor("session") { session.state == .started })
        let motion = try #require(try session.addMotion(configuration: MotionConfiguration(samplingRate: .hz30)))
        motion.start()
        #expect(waitFor("motion started") { motion.state == .started })
        deviceScheduler.advance(by: .seconds(1))
        // 31 samples were sent (0 … 1 s at 30 Hz); wait until the socket has carried them all.
        var iterator = motion.samples.makeAsyncIterator()
        var samples: [MotionSample] = []
        while samples.count < 31, let sample = await iterator.next() { samples.append(sample) }
        #expect(samples.count == 31)
        let expected = (0...30).map { glasses.imuSample(at: samples[0].timestampNs.nanosecondsDuration + glasses.epoch + .seconds(1) / 30 * $0) }
        #expect(samples == expected)
        motion.stop()
        #expect(waitFor("motion stopped") { motion.state == .stopped })
    }
}

private extension Int64 {
    var nanosecondsDuration: Duration { .nanoseconds(self) }
}
