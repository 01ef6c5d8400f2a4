import GlassesJSON
import SmartSpectraInput

/// The three headline vitals at an instant; nil where unknown (pulse in bpm, breathing in breaths a minute, HRV as
/// RMSSD in ms). The same type as the run lines' values that GlassesReport reads back.
public typealias VitalsSnapshot = VitalValues

/// A run's pulse values that fall into two groups about a factor two apart: a rate and its harmonic (or its half),
/// of which only one can be the heart's. Their median would lie between the two, on neither.
///
/// The two groups are split at the widest gap between neighbouring sorted values (at least ``gap`` as a ratio), and
/// their medians must stand in a ratio within ``ratios``. When the smaller group holds less than ``minorityShare``
/// of the values it was a passing spell, and the larger group's median is the value (``resolved``); otherwise the
/// run cannot tell which is the pulse and the value is withheld (docs/VITALS-ENGINE.md, *A summary that cannot
/// split the difference*).
public struct HarmonicSplit: Sendable, Hashable {
    /// The lower group's median.
    public var lower: Double
    /// How many values the lower group holds.
    public var lowerValues: Int
    /// The upper group's median.
    public var upper: Double
    /// How many values the upper group holds.
    public var upperValues: Int

    /// The smallest ratio between neighbouring sorted values that separates two groups.
    public static let gap = 1.3
    /// The ratios of the groups' medians that count as a factor two.
    public static let ratios = 1.7 ... 2.3
    /// A group with less than this share of the values is a passing spell: the other one is the value.
    public static let minorityShare = 0.1

    /// The two groups of `values`, or nil when they do not fall into two about a factor two apart.
    public init?(_ values: [Double]) {
        let sorted = values.filter { $0 > 0 && $0.isFinite }.sorted()
        guard sorted.count >= 2 else { return nil }
        var cut = 0, widest = 1.0
        for i in 1 ..< sorted.count where sorted[i] / sorted[i - 1] > widest {
            widest = sorted[i] / sorted[i - 1]
            cut = i
        }
        guard widest >= Self.gap else { return nil }
        let low = Array(sorted[..<cut]), high = Array(sorted[cut...])
        let lower = Self.median(low), upper = Self.median(high)
        guard Self.ratios.contains(upper / lower) else { return nil }
        self.lower = lower
        self.upper = upper
        lowerValues = low.count
        upperValues = high.count
    }

    /// The value the groups resolve to: the larger group's median when the smaller holds less than
    /// ``minorityShare`` of the values; nil when both hold more (the value is withheld).
    public var resolved: Double? {
        let total = Double(lowerValues + upperValues)
        if Double(lowerValues) < Self.minorityShare * total { return upper }
        if Double(upperValues) < Self.minorityShare * total { return lower }
        return nil
    }

    /// `"24 values at about 57.1 bpm and 31 at about 114.8 bpm"` in a sentence about `unit`.
    func described(unit: String) -> String {
        String(format: "%d at about %.1f %@ and %d at about %.1f %@", lowerValues, lower, unit, upperValues, upper, unit)
    }

    private static func median(_ sorted: [Double]) -> Double {
        sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }
}

/// What a summary's value of one vital rests on: how many stable values the run had, and their quartiles.
///
/// The summary's value is their median (``value``); the quartiles show whether they agreed (a narrow band) or the
/// run measured two different rates (a wide one, where the median may lie between them). For the pulse, stable values
/// in two groups a factor two apart are never averaged by a median (``harmonicSplit``).
public struct VitalBasis: Sendable, Hashable {
    /// Stable values of the run (one a second for the rates, one per HRV window).
    public var stableValues: Int
    /// Their median (the middle value, or the mean of the middle two): the summary's value unless
    /// ``harmonicSplit`` says otherwise.
    public var median: Double
    /// The first quartile of the stable values.
    public var lowerQuartile: Double
    /// The third quartile of the stable values.
    public var upperQuartile: Double
    /// The stable values' two groups about a factor two apart, when they fall into such (looked for only when the
    /// basis was made with `harmonics`, as the pulse's is).
    public var harmonicSplit: HarmonicSplit? = nil

    /// The summary's value: the median, or, when the values split into a rate and its harmonic, the larger group's
    /// median if the other was a passing spell and nil (withheld) if not.
    public var value: Double? {
        guard let harmonicSplit else { return median }
        return harmonicSplit.resolved
    }

    /// The basis of a set of values, or nil when it is empty. Quartiles interpolate linearly between the sorted
    /// values (for two values, a quarter and three quarters of the way from the lower to the higher). With
    /// `harmonics`, values in two groups about a factor two apart are noted (``harmonicSplit``).
    public init?(_ values: [Double], harmonics: Bool = false) {
        guard !values.isEmpty else { return nil }
        if harmonics { harmonicSplit = HarmonicSplit(values) }
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

    /// The floor under the RMSSD error that the beats' timing noise set (ms, the median over the HRV windows
    /// that were stable, or over all of them when none was); nil without an HRV window that carried one.
    public var hrvFloor: Double?

    /// The summary's values: each vital's median, except a pulse whose stable values split into a rate and its
    /// harmonic (``VitalBasis/value``).
    public var medians: VitalsSnapshot {
        VitalsSnapshot(pulseRate: pulseRate?.value, breathingRate: breathingRate?.value, hrvRmssd: hrvRmssd?.value)
    }

    /// Creates a basis, empty by default.
    public init(pulseRate: VitalBasis? = nil, breathingRate: VitalBasis? = nil, hrvRmssd: VitalBasis? = nil, hrvFloor: Double? = nil) {
        self.pulseRate = pulseRate
        self.breathingRate = breathingRate
        self.hrvRmssd = hrvRmssd
        self.hrvFloor = hrvFloor
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

/// Why a run's summary has no value for one of its vitals: a code a program can branch on and a sentence a person
/// can act on.
public struct VitalAbsence: Sendable, Hashable {
    /// What kept the run from a stable value.
    public enum Code: String, Sendable, Hashable, CaseIterable {
        /// The vital was not among the requested metrics.
        case notRequested
        /// The stream's frame rate does not support the vital (the frame-rate table).
        case frameRate
        /// No value of the vital was measured at all (pulse and breathing: no face measured long enough).
        case notMeasured
        /// The pulse was never stable, so there were no beats to time (HRV).
        case noStablePulse
        /// No stretch of continuous measurement was long enough for a stable value.
        case tooShort
        /// Values were measured, over long enough stretches, but none was stable.
        case unstable
        /// The pulse read two rates about a factor two apart (a rate and its harmonic) and the run could not tell
        /// which was the heart's (``HarmonicSplit``).
        case harmonicSplit
        /// HRV: the floor the beats' timing noise set under the RMSSD error was above the bound for a stable value.
        case timingFloor
    }

    /// What kept the run from a stable value.
    public var code: Code
    /// One sentence with the figures behind it.
    public var message: String

    /// Creates an absence.
    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    /// This absence in a run in which no frame reached the vitals engine: `notMeasured` and `noStablePulse` then say
    /// so instead of pointing at the face (the run's own error says why no frame came); other codes are kept.
    func noFrameMeasured() -> VitalAbsence {
        guard code == .notMeasured || code == .noStablePulse else { return self }
        return VitalAbsence(code: code, message: "no frame reached the vitals engine, so nothing was measured")
    }

    /// A vital (`name`, as a sentence starts: "HRV", "the pulse") at a frame rate the table does not measure it
    /// at (`trust` is its row's trust for that vital): why, for that vital alone.
    static func frameRate(_ capability: FrameRateCapability, vital name: String, trust: VitalTrust) -> VitalAbsence {
        let fps = capability.frameRate
        let why: String
        switch trust {
        case .impossible:
            why = "\(name) cannot be measured at \(fps) fps: \(capability.reason)"
        case .unverified where name == "HRV":
            why = "HRV is not measured at \(fps) fps: beats timed to \(Int((1000 / Double(max(fps, 1))).rounded())) ms are too coarse for it"
        case .unverified, .measured:
            why = "\(name) is not measured at \(fps) fps, so its values are never marked stable"
        }
        return VitalAbsence(code: .frameRate, message: why + " (stream at \(FrameRateTable.lowestMeasuredRate) fps or more)")
    }
}

/// What a run showed about one rate (pulse or breathing, about one value a second while a face is measured): how
/// many values, how many stable, the best confidence, and the stretches of continuous measurement they came in.
struct RateEvidence: Sendable, Hashable {
    /// Values seen.
    private(set) var samples = 0
    /// Of those, stable.
    private(set) var stableSamples = 0
    /// The highest confidence (percent) of any value.
    private(set) var bestConfidence: Double?
    private var stretchStart: Double?
    private var last: Double?
    private var longestClosed = 0.0
    /// A gap between values longer than this (seconds) ends a stretch of continuous measurement.
    let stretchGap: Double

    /// Evidence for values that come about every `stretchGap` seconds at most while measured (2.5 s for the rates,
    /// which come every second).
    init(stretchGap: Double = 2.5) {
        self.stretchGap = stretchGap
    }

    /// The span (seconds) from the first to the last value of the longest stretch, the open one included.
    var longestStretch: Double {
        guard let start = stretchStart, let last else { return longestClosed }
        return max(longestClosed, last - start)
    }

    /// Notes a value at `time` (seconds).
    mutating func note(at time: Double, stable: Bool, confidence: Double) {
        samples += 1
        if stable { stableSamples += 1 }
        bestConfidence = max(bestConfidence ?? confidence, confidence)
        if let last, time - last <= stretchGap, time >= last {
            self.last = time
            return
        }
        longestClosed = longestStretch
        stretchStart = time
        last = time
    }
}

/// Keeps the last values of the headline vitals from a sequence of metrics payloads.
///
/// Payloads hold only what is new, and rate metrics arrive now and then, so the tracker keeps the last value
/// (shown live, windowed as the engine reports it, `--` until the first), the last *stable* value, and every stable
/// value of the run, whose median is the run's summary (``runSummary``).
package struct VitalsTracker: Sendable, Hashable {
    /// The latest values, stable or not.
    package private(set) var latest = VitalsSnapshot()
    /// The latest stable values.
    package private(set) var lastStable = VitalsSnapshot()
    /// Every stable value of the run, per vital (one a second for the rates, one per HRV window).
    private var stableValues: [[Double]] = [[], [], []]
    /// Every pulse value of the run, stable or not: whether the unstable ones hopped between a rate and its harmonic.
    private var pulseValues: [Double] = []
    /// The floor under each HRV window's RMSSD error (ms), and those of the stable windows alone.
    private var hrvFloors: [Double] = []
    private var stableHRVFloors: [Double] = []
    /// The embedded engine's bound on the RMSSD floor for a stable HRV value (ms): `VitalsEngine.rmssdFloorBound`.
    package static let rmssdFloorBound = 12.0
    /// The run's vitals from all of its stable data: for each vital, the median of its stable values (each a
    /// windowed estimate: 12 s of pulse, 30 s of breathing, 60 s of HRV), so that one bad window at the end, or a
    /// short spell of a wrong rate anywhere, does not become the run's value. Nil where nothing was stable.
    package var runSummary: VitalsSnapshot {
        runBasis.medians
    }
    /// What each of ``runSummary``'s values rests on: how many stable values, their median and their quartiles.
    package var runBasis: VitalsBasis {
        let floors = stableHRVFloors.isEmpty ? hrvFloors : stableHRVFloors
        return VitalsBasis(pulseRate: VitalBasis(stableValues[0], harmonics: true), breathingRate: VitalBasis(stableValues[1]),
                           hrvRmssd: VitalBasis(stableValues[2]), hrvFloor: VitalBasis(floors)?.median)
    }
    /// Whether each latest value is stable.
    package private(set) var latestIsStable = VitalsStability()
    /// How many metrics payloads were seen.
    package private(set) var payloads = 0

    /// Seconds of continuous measurement a stable HRV value needs: the embedded engine's HRV window (its first
    /// value comes at 30 s and is stable at the earliest after 60 s of face without a break).
    package static let hrvSettleSeconds = 60.0
    /// Seconds of face before the first pulse or breathing value of a stretch (the embedded engine's first of each
    /// comes after 10 s of face data): added to a stretch of values to tell how long the face was measured.
    static let leadSeconds = 10.0
    /// Seconds of face before the first HRV window of a stretch (the embedded engine's first comes at 30 s).
    static let hrvLeadSeconds = 30.0
    /// Seconds of face a stable pulse needs: the embedded engine's pulse is stable at the earliest after 12 s.
    package static let pulseSettleSeconds = 12.0
    /// Seconds of face a stable breathing rate needs: the embedded engine's breathing window, 30 s.
    package static let breathingSettleSeconds = 30.0

    /// What the run showed about the pulse and breathing rates, for ``pulseAbsence(requested:)`` and
    /// ``breathingAbsence(requested:)``, and (the pulse) for ``hrvAbsence(requested:)``.
    private var pulseEvidence = RateEvidence()
    private var breathingEvidence = RateEvidence()
    /// HRV windows seen, and the best confidence of any.
    private var hrvWindows = 0
    /// The HRV windows' own stretches (one every 10 s while measured): how long the face was measured when the
    /// pulse was not requested and its values are not in the payloads.
    private var hrvEvidence = RateEvidence(stretchGap: 12)
    private var bestHRVConfidence: Double?

    private static func seconds(_ value: Double) -> String { String(format: "%.0f s", value) }

    /// Why the run's summary has no pulse rate, or nil when it has one.
    ///
    /// Judged from what the metrics showed, in order: the pulse not requested, no pulse value at all, no stretch of face as long as ``pulseSettleSeconds``, or values that
    /// were never stable (how many, and the best confidence reached). A frame rate the table does not measure the
    /// pulse at is the summary's judgement (``FrameRateGate``), which replaces this reason.
    package func pulseAbsence(requested: Bool) -> VitalAbsence? {
        if let split = HarmonicSplit(stableValues[0]) {
            guard split.resolved == nil else { return nil }
            return VitalAbsence(code: .harmonicSplit, message: "the stable pulse values fell into two groups a factor two apart ("
                + split.described(unit: "bpm") + "): one is the other's harmonic, and the run could not tell which was the "
                + "heart's, so no value is given rather than one between them (docs/VITALS-ENGINE.md)")
        }
        guard stableValues[0].isEmpty else { return nil }
        if requested, pulseEvidence.longestStretch + Self.leadSeconds >= Self.pulseSettleSeconds,
           let split = HarmonicSplit(pulseValues), split.resolved == nil {
            return VitalAbsence(code: .harmonicSplit, message: "none of the \(pulseEvidence.samples) pulse values measured was stable: "
                + "they read two rates a factor two apart (" + split.described(unit: "bpm") + "), one the other's harmonic, and "
                + "the evidence did not settle which was the heart's (docs/VITALS-ENGINE.md)")
        }
        return Self.rateAbsence(
            pulseEvidence, requested: requested, vital: "pulse", subject: "the pulse",
            metrics: "cardio or pulse-rate", settle: Self.pulseSettleSeconds,
            why: "the pulse in the skin's colour was too weak against the noise (small, dark, compressed or moving faces "
                + "weaken it: docs/VITALS-ENGINE.md)")
    }

    /// Why the run's summary has no breathing rate, or nil when it has one (the causes as for
    /// ``pulseAbsence(requested:)``, with ``breathingSettleSeconds``).
    package func breathingAbsence(requested: Bool) -> VitalAbsence? {
        guard stableValues[1].isEmpty else { return nil }
        return Self.rateAbsence(
            breathingEvidence, requested: requested, vital: "breathing",
            subject: "breathing", metrics: "breathing or breathing-rate", settle: Self.breathingSettleSeconds,
            why: "the motion of the chest and head showed no clear breathing rhythm (keep the upper body in view and "
                + "still: docs/VITALS-ENGINE.md)")
    }

    /// The absence of a rate with no stable value: see ``pulseAbsence(requested:)``. `vital` names its values
    /// ("pulse value"), `subject` starts a sentence about it ("the pulse was not requested").
    private static func rateAbsence(_ e: RateEvidence, requested: Bool, vital: String,
                                    subject: String, metrics: String, settle: Double, why: String) -> VitalAbsence {
        guard requested else {
            return VitalAbsence(code: .notRequested, message: "\(subject) was not requested (add it with --metrics \(metrics))")
        }
        guard e.samples > 0 else {
            return VitalAbsence(code: .notMeasured, message: "no \(vital) value was measured: the first comes after about "
                + "\(seconds(leadSeconds)) of a face in view, and the validation messages say what kept it out")
        }
        let longest = e.longestStretch + leadSeconds
        if longest < settle {
            return VitalAbsence(code: .tooShort, message: "a stable \(vital) value needs about \(seconds(settle)) of face without "
                + "a break; the longest stretch measured was about \(seconds(longest))")
        }
        var message = e.samples == 1 ? "the one \(vital) value measured was not stable" : "none of the \(e.samples) \(vital) values measured was stable"
        if let best = e.bestConfidence { message += String(format: " (best confidence %.0f %%)", best) }
        return VitalAbsence(code: .unstable, message: message + ": " + why)
    }

    /// Why the run's summary has no HRV value, or nil when it has one.
    ///
    /// Judged from what the metrics showed, in order: HRV not requested, no stable pulse, no stretch of continuous measurement as long as ``hrvSettleSeconds``, or windows
    /// that were measured but never stable (with the best confidence reached).
    package func hrvAbsence(requested: Bool) -> VitalAbsence? {
        // The run's HRV is the median of its stable values: there is one exactly when a value was stable.
        guard stableValues[2].isEmpty else { return nil }
        guard requested else {
            return VitalAbsence(code: .notRequested, message: "HRV was not requested (add it with --metrics cardio or hrv)")
        }
        let e = pulseEvidence
        // Without pulse values (`--metrics hrv` alone) the HRV windows tell how long the face was measured.
        let windowsOnly = e.samples == 0 && hrvWindows > 0
        guard e.stableSamples > 0 || windowsOnly else {
            let what = e.samples == 0 ? "no pulse was measured" : "the pulse was never stable"
            return VitalAbsence(code: .noStablePulse, message: "\(what), so there were no beats to time for HRV")
        }
        // The face was measured for about as long as its pulse, plus the lead before the pulse's first value (or
        // as long as its HRV windows, plus the lead before the first window).
        let longest = windowsOnly ? hrvEvidence.longestStretch + Self.hrvLeadSeconds : e.longestStretch + Self.leadSeconds
        if longest < Self.hrvSettleSeconds {
            return VitalAbsence(code: .tooShort, message: "a stable HRV value needs about \(Self.seconds(Self.hrvSettleSeconds)) "
                + "of face without a break; the longest stretch measured was about \(Self.seconds(longest))")
        }
        let stableShare = Double(e.stableSamples) / Double(max(1, e.samples))
        // The beats' timing noise alone forced a larger error than a stable value may have.
        if let floor = VitalBasis(hrvFloors)?.median, floor > Self.rmssdFloorBound {
            let windows = hrvWindows == 1 ? "the one HRV window" : "the \(hrvWindows) HRV windows"
            return VitalAbsence(code: .timingFloor, message: String(format: "the beats' timing noise left an RMSSD error of at "
                + "least %.1f ms (the floor, median over %@), above the %.0f ms a stable value allows (small or compressed "
                + "faces time beats poorly: docs/VITALS-ENGINE.md)", floor, windows, Self.rmssdFloorBound))
        }
        var message = hrvWindows == 1 ? "the one HRV window measured was not stable" : "none of the \(hrvWindows) HRV windows measured was stable"
        if let best = bestHRVConfidence { message += String(format: " (best confidence %.0f %%)", best) }
        message += ": the beats were too noisy to time"
        if stableShare < 0.8, !windowsOnly {
            message += String(format: ", and the pulse was stable in only %.0f %% of its samples", stableShare * 100)
        }
        message += " (small or compressed faces and motion blur beat timing: docs/VITALS-ENGINE.md)"
        return VitalAbsence(code: .unstable, message: message)
    }

    /// Creates an empty tracker that trusts the `stable` flags of what it ingests: the pipeline's events come judged
    /// (``FrameRateGate``), so a vital the frame rate cannot support is never stable in them.
    package init() {}

    /// Takes in a payload and returns its rate samples as time-series rows.
    @discardableResult
    package mutating func ingest(_ metrics: Metrics) -> [VitalsSample] {
        payloads += 1
        var rows: [VitalsSample] = []
        if metrics.hasCardio {
            for sample in metrics.cardio.pulseRate {
                latest.pulseRate = Double(sample.value)
                latestIsStable.pulseRate = sample.stable
                if sample.stable { lastStable.pulseRate = Double(sample.value); stableValues[0].append(Double(sample.value)) }
                pulseValues.append(Double(sample.value))
                pulseEvidence.note(at: Double(sample.timestamp) / 1e6, stable: sample.stable, confidence: Double(sample.confidence))
                rows.append(VitalsSample(
                    metric: "pulseRate", timeSeconds: Double(sample.timestamp) / 1e6, value: Double(sample.value),
                    confidence: Double(sample.confidence), stable: sample.stable
                ))
            }
            for sample in metrics.cardio.hrv {
                latest.hrvRmssd = sample.rmssd
                latestIsStable.hrvRmssd = sample.stable
                if sample.stable { lastStable.hrvRmssd = sample.rmssd; stableValues[2].append(sample.rmssd) }
                hrvWindows += 1
                if let floor = sample.rmssdFloor, floor.isFinite {
                    hrvFloors.append(floor)
                    if sample.stable { stableHRVFloors.append(floor) }
                }
                bestHRVConfidence = max(bestHRVConfidence ?? 0, Double(sample.confidence))
                hrvEvidence.note(at: Double(sample.timestamp) / 1e6, stable: sample.stable, confidence: Double(sample.confidence))
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
                breathingEvidence.note(at: Double(sample.timestamp) / 1e6, stable: sample.stable, confidence: Double(sample.confidence))
                rows.append(VitalsSample(
                    metric: "breathingRate", timeSeconds: Double(sample.timestamp) / 1e6, value: Double(sample.value),
                    confidence: Double(sample.confidence), stable: sample.stable
                ))
            }
        }
        return rows.sorted { ($0.timeSeconds, $0.metric) < ($1.timeSeconds, $1.metric) }
    }
}
