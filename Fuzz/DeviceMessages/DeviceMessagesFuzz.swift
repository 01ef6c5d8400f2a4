// libFuzzer target: a fuzzed device talking to a real WearablesInstance (built by `Scripts/fuzz DeviceMessages N`).
//
// The input is a little program for the glasses and the app (see `DeviceMessagesFuzz.run`): device messages whose
// bodies are decoded by GlassesLink's own `MessageBodies` (compiled in, see target.conf), a few well-formed canned
// messages so that mutations reach the streaming states quickly, virtual time advancing on a ManualScheduler
// (timeouts, heartbeats, grace periods), the app's calls (session, camera, stream, photo, stop) and link drops and
// reconnects. No input may trap, and the scheduler must stay finite (a bounded number of actions per input).
import Foundation
import Synchronization
import WearablesKit

#if canImport(Glibc)
    import Glibc
#endif

@_cdecl("LLVMFuzzerTestOneInput")
public func deviceMessagesFuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    DeviceMessagesFuzz.run(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}

/// Writes the seed corpus and exits when `LINK_FUZZ_WRITE_SEEDS` names a directory (`Scripts/fuzz --seeds`).
@_cdecl("LLVMFuzzerInitialize")
public func deviceMessagesFuzzInitialize(
    _ argc: UnsafeMutablePointer<CInt>?, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>?
) -> CInt {
    guard let directory = getenv("LINK_FUZZ_WRITE_SEEDS") else { return 0 }
    do {
        try DeviceMessagesFuzz.writeSeeds(to: URL(fileURLWithPath: String(cString: directory)))
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("cannot write seeds: \(error)\n".utf8))
        exit(1)
    }
}

/// A scheduler that counts the actions it runs, so that a livelock (timers rescheduling themselves without end)
/// is a reported failure rather than a libFuzzer timeout.
final class CountingScheduler: EventScheduler {
    let inner = ManualScheduler()
    private let runs = Tally()
    static let limit = 200_000

    var now: Duration { inner.now }

    func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) -> ScheduledAction {
        inner.schedule(after: delay) { [runs] in
            let count = runs.add()
            if count > Self.limit { fatalError("property failed: more than \(Self.limit) scheduler actions for one input") }
            action()
        }
    }
}

/// A shared counter.
final class Tally: Sendable {
    private let value = Atomic<Int>(0)
    func add() -> Int { value.add(1, ordering: .relaxed).newValue }
}

/// The fuzzed glasses: a DeviceLink whose every event is delivered on the next scheduler turn (as links do).
final class FuzzDevice: DeviceLink {
    private struct State {
        var handler: (@Sendable (DeviceLinkEvent) -> Void)?
        var closed = false
        var sent: [HostMessage] = []
    }

    let scheduler: CountingScheduler
    let info: DeviceInfo
    /// Answer the host's hello with a hello and a state (so that mutations need not find the hello body).
    let answersHello: Bool
    private let state = Mutex(State())

    init(scheduler: CountingScheduler, info: DeviceInfo, answersHello: Bool) {
        self.scheduler = scheduler
        self.info = info
        self.answersHello = answersHello
    }

    var sent: [HostMessage] { state.withLock { $0.sent } }

    func open(eventHandler: @escaping @Sendable (DeviceLinkEvent) -> Void) {
        state.withLock { $0.handler = eventHandler }
    }

    func send(_ message: HostMessage) {
        let open = state.withLock { state -> Bool in
            guard !state.closed else { return false }
            if state.sent.count < 64 { state.sent.append(message) }
            return true
        }
        if open, answersHello, case .hello = message {
            deliver(.message(.hello(info)))
            deliver(.message(.deviceState(DeviceState())))
        }
    }

    func close() { deliver(.closed(LinkError(.closedLocally, "closed by the host"))) }

    func deliver(_ event: DeviceLinkEvent) {
        _ = scheduler.schedule(after: .zero) { [weak self] in
            guard let self else { return }
            let handler = self.state.withLock { state -> (@Sendable (DeviceLinkEvent) -> Void)? in
                guard !state.closed else { return nil }
                if case .closed = event { state.closed = true }
                return state.handler
            }
            handler?(event)
        }
    }
}

enum DeviceMessagesFuzz {
    static func check(_ condition: Bool, _ message: @autoclosure () -> String) {
        if !condition { fatalError("property failed: \(message())") }
    }

    /// Device message types, indexed by the low nibble of a message op.
    static let deviceTypes: [LinkMessageType] = [
        .deviceHello, .deviceState, .permission, .session, .stream, .codecConfiguration, .videoSample, .photo, .fault,
        .deviceHeartbeat, .goodbye, .motion, .motionSamples, .photoCapability, .photoChunk, .audioSample,
    ]

    static let configurations: [StreamConfiguration] = [
        StreamConfiguration(), StreamConfiguration(videoCodec: .hvc1, resolution: .medium, frameRate: 30),
        StreamConfiguration(videoCodec: .raw, resolution: .low, frameRate: 15),
        StreamConfiguration(videoCodec: .hvc1, resolution: .high, frameRate: 24),
        StreamConfiguration(videoCodec: .raw, audioCodec: .pcm(sampleRate: .rate16000, numberOfChannels: 1), resolution: .low,
                            frameRate: 15),
    ]

    /// Well-formed messages (ops 0xC0…0xFF pick one), parameterised by the current configuration and time.
    static func canned(_ index: Int, configuration: StreamConfiguration, pts: Int64, info: DeviceInfo) -> DeviceMessage {
        let size = configuration.resolution.videoFrameSize
        let (width, height) = (Int(size.width), Int(size.height))
        switch index % 23 {
        case 0: return .hello(info)
        case 1: return .deviceState(DeviceState())
        case 2: return .session(.started)
        case 3: return .stream(.starting(configuration))
        case 4: return .stream(.streaming(configuration))
        case 5:
            return .codecConfiguration(
                HEVCCodecConfiguration(
                    videoParameterSets: [Data([0x40, 0x01, 0x0C])], sequenceParameterSets: [Data([0x42, 0x01, 0x01])],
                    pictureParameterSets: [Data([0x44, 0x01, 0xC0])], width: width, height: height))
        case 6:
            let stride = width + 16
            return .videoSample(
                VideoSample(
                    presentationTimeUs: pts, isKeyframe: true,
                    format: .nv12(width: width, height: height, lumaBytesPerRow: stride, chromaBytesPerRow: stride),
                    payload: Data(count: stride * height + stride * height / 2),
                    // As a host end delivers it once the clocks are related (received set): becomes FrameTiming.
                    timing: SampleTiming(captureUs: pts &- 40_000, sentUs: pts &- 5_000, receivedUs: pts)))
        case 7:
            return .videoSample(
                VideoSample(
                    presentationTimeUs: pts, isKeyframe: true, format: .hevc,
                    payload: Data([0, 0, 0, 3, 0x26, 0x01, 0xAF, 0, 0, 0, 2, 0x02, 0x01]),
                    // Not yet on the host's clock (received nil): the frame must carry no timing.
                    timing: SampleTiming(captureUs: pts, sentUs: pts)))
        case 8: return .permission(.camera, .granted, requestID: 1)
        case 9: return .photo(PhotoData(data: Data([0xFF, 0xD8, 0xFF, 0xD9]), format: .jpeg), requestID: 1)
        case 10: return .stream(.paused)
        case 11: return .stream(.stopped)
        case 12: return .session(.ended(reason: "doffed"))
        case 13:
            return .heartbeat(
                sequence: UInt32(truncatingIfNeeded: max(0, pts / 1000)), droppedFrames: 0,
                clock: ClockEcho(echoHostClockUs: pts, receivedUs: pts &+ 1, sentUs: pts &+ 2))
        case 14: return .fault(.thermalHot, message: "hot")
        case 16: return .motion(.started(.hz30))
        case 17:
            return .motionSamples([
                MotionSample(timestampNs: pts &* 1000, accelerometer: Vector3(x: 9.8, y: 0, z: 0), gyroscope: Vector3(x: 0.1, y: -0.05, z: 0),
                             source: .glasses)
            ])
        case 18: return .motion(index & 0x20 == 0 ? .stopped : .unavailable)
        case 19: return .photoCapability(index & 0x20 == 0 ? .started : .captureFailed(requestID: 1, .busy, message: "busy"))
        case 20:
            // The first half of a standalone photo (request 1, the first the app asks for), with its metadata.
            return .photoChunk(PhotoChunk(requestID: 1, totalBytes: 8, offset: 0, bytes: Data([0xFF, 0xD8, 0xFF, 0xE0]),
                                          metadata: Data("{}".utf8)))
        case 21:
            return .photoChunk(PhotoChunk(requestID: 1, totalBytes: 8, offset: index & 0x20 == 0 ? 4 : 2,
                                          bytes: Data([0, 0, 0xFF, 0xD9])))
        case 22:
            // 20 ms of audio at 16 kHz, mono or (bit 0x20) stereo: what the audio configuration asks, or not.
            let channels = index & 0x20 == 0 ? 1 : 2
            return .audioSample(AudioSample(presentationTimeUs: pts, sampleRate: .rate16000,
                                            channels: [[Float]](repeating: [Float](repeating: 0.01, count: 320), count: channels)))
        default: return .deviceState(DeviceState(batteryLevel: 3))
        }
    }

    /// The app's side: what it holds between ops.
    final class App {
        let wearables: WearablesInstance
        var session: DeviceSession?
        var camera: Camera?
        var motion: Motion?
        var photo: Photo?
        var tokens: [any AnyListenerToken] = []
        let frames = Tally()
        let photos = Tally()

        init(wearables: WearablesInstance) { self.wearables = wearables }

        func perform(_ action: Int, device: DeviceIdentifier, configuration: StreamConfiguration) {
            switch action % 16 {
            case 0:
                let selector: any DeviceSelector =
                    action & 0x10 == 0 ? SpecificDeviceSelector(device: device) : AutoDeviceSelector(wearables: wearables)
                if let made = try? wearables.createSession(deviceSelector: selector) {
                    session = made
                    try? made.start()
                }
            case 1: try? session?.start()
            case 2:
                if let added = try? session?.addCamera(config: configuration) {
                    camera = added
                    let frames = self.frames
                    tokens.append(added.stream.videoFramePublisher.listen { frame in
                        if let image = frame.rawImage { _ = image.width &* image.height }
                        // Only host-clock timing (received set) becomes a frame's: decoded bodies never have it, and
                        // the canned HEVC sample's is still on the device's clock; only the canned raw sample's is.
                        DeviceMessagesFuzz.check(frame.timing == nil || !frame.isCompressed, "unmapped timing on a frame")
                        _ = frames.add()
                    })
                    tokens.append(added.stream.errorPublisher.listen { error in _ = error.localizedDescription })
                    tokens.append(added.stream.audioFramePublisher.listen { frame in
                        let buffer = frame.pcmBuffer
                        DeviceMessagesFuzz.check(buffer.frameLength <= UInt32(AudioSample.maximumFrames)
                            && buffer.format.channelCount == configuration.audioCodec?.numberOfChannels, "audio not as asked")
                        if buffer.frameLength > 0, let data = buffer.floatChannelData { _ = data[0][Int(buffer.frameLength) - 1] }
                    })
                    photo = added.photo
                    tokens.append(added.photo.transferProgressPublisher.listen { progress in
                        DeviceMessagesFuzz.check(progress.bytesReceived <= progress.totalBytes, "progress past the photo's size")
                        DeviceMessagesFuzz.check(progress.totalBytes <= 64 << 20, "a photo over the accepted size in transfer")
                    })
                    let photos = self.photos
                    tokens.append(added.photo.photoDataPublisher.listen { data in
                        DeviceMessagesFuzz.check(data.imageData.count <= 64 << 20, "a photo over the accepted size delivered")
                        _ = photos.add()
                    })
                    tokens.append(added.photo.errorPublisher.listen { error in _ = error.localizedDescription })
                    tokens.append(added.photo.statePublisher.listen { state in _ = state.description })
                }
            case 3: camera?.stream.start()
            case 4: camera?.stream.stop()
            case 5: _ = camera?.stream.capturePhoto(format: action & 0x10 == 0 ? .jpeg : .heic)
            case 6: camera?.stop()
            case 7: session?.stop()
            case 8: _ = wearables.devices.map { wearables.deviceForIdentifier($0)?.name }
            case 10:
                // DAT's Motion: nil unless the session is started and the glasses said they have an IMU.
                if let added = try? session?.addMotion(configuration: MotionConfiguration(samplingRate: action & 0x10 == 0 ? .hz30 : .hz5)) {
                    motion = added
                    tokens.append(added.statePublisher.listen { state in _ = state.description })
                    tokens.append(added.errorPublisher.listen { error in _ = error.localizedDescription })
                }
            case 11: motion?.start()
            case 12:
                if action & 0x10 == 0 {
                    motion?.stop()
                } else if let session {
                    try? session.removeMotion()
                    DeviceMessagesFuzz.check(session.motion == nil, "Motion still attached after removeMotion")
                    motion = nil
                }
            // DAT's standalone photo: start, capture (every resolution and quality), stop.
            case 13: photo?.start()
            case 14:
                photo?.capturePhoto(resolution: PhotoResolution.allCases[(action >> 4) % 4],
                                    quality: PhotoQuality.allCases[(action >> 6) % 3])
            case 15: photo?.stop()
            default: tokens.removeAll()
            }
        }
    }

    static func run(_ input: UnsafeRawBufferPointer) {
        guard let flags = input.first else { return }
        let scheduler = CountingScheduler()
        let wearables: WearablesInstance
        do {
            wearables = Wearables.makeInstance(
                configuration: try WearablesConfiguration(
                    scheduler: scheduler, deviceWaitTimeout: .seconds(5), startTimeout: .seconds(3),
                    stopGracePeriod: .seconds(1), photoCaptureTimeout: .seconds(2), permissionTimeout: .seconds(4)))
        } catch {
            fatalError("configuration rejected: \(error)")
        }
        let identifier: DeviceIdentifier = "fuzz-glasses"
        // Flag bit 1: the glasses say they have an IMU (Motion can be added); bit 2: they offer standalone photos.
        let info = DeviceInfo(identifier: identifier, name: "Fuzzed glasses", hasIMU: flags & 2 == 2,
                              hasStandalonePhoto: flags & 4 == 4)
        var configuration = configurations[Int(flags >> 4) % configurations.count]
        var device = FuzzDevice(scheduler: scheduler, info: info, answersHello: flags & 1 == 1)
        var links = [device]
        let app = App(wearables: wearables)
        wearables.attach(link: device)
        scheduler.inner.runUntilIdle()

        var index = 1
        var steps = 0
        var samplesSent: UInt64 = 0
        // A refused codec configuration is counted with the samples (malformed or oversized), so the bound below
        // counts configurations too.
        var configurationsSent: UInt64 = 0
        func byte() -> UInt8? {
            guard index < input.count else { return nil }
            defer { index += 1 }
            return input[index]
        }
        while let op = byte(), steps < 512 {
            steps += 1
            switch op {
            case 0x00...0x3F:
                // A message of a device type, the body decoded by the link's own reader: a length byte, the body.
                let type = deviceTypes[Int(op & 0x0F) % deviceTypes.count]
                let length = Int(byte() ?? 0) << (op & 0x30 == 0x30 ? 4 : 0)
                let end = min(input.count, index + length)
                var reader = ByteReader(UnsafeRawBufferPointer(rebasing: input[index..<end]))
                index = end
                guard let frame = try? MessageBodies.decode(type, &reader) else { continue }
                switch frame {
                case .device(let message):
                    if case .videoSample = message { samplesSent += 1 }
                    if case .codecConfiguration = message { configurationsSent += 1 }
                    device.deliver(.message(message))
                case .goodbye(let error): device.deliver(.closed(error))
                case .host: check(false, "a device type decoded as a host message")
                case .pair: check(false, "a device type decoded as a pair frame")
                }
            case 0x40...0x7F:
                // Time passes: up to 63² × 10 ms ≈ 40 s.
                let units = Int64(op & 0x3F)
                scheduler.inner.advance(by: .milliseconds(units * units * 10))
            case 0x80...0x9F:
                app.perform(Int(op & 0x1F), device: identifier, configuration: configuration)
            case 0xA0...0xAF:
                configuration = configurations[Int(op) % configurations.count]
            case 0xB0...0xB7:
                device.deliver(.closed(LinkError(op & 1 == 0 ? .connectionLost : .heartbeatTimeout, "fuzzed drop")))
            case 0xB8...0xBF:
                // A reconnect: a fresh link from the same glasses (at most a few per input).
                guard links.count < 8 else { continue }
                device = FuzzDevice(scheduler: scheduler, info: info, answersHello: op & 1 == 1)
                links.append(device)
                wearables.attach(link: device)
            default:
                let pts = Int64(scheduler.now / .microseconds(1))
                let message = canned(Int(op & 0x3F), configuration: configuration, pts: pts, info: info)
                if case .videoSample = message { samplesSent += 1 }
                if case .codecConfiguration = message { configurationsSent += 1 }
                device.deliver(.message(message))
            }
            scheduler.inner.runUntilIdle()
            if let stream = app.camera?.stream {
                let counters = stream.sampleCounters
                check(
                    counters.delivered &+ counters.malformed &+ counters.discarded &+ counters.oversized
                        <= samplesSent &+ configurationsSent,
                    "counted \(counters) of \(samplesSent) samples and \(configurationsSent) configurations")
                _ = stream.state
            }
            check(wearables.attachedLinkCount <= links.count, "more attached links than attached")
        }
        if getenv("FUZZ_DEBUG") != nil {
            let stream = app.camera?.stream
            print("session \(app.session.map { "\($0.state)" } ?? "none"), stream \(stream.map { "\($0.state)" } ?? "none"), "
                + "motion \(app.motion.map { "\($0.state)" } ?? "none"), photo \(app.photo.map { "\($0.state)" } ?? "none") (\(app.photos.add() - 1) delivered), "
                + "audio \(stream.map { "\($0.sampleCounters.audioDelivered)/\($0.sampleCounters.audioRejected)/\($0.sampleCounters.audioDiscarded)" } ?? "-"), "
                + "counters \(stream.map { "\($0.sampleCounters)" } ?? "-"), frames \(app.frames.add() - 1), "
                + "host sent \(links.map(\.sent.count))")
        }
        // Teardown: the app stops, the link drops, time runs out every timer; the scheduler must come to rest.
        app.camera?.stop()
        app.session?.stop()
        app.tokens.removeAll()
        for link in links { link.deliver(.closed(LinkError(.connectionLost, "end of input"))) }
        scheduler.inner.advance(by: .seconds(600))
        scheduler.inner.runUntilIdle()
        withExtendedLifetime((app, links)) {}
    }

    // MARK: Seeds

    static func writeSeeds(to directory: URL) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let encoder = LinkFrameEncoder()
        func body(_ message: DeviceMessage) throws -> [UInt8] {
            let frame = try encoder.encode(.device(message))
            return Array(frame.dropFirst(LinkWireFormat.headerSize))
        }
        func op(_ message: DeviceMessage) throws -> [UInt8] {
            let bytes = try body(message)
            let type = try encoder.encode(.device(message))[5]
            guard let nibble = deviceTypes.firstIndex(where: { $0.rawValue == type }) else { return [] }
            if bytes.count < 256 { return [UInt8(nibble), UInt8(bytes.count)] + bytes }
            // Long bodies: the 0x30 bit scales the length byte by 16 (the body is padded with zeros to fit).
            let units = (bytes.count + 15) / 16
            guard units < 256 else { return [] }
            return [UInt8(nibble) | 0x30, UInt8(units)] + bytes + [UInt8](repeating: 0, count: units * 16 - bytes.count)
        }
        let info = DeviceInfo(identifier: "fuzz-glasses", name: "Fuzzed glasses")
        let configuration = StreamConfiguration(videoCodec: .hvc1, resolution: .medium, frameRate: 30)
        let hello = try op(.hello(info)) + op(.deviceState(DeviceState()))
        let session = [0x80] + (try op(.session(.started)))
        let streaming: [UInt8] =
            [0x82, 0x83] + (try op(.stream(.starting(configuration)))) + (try op(.codecConfiguration(
                HEVCCodecConfiguration(
                    videoParameterSets: [Data([0x40, 0x01, 0x0C])], sequenceParameterSets: [Data([0x42, 0x01, 0x01])],
                    pictureParameterSets: [Data([0x44, 0x01, 0xC0])], width: 504, height: 896))))
            + (try op(.stream(.streaming(configuration))))
        let sample = try op(
            .videoSample(
                VideoSample(
                    presentationTimeUs: 33_333, isKeyframe: true, format: .hevc,
                    payload: Data([0, 0, 0, 3, 0x26, 0x01, 0xAF, 0, 0, 0, 2, 0x02, 0x01]),
                    // The latency field on the wire (decoded without a host receive time).
                    timing: SampleTiming(captureUs: 30_000, sentUs: 33_000))))
        let imu = try op(.hello(DeviceInfo(identifier: "fuzz-glasses", name: "Fuzzed glasses", hasIMU: true)))
            + op(.deviceState(DeviceState()))
        let photoHello = try op(.hello(DeviceInfo(identifier: "fuzz-glasses", name: "Fuzzed glasses", hasStandalonePhoto: true)))
            + op(.deviceState(DeviceState()))
        let motion = [0x8A, 0x8B] + (try op(.motion(.started(.hz30))))
            + (try op(.motionSamples([MotionSample(timestampNs: 40_000_000, gyroscope: Vector3(x: 0.2, y: 0, z: 0), source: .glasses)])))
            + [0x45, 0xD1, 0xD1, 0x8C] + (try op(.motion(.stopped))) + [0x8B, 0xD0, 0xD1, 0x9C]
        let seeds: [(String, [UInt8])] = [
            ("decoded-motion", [0x13] + imu + session + streaming + motion + sample + [0x87, 0x50]),
            ("canned-motion", [0x03, 0x80, 0xC2, 0x82, 0x83, 0xC3, 0xC4, 0x8A, 0x8B, 0xD0, 0xD1, 0x42, 0xD1, 0xE9, 0x8B, 0xD2, 0x87]),
            ("decoded-standalone-photo", [0x15] + photoHello + session + [0x82, 0x8D] + (try op(.photoCapability(.started)))
                + [0x8E] + (try op(.photoChunk(PhotoChunk(requestID: 1, totalBytes: 6, offset: 0, bytes: Data([0xFF, 0xD8]), metadata: Data("{}".utf8)))))
                + (try op(.photoChunk(PhotoChunk(requestID: 1, totalBytes: 6, offset: 2, bytes: Data([0, 0, 0xFF, 0xD9])))))
                + [0x9E] + (try op(.photoCapability(.captureFailed(requestID: 2, .busy, message: "busy")))) + [0x8F, 0x86]),
            ("canned-standalone-photo", [0x05, 0x80, 0xC2, 0x82, 0x8D, 0x42, 0xD3, 0x8E, 0xD4, 0x42, 0xD5, 0x8E, 0xD4, 0xEC, 0x8E, 0x7F, 0x8F, 0x86]),
            ("decoded-walkthrough", [0x10] + hello + session + streaming + sample + [0x45] + sample + [0x84, 0x86, 0x87]),
            ("decoded-photo", [0x10] + hello + session + streaming + [0x85] + (try op(.photo(PhotoData(data: Data([0xFF, 0xD8]), format: .jpeg), requestID: 1))) + [0x50]),
            ("decoded-faults", [0x10] + hello + session + streaming + (try op(.fault(.batteryLow, message: "low"))) + (try op(.heartbeat(sequence: 1, droppedFrames: 9))) + [0x7F, 0x7F]),
            ("canned-audio", [0x41, 0x80, 0xC2, 0x82, 0x83, 0xC3, 0xC4, 0xD6, 0xC6, 0x42, 0xD6, 0xED, 0xD6, 0x84, 0xD6, 0x86]),
            ("decoded-audio", [0x40] + hello + session + [0x82, 0x83] + (try op(.stream(.starting(configurations[4]))))
                + (try op(.stream(.streaming(configurations[4]))))
                + (try op(.audioSample(AudioSample(presentationTimeUs: 0, sampleRate: .rate16000, channels: [[Float](repeating: 0.5, count: 320)]))))
                + [0x42] + (try op(.audioSample(AudioSample(presentationTimeUs: 20_000, sampleRate: .rate48000, channels: [[0.1, 0.2]]))))
                + [0x84, 0x50]),
            ("canned-raw", [0x01, 0x80, 0xC2, 0x82, 0x83, 0xC3, 0xC4, 0xC6, 0x42, 0xC6, 0xC6, 0xCA, 0xC4, 0xC6, 0x84, 0xCB, 0x86, 0x87]),
            ("canned-hevc", [0x11, 0x80, 0xC2, 0x82, 0x83, 0xC3, 0xC5, 0xC4, 0xC7, 0x42, 0xC7, 0x85, 0xC9, 0xCE, 0xCF, 0x84, 0xCB]),
            ("canned-timeouts", [0x01, 0x80, 0x7F, 0xC2, 0x82, 0x83, 0x7F, 0xC3, 0x7F, 0x85, 0x7F, 0x84, 0x7F]),
            ("canned-reconnect", [0x01, 0x80, 0xC2, 0x82, 0x83, 0xC3, 0xC4, 0xC6, 0xB0, 0x50, 0xB9, 0xC2, 0xC4, 0xC6, 0xCC, 0x87]),
            ("canned-no-hello", [0x00, 0x80, 0x7F, 0xC0, 0xC1, 0x81, 0xC2, 0x82, 0x83, 0x5F]),
        ]
        for (name, bytes) in seeds { try Data(bytes).write(to: directory.appendingPathComponent(name)) }
        // A long life: every seed's program (without its flags byte) one after another, the link answering hellos.
        try Data([0x11] + Array(seeds.flatMap { $0.1.dropFirst() }.prefix(4000)))
            .write(to: directory.appendingPathComponent("long-everything"))
    }
}
