/// The pure lifecycle of a camera stream: one mutating method per event, each returning the actions to perform.
///
/// No I/O, no locks, no time: the owner (``Stream``) performs the actions (send a message, publish, arm a timer)
/// and feeds timer expiries back in as events.
struct StreamStateMachine: Sendable {
    /// The timers a stream arms.
    enum Timer: Hashable, Sendable, CaseIterable {
        /// Waiting for the glasses (device wait timeout).
        case wait
        /// Waiting for `streaming` after `starting` (start timeout).
        case start
        /// Waiting for the glasses to acknowledge `stopStream` (stop grace period).
        case stop
        /// Waiting for a photo (photo capture timeout).
        case photo
    }

    /// What the owner must do.
    enum Action: Hashable, Sendable {
        case send(HostMessage)
        case state(StreamState)
        case error(StreamError)
        case photo(PhotoData)
        case schedule(Timer)
        case cancel(Timer)
        /// A new streaming period begins: forget the codec configuration of the last one.
        case resetSamples
        /// The stream reached `.stopped`: tell the camera.
        case didStop
        /// The stream is detached and stopped: finish every publisher and async stream.
        case finish
    }

    let deviceID: DeviceIdentifier
    let configuration: StreamConfiguration
    let batteryLowThreshold: Int

    private(set) var state: StreamState = .stopped
    private(set) var deviceReady = false
    private(set) var startSent = false
    private(set) var detached = false
    private(set) var photoInFlight: UInt32?
    /// The generation of the latest `startStream` sent (nil before the first): `stopStream` carries it, and a stream
    /// event that echoes another generation answers an earlier start or stop and is ignored.
    private(set) var generation: UInt32?
    /// Stream events ignored because they echoed an earlier generation than ``generation``.
    private(set) var staleEventsIgnored: UInt64 = 0
    private var nextPhotoID: UInt32 = 1
    private var conditionsReported: Set<StreamError> = []
    private var malformedReported = false
    /// Frames and parameter sets larger than the configuration since `start()`.
    private(set) var configurationViolations = 0

    init(deviceID: DeviceIdentifier, configuration: StreamConfiguration, batteryLowThreshold: Int) {
        self.deviceID = deviceID
        self.configuration = configuration
        self.batteryLowThreshold = batteryLowThreshold
    }

    /// Whether video samples are delivered in the current state.
    var acceptsSamples: Bool { state == .streaming || state == .starting }

    /// Whether the stream is between `start()` and `.stopped`, not stopping.
    var isActive: Bool { [.waitingForDevice, .starting, .streaming, .paused].contains(state) }

    // MARK: Calls from the app

    /// `start()`: from `.stopped` to `.waitingForDevice`, asking the glasses at once if they are ready.
    /// `nextGeneration` numbers the `startStream`, and is called only when one is sent (the owner draws from the
    /// device's counter, so the streams of one pair of glasses never share a generation).
    mutating func start(nextGeneration: () -> UInt32) -> [Action] {
        guard !detached, state == .stopped else { return [] }
        conditionsReported = []
        malformedReported = false
        configurationViolations = 0
        var actions = [transition(.waitingForDevice), .schedule(.wait)]
        if deviceReady { actions += sendStart(nextGeneration) }
        return actions
    }

    /// `stop()`: to `.stopping` (or straight to `.stopped` if the glasses were never asked).
    mutating func stop() -> [Action] {
        switch state {
        case .stopped, .stopping:
            return []
        case .waitingForDevice where !startSent:
            return [transition(.stopping)] + enterStopped()
        case .waitingForDevice, .starting, .streaming, .paused:
            photoInFlight = nil
            startSent = false
            return [.cancel(.wait), .cancel(.start), .cancel(.photo), transition(.stopping), .send(.stopStream(generation: generation)), .schedule(.stop)]
        }
    }

    /// The camera was stopped: stop, and never start again.
    mutating func detach() -> [Action] {
        guard !detached else { return [] }
        detached = true
        if state == .stopped { return [.finish] }
        return stop()
    }

    /// The session ended (or the link dropped while stopping): stopped at once, no message, never again.
    mutating func end() -> [Action] {
        detached = true
        deviceReady = false
        if state == .stopped { return [.finish] }
        return enterStopped()
    }

    /// `capturePhoto(format:)`: true and a request when streaming with no capture in flight.
    mutating func capturePhoto(format: PhotoCaptureFormat, supported: Bool) -> (accepted: Bool, actions: [Action]) {
        guard state == .streaming, photoInFlight == nil, supported else { return (false, []) }
        let id = nextPhotoID
        nextPhotoID = nextPhotoID == .max ? 1 : nextPhotoID + 1
        photoInFlight = id
        return (true, [.send(.capturePhoto(format, requestID: id)), .schedule(.photo)])
    }

    // MARK: Events from the session and the glasses

    /// The session is started and the link is up (true), or not (false); `nextGeneration` as for ``start(nextGeneration:)``.
    mutating func deviceReadinessChanged(_ ready: Bool, nextGeneration: () -> UInt32) -> [Action] {
        deviceReady = ready
        if ready && state == .waitingForDevice && !startSent { return sendStart(nextGeneration) }
        return []
    }

    /// The link to the glasses dropped.
    mutating func linkLost() -> [Action] {
        deviceReady = false
        switch state {
        case .stopped:
            return []
        case .stopping:
            return enterStopped()
        case .waitingForDevice, .starting, .streaming, .paused:
            startSent = false
            var actions: [Action] = [.cancel(.start), .cancel(.wait), .error(.deviceNotConnected(deviceID))]
            if photoInFlight != nil {
                photoInFlight = nil
                actions += [.cancel(.photo), .error(.photoCaptureFailed)]
            }
            if state != .waitingForDevice { actions.append(transition(.waitingForDevice)) }
            actions += [.schedule(.wait), .resetSamples]
            return actions
        }
    }

    /// The glasses reported a stream state, echoing the generation of the latest start or stop they received (nil
    /// from glasses that do not echo it: then the event is taken as it comes, as before generations existed).
    mutating func deviceReported(_ event: DeviceStreamEvent, generation reported: UInt32? = nil) -> [Action] {
        if let reported, reported != generation {
            // A late answer to an earlier start or stop (the grace period gave up on it, and the stream has been
            // started again since): it says nothing about the current start.
            staleEventsIgnored += 1
            return []
        }
        switch (event, state) {
        case (.starting, .waitingForDevice) where startSent:
            return [.cancel(.wait), transition(.starting), .schedule(.start)]
        case (.streaming, .waitingForDevice) where startSent, (.streaming, .starting):
            malformedReported = false
            return [.cancel(.wait), .cancel(.start), transition(.streaming)]
        case (.streaming, .paused):
            return [transition(.streaming)]
        case (.paused, .streaming):
            return [transition(.paused)]
        case (.paused, .waitingForDevice) where startSent, (.paused, .starting):
            // The glasses accepted the stream but hold it (doffed, tapped): paused, no start timeout.
            return [.cancel(.wait), .cancel(.start), transition(.paused)]
        case (.stopped, .stopping):
            return enterStopped()
        case (.stopped, .waitingForDevice) where startSent, (.stopped, .starting), (.stopped, .streaming),
             (.stopped, .paused):
            var actions: [Action] = []
            if photoInFlight != nil { actions.append(.error(.photoCaptureFailed)) }
            return actions + enterStopped()
        default:
            return []
        }
    }

    /// The glasses reported a fault.
    mutating func deviceFault(_ fault: DeviceStreamFault) -> [Action] {
        guard isActive else { return [] }
        let error = Self.streamError(for: fault)
        if conditionsReported.contains(error) { return [] }
        switch fault {
        case .photoCaptureFailed:
            if photoInFlight != nil {
                photoInFlight = nil
                return [.cancel(.photo), .error(error)]
            }
            return [.error(error)]
        case .permissionDenied where state == .waitingForDevice || state == .starting:
            return [.error(error)] + enterStopped()
        default:
            return [.error(error)]
        }
    }

    /// The glasses delivered a photo.
    mutating func photoDelivered(_ photo: PhotoData, requestID: UInt32) -> [Action] {
        guard photoInFlight == requestID else { return [] }
        photoInFlight = nil
        return [.cancel(.photo), .photo(photo)]
    }

    /// A video sample could not be turned into a frame: reported once per streaming period.
    mutating func malformedSample() -> [Action] {
        guard !malformedReported else { return [] }
        malformedReported = true
        return [.error(.videoStreamingError)]
    }

    /// A frame or parameter set exceeded the negotiated size: reported like a malformed sample; the
    /// `limit`-th violation since `start()` stops the stream (a device that keeps doing it is not to be trusted).
    mutating func configurationViolated(limit: Int) -> [Action] {
        configurationViolations += 1
        var actions = malformedSample()
        if configurationViolations >= limit && isActive { actions += stop() }
        return actions
    }

    /// The glasses' state changed: fold, doff, heat and low battery become stream errors while active.
    mutating func deviceStateChanged(from old: DeviceState, to new: DeviceState) -> [Action] {
        var actions: [Action] = []
        let folded = new.hingeState == .closed || new.donState == .doffed
        let foldEdge = (new.hingeState == .closed && old.hingeState != .closed)
            || (new.donState == .doffed && old.donState != .doffed)
        actions += condition(.hingesClosed, present: folded, edge: foldEdge)
        let hot = new.thermalLevel >= .severe
        actions += condition(.thermalHot, present: hot, edge: hot && old.thermalLevel < .severe)
        let low = Self.isLow(new.batteryLevel, batteryLowThreshold)
        actions += condition(.batteryLow, present: low, edge: low && !Self.isLow(old.batteryLevel, batteryLowThreshold))
        return actions
    }

    /// A timer fired.
    mutating func timerFired(_ timer: Timer) -> [Action] {
        switch (timer, state) {
        case (.wait, .waitingForDevice):
            let error: StreamError = startSent ? .timeout : .deviceNotConnected(deviceID)
            let abandon: [Action] = startSent ? [.send(.stopStream(generation: generation))] : []
            return [.error(error)] + abandon + enterStopped()
        case (.start, .starting):
            return [.error(.timeout), .send(.stopStream(generation: generation))] + enterStopped()
        case (.stop, .stopping):
            return enterStopped()
        case (.photo, _) where photoInFlight != nil:
            photoInFlight = nil
            return [.error(.photoCaptureFailed)]
        default:
            return []
        }
    }

    // MARK: Helpers

    /// Maps a device fault to the stream error an app sees.
    static func streamError(for fault: DeviceStreamFault) -> StreamError {
        switch fault {
        case .internalError: .internalError
        case .videoStreamingError: .videoStreamingError
        case .permissionDenied: .permissionDenied
        case .hingesClosed: .hingesClosed
        case .thermalHot: .thermalHot
        case .batteryLow: .batteryLow
        case .peakPowerLimit: .peakPowerLimit
        case .photoCaptureFailed: .photoCaptureFailed
        case .audioStreamingError: .audioStreamingError
        }
    }

    private static func isLow(_ level: Int?, _ threshold: Int) -> Bool {
        guard let level else { return false }
        return level <= threshold
    }

    private mutating func condition(_ error: StreamError, present: Bool, edge: Bool) -> [Action] {
        guard present else {
            conditionsReported.remove(error)
            return []
        }
        guard edge, isActive, !conditionsReported.contains(error) else { return [] }
        conditionsReported.insert(error)
        return [.error(error)]
    }

    private mutating func sendStart(_ nextGeneration: () -> UInt32) -> [Action] {
        let next = nextGeneration()
        startSent = true
        generation = next
        return [.resetSamples, .send(.startStream(configuration, generation: next))]
    }

    private mutating func transition(_ next: StreamState) -> Action {
        state = next
        return .state(next)
    }

    private mutating func enterStopped() -> [Action] {
        startSent = false
        photoInFlight = nil
        var actions: [Action] = Timer.allCases.map { .cancel($0) }
        actions += [transition(.stopped), .didStop]
        if detached { actions.append(.finish) }
        return actions
    }
}
