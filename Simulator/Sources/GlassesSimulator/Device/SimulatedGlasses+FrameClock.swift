import Foundation
import GlassesVideo
import Synchronization
import WearablesKit

// The frame clock: frames are rendered (or read from a video file), encoded and sent on the glasses' scheduler at
// the configured rate, from the time the stream started.
extension SimulatedGlasses {
    /// Starts the frame clock for `configuration` (a new generation: ticks of an older stream stop).
    func startFrames(_ configuration: StreamConfiguration) {
        let generation: UInt64 = state.withLock { s in
            s.frameGeneration += 1
            return s.frameGeneration
        }
        encoder.configurationPending()
        log("streaming \(configuration.videoCodec.rawValue) \(configuration.resolution.videoFrameSize) @ \(configuration.frameRate) fps")
        let start = scheduler.now
        scheduler.schedule(after: .zero) { [weak self] in
            self?.tick(generation: generation, configuration: configuration, start: start, index: 0, rate: nil)
        }
        if let audio = state.withLock({ $0.core.recordedAudio }) {
            startAudio(audio, generation: generation, start: start)
        }
    }

    /// One frame tick; `rate` is the wrong frame rate (``SimulatedFault/frameRate(fps:)``) the ticks so far ran at.
    private func tick(generation: UInt64, configuration: StreamConfiguration, start: Duration, index: Int, rate: Double?) {
        var start = start, index = index
        let now = scheduler.now
        let override = state.withLock { $0.faults.frameRateOverride }
        if override != rate {
            // The rate changed: count frames afresh from now.
            start = now
            index = 0
        }
        let interval: Duration = override.map { .microseconds(Int64((1_000_000 / $0).rounded())) }
            ?? Duration.seconds(1) / Int(configuration.frameRate)
        struct Plan {
            var feed: CameraFeed
            var feedScene: SimulatedScene?
            var skip: Bool
            var burst: Int
        }
        let plan: Plan? = state.withLock { s in
            guard s.frameGeneration == generation, s.link != nil else { return nil }
            var skip = s.faults.zombie
            if let until = s.faults.skipUntil {
                if now < until { skip = true } else { s.faults.skipUntil = nil }
            }
            if skip { s.stats.samplesWithheld += 1 }
            let burst = s.faults.burst
            s.faults.burst = 1
            return Plan(feed: s.feed, feedScene: s.feedScene, skip: skip, burst: burst)
        }
        guard let plan else { return }
        if !plan.skip {
            // A camera stamps a frame with when its exposure was due, not when the frame was ready: in real time a
            // tick can fire late (the machine is busy), and the frame is then late, not irregular. (In virtual time
            // the two are the same.)
            let due = start + interval * index
            // A burst's samples are one exposure sent again and again: rendered once, or a burst of 1000 took
            // tens of seconds of rendering at one tick and stalled a real-time run.
            var exposure: RawVideoImage?
            for _ in 0..<plan.burst {
                exposure = emitFrame(configuration: configuration, now: min(due, now), plan: (plan.feed, plan.feedScene),
                                     rendered: exposure)
            }
        }
        let next = start + interval * (index + 1)
        let (tickStart, tickIndex) = (start, index)
        scheduler.schedule(after: next - scheduler.now) { [weak self] in
            self?.tick(generation: generation, configuration: configuration, start: tickStart, index: tickIndex + 1, rate: override)
        }
    }

    /// Emits one frame; returns the rendered image when the scene was rendered (not read from a file), so that a
    /// burst can send the same exposure again as `rendered`.
    @discardableResult
    private func emitFrame(configuration: StreamConfiguration, now: Duration, plan: (CameraFeed, SimulatedScene?),
                           rendered: RawVideoImage? = nil) -> RawVideoImage? {
        let time = Self.seconds(now - epoch)
        let size = configuration.resolution.videoFrameSize
        let ptsBase = (now - epoch).wholeMicroseconds
        if configuration.videoCodec == .hvc1, case .videoFile(let file) = plan.0, file.passthrough {
            emitPassthrough(file, size: size, presentationTimeUs: ptsBase, now: now)
            return nil
        }
        let image: RawVideoImage
        var renderedImage: RawVideoImage?
        if case .videoFile(let file) = plan.0 {
            do { try file.checkSize(width: Int(size.width), height: Int(size.height)) } catch {
                log("video feed failed: \(error.message)")
                stopStreaming(fault: error.message)
                return nil
            }
            do { image = try file.nextImage() } catch {
                feedFailed(error)
                return nil
            }
        } else {
            if let rendered {
                image = rendered
            } else {
                image = render(feed: plan.0, feedScene: plan.1, time: time, width: Int(size.width), height: Int(size.height))
                state.withLock { $0.stats.framesRendered += 1 }
            }
            renderedImage = image
        }
        var messages: [DeviceMessage] = []
        var sample: VideoSample
        switch configuration.videoCodec {
        case .raw:
            sample = VideoSample(presentationTimeUs: ptsBase, isKeyframe: true,
                                 format: .nv12(width: image.width, height: image.height, lumaBytesPerRow: image.lumaBytesPerRow,
                                               chromaBytesPerRow: image.chromaBytesPerRow),
                                 payload: image.data)
        case .hvc1:
            let (bitrate, link) = state.withLock { ($0.core.bitrate(of: configuration), $0.link) }
            // Read outside the glasses' lock: the link has its own.
            let linkDrops = link?.droppedVideoSamples ?? 0
            let result = encoder.encode(image, presentationTimeUs: ptsBase, frameRate: Int(configuration.frameRate),
                                        bitrate: bitrate, linkDrops: linkDrops)
            switch result {
            case .success(let (encoded, config)):
                if let config { messages.append(.codecConfiguration(config)) }
                sample = VideoSample(presentationTimeUs: ptsBase, isKeyframe: encoded.isKeyframe, format: .hevc,
                                     payload: encoded.data)
            case .failure(let error):
                log("encoder failed: \(error)")
                stopStreaming(fault: "the HEVC encoder failed: \(error)")
                return nil
            }
        }
        send(sample, after: messages, now: now)
        return renderedImage
    }

    /// An hvc1 frame from a passthrough file feed: the file's next sample as it is, on the glasses' clock.
    private func emitPassthrough(_ file: VideoFileFeed, size: VideoFrameSize, presentationTimeUs: Int64, now: Duration) {
        let link = state.withLock { $0.link }
        // Read outside the glasses' lock: the link has its own.
        let resync = encoder.takeResync(linkDrops: link?.droppedVideoSamples ?? 0)
        let next: (sample: HEVCSample, sendConfiguration: Bool)
        do { try file.checkSize(width: Int(size.width), height: Int(size.height)) } catch {
            log("video feed failed: \(error.message)")
            stopStreaming(fault: error.message)
            return
        }
        do { next = try file.nextSample(resync: resync) } catch {
            feedFailed(error)
            return
        }
        let sample = VideoSample(presentationTimeUs: presentationTimeUs, isKeyframe: next.sample.isKeyframe,
                                 format: .hevc, payload: next.sample.data)
        send(sample, after: next.sendConfiguration ? [.codecConfiguration(next.sample.codecConfiguration)] : [], now: now)
    }

    /// The frames cannot go on: the frame clock stops (a new generation) and the host hears a
    /// `videoStreamingError` fault saying why.
    private func stopStreaming(fault message: String) {
        let link = state.withLock { s -> (any HostLink)? in
            s.frameGeneration += 1
            return s.link
        }
        link?.send(.fault(.videoStreamingError, message: message))
    }

    /// The video file cannot give the next frame (see ``setFeedFailureHandler(_:)``): the stream stops with a
    /// `videoStreamingError` fault, and the handler, when there is one, hears why.
    private func feedFailed(_ error: SimulatorError) {
        let handler = state.withLock { $0.feedFailureHandler }
        stopStreaming(fault: error.message)
        if let handler {
            log("video feed failed: stream stopped (fault videoStreamingError)")
            handler(error)
        } else {
            log("video feed failed: \(error.message)")
        }
    }

    /// Sends `messages` and then `sample`, through the outgoing faults (withheld, damaged, delayed).
    private func send(_ sample: VideoSample, after messages: [DeviceMessage], now: Duration) {
        var sample = sample, messages = messages
        // Faults on the way out.
        let (send, delay, observer, link) = applyOutgoingFaults(to: &sample, now: now)
        if send { messages.append(.videoSample(sample)) }
        guard let link, !messages.isEmpty else { return }
        for m in messages { observer?(m) }
        let outgoing = messages
        let scheduler = self.scheduler
        if delay <= .zero {
            for m in outgoing { link.send(Self.stamped(m, renderedAt: now, glassesNow: scheduler.now, link: link)) }
        } else {
            // Weakly: a pending delayed send must not keep the link, the glasses or the scheduler alive.
            scheduler.schedule(after: delay) { [weak self, weak link] in
                guard let self, let link else { return }
                for m in outgoing {
                    link.send(Self.stamped(m, renderedAt: now, glassesNow: self.scheduler.now, link: link))
                }
            }
        }
    }

    /// `message` with its sample timing on the link's clock (what the host end measures latency on): sent now, and
    /// captured as long ago as the glasses' own clock says the frame was rendered. A link that cannot read its
    /// clock gets no timing (the host then reports latency as not measured, never across unrelated clocks).
    static func stamped(
        _ message: DeviceMessage, renderedAt: Duration, glassesNow: Duration, link: any HostLink
    ) -> DeviceMessage {
        guard case .videoSample(var sample) = message, let clock = link as? any LinkClockReading else { return message }
        let sentUs = clock.linkClockUs
        let ageUs = max(0, (glassesNow - renderedAt).wholeMicroseconds)
        sample.timing = SampleTiming(captureUs: sentUs.subtractingReportingOverflow(ageUs).partialValue, sentUs: sentUs)
        return .videoSample(sample)
    }

    func render(feed: CameraFeed, feedScene: SimulatedScene?, time: Double, width: Int, height: Int) -> RawVideoImage {
        switch feed {
        case .rendered: return scene.render(at: time, width: width, height: height)
        case .faceImage: return (feedScene ?? scene).render(at: time, width: width, height: height)
        case .videoFile:
            preconditionFailure("video-file frames come from frameImage(feed:…)")
        case .solid(let luma):
            var data = Data(repeating: luma, count: width * height)
            data.append(Data(repeating: 128, count: width * height / 2))
            return RawVideoImage(width: width, height: height, lumaBytesPerRow: width, chromaBytesPerRow: width, data: data)!
        }
    }
}
