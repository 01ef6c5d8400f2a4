import SmartSpectraInput

/// The three headline vitals at an instant; nil where unknown.
public struct VitalsSnapshot: Sendable, Hashable {
    /// Pulse rate in beats per minute.
    public var pulseRate: Double?
    /// Breathing rate in breaths per minute.
    public var breathingRate: Double?
    /// HRV as RMSSD in milliseconds.
    public var hrvRmssd: Double?

    /// Creates a snapshot.
    public init(pulseRate: Double? = nil, breathingRate: Double? = nil, hrvRmssd: Double? = nil) {
        self.pulseRate = pulseRate
        self.breathingRate = breathingRate
        self.hrvRmssd = hrvRmssd
    }
}

/// What a summary's value of one vital rests on: how many stable values the run had, and their quartiles.
///
/// The summary's value is their median; the quartiles show whether they agreed (a narrow band) or the run
/// measured two different rates (a wide one, where the median may lie between them).
public struct VitalBasis: Sendable, Hashable {
    /// Stable values of the run (one a second for the rates, one per HRV window).
    public var stableValues: Int
    /// Their median: the summary's value (the middle value, or the mean of the middle two).
    public var median: Double
    /// The first quartile of the stable values.
    public var lowerQuartile: Double
    /// The third quartile of the stable values.
    public var upperQuartile: Double

    /// The basis of a set of values, or nil when it is empty. Quartiles interpolate linearly between the sorted
    /// values (for two values, a quarter and three quarters of the way from the lower to the higher).
    public init?(_ values: [Double]) {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        func quantile(_ q: Double) -> Double {
            let position = q * Double(sorted.count - 1)
            let below = Int(position.rounded(.down)), above = min(sorted.count - 1, below + 1)
            return sorted[below] + (sorted[above] - sorted[below]) * (position - Double(below))
        }
        stableValues = sorted.count
        median = sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
        lowerQuartile = quantile(0.25)
        upperQuartile = quantile(0.75)
    }
}

/// What each of the summary's three vitals rests on (nil where the run had no stable value).
public struct VitalsBasis: Sendable, Hashable {
    /// The pulse rate's stable values.
    public var pulseRate: VitalBasis?
    /// The breathing rate's stable values.
    public var breathingRate: VitalBasis?
    /// HRV's stable windows.
    public var hrvRmssd: VitalBasis?

    /// The three medians: the summary's values.
    public var medians: VitalsSnapshot {
        VitalsSnapshot(pulseRate: pulseRate?.median, breathingRate: breathingRate?.median, hrvRmssd: hrvRmssd?.median)
    }

    /// Creates a basis, empty by default.
    public init(pulseRate: VitalBasis? = nil, breathingRate: VitalBasis? = nil, hrvRmssd: VitalBasis? = nil) {
        self.pulseRate = pulseRate
        self.breathingRate = breathingRate
        self.hrvRmssd = hrvRmssd
    }
}

/// Whether each of the three headline vitals' latest value is stable (as the CSV's `stable` column says).
public struct VitalsStability: Sendable, Hashable {
    /// The latest pulse rate is stable.
    public var pulseRate = false
    /// The latest breathing rate is stable.
    public var breathingRate = false
    /// The latest HRV is stable.
    public var hrvRmssd = false

    /// Creates flags, all false by default.
    public init(pulseRate: Bool = false, breathingRate: Bool = false, hrvRmssd: Bool = false) {
        self.pulseRate = pulseRate
        self.breathingRate = breathingRate
        self.hrvRmssd = hrvRmssd
    }
}

/// One value of the vitals time series (a CSV row).
public struct VitalsSample: Sendable, Hashable {
    /// The metric's name, e.g. `pulseRate`.
    public var metric: String
    /// Seconds on the run's input timeline.
    public var timeSeconds: Double
    /// The value.
    public var value: Double
    /// Confidence in percent, when the metric has one.
    public var confidence: Double?
    /// Whether the engine considers the value reliable.
    public var stable: Bool
}

/// Why a run's summary has no HRV: a code a program can branch on and a sentence a person can act on.
public struct HRVAbsence: Sendable, Hashable {
    /// What kept the run from a stable HRV value.
    public enum Code: String, Sendable, Hashable, CaseIterable {
        /// HRV was not among the requested metrics.
        case notRequested
        /// The stream's frame rate times beats too coarsely for HRV (the frame-rate table).
        case frameRate
        /// The pulse was never stable, so there were no beats to time.
        case noStablePulse
        /// No stretch of continuous measurement was long enough for a stable HRV window.
        case tooShort
        /// HRV windows were measured, long enough, but none was stable: the beats were too noisy to time.
        case unstable
    }

    /// What kept the run from a stable HRV value.
    public var code: Code
    /// One sentence with the figures behind it.
    public var message: String

    /// HRV at a frame rate the table does not measure it at.
    static func frameRate(_ capability: FrameRateCapability) -> HRVAbsence {
        HRVAbsence(code: .frameRate, message: "HRV is not measured at \(capability.frameRate) fps: \(capability.reason)")
    }
}

/// Keeps the last values of the headline vitals from a sequence of metrics payloads.
///
/// Payloads hold only what is new, and rate metrics arrive now and then, so the tracker keeps the last value
/// (shown live, windowed as the engine reports it, `--` until the first), the last *stable* value, and every stable
/// value of the run, whose median is the run's summary (``runSummary``).
public struct VitalsTracker: Sendable, Hashable {
    /// The latest values, stable or not.
    public private(set) var latest = VitalsSnapshot()
    /// The latest stable values.
    public private(set) var lastStable = VitalsSnapshot()
    /// Every stable value of the run, per vital (one a second for the rates, one per HRV window).
    private var stableValues: [[Double]] = [[], [], []]
    /// The run's vitals from all of its stable data: for each vital, the median of its stable values (each a
    /// windowed estimate: 12 s of pulse, 30 s of breathing, 60 s of HRV), so that one bad window at the end, or a
    /// short spell of a wrong rate anywhere, does not become the run's value. Nil where nothing was stable.
    public var runSummary: VitalsSnapshot {
        runBasis.medians
    }
    /// What each of ``runSummary``'s values rests on: how many stable values, their median and their quartiles.
    public var runBasis: VitalsBasis {
        VitalsBasis(pulseRate: VitalBasis(stableValues[0]), breathingRate: VitalBasis(stableValues[1]),
                    hrvRmssd: VitalBasis(stableValues[2]))
    }
    /// Whether each latest value is stable.
    public private(set) var latestIsStable = VitalsStability()
    /// How many metrics payloads were seen.
    public private(set) var payloads = 0
    /// The frame-rate table's row the stream runs at; a vital it does not mark `measured` is never stable.
    public let capability: FrameRateCapability?

    /// Seconds of continuous measurement a stable HRV value needs: the embedded engine's HRV window (its first
    /// value comes at 30 s and is stable at the earliest after 60 s of face without a break).
    public static let hrvSettleSeconds = 60.0
    /// Seconds of face before the first pulse value of a stretch (the embedded engine's first pulse comes after 10 s
    /// of face data): added to a stretch of pulse samples to tell how long the face was measured.
    static let pulseLeadSeconds = 10.0
    /// A gap between pulse samples (which come about once a second while a face is measured) longer than this ends
    /// a stretch of continuous measurement.
    static let stretchGap = 2.5

    /// What the run showed about HRV, for ``hrvAbsence(requested:)``.
    private struct HRVEvidence: Sendable, Hashable {
        var pulseSamples = 0
        var stablePulseSamples = 0
        var stretchStart: Double?
        var lastPulse: Double?
        var longestStretch = 0.0
        var hrvWindows = 0
        var bestHRVConfidence: Double?
    }

    private var evidence = HRVEvidence()

    /// Why the run's summary has no HRV value, or nil when it has one.
    ///
    /// Judged from what the metrics showed, in order: HRV not requested, a frame rate the table does not measure
    /// HRV at, no stable pulse, no stretch of continuous measurement as long as ``hrvSettleSeconds``, or windows
    /// that were measured but never stable (with the best confidence reached).
    public func hrvAbsence(requested: Bool) -> HRVAbsence? {
        // The run's HRV is the median of its stable values: there is one exactly when a value was stable.
        guard stableValues[2].isEmpty else { return nil }
        func seconds(_ value: Double) -> String { String(format: "%.0f s", value) }
        guard requested else {
            return HRVAbsence(code: .notRequested, message: "HRV was not requested (add it with --metrics cardio or hrv)")
        }
        if let capability, capability.hrv != .measured {
            return .frameRate(capability)
        }
        let e = evidence
        guard e.stablePulseSamples > 0 else {
            let what = e.pulseSamples == 0 ? "no pulse was measured" : "the pulse was never stable"
            return HRVAbsence(code: .noStablePulse, message: "\(what), so there were no beats to time for HRV")
        }
        // The face was measured for about as long as its pulse, plus the lead before the pulse's first value.
        let longest = max(e.longestStretch, currentStretch) + Self.pulseLeadSeconds
        if longest < Self.hrvSettleSeconds {
            return HRVAbsence(code: .tooShort, message: "a stable HRV value needs about \(seconds(Self.hrvSettleSeconds)) "
                + "of face without a break; the longest stretch measured was about \(seconds(longest))")
        }
        let stableShare = Double(e.stablePulseSamples) / Double(max(1, e.pulseSamples))
        var message = e.hrvWindows == 1 ? "the one HRV window measured was not stable" : "none of the \(e.hrvWindows) HRV windows measured was stable"
        if let best = e.bestHRVConfidence { message += String(format: " (best confidence %.0f %%)", best) }
        message += ": the beats were too noisy to time"
        if stableShare < 0.8 { message += String(format: ", and the pulse was stable in only %.0f %% of its samples", stableShare * 100) }
        message += " (small or compressed faces and motion blur beat timing: docs/VITALS-ENGINE.md)"
        return HRVAbsence(code: .unstable, message: message)
    }

    /// The length of the stretch of continuous measurement still open.
    private var currentStretch: Double {
        guard let start = evidence.stretchStart, let last = evidence.lastPulse else { return 0 }
        return last - start
    }

    /// Notes a pulse sample at `time` for the stretches of continuous measurement.
    private mutating func notePulse(at time: Double, stable: Bool) {
        evidence.pulseSamples += 1
        if stable { evidence.stablePulseSamples += 1 }
        if let last = evidence.lastPulse, time - last <= Self.stretchGap, time >= last {
            evidence.lastPulse = time
            return
        }
        evidence.longestStretch = max(evidence.longestStretch, currentStretch)
        evidence.stretchStart = time
        evidence.lastPulse = time
    }

    /// Creates an empty tracker that trusts the engine's `stable` flags.
    public init() { capability = nil }

    /// Creates an empty tracker for a stream at `frameRate`: vitals the rate cannot support (``FrameRateTable``) are
    /// never stable, whatever the engine says.
    public init(frameRate: UInt) { capability = FrameRateTable.capability(at: frameRate) }

    /// Takes in a payload and returns its rate samples as time-series rows.
    @discardableResult
    public mutating func ingest(_ metrics: Metrics) -> [VitalsSample] {
        payloads += 1
        var metrics = metrics
        if let capability { _ = FrameRateGate.clamp(&metrics, capability) }
        var rows: [VitalsSample] = []
        if metrics.hasCardio {
            for sample in metrics.cardio.pulseRate {
                latest.pulseRate = Double(sample.value)
                latestIsStable.pulseRate = sample.stable
                if sample.stable { lastStable.pulseRate = Double(sample.value); stableValues[0].append(Double(sample.value)) }
                notePulse(at: Double(sample.timestamp) / 1e6, stable: sample.stable)
                rows.append(VitalsSample(
                    metric: "pulseRate", timeSeconds: Double(sample.timestamp) / 1e6, value: Double(sample.value),
                    confidence: Double(sample.confidence), stable: sample.stable
                ))
            }
            for sample in metrics.cardio.hrv {
                latest.hrvRmssd = sample.rmssd
                latestIsStable.hrvRmssd = sample.stable
                if sample.stable { lastStable.hrvRmssd = sample.rmssd; stableValues[2].append(sample.rmssd) }
                evidence.hrvWindows += 1
                evidence.bestHRVConfidence = max(evidence.bestHRVConfidence ?? 0, Double(sample.confidence))
                rows.append(VitalsSample(
                    metric: "hrvRmssd", timeSeconds: Double(sample.timestamp) / 1e6, value: sample.rmssd,
                    confidence: Double(sample.confidence), stable: sample.stable
                ))
            }
        }
        if metrics.hasBreathing {
            for sample in metrics.breathing.rate {
                latest.breathingRate = Double(sample.value)
                latestIsStable.breathingRate = sample.stable
                if sample.stable { lastStable.breathingRate = Double(sample.value); stableValues[1].append(Double(sample.value)) }
                rows.append(VitalsSample(
                    metric: "breathingRate", timeSeconds: Double(sample.timestamp) / 1e6, value: Double(sample.value),
                    confidence: Double(sample.confidence), stable: sample.stable
                ))
            }
        }
        return rows.sorted { ($0.timeSeconds, $0.metric) < ($1.timeSeconds, $1.metric) }
    }
}
