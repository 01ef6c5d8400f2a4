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
        func median(_ v: [Double]) -> Double? {
            guard !v.isEmpty else { return nil }
            let s = v.sorted()
            return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
        }
        return VitalsSnapshot(pulseRate: median(stableValues[0]), breathingRate: median(stableValues[1]), hrvRmssd: median(stableValues[2]))
    }
    /// Whether each latest value is stable.
    public private(set) var latestIsStable = VitalsStability()
    /// How many metrics payloads were seen.
    public private(set) var payloads = 0
    /// The frame-rate table's row the stream runs at; a vital it does not mark `measured` is never stable.
    public let capability: FrameRateCapability?

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
                rows.append(VitalsSample(
                    metric: "pulseRate", timeSeconds: Double(sample.timestamp) / 1e6, value: Double(sample.value),
                    confidence: Double(sample.confidence), stable: sample.stable
                ))
            }
            for sample in metrics.cardio.hrv {
                latest.hrvRmssd = sample.rmssd
                latestIsStable.hrvRmssd = sample.stable
                if sample.stable { lastStable.hrvRmssd = sample.rmssd; stableValues[2].append(sample.rmssd) }
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
