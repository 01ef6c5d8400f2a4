import Foundation

/// What the caller knows beyond the NDJSON: the tool that made the report, and settings to list.
public struct ReportContext: Sendable {
    /// The page title.
    public var title = "GlassesBridge run report"
    /// What made the report, e.g. `glasses-bridge 0.9.0`.
    public var generator = "glasses-bridge"
    /// Where the run came from (the NDJSON file's name, or `this run`).
    public var input = "this run"
    /// Extra settings to list (option and value), e.g. from the command line.
    public var settings: [(String, String)] = []
    /// Seconds of pulse wave shown (the last seconds with a face).
    public var pulseWindow = 12.0
    /// Seconds of breathing trace shown.
    public var breathingWindow = 40.0
    /// Where the trace windows end, in seconds of the run; nil shows the run's last seconds.
    public var tracesEnd: Double?

    /// Creates the defaults.
    public init() {}
}

/// The report of one run: vitals against truth or a reference, accuracy, validation, the stream, settings.
public struct RunReport: Sendable {
    /// The run.
    public let run: RunRecord
    /// Truth or a reference on the run's clock, when there is one.
    public let reference: ReferenceSeries?
    /// What the caller adds.
    public let context: ReportContext

    /// Creates a report; without `reference`, the live reference the run's `stats` lines carry (`--reference
    /// lsl:…`: the run was asked to be compared with it), else a simulated run's own truth (its `stats` lines).
    public init(run: RunRecord, reference: ReferenceSeries? = nil, context: ReportContext = ReportContext()) {
        self.run = run
        self.reference = reference ?? ReferenceSeries.liveReference(of: run) ?? ReferenceSeries.truth(of: run)
        self.context = context
    }

    /// Whether the run saw no frame at all.
    public var isEmpty: Bool { run.framesReceived == 0 }

    /// The statistics of each metric against the reference (stable estimates only), where there are pairs.
    public var statistics: [(VitalMetric, ErrorStatistics)] {
        guard let reference else { return [] }
        return VitalMetric.allCases.compactMap { metric in
            ErrorStatistics(ErrorStatistics.pairs(metric, run: run, reference: reference)).map { (metric, $0) }
        }
    }

    private var timeRange: ClosedRange<Double> { 0...max(run.endTime, 1) }

    /// The page.
    public func html() -> String {
        var page = HTMLPage(title: context.title)
        page.append("<header><h1>\(escape(context.title))</h1><p class=\"sub\">\(escape(subtitle))</p></header>\n")
        if isEmpty {
            page.append(HTMLPage.note("No frames arrived in this run: there are no vitals, traces or stream rates to plot. "
                + (run.summary.map { "It ended after \(Self.number($0.durationSeconds, 1)) s (\($0.reason))." } ?? "It wrote no summary."),
                kind: "empty"))
            page.append(messagesSection())
            page.append(settingsSection())
            return page.html()
        }
        page.append(cards())
        page.section("Vitals over time", id: "vitals", vitalsFigures())
        page.section("Traces", id: "traces", traceFigures())
        page.section("Accuracy", id: "accuracy", accuracySection())
        page.section("Validation and stream state", id: "validation", validationSection())
        page.section("The stream", id: "stream", streamSection())
        page.section("Latency", id: "latency", latencySection())
        page.append(messagesSection())
        page.append(settingsSection())
        return page.html()
    }

    private var subtitle: String {
        var parts = [run.sourceDescription ?? (run.simulated ? "simulated glasses" : "source not recorded")]
        if let summary = run.summary {
            parts.append("\(Self.number(summary.durationSeconds, 1)) s, ended: \(summary.reason)")
        } else {
            parts.append("no summary line (the run did not finish writing)")
        }
        return parts.joined(separator: " · ")
    }

    static func number(_ value: Double?, _ decimals: Int) -> String {
        guard let value, value.isFinite else { return "–" }
        return String(format: "%.\(decimals)f", value)
    }

    static func percent(_ share: Double) -> String { String(format: "%.0f %%", share * 100) }

    private func cards() -> String {
        let summary = run.summary
        func card(_ key: String, _ value: String, _ unit: String = "", why: String? = nil) -> String {
            "<div class=\"card\"><div class=\"k\">\(escape(key))</div><div class=\"v\">\(escape(value))"
                + (unit.isEmpty ? "" : "<span class=\"u\">\(escape(unit))</span>") + "</div>"
                + (why.map { "<div class=\"why\">\(escape($0))</div>" } ?? "") + "</div>"
        }
        var out = "<div class=\"cards\">"
        // The summary's value is the median of the run's stable values; where it has none, the summary's reason.
        for (metric, name, unit) in [(VitalMetric.pulseRate, "pulse", "bpm"), (.breathingRate, "breathing", "/min"),
                                     (.hrvRmssd, "HRV", "ms")] {
            let value = summary.flatMap { metric.value(in: $0.vitals) }
            out += card("\(name) (median of stable)", Self.number(value, 1), unit,
                        why: value == nil ? summary?.unavailable[metric] : nil)
        }
        if let truth = summary?.truth ?? nil {
            out += card("truth pulse", Self.number(truth.pulseRate, 1), "bpm")
        }
        if let pulse = statistics.first(where: { $0.0 == .pulseRate })?.1 {
            out += card("pulse MAE vs \(reference?.kind.rawValue ?? "")", Self.number(pulse.meanAbsoluteError, 2), "bpm")
        }
        let last = summary?.stats ?? run.stats.last
        out += card("frames received", "\(last?.framesReceived ?? 0)")
        out += card("dropped + rejected", "\((last?.framesDropped ?? 0) + (last?.framesRejected ?? 0))")
        return out + "</div>\n"
    }

    // MARK: Vitals

    /// Half-width of the confidence band at 0 % confidence, per metric (the band narrows linearly to 0 at 100 %).
    static func bandScale(_ metric: VitalMetric) -> Double {
        switch metric {
        case .pulseRate: 10
        case .breathingRate: 3
        case .hrvRmssd: 30
        }
    }

    /// The plot of one metric: estimate, confidence band, stable spans, pauses, truth or reference.
    public func vitalsPlot(_ metric: VitalMetric) -> SVGPlot {
        let samples = metric.series(in: run)
        var plot = SVGPlot(title: "\(metric.title)", xLabel: "time since the run began (s)", yLabel: "\(metric.title) (\(metric.unit))")
        plot.xRange = timeRange
        // A gap longer than the series' own spacing (a pause, a reconnect, a fresh timeline) breaks line, band and spans.
        let gap = max(3, 1.5 * Self.typicalInterval(samples.map(\.t)))
        plot.layers.append(.spans(Self.stableSpans(samples, end: timeRange.upperBound, maxHold: gap)))
        plot.layers.append(.spans(pauseSpans()))
        var band: [BandPoint] = []
        for (index, sample) in samples.enumerated() {
            guard let confidence = sample.confidence, confidence.isFinite else { continue }
            if index > 0, sample.t - samples[index - 1].t > gap { band.append(BandPoint(sample.t, low: .nan, high: .nan)) }
            let half = Self.bandScale(metric) * (1 - min(max(confidence, 0), 100) / 100)
            band.append(BandPoint(sample.t, low: sample.value - half, high: sample.value + half))
        }
        if !band.isEmpty { plot.layers.append(.band(label: "confidence band", color: .estimate, points: band)) }
        plot.layers.append(.line(label: "estimate", color: .estimate, points: Self.withGaps(samples.map { ($0.t, $0.value) }, maxGap: gap)))
        if let reference {
            let points = reference.samples.compactMap { sample in metric.value(of: sample).map { (sample.t, $0) } }
            if !points.isEmpty {
                plot.layers.append(.line(label: reference.kind.rawValue, color: .reference, points: Self.withGaps(points), dashed: true))
            }
        }
        return plot
    }

    /// Spans of the stream's pauses and waits (paused, waiting for the glasses, reconnecting).
    func pauseSpans() -> [PlotSpan] {
        run.states.enumerated().compactMap { index, change in
            guard ["paused", "waiting", "connecting"].contains(change.state) else { return nil }
            let end = index + 1 < run.states.count ? run.states[index + 1].t : timeRange.upperBound
            return PlotSpan(start: change.t, end: end, color: .neutral, label: change.state == "paused" ? "paused" : "waiting")
        }.filter { $0.end > $0.start }
    }

    /// Spans of consecutive samples with the same `stable` flag.
    /// A flag holds until the next sample, at most `maxHold` seconds (the last one until `end`, as far).
    static func stableSpans(_ samples: [VitalSample], end runEnd: Double, maxHold: Double = 15) -> [PlotSpan] {
        var spans: [PlotSpan] = []
        for (index, sample) in samples.enumerated() {
            let next = index + 1 < samples.count ? samples[index + 1].t : runEnd
            let end = min(max(next, sample.t), sample.t + maxHold)
            if let last = spans.last, (last.color == .good) == sample.stable, abs(last.end - sample.t) < 1e-6 {
                spans[spans.count - 1].end = end
            } else {
                spans.append(PlotSpan(start: sample.t, end: end, color: sample.stable ? .good : .caution,
                                      label: sample.stable ? "stable" : "not stable"))
            }
        }
        return spans
    }

    /// The median interval between consecutive times (1 when there are fewer than two).
    static func typicalInterval(_ times: [Double]) -> Double {
        guard times.count >= 2 else { return 1 }
        let gaps = zip(times.dropFirst(), times).map { $0 - $1 }.sorted()
        return gaps[gaps.count / 2]
    }

    /// Points with a break wherever consecutive times are more than 3 s apart.
    static func withGaps(_ values: [(Double, Double)], maxGap: Double = 3) -> [PlotPoint] {
        var points: [PlotPoint] = []
        for (index, value) in values.enumerated() {
            if index > 0, value.0 - values[index - 1].0 > maxGap { points.append(PlotPoint(value.0, nil)) }
            points.append(PlotPoint(value.0, value.1))
        }
        return points
    }

    private func vitalsFigures() -> String {
        var out = ""
        for metric in VitalMetric.allCases {
            let samples = metric.series(in: run)
            if samples.isEmpty {
                out += HTMLPage.note("\(metric.title): no values in this run (warm-up: pulse about 12 s, breathing about 30 s, HRV about 60 s).")
                continue
            }
            let stable = samples.filter(\.stable).count
            out += HTMLPage.figure(vitalsPlot(metric), caption: "\(samples.count) values, \(stable) stable. Green background: stable; "
                + "amber: not stable; grey: paused or waiting. The band widens as the engine's confidence falls (±\(f(Self.bandScale(metric))) \(metric.unit) at 0 %)."
                + (reference.map { " Dashed: \($0.kind.rawValue) (\($0.source))." } ?? ""))
        }
        return out
    }

    // MARK: Traces

    /// The trace samples of the `seconds` before `end` (the trace's last sample when nil).
    static func window(_ trace: [TraceSample], seconds: Double, end: Double? = nil) -> [TraceSample] {
        guard let last = end ?? trace.last?.t else { return [] }
        return trace.filter { $0.t >= last - seconds && $0.t <= last }
    }

    private func windowTitle(_ seconds: Double) -> String {
        context.tracesEnd.map { "\(f(max(0, $0 - seconds))) to \(f($0)) s" } ?? "the last \(f(seconds)) s"
    }

    private func traceFigures() -> String {
        var out = ""
        let pulse = Self.window(run.pulseTrace, seconds: context.pulseWindow, end: context.tracesEnd)
        if pulse.count >= 2 {
            var plot = SVGPlot(title: "Pulse wave, \(windowTitle(context.pulseWindow))", xLabel: "time since the run began (s)",
                               yLabel: "pulse wave (a.u.)")
            plot.height = 200
            plot.layers.append(.line(label: "pulse wave", color: .estimate, points: Self.withGaps(pulse.map { ($0.t, $0.value) }, maxGap: 1)))
            out += HTMLPage.figure(plot, caption: "cardio.arterialPressureTrace from the metrics lines, one sample per frame with a face.")
        } else {
            out += HTMLPage.note(context.tracesEnd == nil ? "No pulse wave in this run's metrics lines."
                : "No pulse wave in the window chosen (--traces-at).")
        }
        let breathing = Self.window(run.breathingTrace, seconds: context.breathingWindow, end: context.tracesEnd)
        if breathing.count >= 2 {
            var plot = SVGPlot(title: "Breathing trace, \(windowTitle(context.breathingWindow))", xLabel: "time since the run began (s)",
                               yLabel: "chest motion (a.u.)")
            plot.height = 200
            plot.layers.append(.line(label: "breathing", color: .tertiary, points: Self.withGaps(breathing.map { ($0.t, $0.value) }, maxGap: 1)))
            out += HTMLPage.figure(plot, caption: "breathing.upperTrace from the metrics lines.")
        } else {
            out += HTMLPage.note(context.tracesEnd == nil ? "No breathing trace in this run's metrics lines."
                : "No breathing trace in the window chosen (--traces-at).")
        }
        return out
    }

    // MARK: Accuracy

    /// The Bland–Altman plot of a metric's pairs: mean of the two on x, difference on y, bias and ±1.96 SD lines.
    public static func blandAltman(_ metric: VitalMetric, pairs: [ComparedPair], statistics: ErrorStatistics,
                                   against kind: String) -> SVGPlot {
        var plot = SVGPlot(title: "Bland–Altman: \(metric.title.lowercased()), estimate vs \(kind)",
                           xLabel: "mean of estimate and \(kind) (\(metric.unit))", yLabel: "estimate − \(kind) (\(metric.unit))")
        plot.height = 280
        plot.layers.append(.scatter(label: "pairs", color: .estimate, points: pairs.map { PlotPoint($0.mean, $0.difference) }))
        plot.layers.append(.horizontal(label: "bias \(number(statistics.bias, 2))", color: .secondary, y: statistics.bias, dashed: false))
        plot.layers.append(.horizontal(label: "+1.96 SD \(number(statistics.upperLimit, 2))", color: .reference, y: statistics.upperLimit))
        plot.layers.append(.horizontal(label: "−1.96 SD \(number(statistics.lowerLimit, 2))", color: .reference, y: statistics.lowerLimit))
        return plot
    }

    private func accuracySection() -> String {
        guard let reference else {
            return HTMLPage.note("No truth or reference: give --truth FILE or --reference FILE to compare (a simulated run carries its own truth).")
        }
        let stats = statistics
        guard !stats.isEmpty else {
            return HTMLPage.note("The \(reference.kind.rawValue) (\(reference.source)) and the stable estimates never overlap: nothing to compare.")
        }
        var out = HTMLPage.note("Stable estimates against the \(reference.kind.rawValue) (\(reference.source)) at the same instants "
            + "(the \(reference.kind.rawValue) interpolated between its samples).")
        out += HTMLPage.table(
            ["metric", "pairs", "MAE", "RMSE", "bias", "SD", "within 3", "within 5", "limits of agreement"],
            stats.map { metric, s in
                [metric.title + " (\(metric.unit))", "\(s.count)", Self.number(s.meanAbsoluteError, 2), Self.number(s.rootMeanSquareError, 2),
                 Self.number(s.bias, 2), Self.number(s.standardDeviation, 2), Self.percent(s.withinThree), Self.percent(s.withinFive),
                 "\(Self.number(s.lowerLimit, 2)) to \(Self.number(s.upperLimit, 2))"]
            })
        for (metric, s) in stats where s.count >= 3 {
            let pairs = ErrorStatistics.pairs(metric, run: run, reference: reference)
            out += HTMLPage.figure(Self.blandAltman(metric, pairs: pairs, statistics: s, against: reference.kind.rawValue),
                                   caption: "\(s.count) pairs; bias and limits of agreement (bias ± 1.96 SD).")
        }
        return out
    }

    // MARK: Validation and state

    static func validationColor(_ code: String) -> PlotColor {
        code == "ok" ? .good : .caution
    }

    static func stateColor(_ state: String) -> PlotColor {
        switch state {
        case "streaming": .good
        case "paused", "waiting": .caution
        case "finished": .neutral
        default: .secondary
        }
    }

    private func validationSection() -> String {
        let end = timeRange.upperBound
        var plot = SVGPlot(title: "Validation and stream state over time", xLabel: "time since the run began (s)", yLabel: "")
        plot.lanes = ["stream state", "validation"]
        plot.height = 150
        plot.xRange = timeRange
        let states = run.states.enumerated().map { index, change in
            PlotSpan(start: change.t, end: index + 1 < run.states.count ? run.states[index + 1].t : end,
                     color: Self.stateColor(change.state), label: change.state)
        }
        plot.layers.append(.spans(states, lane: 0))
        let validations = run.validations.enumerated().map { index, change in
            PlotSpan(start: change.t, end: index + 1 < run.validations.count ? run.validations[index + 1].t : end,
                     color: Self.validationColor(change.code), label: change.code)
        }
        plot.layers.append(.spans(validations, lane: 1))
        var out = HTMLPage.figure(plot)
        if run.validations.isEmpty {
            out += HTMLPage.note("No validation verdicts in this run.")
        } else {
            out += HTMLPage.table(["from (s)", "to (s)", "verdict", "hint"], run.validations.enumerated().map { index, change in
                [Self.number(change.t, 1), index + 1 < run.validations.count ? Self.number(run.validations[index + 1].t, 1) : "end",
                 change.code, change.hint]
            }, numericFrom: 9)
        }
        return out
    }

    // MARK: Stream

    /// Per-second increases of a counter between stats lines.
    static func increments(_ stats: [StatsLine], _ value: (StatsLine) -> Int) -> [(Double, Int)] {
        var result: [(Double, Int)] = []
        var previous = 0
        for line in stats {
            let current = value(line)
            result.append((line.t, max(current - previous, 0)))
            previous = current
        }
        return result
    }

    /// The frame-rate plot: fps in and out, with restarts, reconnects and stalls marked.
    public func frameRatePlot() -> SVGPlot {
        var plot = SVGPlot(title: "Frames per second in and out", xLabel: "time since the run began (s)", yLabel: "frames per second")
        plot.xRange = timeRange
        plot.yRange = 0...max(run.stats.map { max($0.fpsIn, $0.fpsOut) }.max() ?? 1, 1)
        plot.layers.append(.spans(pauseSpans()))
        plot.layers.append(.line(label: "in", color: .estimate, points: Self.withGaps(run.stats.map { ($0.t, $0.fpsIn) })))
        plot.layers.append(.line(label: "out", color: .tertiary, points: Self.withGaps(run.stats.map { ($0.t, $0.fpsOut) }), dashed: true))
        for (key, label, color) in [("stallRestarts", "stall restart", PlotColor.bad), ("reconnects", "reconnect", .secondary),
                                    ("sessionRestarts", "new session", .caution), ("inputRestarts", "input restart", .neutral)] {
            let xs = Self.increments(run.stats) { $0.counters[key] ?? 0 }.filter { $0.1 > 0 }.map(\.0)
            plot.layers.append(.marks(label: label, color: color, xs: xs))
        }
        return plot
    }

    /// Drops and rejections per second, one line per reason.
    public func dropsPlot() -> SVGPlot? {
        var reasons = Set<String>()
        for line in run.stats { reasons.formUnion(line.droppedByReason.keys) }
        var codes = Set<String>()
        for line in run.stats { codes.formUnion(line.rejectedByCode.keys) }
        guard !reasons.isEmpty || !codes.isEmpty else { return nil }
        var plot = SVGPlot(title: "Drops and rejections per second, by reason", xLabel: "time since the run began (s)", yLabel: "frames")
        plot.xRange = timeRange
        let colors: [PlotColor] = [.bad, .caution, .secondary, .tertiary, .neutral, .estimate, .reference]
        for (index, reason) in reasons.sorted().enumerated() {
            let points = Self.increments(run.stats) { $0.droppedByReason[reason] ?? 0 }.map { PlotPoint($0.0, Double($0.1)) }
            plot.layers.append(.line(label: "dropped: \(reason)", color: colors[index % colors.count], points: points))
        }
        for (index, code) in codes.sorted().enumerated() {
            let points = Self.increments(run.stats) { $0.rejectedByCode[code] ?? 0 }.map { PlotPoint($0.0, Double($0.1)) }
            plot.layers.append(.line(label: "rejected: \(code)", color: colors[(index + reasons.count) % colors.count], points: points, dashed: true))
        }
        return plot
    }

    private func streamSection() -> String {
        guard !run.stats.isEmpty else { return HTMLPage.note("No stats lines in this run.") }
        var out = HTMLPage.figure(frameRatePlot(), caption: "Grey: paused or waiting. Dotted marks: stall restarts (zombie stream), "
            + "reconnects, new sessions and input restarts, at the stats line that counted them.")
        if let drops = dropsPlot() {
            out += HTMLPage.figure(drops)
        } else {
            out += HTMLPage.note("No frame was dropped or rejected.")
        }
        let last = run.summary?.stats ?? run.stats[run.stats.count - 1]
        var rows: [[String]] = [
            ["received", "\(last.framesReceived)"], ["submitted", "\(last.framesSubmitted)"],
            ["rejected", "\(last.framesRejected)"], ["dropped", "\(last.framesDropped)"],
        ]
        rows += last.droppedByReason.sorted { $0.key < $1.key }.map { ["dropped: \($0.key)", "\($0.value)"] }
        rows += last.rejectedByCode.sorted { $0.key < $1.key }.map { ["rejected: \($0.key)", "\($0.value)"] }
        rows += ["stallRestarts", "reconnects", "sessionRestarts", "inputRestarts", "deviceDroppedFrames", "engineDroppedFrames"].map {
            [$0, "\(last.counters[$0] ?? 0)"]
        }
        return out + HTMLPage.table(["frames and restarts (whole run)", "count"], rows)
    }

    // MARK: Latency

    private func latencySection() -> String {
        let lines = run.stats.filter { $0.latency != nil }
        guard !lines.isEmpty else {
            return HTMLPage.note("Latency: not measured (the stats lines carry no latencyMs).")
        }
        var plot = SVGPlot(title: "Latency", xLabel: "time since the run began (s)", yLabel: "latency (ms)")
        plot.xRange = timeRange
        let series: [(String, PlotColor, Bool, KeyPath<LatencyStats, Double?>)] = [
            ("p50", .estimate, false, \.p50), ("p99", .reference, false, \.p99), ("max", .bad, true, \.max),
            ("link p50", .tertiary, false, \.linkP50), ("link p99", .secondary, false, \.linkP99), ("link max", .neutral, true, \.linkMax),
        ]
        // The whole run's own percentiles (the summary's latencyMs) first: the median of per-second p99s is not the
        // run's p99, and a run's tail is what a reader looks for.
        let whole = run.summary?.stats.latency
        var rows: [[String]] = []
        for (label, color, dashed, path) in series {
            let points = lines.map { PlotPoint($0.t, $0.latency?[keyPath: path]) }
            guard points.contains(where: { $0.y != nil }) else { continue }
            plot.layers.append(.line(label: label, color: color, points: points, dashed: dashed))
            let values = points.compactMap(\.y)
            rows.append([label, Self.number(whole?[keyPath: path], 1), Self.number(values.sorted()[values.count / 2], 1),
                         Self.number(values.max(), 1)])
        }
        return HTMLPage.figure(plot, caption: "From the stats lines' latencyMs (each second's frames); the whole run's from the summary's.")
            + HTMLPage.table(["percentile", "whole run (ms)", "median of the seconds' values (ms)", "largest second's value (ms)"], rows)
    }

    // MARK: Messages and settings

    private func messagesSection() -> String {
        let shown = run.messages.filter { $0.kind != "notice" }
        let notices = run.messages.filter { $0.kind == "notice" }
        var out = "<section id=\"messages\"><h2>Warnings, errors and notices</h2>"
        if shown.isEmpty { out += HTMLPage.note("No warnings or errors.") }
        for message in shown {
            out += "<p class=\"\(message.kind == "error" ? "bad" : "warn")\">\(escape(Self.number(message.t, 1))) s · "
                + "\(escape(message.kind))\(message.code.map { " (\(escape($0)))" } ?? ""): \(escape(message.message))</p>"
        }
        if let error = run.summary?.error {
            out += "<p class=\"bad\">The run failed: \(escape(error.message)) (\(escape(error.code)), exit \(error.exitCode)).</p>"
        }
        if !notices.isEmpty {
            out += HTMLPage.table(["time (s)", "notice"], notices.prefix(200).map { [Self.number($0.t, 1), $0.message] }, numericFrom: 9)
        }
        return out + "</section>\n"
    }

    private func settingsSection() -> String {
        var rows: [[String]] = []
        rows.append(["input", context.input])
        if let source = run.sourceDescription { rows.append(["source", source]) }
        for message in run.messages where message.kind == "notice" && message.message.hasPrefix("found ") {
            rows.append(["device", String(message.message.dropFirst(6))])
        }
        rows.append(["simulated", run.simulated ? "yes" : "no"])
        rows.append(["NDJSON schema version", run.schemaVersion.map(String.init) ?? "not given"])
        if let startedAt = run.startedAt {
            // With milliseconds, as the run wrote it: a reference is lined up with the run by this instant.
            let format = ISO8601DateFormatter()
            format.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            rows.append(["started at", format.string(from: startedAt)])
        }
        if let summary = run.summary {
            rows.append(["duration", "\(Self.number(summary.durationSeconds, 3)) s"])
            rows.append(["ended", summary.reason])
        }
        if let reference { rows.append([reference.kind.rawValue, reference.source]) }
        rows += context.settings.map { [$0.0, $0.1] }
        rows.append(["report made by", context.generator])
        rows.append(["lines read", "\(run.lineCount)"])
        return "<section id=\"settings\"><h2>Run settings, versions and source</h2>"
            + HTMLPage.table(["setting", "value"], rows, numericFrom: 9) + "</section>\n"
    }
}
