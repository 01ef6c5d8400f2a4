import Foundation
import Testing
@testable import GlassesReport

@Suite("SVG plot writer")
struct PlotTests {
    @Test("nice ticks: 1, 2, 2.5 or 5 times a power of ten, covering the data")
    func niceTicks() {
        let a = NiceScale(low: 0.3, high: 9.6, ticks: 5)
        #expect(a.lower == 0 && a.upper == 10 && a.step == 2.5)
        #expect(a.ticks == [0, 2.5, 5, 7.5, 10])
        #expect(a.label(2.5) == "2.5" && a.label(5) == "5.0")
        let b = NiceScale(low: 61.2, high: 78.9, ticks: 5)
        #expect(b.lower == 60 && b.upper == 80 && b.step == 5 && b.label(65) == "65")
        let c = NiceScale(low: 0.012, high: 0.087, ticks: 5)
        #expect(c.step == 0.02 && c.lower == 0 && abs(c.upper - 0.1) < 1e-12 && c.label(0.04) == "0.04")
        // A flat series and a non-finite one still get an axis.
        let flat = NiceScale(low: 72, high: 72)
        #expect(flat.lower < 72 && flat.upper > 72)
        let broken = NiceScale(low: .nan, high: .infinity)
        #expect(broken.lower.isFinite && broken.upper.isFinite && broken.lower < broken.upper)
        // Exact ends (a time axis that stops where the run stops), ticks inside.
        let exact = NiceScale(exactLow: 0, high: 70, ticks: 7)
        #expect(exact.lower == 0 && exact.upper == 70 && exact.ticks == [0, 20, 40, 60])
    }

    @Test("every layer kind draws its element, with a legend, units and a title")
    func layers() {
        var plot = SVGPlot(title: "Pulse <test>", xLabel: "time (s)", yLabel: "pulse (bpm)")
        plot.layers = [
            .spans([PlotSpan(start: 0, end: 5, color: .good, label: "stable")]),
            .band(label: "confidence band", color: .estimate, points: [BandPoint(0, low: 70, high: 74), BandPoint(1, low: 71, high: 75)]),
            .line(label: "estimate", color: .estimate, points: [PlotPoint(0, 72), PlotPoint(1, 73), PlotPoint(2, nil), PlotPoint(3, 74), PlotPoint(4, 72)]),
            .line(label: "truth", color: .reference, points: [PlotPoint(0, 71), PlotPoint(4, 72)], dashed: true),
            .scatter(label: "pairs", color: .estimate, points: [PlotPoint(1, 1), PlotPoint(2, -1)]),
            .horizontal(label: "bias 0.5", color: .secondary, y: 0.5),
            .marks(label: "reconnect", color: .secondary, xs: [2.5]),
        ]
        let svg = plot.svg()
        #expect(svg.hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\"") && svg.hasSuffix("</svg>"))
        #expect(svg.contains("<title>Pulse &lt;test&gt;</title>"))
        #expect(svg.contains(">time (s)</text>") && svg.contains(">pulse (bpm)</text>"))
        #expect(occurrences(of: "class=\"line estimate\" d=", in: svg) == 2)  // the nil broke the estimate in two
        #expect(occurrences(of: "class=\"line reference dashed\" d=", in: svg) == 1)
        #expect(occurrences(of: "<polygon class=\"band estimate\"", in: svg) == 1)
        #expect(occurrences(of: "class=\"span good back\"", in: svg) == 1)
        #expect(occurrences(of: "<circle cx=", in: svg) == 2)
        #expect(svg.contains(">bias 0.5</text>") && svg.contains("class=\"mark secondary\""))
        for label in ["stable", "confidence band", "estimate", "truth", "pairs", "reconnect"] {
            #expect(svg.contains("<text class=\"tick\" x=") && svg.contains(">\(label)</text>"), "legend lacks \(label)")
        }
        #expect(plot.svg() == svg, "the same plot must give the same bytes")
    }

    @Test("bars over categories and a timeline of lanes")
    func barsAndLanes() {
        var bars = SVGPlot(title: "MAE per subject", xLabel: "subject", yLabel: "MAE (bpm)")
        bars.categories = ["s1", "s2", "s3"]
        bars.layers = [.bars(label: "raw", color: .estimate, values: [1.2, nil, 0.8], group: 0, groups: 2),
                       .bars(label: "hvc1", color: .reference, values: [1.5, 2, 0.9], group: 1, groups: 2)]
        let svg = bars.svg()
        #expect(occurrences(of: "<rect class=\"bar estimate\"", in: svg) == 2)
        #expect(occurrences(of: "<rect class=\"bar reference\"", in: svg) == 3)
        #expect(svg.contains(">s2</text>") && svg.contains(">hvc1</text>"))
        var timeline = SVGPlot(title: "State", xLabel: "time (s)", yLabel: "")
        timeline.lanes = ["stream state", "validation"]
        timeline.layers = [.spans([PlotSpan(start: 0, end: 3, color: .good, label: "streaming"),
                                   PlotSpan(start: 3, end: 5, color: .caution, label: "paused")], lane: 0),
                           .spans([PlotSpan(start: 0, end: 5, color: .good, label: "ok")], lane: 1)]
        let lanes = timeline.svg()
        #expect(lanes.contains(">stream state</text>") && lanes.contains(">validation</text>"))
        #expect(occurrences(of: "<title>paused: ", in: lanes) == 1 && occurrences(of: "<title>streaming: ", in: lanes) == 1)
    }

    @Test("the style sheet has light and dark colours for every colour role")
    func style() {
        #expect(PlotStyle.css.contains("@media (prefers-color-scheme: dark)"))
        for color in PlotColor.allCases {
            #expect(occurrences(of: "--\(color.rawValue):", in: PlotStyle.css) == 2, "\(color) needs a light and a dark colour")
        }
        #expect(escape("a<b & \"c\" 'd'") == "a&lt;b &amp; &quot;c&quot; &#39;d&#39;")
    }
}
