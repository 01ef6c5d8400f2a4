import Foundation
import Synchronization

/// A camera stream: DAT's `Stream`, reached as `camera.stream`.
///
/// `start()` and `stop()` are synchronous: the state changes before they return; the glasses are asked over the
/// link and answer later. While the camera is attached the stream may be started again after `.stopped`; once the
/// camera stops, the stream stops for good and every publisher and async stream finishes.
///
/// Callbacks and async-stream elements are delivered in order, never concurrently for one ``WearablesInstance``,
/// from whichever thread delivered the link event, fired the timer or called the method that caused them.
public final class Stream: Sendable {
    /// What the stream asks the glasses for.
    public let streamConfiguration: StreamConfiguration
    /// The glasses this stream runs on.
    public let deviceIdentifier: DeviceIdentifier

    /// Counters about the samples the link delivered (a Linux addition).
    public struct SampleCounters: Sendable, Hashable {
        /// Samples turned into frames and delivered.
        public var delivered: UInt64 = 0
        /// Samples rejected as malformed (reported once per streaming period as ``StreamError/videoStreamingError``).
        public var malformed: UInt64 = 0
        /// Samples that arrived while the stream was not starting or streaming, and were dropped.
        public var discarded: UInt64 = 0
        /// Raw frames, samples and codec configurations refused because they exceed the negotiated resolution
        /// (``StreamConfigurationViolation``); none of them reached a decoder.
        public var oversized: UInt64 = 0
        /// Audio samples turned into frames and delivered (``Stream/audioFramePublisher``).
        public var audioDelivered: UInt64 = 0
        /// Audio samples rejected: malformed, or not the rate and channels the configuration asked for (reported
        /// once per stream as ``StreamError/audioStreamingError``).
        public var audioRejected: UInt64 = 0
        /// Audio samples that arrived while the stream was not starting or streaming, or unasked for, and were dropped.
        public var audioDiscarded: UInt64 = 0
    }

    /// How many ``StreamConfigurationViolation``s one streaming period (from `start()`) tolerates: the last one
    /// stops the stream (``StreamError/videoStreamingError``, then `.stopping` and `.stopped`).
    public static let maximumConfigurationViolations = 3

    private struct Core {
        var machine: StreamStateMachine
        var assembler: VideoSampleAssembler
        var timers = TimerTable<StreamStateMachine.Timer>()
        var counters = SampleCounters()
        var lastMalformed: MalformedSampleError?
        var lastViolation: StreamConfigurationViolation?
        /// Whether ``StreamError/audioStreamingError`` was reported for rejected audio (once per stream).
        var audioProblemReported = false
    }

    private let core: Mutex<Core>
    private let context: InstanceContext
    // The device outlives its streams in every use (WearablesInstance keeps it); weak, so a stream the app keeps
    // does not keep the device (and, through it, its session and this stream) alive in a cycle.
    private let deviceReference: WeakReference<Device>
    private let owners: Mutex<(camera: WeakReference<Camera>, session: WeakReference<DeviceSession>)>
    private let stateBroadcaster: Broadcaster<StreamState>
    private let frameBroadcaster: Broadcaster<VideoFrame>
    private let photoBroadcaster: Broadcaster<PhotoData>
    private let errorBroadcaster: Broadcaster<StreamError>
    private let audioBroadcaster: Broadcaster<AudioFrame>

    init(configuration: StreamConfiguration, device: Device, context: InstanceContext) {
        self.streamConfiguration = configuration
        self.deviceIdentifier = device.identifier
        self.deviceReference = WeakReference(device)
        self.context = context
        self.owners = Mutex((WeakReference(nil), WeakReference(nil)))
        let machine = StreamStateMachine(
            deviceID: device.identifier, configuration: configuration,
            batteryLowThreshold: context.configuration.batteryLowThreshold)
        self.core = Mutex(Core(machine: machine, assembler: VideoSampleAssembler(configuration: configuration)))
        self.stateBroadcaster = Broadcaster(effects: context.effects)
        self.frameBroadcaster = Broadcaster(effects: context.effects)
        self.photoBroadcaster = Broadcaster(effects: context.effects)
        self.errorBroadcaster = Broadcaster(effects: context.effects)
        self.audioBroadcaster = Broadcaster(effects: context.effects)
    }

    // MARK: Public surface

    /// The current state.
    public var state: StreamState { core.withLock { $0.machine.state } }
    /// State changes (not the current state; read ``state`` or use ``stateStream()`` for that).
    public var statePublisher: any Announcer<StreamState> { stateBroadcaster }
    /// Video frames, as the glasses send them.
    public var videoFramePublisher: any Announcer<VideoFrame> { frameBroadcaster }
    /// Photos requested with ``capturePhoto(format:)``.
    public var photoDataPublisher: any Announcer<PhotoData> { photoBroadcaster }
    /// Stream errors.
    public var errorPublisher: any Announcer<StreamError> { errorBroadcaster }
    /// Audio, when the configuration asked for it (``StreamConfiguration/audioCodec``), while the stream is starting
    /// or streaming: DAT 1.0's `audioFramePublisher`. Order audio and video by their presentation times.
    public var audioFramePublisher: any Announcer<AudioFrame> { audioBroadcaster }
    /// How many samples were delivered, rejected and discarded so far.
    public var sampleCounters: SampleCounters { core.withLock { $0.counters } }
    /// The last malformed sample's problem, if any.
    public var lastMalformedSample: MalformedSampleError? { core.withLock { $0.lastMalformed } }
    /// The last frame or parameter set refused for exceeding the negotiated resolution, if any.
    public var lastConfigurationViolation: StreamConfigurationViolation? { core.withLock { $0.lastViolation } }
    /// Stream events from the glasses that were ignored as late answers to an earlier start or stop: they echoed
    /// another stream generation than that of the latest `startStream` (a Linux addition; `docs/PROTOCOL.md`, 7.6).
    public var staleStreamEvents: UInt64 { core.withLock { $0.machine.staleEventsIgnored } }

    /// The current state first, then every change; finishes after the final `.stopped` once the camera stopped.
    /// Lifecycle events are never dropped (unbounded buffer: a handful per session).
    public func stateStream() -> AsyncStream<StreamState> {
        let stream = core.withLock { core in
            stateBroadcaster.makeStream(bufferingPolicy: .unbounded, initial: core.machine.state)
        }
        context.effects.drain()
        return stream
    }

    /// Video frames; keeps only the newest `bufferingNewest` frames when the consumer falls behind.
    public func videoFrameStream(bufferingNewest: Int = 4) -> AsyncStream<VideoFrame> {
        frameBroadcaster.makeStream(bufferingPolicy: .bufferingNewest(max(1, bufferingNewest)), initial: nil)
    }

    /// Photos; keeps the oldest 8 undelivered photos.
    public func photoDataStream() -> AsyncStream<PhotoData> {
        photoBroadcaster.makeStream(bufferingPolicy: .bufferingOldest(8), initial: nil)
    }

    /// Stream errors; keeps the oldest 64 undelivered errors.
    public func errorStream() -> AsyncStream<StreamError> {
        errorBroadcaster.makeStream(bufferingPolicy: .bufferingOldest(64), initial: nil)
    }

    /// Starts streaming: `.stopped → .waitingForDevice`, then on as the glasses answer.
    ///
    /// Does nothing unless the stream is `.stopped` and its camera is attached. If the glasses are not available
    /// within the configured device wait timeout the stream fails with ``StreamError/deviceNotConnected(_:)``.
    public func start() {
        perform { $0.start(nextGeneration: nextGeneration) }
    }

    /// Stops streaming: `.stopping`, then `.stopped` when the glasses acknowledge (or after the grace period).
    public func stop() {
        perform { $0.stop() }
    }

    /// Asks the glasses for a still photo; false (and no photo event) when not streaming, a capture is in flight,
    /// or the glasses do not support `format`. Video pauses during the capture and resumes after the photo.
    @discardableResult
    public func capturePhoto(format: PhotoCaptureFormat) -> Bool {
        let supported = deviceReference.object?.info.supportedPhotoFormats.contains(format) ?? false
        let accepted = core.withLock { core -> Bool in
            let (accepted, actions) = core.machine.capturePhoto(format: format, supported: supported)
            apply(actions, &core)
            return accepted
        }
        context.effects.drain()
        return accepted
    }

    // MARK: Internal: the camera and the session drive these

    /// Records who hears about `.stopped`: the camera (its own state) and the session (which may be waiting for
    /// this stream's stop before letting a new camera's stream start, even if the app dropped the old camera).
    func setOwners(camera: Camera, session: DeviceSession) {
        owners.withLock { $0 = (WeakReference(camera), WeakReference(session)) }
    }

    // These never drain the effect queue: callers may hold a lock; the top-level caller drains.

    func detach() { update { $0.detach() } }
    func end() { update { $0.end() } }
    func deviceReadinessChanged(_ ready: Bool) {
        update { $0.deviceReadinessChanged(ready, nextGeneration: nextGeneration) }
    }
    func linkLost() { update { $0.linkLost() } }
    func deviceStateChanged(from old: DeviceState, to new: DeviceState) {
        update { $0.deviceStateChanged(from: old, to: new) }
    }

    /// Handles a stream-level message from the glasses.
    func handle(_ message: DeviceMessage) {
        core.withLock { core in
            switch message {
            case .stream(let event, let generation):
                apply(core.machine.deviceReported(event, generation: generation), &core)
            case .fault(let fault, _):
                apply(core.machine.deviceFault(fault), &core)
            case .photo(let photo, let requestID):
                apply(core.machine.photoDelivered(photo, requestID: requestID), &core)
            case .codecConfiguration(let configuration):
                if let rejection = core.assembler.configure(configuration) {
                    reject(rejection, &core)
                }
            case .videoSample(let sample):
                guard core.machine.acceptsSamples else {
                    core.counters.discarded += 1
                    return
                }
                switch core.assembler.frame(from: sample) {
                case .success(let frame):
                    core.counters.delivered += 1
                    frameBroadcaster.publish(frame)
                case .failure(let rejection):
                    reject(rejection, &core)
                }
            case .audioSample(let sample):
                receiveAudio(sample, &core)
            case .hello, .deviceState, .permission, .session, .heartbeat, .motion, .motionSamples, .photoCapability,
                 .photoChunk:
                break
            }
        }
    }

    /// Audio from the glasses: delivered while the stream takes samples and the configuration asked for audio at
    /// this rate and channel count; anything else is counted, and audio that is malformed or not as asked is
    /// reported once (audio not asked for, or outside starting and streaming, is only counted).
    private func receiveAudio(_ sample: AudioSample, _ core: inout Core) {
        guard core.machine.acceptsSamples, let asked = streamConfiguration.audioCodec else {
            core.counters.audioDiscarded += 1
            return
        }
        guard sample.sampleRate == asked.sampleRate, UInt32(sample.channels) == asked.numberOfChannels,
              let channels = sample.deinterleaved(),
              let buffer = AudioPCMBuffer(sampleRate: Double(sample.sampleRate.hertz), channels: channels) else {
            core.counters.audioRejected += 1
            if !core.audioProblemReported {
                core.audioProblemReported = true
                errorBroadcaster.publish(.audioStreamingError)
            }
            return
        }
        core.counters.audioDelivered += 1
        audioBroadcaster.publish(AudioFrame(pcmBuffer: buffer, presentationTimeUs: sample.presentationTimeUs))
    }

    var isStopped: Bool { state == .stopped }

    /// A fresh stream generation from the device's counter (shared by every stream of these glasses), for the
    /// `startStream` the machine is sending (called under the stream lock; the counter's lock is a leaf).
    private func nextGeneration() -> UInt32 {
        deviceReference.object?.nextStreamGeneration() ?? 1
    }

    /// Counts and reports a refused sample or configuration (under the stream lock).
    private func reject(_ rejection: SampleRejection, _ core: inout Core) {
        switch rejection {
        case .malformed(let problem):
            core.counters.malformed += 1
            core.lastMalformed = problem
            apply(core.machine.malformedSample(), &core)
        case .oversized(let violation):
            core.counters.oversized += 1
            core.lastViolation = violation
            apply(core.machine.configurationViolated(limit: Self.maximumConfigurationViolations), &core)
        }
    }

    // MARK: Performing actions

    /// Applies an event and drains the effects: for calls from the app, with no lock held.
    private func perform(_ event: (inout StreamStateMachine) -> [StreamStateMachine.Action]) {
        update(event)
        context.effects.drain()
    }

    /// Applies an event; effects stay queued for the caller to drain.
    private func update(_ event: (inout StreamStateMachine) -> [StreamStateMachine.Action]) {
        core.withLock { core in apply(event(&core.machine), &core) }
    }

    /// Performs actions under the stream lock; everything that reaches outside is enqueued, not called.
    private func apply(_ actions: [StreamStateMachine.Action], _ core: inout Core) {
        for action in actions {
            switch action {
            case .send(let message):
                deviceReference.object?.send(message)
            case .state(let state):
                stateBroadcaster.publish(state)
            case .error(let error):
                errorBroadcaster.publish(error)
            case .photo(let photo):
                photoBroadcaster.publish(photo)
            case .schedule(let timer):
                core.timers.arm(timer, after: duration(of: timer), on: context.scheduler) { [weak self] generation in
                    self?.timerFired(timer, generation: generation)
                }
            case .cancel(let timer):
                core.timers.cancel(timer)
            case .resetSamples:
                core.assembler.reset()
            case .didStop:
                let (camera, session) = owners.withLock { ($0.camera.object, $0.session.object) }
                context.effects.enqueue { [weak self] in
                    guard let self else { return }
                    camera?.streamDidStop()
                    session?.streamDidStop(self)
                }
            case .finish:
                stateBroadcaster.finish()
                frameBroadcaster.finish()
                photoBroadcaster.finish()
                errorBroadcaster.finish()
                audioBroadcaster.finish()
            }
        }
    }

    private func duration(of timer: StreamStateMachine.Timer) -> Duration {
        let configuration = context.configuration
        switch timer {
        case .wait: return configuration.deviceWaitTimeout
        case .start: return configuration.startTimeout
        case .stop: return configuration.stopGracePeriod
        case .photo: return configuration.photoCaptureTimeout
        }
    }

    private func timerFired(_ timer: StreamStateMachine.Timer, generation: UInt64) {
        core.withLock { core in
            guard core.timers.claimFiring(timer, generation: generation) else { return }
            apply(core.machine.timerFired(timer), &core)
        }
        context.effects.drain()
    }
}
