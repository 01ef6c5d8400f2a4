import Foundation
import Synchronization
import WearablesKit

// DAT 1.0's experimental capabilities as Meta's skills and sample app use them (`shared/reference/dat-1.0-extras.md`
// §1.2, §2, §3), written against WearablesKit: the same calls in the same order. This file imports nothing but
// WearablesKit (and Foundation, Synchronization), so PublicSurfaceTests type-checks it as an outside app would;
// ExtrasWalkthroughTests runs it against the simulated glasses.

/// What the walkthroughs saw, for the test to check.
final class ExtrasLog: Sendable {
    private struct Seen {
        var motionStates: [MotionState] = []
        var motionSamples: [MotionSample] = []
        var audioFrames = 0
        var audioFrameLengths: Set<UInt32> = []
        var audioTimes: [Int64] = []
        var audioPeak: Float = 0
        var photoStates: [PhotoState] = []
        var photo: PhotoCaptureData?
        var progress: [PhotoTransferProgress] = []
        var errors: [String] = []
    }

    private let seen = Mutex(Seen())

    var motionStates: [MotionState] { seen.withLock { $0.motionStates } }
    var motionSamples: [MotionSample] { seen.withLock { $0.motionSamples } }
    var audioFrames: Int { seen.withLock { $0.audioFrames } }
    var audioFrameLengths: Set<UInt32> { seen.withLock { $0.audioFrameLengths } }
    var audioTimes: [Int64] { seen.withLock { $0.audioTimes } }
    var audioPeak: Float { seen.withLock { $0.audioPeak } }
    var photoStates: [PhotoState] { seen.withLock { $0.photoStates } }
    var photo: PhotoCaptureData? { seen.withLock { $0.photo } }
    var progress: [PhotoTransferProgress] { seen.withLock { $0.progress } }
    var errors: [String] { seen.withLock { $0.errors } }

    func motion(_ state: MotionState) { seen.withLock { $0.motionStates.append(state) } }
    func sample(_ sample: MotionSample) { seen.withLock { $0.motionSamples.append(sample) } }
    func audio(length: UInt32, time: Int64, peak: Float) {
        seen.withLock {
            $0.audioFrames += 1
            $0.audioFrameLengths.insert(length)
            $0.audioTimes.append(time)
            $0.audioPeak = max($0.audioPeak, peak)
        }
    }
    func photo(_ state: PhotoState) { seen.withLock { $0.photoStates.append(state) } }
    func photo(_ data: PhotoCaptureData) { seen.withLock { $0.photo = data } }
    func progress(_ progress: PhotoTransferProgress) { seen.withLock { $0.progress.append(progress) } }
    func error(_ message: String) { seen.withLock { $0.errors.append(message) } }
}

/// A DAT publisher as an `AsyncStream` (what an app does to `await` a state or a photo): subscribe before the action
/// whose answer it waits for, keep the token.
func values<T: Sendable>(of publisher: any Announcer<T>) -> (AsyncStream<T>, any AnyListenerToken) {
    let (stream, continuation) = AsyncStream.makeStream(of: T.self)
    let token = publisher.listen { continuation.yield($0) }
    return (stream, token)
}

/// The motion skill: attach Motion once the session is started (the sample app: once the camera streams), register
/// observers, `start()`, read `samples` from one task, `stop()`, cancel the reader, then `removeMotion()` (terminal).
func motionWalkthrough(session: DeviceSession, log: ExtrasLog, samples wanted: Int) async throws {
    guard let motion = try session.addMotion(configuration: MotionConfiguration(samplingRate: .hz30)) else {
        log.error("these glasses have no IMU")
        return
    }
    let tokens = ListenerTokenBag()
    motion.statePublisher.listen { log.motion($0) }.store(in: tokens)
    motion.errorPublisher.listen { log.error($0.localizedDescription) }.store(in: tokens)
    let (states, stateToken) = values(of: motion.statePublisher)
    motion.start()
    // One reader for the sample stream (it has room for one).
    let reader = Task {
        var count = 0
        for await sample in motion.samples where sample.source == .glasses {
            log.sample(sample)
            count += 1
            if count == wanted { break }
        }
    }
    await reader.value
    motion.stop()
    for await state in states where state == .stopped { break }
    reader.cancel()
    try session.removeMotion()
    tokens.clear()
    withExtendedLifetime(stateToken) {}
}

/// Camera audio as the audio skill and the sample app configure it: PCM at 16 kHz mono beside `.hvc1` video at `.low`
/// and 7 fps; listen before `start()`; order by the presentation time; never mutate the buffer.
func audioWalkthrough(session: DeviceSession, log: ExtrasLog, frames wanted: Int) async throws {
    let config = StreamConfiguration(
        videoCodec: .hvc1, audioCodec: .pcm(sampleRate: .rate16000, numberOfChannels: 1), resolution: .low, frameRate: 7)
    guard let camera = try session.addCamera(config: config) else { return }
    let stream = camera.stream
    let tokens = ListenerTokenBag()
    let (arrivals, arrivalToken) = values(of: stream.audioFramePublisher)
    stream.audioFramePublisher.listen { frame in
        let buffer = frame.pcmBuffer
        guard let channels = buffer.floatChannelData else { return }
        var peak: Float = 0
        for i in 0 ..< Int(buffer.frameLength) { peak = max(peak, abs(channels[0][i * buffer.stride])) }
        log.audio(length: buffer.frameLength, time: frame.presentationTimeUs, peak: peak)
    }.store(in: tokens)
    stream.errorPublisher.listen { log.error($0.localizedDescription) }.store(in: tokens)
    stream.start()
    var arrived = 0
    for await _ in arrivals {
        arrived += 1
        if arrived == wanted { break }
    }
    camera.stop()
    tokens.clear()
    withExtendedLifetime(arrivalToken) {}
}

/// The camera-capture skill for a standalone photo, after the sample app: wake the sensor with the stream, start
/// Photo once the stream streams, stop the stream (the two compete for the camera), wait for `.started`, then
/// `capturePhoto(resolution: .full, quality: .high)` and wait for the photo.
func standalonePhotoWalkthrough(session: DeviceSession, log: ExtrasLog, resolution: PhotoResolution = .full) async throws {
    guard let camera = try session.addCamera(config: StreamConfiguration(videoCodec: .raw, resolution: .low, frameRate: 15))
    else { return }
    let photo = camera.photo
    let tokens = ListenerTokenBag()
    photo.statePublisher.listen { log.photo($0) }.store(in: tokens)
    photo.errorPublisher.listen { log.error($0.localizedDescription) }.store(in: tokens)
    photo.transferProgressPublisher.listen { log.progress($0) }.store(in: tokens)
    let (states, stateToken) = values(of: photo.statePublisher)
    let (photos, photoToken) = values(of: photo.photoDataPublisher)
    camera.stream.start()
    for await state in camera.stream.stateStream() where state == .streaming { break }
    photo.start()
    camera.stream.stop()
    for await state in camera.stream.stateStream() where state == .stopped { break }
    if photo.state != .started {
        for await state in states where state == .started { break }
    }
    photo.capturePhoto(resolution: resolution, quality: .high)
    for await delivered in photos {
        log.photo(delivered)
        break
    }
    photo.stop()
    for await state in states where state == .stopped { break }
    camera.stop()
    tokens.clear()
    withExtendedLifetime((stateToken, photoToken)) {}
}
