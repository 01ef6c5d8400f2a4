import Foundation

/// The vitals the simulator actually rendered, as time series: beats and RR intervals, pulse and breathing rate,
/// the PPG and breathing waveforms, and HRV (RMSSD, SDNN) over windows. Times are seconds of scene time
/// (the device's presentation time divided by 10⁶).
public struct GroundTruth: Sendable, Hashable {
    /// Beat onset times (the foot of each PPG wave), ascending; the first may be negative.
    public let beatTimes: [Double]
    /// Cumulative breathing cycles sampled at ``PhysiologyModel/breathingSampleRate`` from time zero.
    public let breathPhase: [Double]
    /// Breathing rate in breaths/min at the same samples (one fewer than `breathPhase`, shifted by one).
    public let breathRate: [Double]

    /// Creates ground truth from generated series.
    public init(beatTimes: [Double], breathPhase: [Double], breathRate: [Double]) {
        self.beatTimes = beatTimes
        self.breathPhase = breathPhase
        self.breathRate = breathRate
    }

    /// One RR interval: the time of the beat that ends it and its length.
    public struct RRInterval: Sendable, Hashable, Codable {
        /// Time of the beat that closes the interval, in seconds.
        public let time: Double
        /// Length in seconds.
        public let seconds: Double
    }

    /// The time through which the series are defined.
    public var coveredThrough: Double {
        min(beatTimes.last ?? 0, Double(max(breathPhase.count - 1, 0)) / PhysiologyModel.breathingSampleRate)
    }

    /// Index of the beat whose interval contains `time`, if any.
    private func beatIndex(containing time: Double) -> Int? {
        guard beatTimes.count >= 2, time >= beatTimes[0], time < beatTimes[beatTimes.count - 1] else { return nil }
        var lo = 0, hi = beatTimes.count - 1
        while hi - lo > 1 {
            let mid = (lo + hi) / 2
            if beatTimes[mid] <= time { lo = mid } else { hi = mid }
        }
        return lo
    }

    /// The PPG value at `time` (nil outside the generated range): the pulses of the current and the previous beat
    /// (``Waveforms/ppgPulse(sinceOnset:)``), each scaled by the mean of the eight intervals before its onset, so the
    /// systolic peak sits a fixed delay after its onset and peak-to-peak intervals are the RR intervals.
    public func ppg(at time: Double) -> Double? {
        guard let k = beatIndex(containing: time) else { return nil }
        var value = Waveforms.ppgPulse(sinceOnset: (time - beatTimes[k]) / nominalPeriod(before: k))
        if k > 0 { value += Waveforms.ppgPulse(sinceOnset: (time - beatTimes[k - 1]) / nominalPeriod(before: k - 1)) }
        return value
    }

    /// The mean of up to eight RR intervals ending at beat `k` (the first interval for the first beat).
    private func nominalPeriod(before k: Int) -> Double {
        guard k > 0 else { return beatTimes[1] - beatTimes[0] }
        let first = max(0, k - 8)
        return (beatTimes[k] - beatTimes[first]) / Double(k - first)
    }

    /// Instantaneous pulse rate at `time`: 60 / the RR interval containing it, in bpm.
    public func pulseRate(at time: Double) -> Double? {
        guard let k = beatIndex(containing: time) else { return nil }
        return 60 / (beatTimes[k + 1] - beatTimes[k])
    }

    /// RR intervals whose closing beat falls in `window` (seconds).
    public func rrIntervals(in window: ClosedRange<Double>) -> [RRInterval] {
        var result: [RRInterval] = []
        guard beatTimes.count >= 2 else { return result }
        for i in 1..<beatTimes.count where window.contains(beatTimes[i]) {
            result.append(RRInterval(time: beatTimes[i], seconds: beatTimes[i] - beatTimes[i - 1]))
        }
        return result
    }

    /// Mean pulse rate over `window`: 60 / the mean RR interval closing in it, in bpm.
    public func meanPulseRate(in window: ClosedRange<Double>) -> Double? {
        let rr = rrIntervals(in: window).map(\.seconds)
        guard !rr.isEmpty else { return nil }
        return 60 / (rr.reduce(0, +) / Double(rr.count))
    }

    /// RMSSD of the RR intervals closing in `window`, in milliseconds (nil with fewer than three intervals).
    public func rmssd(window: ClosedRange<Double>) -> Double? {
        let rr = rrIntervals(in: window).map(\.seconds)
        guard rr.count >= 3 else { return nil }
        var sum = 0.0
        for i in 1..<rr.count { sum += (rr[i] - rr[i - 1]) * (rr[i] - rr[i - 1]) }
        return (sum / Double(rr.count - 1)).squareRoot() * 1000
    }

    /// SDNN (standard deviation of the RR intervals closing in `window`), in milliseconds.
    public func sdnn(window: ClosedRange<Double>) -> Double? {
        let rr = rrIntervals(in: window).map(\.seconds)
        guard rr.count >= 3 else { return nil }
        let mean = rr.reduce(0, +) / Double(rr.count)
        let variance = rr.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(rr.count - 1)
        return variance.squareRoot() * 1000
    }

    /// Breathing rate at `time`, in breaths/min.
    public func breathingRate(at time: Double) -> Double? {
        guard time >= 0, time <= coveredThrough, !breathRate.isEmpty else { return nil }
        let i = min(Int(time * PhysiologyModel.breathingSampleRate), breathRate.count - 1)
        return breathRate[i]
    }

    /// Mean breathing rate over `window` from the phase advance, in breaths/min.
    public func meanBreathingRate(in window: ClosedRange<Double>) -> Double? {
        guard window.lowerBound >= 0, window.upperBound <= coveredThrough, window.upperBound > window.lowerBound
        else { return nil }
        let cycles = PhysiologyModel.interpolate(breathPhase, at: window.upperBound)
            - PhysiologyModel.interpolate(breathPhase, at: window.lowerBound)
        return cycles / (window.upperBound - window.lowerBound) * 60
    }

    /// Lung volume at `time`: 0 fully exhaled, 1 fully inhaled.
    public func breathingSignal(at time: Double) -> Double? {
        guard time >= 0, time <= coveredThrough, !breathPhase.isEmpty else { return nil }
        let phase = PhysiologyModel.interpolate(breathPhase, at: time)
        return Waveforms.breathing(phase: phase - phase.rounded(.down))
    }

    /// Times at which inhalations start, in `window`.
    public func breathOnsets(in window: ClosedRange<Double>) -> [Double] {
        var result: [Double] = []
        guard breathPhase.count >= 2 else { return result }
        let dt = 1 / PhysiologyModel.breathingSampleRate
        for i in 1..<breathPhase.count {
            let a = breathPhase[i - 1], b = breathPhase[i]
            if b.rounded(.down) > a.rounded(.down) {
                let t = (Double(i - 1) + (b.rounded(.down) - a) / (b - a)) * dt
                if window.contains(t) { result.append(t) }
            }
        }
        return result
    }

    // MARK: Export

    /// One row of the sampled export, in the bridge's vocabulary: the keys of its NDJSON `stats` lines' `truth`
    /// (`pulseRate`, `breathingRate`, `hrvRmssd`) with `t` in seconds, plus the waveforms.
    public struct Sample: Sendable, Hashable, Codable {
        /// Time in seconds (the device clock, or the bridge's run clock when exported with an offset).
        public let time: Double
        /// Pulse rate over the trailing `rateWindow` (60 / the mean RR interval closing in it), bpm: what the
        /// bridge's `stats` lines call `truth.pulseRate`.
        public let pulseRate: Double?
        /// Instantaneous pulse rate (60 / the RR interval containing `time`), bpm.
        public let instantPulseRate: Double?
        /// Breathing rate over the trailing `rateWindow`, breaths/min.
        public let breathingRate: Double?
        /// PPG value 0...1.
        public let ppg: Double?
        /// Lung volume 0...1.
        public let breathing: Double?
        /// RMSSD over the trailing `hrvWindow`, ms.
        public let rmssd: Double?
        /// SDNN over the trailing `hrvWindow`, ms.
        public let sdnn: Double?

        enum CodingKeys: String, CodingKey {
            case time = "t", pulseRate, instantPulseRate, breathingRate, ppg, breathing, rmssd = "hrvRmssd", sdnn = "hrvSdnn"
        }
    }

    /// The export's columns, in order (CSV header; NDJSON keys, with `t` for `time_s`).
    public static let exportColumns = ["time_s", "pulseRate", "breathingRate", "hrvRmssd", "hrvSdnn", "instantPulseRate", "ppg", "breathing"]

    /// Samples every `step` seconds over `range` (device time): rates over a trailing `rateWindow` (as the bridge's
    /// `stats` truth), HRV over a trailing `hrvWindow`; `timeOffset` is added to every exported time (device clock →
    /// the bridge's run clock).
    public func samples(
        in range: ClosedRange<Double>, step: Double, hrvWindow: Double = 30, rateWindow: Double = 10, timeOffset: Double = 0
    ) -> [Sample] {
        guard step > 0, range.lowerBound.isFinite, range.upperBound.isFinite else { return [] }
        var out: [Sample] = []
        var index = 0.0
        while true {
            let t = range.lowerBound + index * step
            if t > range.upperBound + 1e-9 { break }
            index += 1
            let hrv = max(0, t - hrvWindow)...max(t, 0)
            let rates = max(0, t - rateWindow)...max(t, 0)
            out.append(Sample(
                time: ((t + timeOffset) * 1000).rounded() / 1000, pulseRate: meanPulseRate(in: rates), instantPulseRate: pulseRate(at: t),
                breathingRate: meanBreathingRate(in: rates), ppg: ppg(at: t), breathing: breathingSignal(at: t),
                rmssd: rmssd(window: hrv), sdnn: sdnn(window: hrv)
            ))
        }
        return out
    }

    private static func cell(_ v: Double?, _ digits: Int = 4) -> String {
        guard let v else { return "" }
        return String(format: "%.\(digits)f", v)
    }

    /// CSV of sampled series: `time_s,pulseRate,breathingRate,hrvRmssd,hrvSdnn,instantPulseRate,ppg,breathing`.
    public func csv(
        in range: ClosedRange<Double>, step: Double, hrvWindow: Double = 30, rateWindow: Double = 10, timeOffset: Double = 0
    ) -> String {
        var text = Self.exportColumns.joined(separator: ",") + "\n"
        for s in samples(in: range, step: step, hrvWindow: hrvWindow, rateWindow: rateWindow, timeOffset: timeOffset) {
            text += [Self.cell(s.time, 3), Self.cell(s.pulseRate, 3), Self.cell(s.breathingRate, 3), Self.cell(s.rmssd, 2),
                     Self.cell(s.sdnn, 2), Self.cell(s.instantPulseRate, 3), Self.cell(s.ppg), Self.cell(s.breathing)]
                .joined(separator: ",") + "\n"
        }
        return text
    }

    /// NDJSON of sampled series, one JSON object per line with the keys of ``Sample`` (`t`, `pulseRate`, …; nil
    /// values omitted).
    public func ndjson(
        in range: ClosedRange<Double>, step: Double, hrvWindow: Double = 30, rateWindow: Double = 10, timeOffset: Double = 0
    ) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        var text = ""
        for s in samples(in: range, step: step, hrvWindow: hrvWindow, rateWindow: rateWindow, timeOffset: timeOffset) {
            if let data = try? encoder.encode(s), let line = String(data: data, encoding: .utf8) { text += line + "\n" }
        }
        return text
    }

    /// CSV of beats: `beat_time_s,rr_ms,instant_bpm` (one row per RR interval closing in `window`).
    public func beatsCSV(in window: ClosedRange<Double>) -> String {
        var text = "beat_time_s,rr_ms,instant_bpm\n"
        for rr in rrIntervals(in: window) {
            text += "\(Self.cell(rr.time)),\(Self.cell(rr.seconds * 1000, 2)),\(Self.cell(60 / rr.seconds, 3))\n"
        }
        return text
    }
}
