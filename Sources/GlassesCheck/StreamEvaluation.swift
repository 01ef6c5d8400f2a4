import GlassesBridge
import Foundation
import GlassesLink
import Synchronization
import WearablesKit

/// One frame as the glasses delivered it: when it arrived, its device time, size, keyframe flag.
package struct ObservedFrame: Sendable, Hashable {
    /// Host arrival time, seconds since the run began.
    package var arrival: Double
    /// Device presentation time, µs.
    package var presentationTimeUs: Int64
    /// Width and height delivered (the codec configuration's for hvc1).
    package var width: Int
    /// See ``width``.
    package var height: Int
    /// Whether it is a keyframe (every raw frame is).
    package var isKeyframe: Bool

    /// Creates an observation.
    package init(arrival: Double, presentationTimeUs: Int64, width: Int, height: Int, isKeyframe: Bool) {
        self.arrival = arrival
        self.presentationTimeUs = presentationTimeUs
        self.width = width
        self.height = height
        self.isKeyframe = isKeyframe
    }

    init(_ frame: VideoFrame, arrival: Double) {
        self.arrival = arrival
        presentationTimeUs = frame.presentationTimeUs
        switch frame.content {
        case .raw(let image):
            width = image.width
            height = image.height
            isKeyframe = true
        case .hevc(let sample):
            width = sample.codecConfiguration.width
            height = sample.codecConfiguration.height
            isKeyframe = sample.isKeyframe
        }
    }
}

/// Everything one pipeline run showed: frames, phases, vitals, the summary and the link counters.
package struct StreamObservation: Sendable {
    /// Frames in arrival order.
    package var frames: [ObservedFrame] = []
    /// Phase changes with their times (seconds since the run began).
    package var phases: [(phase: LifecyclePolicy.Phase, time: Double)] = []
    /// Notices and errors, with times.
    package var messages: [(text: String, time: Double)] = []
    /// Stable and unstable vitals samples, with the event time (seconds since the run began).
    package var vitals: [(sample: VitalsSample, time: Double)] = []
    /// The run's summary.
    package var summary = BridgeSummary()
    /// The periodic counters, with their times: what happened before the measurement window is left out of the
    /// decoding and rejection checks (the warm-up settles the link and the decoder).
    package var accountingSnapshots: [(accounting: FrameAccounting, time: Double)] = []
    /// The device's count of frames it dropped for lack of credit (``BridgeStats/deviceDroppedFrames``), with the
    /// times the periodic counters reported it.
    package var deviceDropSnapshots: [(dropped: UInt64, time: Double)] = []
    /// Counters of every link the run opened, summed.
    package var linkDecoder = LinkFrameDecoder.Statistics()
    /// Whether any link encoded frames (socket transports; in-process links do not).
    package var linkEncoded = false
    /// Video samples the device sent beyond the credit granted.
    package var uncreditedSamples: UInt64 = 0

    /// Creates an empty observation.
    package init() {}

    /// Whether the device reported dropping frames for lack of credit between `start` and `end` (arrival times).
    /// Heartbeats carry the count once a second and the counters come periodically, so the count is read from the
    /// last report before `start` to the first at least 2.5 s after `end` (or the run's final count).
    func deviceDropped(between start: Double, and end: Double) -> Bool {
        let before = deviceDropSnapshots.last { $0.time <= start }?.dropped ?? 0
        let after = deviceDropSnapshots.first { $0.time >= end + 2.5 }?.dropped ?? summary.stats.deviceDroppedFrames
        return after > before
    }

    /// The first time the phase was reached at or after `after`.
    func firstTime(of phase: LifecyclePolicy.Phase, after: Double = 0) -> Double? {
        phases.first { $0.phase == phase && $0.time >= after }?.time
    }
}

/// Turns one configuration's observation into check results (pure: unit-tested without a device).
package enum StreamEvaluator {
    /// The checks of one stream configuration, in a fixed order, in the group `group` (`stream.CODEC.SIZE.FPS` when
    /// nil).
    /// - Parameter networkStream: the frames come from a network stream (RTMP, SRT, RTSP, UDP) rather than glasses.
    ///   Two things change. They may arrive in decoding order (B-frames, up to ``reorderDepth`` deep): timestamps and
    ///   intervals are judged in presentation order, as the decoder puts them; glasses (DAT) send no B-frames, so for
    ///   them a frame out of order is a fault. And the rate is the frames of the window over the stream time they
    ///   cover: a stream's frames wait in socket and protocol buffers (SRT's latency, a probing demuxer, a busy
    ///   host), so they arrive in bunches, and a bunch inside the window would count as a faster publisher. A
    ///   publisher that stalls is continuity's to catch, by arrival.
    package static func evaluate(
        _ configuration: StreamConfiguration, _ observation: StreamObservation, plan: CheckPlan, group: String? = nil,
        networkStream: Bool = false
    ) -> [CheckResult] {
        let reordering = networkStream
        let group = group ?? "stream.\(configuration.checkName)"
        let t = plan.tolerances
        var results: [CheckResult] = []
        let stats = observation.summary.stats
        let seconds = observation.summary.durationSeconds

        // Reaches .streaming.
        if let streaming = observation.firstTime(of: .streaming) {
            results.append(.measured(group, "reaches streaming", within: streaming <= t.streamingWithinSeconds,
                                     measured: "\(format(streaming)) s", bound: "≤ \(format(t.streamingWithinSeconds)) s",
                                     value: streaming, seconds: streaming))
        } else {
            results.append(CheckResult(group: group, name: "reaches streaming", verdict: .fail, bound: "≤ \(format(t.streamingWithinSeconds)) s",
                                       message: "the stream never reached streaming in \(format(seconds)) s (bound \(format(t.streamingWithinSeconds)) s)",
                                       failureType: "missing", seconds: seconds))
        }

        let frames = observation.frames
        guard let first = frames.first else {
            let names = ["frame size", "frame rate", "monotonic timestamps", "frame-interval jitter", "continuity"]
                + (configuration.videoCodec == .hvc1 ? ["keyframe interval"] : [])
            for name in names {
                results.append(CheckResult(group: group, name: name, verdict: .fail, message: "no frame arrived in \(format(seconds)) s",
                                           failureType: "missing", seconds: seconds))
            }
            results += accounting(group, observation, plan, seconds)
            return results
        }
        let windowStart = first.arrival + plan.warmUpSeconds
        let windowEnd = windowStart + plan.measureSeconds
        let window = frames.filter { $0.arrival >= windowStart && $0.arrival < windowEnd }

        // Size, with DAT's adaptation (lower resolution first).
        let configured = configuration.resolution.videoFrameSize
        let sizeResult = frameSize(group, configured: configured, frames: window.isEmpty ? frames : window, seconds: plan.measureSeconds)
        results.append(sizeResult.result)

        // Rate over the window: by arrival from glasses, over the window's stream time from a network stream.
        results.append(frameRate(group, configuration, window: window, adaptedResolution: sizeResult.adapted,
                                 plan: plan, byStreamTime: networkStream))

        // Monotonic device timestamps over the whole run, plus what the pipeline dropped for them.
        let times = frames.map(\.presentationTimeUs)
        let ordered = reordering ? presentationOrder(times) : times
        var backwards = 0
        for (previous, next) in zip(ordered, ordered.dropFirst()) where next <= previous {
            backwards += 1
        }
        let droppedForTime = (stats.accounting.droppedByReason[.duplicateTimestamp] ?? 0)
            + (stats.accounting.droppedByReason[.backwardTimestamp] ?? 0)
        let violations = UInt64(backwards) + droppedForTime
        results.append(.measured(group, "monotonic timestamps", within: violations == 0,
                                 measured: "\(violations) non-increasing timestamp(s) in \(frames.count) frames",
                                 bound: "0", value: Double(violations), seconds: seconds,
                                 detail: violations == 0 ? nil : "\(backwards) seen on arrival, \(droppedForTime) dropped by the bridge"))

        // Jitter of device frame intervals (gaps left to continuity).
        let windowTimes = reordering ? presentationOrder(window.map(\.presentationTimeUs)) : window.map(\.presentationTimeUs)
        let intervals = zip(windowTimes, windowTimes.dropFirst()).map { Double($1 - $0) / 1000 }
            .filter { $0 > 0 }
        if let median = percentile(intervals, 0.5) {
            let deviations = intervals.filter { $0 < median * 1.5 }.map { abs($0 - median) }
            let p99 = percentile(deviations, 0.99) ?? 0
            results.append(.measured(group, "frame-interval jitter", within: p99 <= t.jitterMs,
                                     measured: "p99 \(format(p99)) ms around a median interval of \(format(median)) ms",
                                     bound: "≤ \(format(t.jitterMs)) ms", value: p99, seconds: plan.measureSeconds))
        } else {
            results.append(CheckResult(group: group, name: "frame-interval jitter", verdict: .fail,
                                       message: "fewer than two frames in the \(format(plan.measureSeconds)) s window", failureType: "missing",
                                       seconds: plan.measureSeconds))
        }

        // Continuity: the longest gap in the window, and no watchdog restart.
        var longest = 0.0
        var edges = window.map(\.arrival)
        if edges.isEmpty { edges = [windowStart] }
        edges = [windowStart] + edges + [min(windowEnd, max(seconds, windowStart))]
        for (a, b) in zip(edges, edges.dropFirst()) { longest = max(longest, b - a) }
        let stalls = stats.stallRestarts
        let allowedStalls = Int(t.maxStallRestarts)
        results.append(.measured(group, "continuity", within: longest <= t.maxGapSeconds && stalls <= allowedStalls,
                                 measured: "longest gap \(format(longest)) s, \(stalls) watchdog restart(s)",
                                 bound: "gap ≤ \(format(t.maxGapSeconds)) s, ≤ \(allowedStalls) restarts", value: longest, seconds: plan.measureSeconds))

        // Keyframes (hvc1).
        if configuration.videoCodec == .hvc1 {
            results.append(keyframeInterval(group, frames: frames, observation, windowStart: windowStart, plan: plan,
                                            seconds: seconds))
        }

        results += accounting(group, observation, plan, seconds, windowStart: windowStart)
        return results
    }

    /// The deepest reordering a network stream's B-frames are allowed (libx264 and libx265 use at most 16).
    package static let reorderDepth = 16

    /// `times` in the order a decoder with a ``reorderDepth``-frame delay emits them: each time leaves once more than
    /// that many are waiting, smallest first. Times in decoding order of a stream with B-frames come out increasing;
    /// a time that lies further back than the delay still comes out late, and counts as out of order.
    static func presentationOrder(_ times: [Int64]) -> [Int64] {
        var waiting: [Int64] = []
        var output: [Int64] = []
        output.reserveCapacity(times.count)
        for time in times {
            waiting.append(time)
            if waiting.count > reorderDepth, let index = waiting.indices.min(by: { waiting[$0] < waiting[$1] }) {
                output.append(waiting.remove(at: index))
            }
        }
        output += waiting.sorted()
        return output
    }

    /// The longest time between keyframes, over spans that end in the measurement window or later (the warm-up may
    /// still hold the encoder's first GOP).
    ///
    /// A span with frames missing while the device reported dropping frames for lack of credit says how slow this
    /// host was, not how often the glasses send keyframes (the device drops up to its next keyframe after a credit
    /// drop): it is left out and counted in the message. A keyframe the device withheld itself still fails.
    static func keyframeInterval(
        _ group: String, frames: [ObservedFrame], _ observation: StreamObservation, windowStart: Double, plan: CheckPlan,
        seconds: Double
    ) -> CheckResult {
        let t = plan.tolerances
        let bound = "≤ \(format(t.keyframeIntervalSeconds)) s"
        let intervals = zip(frames, frames.dropFirst()).map { $1.presentationTimeUs - $0.presentationTimeUs }.filter { $0 > 0 }
        let median = percentile(intervals.map(Double.init), 0.5) ?? 0
        // Whether frames are missing between `from` and `to` (indices into `frames`), judged by device time.
        func hasGap(_ from: Int, _ to: Int) -> Bool {
            guard median > 0, to > from else { return false }
            return (from..<to).contains { Double(frames[$0 + 1].presentationTimeUs - frames[$0].presentationTimeUs) > median * 1.5 }
        }
        let keyIndices = frames.indices.filter { frames[$0].isKeyframe }
        guard let lastKey = keyIndices.last else {
            return .measured(group, "keyframe interval", within: false, measured: "no keyframe", bound: bound, value: nil,
                             seconds: seconds)
        }
        var spans: [(from: Int, to: Int)] = zip(keyIndices, keyIndices.dropFirst()).map { ($0, $1) }
            .filter { frames[$0.1].arrival >= windowStart }
        spans.append((lastKey, frames.count - 1))
        var longest = 0.0
        var excused = 0
        for span in spans {
            let length = Double(frames[span.to].presentationTimeUs - frames[span.from].presentationTimeUs) / 1_000_000
            if hasGap(span.from, span.to),
               observation.deviceDropped(between: frames[span.from].arrival, and: frames[span.to].arrival) {
                excused += 1
                continue
            }
            longest = max(longest, length)
        }
        let note = excused == 0 ? "" : "; \(excused) span(s) left out: frames missing while the device reported dropping frames this host had no credit for"
        if excused == spans.count {
            return CheckResult(group: group, name: "keyframe interval", verdict: .skipped, bound: bound,
                               message: "not measurable: \(keyIndices.count) keyframes, and every span between them lost frames the device dropped because this host was slow to grant credit",
                               seconds: seconds)
        }
        return .measured(group, "keyframe interval", within: longest <= t.keyframeIntervalSeconds,
                         measured: "longest \(format(longest)) s between keyframes (\(keyIndices.count) keyframes\(note))",
                         bound: bound, value: longest, seconds: seconds)
    }

    /// Accounting identity, no rejections, clean decoding, link integrity, latency.
    static func accounting(
        _ group: String, _ observation: StreamObservation, _ plan: CheckPlan, _ seconds: Double, windowStart: Double = 0
    ) -> [CheckResult] {
        let t = plan.tolerances
        let a = observation.summary.stats.accounting
        // Counts before the window (the last snapshot at or before its start) are the warm-up's.
        let before = observation.accountingSnapshots.last { $0.time <= windowStart }?.accounting ?? FrameAccounting()
        func since(_ total: UInt64, _ earlier: UInt64) -> UInt64 { total >= earlier ? total - earlier : total }
        let warmUpNote = before.received > 0 ? " after the \(format(plan.warmUpSeconds)) s warm-up" : ""
        var results: [CheckResult] = []
        let drops = a.droppedByReason.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key.rawValue) \($0.value)" }
        results.append(.measured(group, "accounting identity", within: a.isBalanced,
                                 measured: "received \(a.received), submitted \(a.submitted) + rejected \(a.rejected) + dropped \(a.dropped)",
                                 bound: "received = submitted + rejected + dropped", value: nil, seconds: seconds,
                                 detail: drops.isEmpty ? nil : drops.joined(separator: ", ")))
        let codes = a.rejectedByCode.sorted { $0.key < $1.key }.map { "\($0.key) \(since($0.value, before.rejectedByCode[$0.key] ?? 0))" }
        let rejected = since(a.rejected, before.rejected)
        results.append(.measured(group, "no rejected frames", within: rejected == 0,
                                 measured: "\(rejected) rejected by custom input\(warmUpNote)", bound: "0", value: Double(rejected),
                                 seconds: seconds, detail: rejected == 0 ? nil : codes.joined(separator: ", ")))
        let failed = since(a.droppedByReason[.decodeFailed] ?? 0, before.droppedByReason[.decodeFailed] ?? 0)
        let awaiting = since(a.droppedByReason[.awaitingKeyframe] ?? 0, before.droppedByReason[.awaitingKeyframe] ?? 0)
        let damaged = failed + awaiting
        let warmUpDamage = (before.droppedByReason[.decodeFailed] ?? 0) + (before.droppedByReason[.awaitingKeyframe] ?? 0)
        results.append(.measured(group, "decoded frames free of errors", within: damaged == 0,
                                 measured: "\(damaged) frame(s) damaged\(warmUpNote) (decodeFailed \(failed), awaitingKeyframe \(awaiting))",
                                 bound: "0", value: Double(damaged), seconds: seconds,
                                 detail: warmUpDamage > 0 ? "\(warmUpDamage) more during the warm-up, not counted" : nil))
        if observation.linkEncoded {
            let d = observation.linkDecoder
            let bad = d.garbageBytesSkipped + d.checksumFailures + d.malformedFramesSkipped + observation.uncreditedSamples
            results.append(.measured(group, "link integrity", within: bad == 0,
                                     measured: "\(d.garbageBytesSkipped) garbage byte(s) skipped, \(d.checksumFailures) CRC failure(s), \(d.malformedFramesSkipped) malformed frame(s), \(observation.uncreditedSamples) uncredited sample(s)",
                                     bound: "0 of each", value: Double(bad), seconds: seconds))
        } else {
            results.append(CheckResult(group: group, name: "link integrity", verdict: .pass, measured: "in-process link",
                                       message: "in-process link: no bytes on a wire to check", seconds: seconds))
        }
        if let latency = observation.summary.stats.latency, latency.samples > 0 {
            let within = latency.p50Ms <= t.latencyP50Ms && latency.p99Ms <= t.latencyP99Ms && latency.maxMs <= t.latencyMaxMs
            results.append(.measured(group, "latency", within: within,
                                     measured: "p50 \(format(latency.p50Ms)) ms, p99 \(format(latency.p99Ms)) ms, max \(format(latency.maxMs)) ms over \(latency.samples) frames",
                                     bound: "p50 ≤ \(format(t.latencyP50Ms)) ms, p99 ≤ \(format(t.latencyP99Ms)) ms, max ≤ \(format(t.latencyMaxMs)) ms",
                                     value: latency.p99Ms, seconds: seconds,
                                     detail: "link p50 \(format(latency.linkP50Ms)) ms"))
        } else {
            results.append(.skipped(group, "latency", "not measured: no frame carried capture timing on the host's clock (the device does not stamp samples, or no clock exchange completed)"))
        }
        if let failure = observation.summary.failure {
            results.append(CheckResult(group: group, name: "run", verdict: .error, message: "the run stopped: \(failure.message)",
                                       failureType: failure.kind.rawValue, seconds: seconds))
        }
        return results
    }

    static func frameSize(_ group: String, configured: VideoFrameSize, frames: [ObservedFrame], seconds: Double)
        -> (result: CheckResult, adapted: StreamingResolution?)
    {
        var counts: [String: Int] = [:]
        for frame in frames { counts["\(frame.width)x\(frame.height)", default: 0] += 1 }
        let seen = counts.sorted { $0.value > $1.value }.map { "\($0.key) (\($0.value))" }.joined(separator: ", ")
        let bound = "\(configured) or a lower DAT resolution"
        let wrong = frames.filter { $0.width != Int(configured.width) || $0.height != Int(configured.height) }
        if wrong.isEmpty {
            return (.measured(group, "frame size", within: true, measured: "\(configured) in \(frames.count) frames", bound: "\(configured)",
                              value: nil, seconds: seconds), nil)
        }
        // Adapted: every other size is a smaller DAT resolution.
        let sizes = Set(wrong.map { VideoFrameSize(width: UInt(max(0, $0.width)), height: UInt(max(0, $0.height))) })
        let resolutions = sizes.compactMap(StreamingResolution.init(size:))
        let smaller = resolutions.count == sizes.count
            && resolutions.allSatisfy { $0.videoFrameSize.width < configured.width && $0.videoFrameSize.height < configured.height }
        if smaller, let lowest = resolutions.min(by: { $0.videoFrameSize.width < $1.videoFrameSize.width }) {
            let note = "the glasses lowered the resolution to \(lowest.rawValue) \(lowest.videoFrameSize) (bandwidth adaptation)"
            return (CheckResult(group: group, name: "frame size", verdict: .pass, measured: seen, bound: bound,
                                message: "measured \(seen); bound \(bound): \(note)", seconds: seconds, adaptation: note), lowest)
        }
        return (.measured(group, "frame size", within: false, measured: seen, bound: bound, value: nil, seconds: seconds), nil)
    }

    static func frameRate(
        _ group: String, _ configuration: StreamConfiguration, window: [ObservedFrame], adaptedResolution: StreamingResolution?,
        plan: CheckPlan, byStreamTime: Bool = false
    ) -> CheckResult {
        let t = plan.tolerances
        let requested = Double(configuration.frameRate)
        let bound = "\(configuration.frameRate) fps ± \(format(t.frameRatePercent)) %"
        let span = plan.measureSeconds
        let rate: Double
        let measured: String
        let times = window.map(\.presentationTimeUs)
        if byStreamTime, let first = times.min(), let last = times.max(), last > first {
            // The window's frames over the stream time between the first and the last of them (n frames, n - 1
            // intervals): frames the publisher never sent leave holes in that time and count short.
            let covered = Double(last - first) / 1_000_000
            rate = Double(window.count - 1) / covered
            measured = "\(format(rate, digits: 2)) fps (\(window.count) frames over \(format(covered, digits: 2)) s of stream time)"
        } else {
            // Frames arriving in the half-open window, over its length: a stream that stops part-way counts short.
            rate = Double(window.count) / span
            measured = "\(format(rate, digits: 2)) fps (\(window.count) frames in \(format(span)) s)"
        }
        let tolerance = t.frameRatePercent / 100
        if abs(rate - requested) <= requested * tolerance {
            return .measured(group, "frame rate", within: true, measured: measured, bound: bound, value: rate, seconds: span)
        }
        // DAT adapts: resolution first, then rate, never below 15 fps.
        let lower = StreamConfiguration.supportedFrameRates.map(Double.init)
            .filter { $0 < requested && $0 >= t.minimumAdaptedFrameRate }
        if let adapted = lower.first(where: { abs(rate - $0) <= $0 * tolerance }) {
            let resolutionFirst = adaptedResolution == .low || configuration.resolution == .low
            if resolutionFirst {
                let note = "the glasses lowered the frame rate to \(Int(adapted)) fps after the resolution (DAT's adaptation)"
                return CheckResult(group: group, name: "frame rate", verdict: .pass, measured: measured, bound: bound,
                                   message: "measured \(measured); bound \(Int(adapted)) fps ± \(format(t.frameRatePercent)) % after adaptation: \(note)",
                                   value: rate, seconds: span, adaptation: note)
            }
            return .measured(group, "frame rate", within: false, measured: measured, bound: bound, value: rate, seconds: span,
                             detail: "\(Int(adapted)) fps would be DAT's adaptation only after the resolution reached low")
        }
        return .measured(group, "frame rate", within: false, measured: measured, bound: bound, value: rate, seconds: span)
    }

    /// The `q` quantile of `values` (nearest rank), nil when empty.
    static func percentile(_ values: [Double], _ q: Double) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        let rank = Int((q * Double(sorted.count)).rounded(.up)) - 1
        return sorted[min(max(rank, 0), sorted.count - 1)]
    }
}

/// A number for a message: `digits` decimals, trailing zeros kept short.
func format(_ value: Double, digits: Int = 1) -> String {
    guard value.isFinite else { return "\(value)" }
    return String(format: "%.\(digits)f", value)
}
