import Foundation
import GlassesSimulator
import Testing
import WearablesKit

@testable import GlassesRelay

/// DAT 1.0's Motion through the relay: the host's `addMotion`/`start`/`stop` carried out on the relay's DAT, and
/// DAT's samples passed on, field for field, on the glasses' clock.
@Suite("Relay core: DAT's Motion forwarded", .serialized)
struct RelayMotionTests {
    /// Moves virtual time on in 5 ms steps, letting the relay's sample reader (a task, as DAT's one-reader
    /// `AsyncStream` requires) run between them, until `done` or `steps` run out.
    @discardableResult
    func settle(_ core: RelayCore, steps: Int = 400, until done: () -> Bool = { false }) async -> Bool {
        for _ in 0 ..< steps {
            if done() { return true }
            await Task.yield()
            core.advance(0.005)
        }
        return done()
    }

    /// Waits, without moving time, until the relay's reader has passed on everything DAT delivered and the host has
    /// read it all (bounded: 10,000 yields).
    func drain(_ core: RelayCore, received: Collected<MotionSample>) async -> Bool {
        for _ in 0 ..< 10_000 {
            core.advance(0)  // the in-process link delivers on the scheduler
            let forwarded = core.client.counters.motionSamplesForwarded
            if core.server.counters.motionSamplesSent == forwarded && UInt64(received.values.count) == forwarded { return true }
            await Task.yield()
        }
        return false
    }

    @Test("the host's Motion through the relay: started at its rate, every sample the glasses took with its timestamp and readings, stopped and started again")
    func forwarded() async throws {
        let core = try RelayCore(headMotion: true)
        let configuration = try StreamConfiguration.validated(videoCodec: .raw, resolution: .low, frameRate: 15)
        let (session, _) = try core.startStream(configuration)
        // Not nil: the relay's hello offers an IMU (DAT says whether there is one only when asked).
        let motion = try #require(try session.addMotion(configuration: MotionConfiguration(samplingRate: .hz30)))
        let states = Collected<MotionState>()
        let errors = Collected<MotionError>()
        let tokens = ListenerTokenBag()
        motion.statePublisher.listen { states.append($0) }.store(in: tokens)
        motion.errorPublisher.listen { errors.append($0) }.store(in: tokens)
        let received = Collected<MotionSample>()
        let reader = Task { for await sample in motion.samples { received.append(sample) } }
        motion.start()
        #expect(await settle(core) { motion.state == .started })
        await settle(core, steps: 400)  // 2 s of samples
        motion.stop()
        #expect(await settle(core) { motion.state == .stopped })
        #expect(await drain(core, received: received), "forwarded \(core.client.counters.motionSamplesForwarded), read \(received.values.count)")
        let first = received.values
        #expect(first.count >= 55, "\(first.count) samples in 2 s at 30 Hz")
        // Every sample is the one the glasses took at its time: its timestamp, its readings (to within what the
        // nanosecond the timestamp rounds away changes: 1e-6), in order.
        let steps = zip(first.dropFirst(), first).map { $0.timestampNs - $1.timestampNs }
        #expect(steps.allSatisfy { abs($0 - 33_333_333) <= 1 }, "\(steps)")
        func close(_ a: SIMD4<Float>?, _ b: SIMD4<Float>?) -> Bool {
            guard let a, let b else { return a == nil && b == nil }
            return (0 ..< 4).allSatisfy { Swift.abs(a[$0] - b[$0]) < 1e-6 }
        }
        func vector(_ v: Vector3?) -> SIMD4<Float>? { v.map { SIMD4($0.x, $0.y, $0.z, 0) } }
        for sample in first {
            let truth = SimulatedIMU.sample(rotation: core.glasses.scene.headRotation(at: Double(sample.timestampNs) / 1e9),
                                            timestampNs: sample.timestampNs)
            let same = sample.source == truth.source && close(vector(sample.accelerometer), vector(truth.accelerometer))
                && close(vector(sample.gyroscope), vector(truth.gyroscope)) && sample.magnetometer == nil
                && close(sample.orientation.map { SIMD4($0.x, $0.y, $0.z, $0.w) }, truth.orientation.map { SIMD4($0.x, $0.y, $0.z, $0.w) })
            #expect(same, "\(sample) against \(truth)")
        }
        #expect(first.contains { abs($0.gyroscope?.x ?? 0) > 1e-4 }, "the head moved: the check must see rotation")
        // Started again: the same capability on the relay's side, samples resume.
        motion.start()
        #expect(await settle(core) { motion.state == .started })
        await settle(core, steps: 200)  // 1 s more
        try session.removeMotion()
        await settle(core, steps: 40)
        reader.cancel()
        #expect(states.values.starts(with: [.starting, .started, .stopping, .stopped, .starting, .started]), "\(states.values)")
        #expect(errors.values.isEmpty, "\(errors.values)")
        #expect(core.client.counters.motionSamplesForwarded >= UInt64(first.count) + 25, "\(core.client.counters)")
    }

    @Test("glasses without an IMU behind the relay: the host's start is answered sensorUnavailable, and video flows on")
    func noIMU() async throws {
        let core = try RelayCore(options: SimulatedGlasses.Options(hasIMU: false))
        let configuration = try StreamConfiguration.validated(videoCodec: .raw, resolution: .low, frameRate: 15)
        let (session, camera) = try core.startStream(configuration)
        let motion = try #require(try session.addMotion())
        let errors = Collected<MotionError>()
        let tokens = ListenerTokenBag()
        motion.errorPublisher.listen { errors.append($0) }.store(in: tokens)
        motion.start()
        #expect(await settle(core) { !errors.values.isEmpty })
        #expect(errors.values == [.sensorUnavailable])
        #expect(motion.state == .stopped)
        #expect(camera.stream.state == .streaming)
        #expect(core.client.counters.motionSamplesForwarded == 0)
    }
}
