import SmartSpectraInput

/// Applies the frame-rate table (``FrameRateTable``) to a run's events before they are printed: a vital the
/// stream's rate does not support is never `stable` (not in metrics payloads, not in the summary), and the engine's
/// `frameRateTooLow` verdict is judged by the table rather than by the engine's own threshold.
///
/// The engine calls anything under 22 fps too low and hints at 24–30 fps; the benchmark measures 15 fps as accurate
/// as 30. So when frames arrive at the table's lowest measured rate or faster (with a fifth of slack for a camera
/// that varies), `frameRateTooLow` passes as `ok`; slower, it passes with a hint in the table's terms.
///
/// A network stream (`--device srt://…`) is asked nothing: its rate is the one it arrives at. A stream arrives in
/// bursts (a relay's buffering, a publisher catching up), so its gate follows the rate of the `stats` events smoothed
/// over about five seconds (judged at the row of the fastest table rate it reaches within a fifth: 20 fps as 24, 12
/// as 15, 10 as 7), and the summary is judged by the run's mean rate: the frames received after the first `stats`
/// event over the time since it, when the events come with their times (the first interval holds the burst a
/// stream starts with: a demuxer's probe, SRT's latency buffer); else the mean of the events' rates.
package struct FrameRateGate: Sendable {
    /// The rate asked of the glasses (for a network stream, the table rate of its arriving frames).
    package private(set) var askedRate: UInt
    /// The table's row for that rate.
    package private(set) var capability: FrameRateCapability
    /// Whether the rate is a recording's declared one: frames then arrive at the playback's speed, which says
    /// nothing of the stream's rate, and the hint speaks of the file, not of `--fps`.
    package let isFile: Bool
    /// Whether the rate is a network stream's, measured as its frames arrive.
    package let isNetworkStream: Bool
    private var arrivingRate: Double?
    private var lastShown: ValidationCode?
    /// Network stream: the arriving rate smoothed over about five `stats` events, and the sum and count of every
    /// event's rate (the run's mean).
    private var smoothedRate: Double?
    private var rateSum = 0.0
    private var rateCount = 0
    /// Network stream: the frames received by the first and the latest `stats` event, with the events' times.
    private var firstCount: (seconds: Double, received: UInt64)?
    private var latestCount: (seconds: Double, received: UInt64)?

    /// Creates the gate for a stream asked at `askedRate` frames per second.
    package init(askedRate: UInt) {
        self.askedRate = askedRate
        capability = FrameRateTable.capability(at: askedRate)
        isFile = false
        isNetworkStream = false
    }

    /// Creates the gate for a network stream, judged by the rate its frames arrive at (until the first `stats`
    /// event, by DAT's 24 fps).
    package static func networkStream() -> FrameRateGate {
        FrameRateGate(askedRate: 24, isNetworkStream: true)
    }

    private init(askedRate: UInt, isNetworkStream: Bool) {
        self.askedRate = askedRate
        capability = FrameRateTable.capability(at: askedRate)
        isFile = false
        self.isNetworkStream = isNetworkStream
    }

    /// The table rate a stream arriving at `rate` frames per second is judged at: the fastest table rate it reaches
    /// within a fifth (2 below 7 fps).
    package static func tableRate(arriving rate: Double) -> UInt {
        let rows = FrameRateTable.rows
        return (rows.first { rate >= 0.8 * Double($0.frameRate) } ?? rows[rows.count - 1]).frameRate
    }

    /// Creates the gate for a recording that declares `fileFrameRate` frames per second (29.97 is judged as 30).
    package init(fileFrameRate: Double) {
        let rate = fileFrameRate.isFinite ? min(max(fileFrameRate.rounded(), 1), 1000) : 1
        askedRate = UInt(rate)
        capability = FrameRateTable.capability(at: askedRate)
        isFile = true
        isNetworkStream = false
        arrivingRate = rate
    }

    /// The event as it should be printed, or nil to leave it out (a verdict that repeats the last one shown).
    /// - Parameter seconds: the event's time on the run's clock, when known: a network stream's summary is then
    ///   judged by the frames received over the time they took.
    package mutating func adjust(_ event: BridgeEvent, at seconds: Double? = nil) -> BridgeEvent? {
        switch event {
        case .stats(let stats, _, _, _):
            if isNetworkStream, let seconds, seconds.isFinite, stats.accounting.received > 0 {
                let count = (seconds: seconds, received: stats.accounting.received)
                if firstCount == nil { firstCount = count } else { latestCount = count }
            }
            if !isFile, stats.framesPerSecondIn > 0, stats.framesPerSecondIn.isFinite {
                arrivingRate = stats.framesPerSecondIn
                if isNetworkStream {
                    let smoothed = smoothedRate.map { 0.8 * $0 + 0.2 * stats.framesPerSecondIn } ?? stats.framesPerSecondIn
                    smoothedRate = smoothed
                    rateSum += stats.framesPerSecondIn
                    rateCount += 1
                    arrivingRate = smoothed
                    askedRate = Self.tableRate(arriving: smoothed)
                    capability = FrameRateTable.capability(at: askedRate)
                }
            }
            return event
        case .validation(let status):
            var shown = status
            if status.code == .frameRateTooLow {
                let arriving = arrivingRate ?? Double(askedRate)
                if askedRate >= FrameRateTable.lowestMeasuredRate, arriving >= 0.8 * Double(FrameRateTable.lowestMeasuredRate) {
                    shown = ValidationStatus(code: .ok, hint: "Measuring: hold still and breathe normally.")
                } else {
                    shown = ValidationStatus(code: .frameRateTooLow, hint: isFile
                        ? FrameRateTable.lowFileFrameRateHint(fileRate: askedRate)
                        : isNetworkStream ? FrameRateTable.lowStreamFrameRateHint(arrivingRate: arriving)
                        : FrameRateTable.lowFrameRateHint(askedRate: askedRate, arrivingRate: arriving))
                }
            }
            guard shown.code != lastShown else { return nil }
            lastShown = shown.code
            return .validation(shown)
        case .metrics(var metrics, _):
            guard Self.clamp(&metrics, capability) else { return event }
            return .metrics(metrics, json: metrics.jsonString())
        case .summary(var summary):
            if isNetworkStream, let mean = meanArrivingRate {
                capability = FrameRateTable.capability(at: Self.tableRate(arriving: mean))
            }
            if capability.pulse != .measured {
                summary.vitals.pulseRate = nil
                summary.basis.pulseRate = nil
                if summary.pulseAbsence?.code != .notRequested { summary.pulseAbsence = .frameRate(capability, vital: "the pulse", trust: capability.pulse) }
            }
            if capability.hrv != .measured {
                summary.vitals.hrvRmssd = nil
                summary.basis.hrvRmssd = nil
                if summary.hrvAbsence?.code != .notRequested { summary.hrvAbsence = .frameRate(capability, vital: "HRV", trust: capability.hrv) }
            }
            if capability.breathing != .measured {
                summary.vitals.breathingRate = nil
                summary.basis.breathingRate = nil
                if summary.breathingAbsence?.code != .notRequested {
                    summary.breathingAbsence = .frameRate(capability, vital: "breathing", trust: capability.breathing)
                }
            }
            return .summary(summary)
        default:
            return event
        }
    }

    /// A network stream's mean arriving rate over the run (see the type's documentation); nil before any `stats`.
    private var meanArrivingRate: Double? {
        if let first = firstCount, let latest = latestCount, latest.seconds - first.seconds >= 2, latest.received >= first.received {
            return Double(latest.received - first.received) / (latest.seconds - first.seconds)
        }
        return rateCount > 0 ? rateSum / Double(rateCount) : nil
    }

    /// Marks unsupported vitals of a payload (their rates and traces) not stable; true when something changed.
    static func clamp(_ metrics: inout Metrics, _ capability: FrameRateCapability) -> Bool {
        var changed = false
        if metrics.hasCardio, capability.pulse != .measured || capability.hrv != .measured {
            var cardio = metrics.cardio
            if capability.pulse != .measured {
                changed = unstable(&cardio.pulseRate) || changed
                changed = unstable(&cardio.arterialPressureTrace) || changed
            }
            if capability.hrv != .measured { changed = unstable(&cardio.hrv) || changed }
            metrics.cardio = cardio
        }
        if metrics.hasBreathing, capability.breathing != .measured {
            var breathing = metrics.breathing
            changed = unstable(&breathing.rate) || changed
            changed = unstable(&breathing.upperTrace) || changed
            changed = unstable(&breathing.lowerTrace) || changed
            changed = unstable(&breathing.amplitude) || changed
            changed = unstable(&breathing.apnea) || changed
            changed = unstable(&breathing.respiratoryLineLength) || changed
            changed = unstable(&breathing.baseline) || changed
            changed = unstable(&breathing.inhaleExhaleRatio) || changed
            metrics.breathing = breathing
        }
        return changed
    }

    private static func unstable<Sample: StableFlagged>(_ samples: inout [Sample]) -> Bool {
        var changed = false
        for index in samples.indices where samples[index].stable {
            samples[index].stable = false
            changed = true
        }
        return changed
    }
}

/// A metrics sample with a `stable` flag.
protocol StableFlagged {
    var stable: Bool { get set }
}

extension Measurement: StableFlagged {}
extension MeasurementWithConfidence: StableFlagged {}
extension DetectionStatus: StableFlagged {}
extension Hrv: StableFlagged {}
