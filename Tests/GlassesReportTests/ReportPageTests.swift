import Foundation
import Testing
@testable import GlassesReport

/// The four runs the issue names, as pages.
enum Pages {
    static func simulated() throws -> (RunReport, String) {
        let report = RunReport(run: try Fixture.run("simulated.ndjson"))
        return (report, report.html())
    }

    static func replayWithReference() throws -> (RunReport, String) {
        let run = try Fixture.run("replay.ndjson")
        let report = RunReport(run: run, reference: try Fixture.replayReference(run: run))
        return (report, report.html())
    }

    static func faults() throws -> (RunReport, String) {
        let report = RunReport(run: try Fixture.run("faults.ndjson"))
        return (report, report.html())
    }

    static func empty() throws -> (RunReport, String) {
        let report = RunReport(run: try Fixture.run("empty.ndjson"))
        return (report, report.html())
    }

    static func all() throws -> [(String, String)] {
        [("simulated", try simulated().1), ("replay-reference", try replayWithReference().1), ("faults", try faults().1),
         ("empty", try empty().1),
         ("benchmark", BenchmarkReport.html(BenchmarkFixture.all[2], all: BenchmarkFixture.all, generator: "test"))]
    }
}

@Suite("Report pages")
struct ReportPageTests {
    /// The vertices of the paths of `class` in an SVG (M and L commands).
    static func vertices(_ svg: String, class name: String) -> [(Double, Double)] {
        svg.components(separatedBy: "class=\"\(name)\" d=\"").dropFirst().flatMap { rest -> [(Double, Double)] in
            let d = rest.prefix { $0 != "\"" }
            return d.split(whereSeparator: { $0 == "M" || $0 == "L" }).compactMap { pair in
                let xy = pair.split(separator: ",")
                guard xy.count == 2, let x = Double(xy[0]), let y = Double(xy[1]) else { return nil }
                return (x, y)
            }
        }
    }

    @Test("a simulated run: the three vitals with bands, stable spans and the truth; statistics; traces; the stream")
    func simulated() throws {
        let (report, html) = try Pages.simulated()
        for heading in ["Vitals over time", "Traces", "Accuracy", "Validation and stream state", "The stream", "Latency",
                        "Run settings, versions and source"] {
            #expect(html.contains(">\(heading)</h2>"), "no section \(heading)")
        }
        // Each vitals plot draws one vertex per sample of the NDJSON (no gaps longer than the series' own spacing).
        for metric in VitalMetric.allCases {
            let svg = report.vitalsPlot(metric).svg()
            let samples = metric.series(in: report.run)
            #expect(!samples.isEmpty)
            #expect(Self.vertices(svg, class: "line estimate").count == samples.count, "\(metric)")
            #expect(svg.contains("class=\"line reference dashed\""), "\(metric) lacks the truth")
            #expect(svg.contains("<polygon class=\"band estimate\""), "\(metric) lacks its confidence band")
            #expect(svg.contains("class=\"span good back\"") || metric == .hrvRmssd)
        }
        // The highest pulse estimate is the highest vertex (smallest y) of the pulse line.
        let pulseSVG = report.vitalsPlot(.pulseRate).svg()
        let points = Self.vertices(pulseSVG, class: "line estimate")
        let highest = try #require(report.run.pulseRate.indices.max { report.run.pulseRate[$0].value < report.run.pulseRate[$1].value })
        #expect(points[highest].1 == points.map(\.1).min())
        // The statistics on the page are those of the pairs.
        let pulse = try #require(report.statistics.first { $0.0 == .pulseRate }?.1)
        #expect(html.contains("<td class=\"num\">\(RunReport.number(pulse.meanAbsoluteError, 2))</td>"))
        #expect(html.contains("Bland–Altman: pulse, estimate vs truth"))
        #expect(html.contains("Pulse wave, the last 12 s") && html.contains("Breathing trace, the last 40 s"))
        #expect(html.contains("Latency: not measured"))
        // A chosen window: the pulse wave from 18 to 30 s holds exactly the trace samples of those seconds.
        var context = ReportContext()
        context.tracesEnd = 30
        let windowed = RunReport(run: report.run, context: context).html()
        #expect(windowed.contains("Pulse wave, 18 to 30 s") && windowed.contains("Breathing trace, 0 to 30 s"))
        let inWindow = report.run.pulseTrace.filter { $0.t >= 18 && $0.t <= 30 }.count
        let wave = windowed.components(separatedBy: "<title>Pulse wave, 18 to 30 s</title>").dropFirst().first ?? ""
        #expect(Self.vertices(wave.components(separatedBy: "</svg>").first ?? "", class: "line estimate").count == inWindow)
        #expect(html.contains("Simulated Glasses (rayBanMeta, firmware sim-1.0)"))
    }

    @Test("a replayed file with a chest-strap reference: the reference on the same axes, its statistics and Bland–Altman")
    func replayWithReference() throws {
        let (report, html) = try Pages.replayWithReference()
        #expect(!report.run.simulated && report.reference?.kind == .reference)
        #expect(html.contains("Bland–Altman: pulse, estimate vs reference"))
        #expect(html.contains("the reference (replay-reference.csv)"))
        let svg = report.vitalsPlot(.pulseRate).svg()
        #expect(Self.vertices(svg, class: "line reference dashed").count == 40)
        let stats = try #require(report.statistics.first { $0.0 == .pulseRate }?.1)
        #expect(stats.count > 10 && stats.meanAbsoluteError < 5)
        #expect(html.contains("file:/tmp/rec40.mkv"))
    }

    @Test("a run with faults: pause and waiting spans, stall restart and reconnect marks, drops by reason")
    func faults() throws {
        let (report, html) = try Pages.faults()
        let fps = report.frameRatePlot().svg()
        #expect(fps.contains("class=\"span neutral back\""))  // paused, waiting
        #expect(fps.contains("<title>stall restart at") && fps.contains("<title>reconnect at"))
        #expect(fps.contains("<title>input restart at"))
        let drops = try #require(report.dropsPlot()).svg()
        #expect(drops.contains(">dropped: duplicateTimestamp</text>") && drops.contains(">dropped: backwardTimestamp</text>"))
        // The drops line adds up to the summary's count.
        let backward = Self.vertices(drops, class: "line caution").map(\.1)
        #expect(!backward.isEmpty)
        #expect(report.run.summary?.stats.droppedByReason["backwardTimestamp"] == 7)
        #expect(html.contains("<td>stallRestarts</td><td class=\"num\">1</td>"))
        #expect(html.contains("<td>reconnects</td><td class=\"num\">1</td>"))
        let start = try #require(html.range(of: "Validation and stream state over time"))
        let timeline = html[start.upperBound...].components(separatedBy: "</svg>").first ?? ""
        #expect(timeline.contains("<rect class=\"span caution\"") && timeline.contains(">paused</text>") && timeline.contains(">waiting</text>"))
    }

    @Test("the cards show the summary's medians, and where a vital has none, the summary's reason")
    func cardsSayWhyAVitalHasNoValue() throws {
        let (_, html) = try Pages.simulated()
        #expect(html.contains("pulse (median of stable)") && html.contains(">72.5<"))
        #expect(!html.contains("class=\"why\""))
        // The same run with a pulse that was never stable, as the bridge writes it now: null, and why.
        let text = try Fixture.text("simulated.ndjson").replacingOccurrences(
            of: #""type":"summary","t":70,"pulseRate":72.5,"#,
            with: #""type":"summary","t":70,"pulseRate":null,"pulseUnavailable":{"code":"unstable","message":"none of the 31 pulse values measured was stable (best confidence 38 %): <weak>"},"breathingUnavailable":null,"#)
        let run = try RunRecord.parse(ndjson: text, name: "unstable.ndjson")
        #expect(run.summary?.unavailable == [.pulseRate: "none of the 31 pulse values measured was stable (best confidence 38 %): <weak>"])
        let page = RunReport(run: run).html()
        #expect(page.contains("<div class=\"why\">none of the 31 pulse values measured was stable (best confidence 38 %): &lt;weak&gt;</div>"))
        // A reason that is not an object with a message is named as malformed.
        let bad = text.replacingOccurrences(of: #""breathingUnavailable":null"#, with: #""breathingUnavailable":{"code":"tooShort"}"#)
        #expect(throws: ReportError.self) { _ = try RunRecord.parse(ndjson: bad, name: "bad.ndjson") }
    }

    @Test("an empty run says so plainly and draws nothing")
    func empty() throws {
        let (report, html) = try Pages.empty()
        #expect(report.isEmpty)
        #expect(html.contains("<p class=\"empty\">No frames arrived in this run"))
        #expect(!html.contains("<svg"))
        #expect(html.contains("repeatedStalls") && html.contains("exit 69"))
        let none = RunReport(run: RunRecord()).html()
        #expect(none.contains("No frames arrived") && none.contains("It wrote no summary."))
    }

    @Test("latency percentiles are drawn when the stats lines carry latencyMs, else 'not measured'")
    func latency() throws {
        var text = #"{"type":"start","t":0,"schemaVersion":1,"simulated":false}"# + "\n"
        for t in 1...5 {
            text += #"{"type":"stats","t":\#(t),"framesReceived":\#(t * 24),"framesSubmitted":\#(t * 24),"fpsIn":24,"fpsOut":24,"#
                + #""latencyMs":{"p50":\#(10 + t),"p99":\#(30 + t),"max":\#(50 + t),"linkP50":2,"linkP99":4,"linkMax":9}}"# + "\n"
        }
        let html = RunReport(run: try RunRecord.parse(ndjson: text)).html()
        #expect(html.contains("<title>Latency</title>") && !html.contains("not measured"))
        // Without a summary there is no whole-run figure: a dash, then the seconds' median and largest.
        #expect(html.contains("<td>p99</td><td class=\"num\">–</td><td class=\"num\">33.0</td><td class=\"num\">35.0</td>"), "\(html)")
        #expect(html.contains("<td>link max</td><td class=\"num\">–</td><td class=\"num\">9.0</td>"))
        // With one, the whole run's tail (a 210 ms p99 the per-second lines never show) comes first.
        text += #"{"type":"summary","t":5,"pulseRate":null,"breathingRate":null,"hrvRmssd":null,"framesReceived":120,"framesSubmitted":120,"#
            + #""durationSeconds":5,"reason":"duration","latencyMs":{"p50":12,"p99":209.9,"max":282,"linkP50":2,"linkP99":4,"linkMax":9}}"# + "\n"
        let whole = RunReport(run: try RunRecord.parse(ndjson: text)).html()
        #expect(whole.contains("<td>p99</td><td class=\"num\">209.9</td><td class=\"num\">33.0</td><td class=\"num\">35.0</td>"), "\(whole)")
        #expect(whole.contains("<td>max</td><td class=\"num\">282.0</td>"))
    }

    @Test("the run's start is shown to the millisecond, as the run wrote it")
    func startedAtKeepsMilliseconds() throws {
        let text = #"{"type":"start","t":0,"schemaVersion":1,"simulated":false,"startedAt":"2026-12-05T10:16:40.296Z"}"# + "\n"
        let html = RunReport(run: try RunRecord.parse(ndjson: text)).html()
        #expect(html.contains("2026-12-05T10:16:40.296Z"), "\(html)")
    }

    @Test("every page is self-contained: no scripts, nothing fetched, light and dark, print")
    func selfContained() throws {
        for (name, html) in try Pages.all() {
            #expect(html.hasPrefix("<!DOCTYPE html>"), "\(name)")
            #expect(!html.lowercased().contains("<script"), "\(name) has a script")
            let urls = html.components(separatedBy: "http").dropFirst().map { String($0.prefix(30)) }
            #expect(urls.allSatisfy { $0.hasPrefix("://www.w3.org/2000/svg\"") || $0.hasPrefix("-equiv=") }, "\(name): \(urls)")
            #expect(!html.contains("url(") || html.components(separatedBy: "url(").dropFirst().allSatisfy { $0.hasPrefix("#") })
            #expect(html.contains("default-src 'none'") && html.contains("prefers-color-scheme: dark") && html.contains("@media print"))
        }
    }
}
