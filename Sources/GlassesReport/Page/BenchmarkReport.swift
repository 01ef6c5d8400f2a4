import Foundation

/// What the vitals benchmark measured for one simulated subject.
public struct BenchmarkSubject: Sendable, Hashable {
    /// The subject's number.
    public var index: Int
    /// The subject's true mean pulse (bpm) and breathing rate (breaths/min).
    public var truePulse: Double
    /// The subject's true mean breathing rate.
    public var trueBreathing: Double
    /// Estimate − truth of every pulse sample scored.
    public var pulseErrors: [Double]
    /// Estimate − truth of every breathing sample scored.
    public var breathingErrors: [Double]
    /// Estimate − truth of the last RMSSD, ms.
    public var rmssdError: Double?
    /// Why the subject failed, if it did.
    public var failure: String?

    /// Creates a subject's result.
    public init(index: Int, truePulse: Double, trueBreathing: Double, pulseErrors: [Double], breathingErrors: [Double],
                rmssdError: Double?, failure: String?) {
        self.index = index
        self.truePulse = truePulse
        self.trueBreathing = trueBreathing
        self.pulseErrors = pulseErrors
        self.breathingErrors = breathingErrors
        self.rmssdError = rmssdError
        self.failure = failure
    }

    /// Mean absolute pulse error, or nil with no samples.
    public var pulseMAE: Double? { Self.mae(pulseErrors) }
    /// Mean absolute breathing error, or nil with no samples.
    public var breathingMAE: Double? { Self.mae(breathingErrors) }

    static func mae(_ errors: [Double]) -> Double? {
        let finite = errors.filter(\.isFinite)
        return finite.isEmpty ? nil : finite.reduce(0) { $0 + abs($1) } / Double(finite.count)
    }
}

/// One condition of the vitals benchmark (raw, hvc1 at a bitrate, dim, motion, …) and its subjects.
public struct BenchmarkCondition: Sendable, Hashable {
    /// The condition's name, e.g. `hvc1-2M`.
    public var name: String
    /// The HEVC bitrate in bits per second, nil for raw frames.
    public var bitrate: Int?
    /// Frames per second.
    public var fps: Int
    /// The subjects.
    public var subjects: [BenchmarkSubject]
    /// Seconds per subject.
    public var duration: Double

    /// Creates a condition's results.
    public init(name: String, bitrate: Int?, fps: Int, duration: Double, subjects: [BenchmarkSubject]) {
        self.name = name
        self.bitrate = bitrate
        self.fps = fps
        self.duration = duration
        self.subjects = subjects.sorted { $0.index < $1.index }
    }

    /// Pulse MAE over every scored sample of every subject.
    public var pulseMAE: Double? { BenchmarkSubject.mae(subjects.flatMap(\.pulseErrors)) }
    /// Breathing MAE over every scored sample.
    public var breathingMAE: Double? { BenchmarkSubject.mae(subjects.flatMap(\.breathingErrors)) }
}

/// The benchmark's pages: one per condition (error distribution, per-subject bars, accuracy against bitrate).
public enum BenchmarkReport {
    /// A file name for a condition's page.
    public static func fileName(_ condition: BenchmarkCondition) -> String {
        "vitals-" + condition.name.map { $0.isLetter || $0.isNumber || $0 == "-" ? $0 : "_" } + ".html"
    }

    /// The histogram of per-subject pulse MAE (bins of a nice width).
    static func distribution(_ condition: BenchmarkCondition) -> SVGPlot {
        let values = condition.subjects.compactMap(\.pulseMAE)
        let scale = NiceScale(low: 0, high: max(values.max() ?? 1, 0.5), ticks: 8)
        let bins = max(Int(((scale.upper - scale.lower) / scale.step).rounded()), 1)
        var counts = [Double](repeating: 0, count: bins)
        for value in values { counts[min(Int((value - scale.lower) / scale.step), bins - 1)] += 1 }
        var plot = SVGPlot(title: "Pulse error across subjects (\(condition.name))", xLabel: "pulse MAE of a subject (bpm)",
                           yLabel: "subjects")
        plot.categories = (0..<bins).map { "\(scale.label(scale.lower + Double($0) * scale.step))–\(scale.label(scale.lower + Double($0 + 1) * scale.step))" }
        plot.layers = [.bars(label: "subjects", color: .estimate, values: counts)]
        return plot
    }

    /// Per-subject bars of pulse and breathing MAE.
    static func perSubject(_ condition: BenchmarkCondition) -> SVGPlot {
        var plot = SVGPlot(title: "Mean absolute error per subject (\(condition.name))", xLabel: "subject (true pulse, bpm)",
                           yLabel: "MAE (bpm or breaths/min)")
        plot.categories = condition.subjects.map { "\($0.index) (\(String(format: "%.0f", $0.truePulse)))" }
        plot.layers = [
            .bars(label: "pulse (bpm)", color: .estimate, values: condition.subjects.map(\.pulseMAE), group: 0, groups: 2),
            .bars(label: "breathing (/min)", color: .tertiary, values: condition.subjects.map(\.breathingMAE), group: 1, groups: 2),
        ]
        return plot
    }

    /// Pulse and breathing MAE against the HEVC bitrate (the conditions with one), with raw frames as a line.
    static func bitrateCurve(_ all: [BenchmarkCondition], highlight: String) -> SVGPlot? {
        let coded = all.filter { $0.bitrate != nil && $0.pulseMAE != nil }.sorted { ($0.bitrate ?? 0) < ($1.bitrate ?? 0) }
        guard !coded.isEmpty else { return nil }
        var plot = SVGPlot(title: "Accuracy against HEVC bitrate", xLabel: "bitrate (Mbit/s)", yLabel: "MAE (bpm or breaths/min)")
        let mbit = { (c: BenchmarkCondition) in Double(c.bitrate ?? 0) / 1e6 }
        plot.xRange = 0...max(coded.map(mbit).max() ?? 1, 1)
        plot.layers.append(.line(label: "pulse", color: .estimate, points: coded.map { PlotPoint(mbit($0), $0.pulseMAE) }))
        plot.layers.append(.line(label: "breathing", color: .tertiary, points: coded.map { PlotPoint(mbit($0), $0.breathingMAE) }))
        plot.layers.append(.scatter(label: "", color: .estimate, points: coded.map { PlotPoint(mbit($0), $0.pulseMAE) }))
        if let current = coded.first(where: { $0.name == highlight }) {
            plot.layers.append(.scatter(label: "this condition", color: .bad, points: [PlotPoint(mbit(current), current.pulseMAE)]))
        }
        if let raw = all.first(where: { $0.name == "raw" })?.pulseMAE {
            plot.layers.append(.horizontal(label: "raw frames: pulse \(RunReport.number(raw, 2))", color: .reference, y: raw))
        }
        return plot
    }

    /// The page of one condition.
    public static func html(_ condition: BenchmarkCondition, all: [BenchmarkCondition], generator: String) -> String {
        var page = HTMLPage(title: "Vitals benchmark: \(condition.name)")
        let failures = condition.subjects.filter { $0.failure != nil }
        page.append("<header><h1>Vitals benchmark: \(escape(condition.name))</h1><p class=\"sub\">\(condition.subjects.count) "
            + "simulated subjects × \(f(condition.duration)) s, \(condition.fps) fps, "
            + (condition.bitrate.map { "HEVC at \(f(Double($0) / 1e6)) Mbit/s" } ?? "raw NV12") + ", against the simulator's truth</p></header>")
        let rmssd = BenchmarkSubject.mae(condition.subjects.compactMap(\.rmssdError))
        page.append(HTMLPage.table(["measure", "value"], [
            ["pulse MAE over all samples (bpm)", RunReport.number(condition.pulseMAE, 2)],
            ["breathing MAE over all samples (/min)", RunReport.number(condition.breathingMAE, 2)],
            ["RMSSD MAE across subjects (ms)", RunReport.number(rmssd, 1)],
            ["subjects that failed", "\(failures.count)"],
        ]))
        if condition.subjects.allSatisfy({ $0.pulseMAE == nil }) {
            page.append(HTMLPage.note("No subject produced a scored pulse sample: nothing to plot.", kind: "empty"))
        } else {
            page.section("Error distribution across subjects", id: "distribution", HTMLPage.figure(distribution(condition),
                caption: "How many subjects had each pulse MAE (estimate vs the truth's mean over the trailing 12 s, from 15 s on)."))
            page.section("Per subject", id: "subjects", HTMLPage.figure(perSubject(condition)))
        }
        if let curve = bitrateCurve(all, highlight: condition.name) {
            page.section("Accuracy against bitrate", id: "bitrate", HTMLPage.figure(curve,
                caption: "The conditions of this benchmark run that encode HEVC; the red dot is this page's condition."))
        }
        page.section("Other conditions", id: "conditions", "<ul>" + all.map {
            "<li><a href=\"\(escape(fileName($0)))\">\(escape($0.name))</a>: pulse MAE \(RunReport.number($0.pulseMAE, 2)) bpm</li>"
        }.joined() + "</ul>")
        for failure in failures.prefix(5) {
            page.append(HTMLPage.note("subject \(failure.index) failed: \(failure.failure ?? "")", kind: "bad"))
        }
        page.append(HTMLPage.note("Made by \(generator).", kind: "note"))
        return page.html()
    }
}
