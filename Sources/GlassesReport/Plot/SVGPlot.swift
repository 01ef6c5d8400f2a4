import Foundation

/// A colour role of a plotted element; the page's style sheet maps each to a light and a dark colour.
public enum PlotColor: String, Sendable, Hashable, CaseIterable {
    /// The bridge's estimate.
    case estimate
    /// Truth or a reference recording.
    case reference
    /// A third series (breathing's lower trace, frames out).
    case secondary
    /// A fourth series.
    case tertiary
    /// Good: stable, `ok`.
    case good
    /// Caution: not stable yet, warming up.
    case caution
    /// Bad: an error, a drop, a stall.
    case bad
    /// Neutral: paused, waiting, grid-like marks.
    case neutral
}

/// One point of a line; a nil `y` breaks the line.
public struct PlotPoint: Sendable, Hashable {
    /// The x value.
    public var x: Double
    /// The y value, or nil for a gap.
    public var y: Double?
    /// Creates a point.
    public init(_ x: Double, _ y: Double?) {
        self.x = x
        self.y = y
    }
}

/// A span of x with a colour and a label (stable/unstable, a validation status, a stream state).
public struct PlotSpan: Sendable, Hashable {
    /// Where it starts.
    public var start: Double
    /// Where it ends.
    public var end: Double
    /// Its colour.
    public var color: PlotColor
    /// What it means (shown in the legend and as a tooltip).
    public var label: String
    /// Creates a span.
    public init(start: Double, end: Double, color: PlotColor, label: String) {
        self.start = start
        self.end = end
        self.color = color
        self.label = label
    }
}

/// Something drawn on a plot.
public enum PlotLayer: Sendable, Hashable {
    /// A line through points (gaps where `y` is nil); `dashed` for a reference.
    case line(label: String, color: PlotColor, points: [PlotPoint], dashed: Bool = false)
    /// A filled band between `low` and `high` (a confidence band); each tuple is x, low, high.
    case band(label: String, color: PlotColor, points: [BandPoint])
    /// Spans across the whole height, behind the data (or in row `lane` of a timeline).
    case spans([PlotSpan], lane: Int? = nil)
    /// Dots.
    case scatter(label: String, color: PlotColor, points: [PlotPoint])
    /// A horizontal line across the plot at `y` with a label at its right end.
    case horizontal(label: String, color: PlotColor, y: Double, dashed: Bool = true)
    /// Vertical marks at x values (restarts, reconnects), with a legend label.
    case marks(label: String, color: PlotColor, xs: [Double])
    /// Bars over categories (``SVGPlot/categories``); `group` and `groups` place several series side by side.
    case bars(label: String, color: PlotColor, values: [Double?], group: Int = 0, groups: Int = 1)
}

/// One x of a band with its two edges.
public struct BandPoint: Sendable, Hashable {
    /// The x value.
    public var x: Double
    /// The lower edge.
    public var low: Double
    /// The upper edge.
    public var high: Double
    /// Creates a band point.
    public init(_ x: Double, low: Double, high: Double) {
        self.x = x
        self.low = low
        self.high = high
    }
}

/// How an axis labels its ticks.
public enum AxisFormat: Sendable, Hashable {
    /// Plain numbers.
    case number
    /// Minutes and seconds (`1:30`), for a time axis in seconds.
    case clock
}

/// A small SVG plot: axes with nice ticks and units, a legend, and layers (lines, bands, spans, dots, bars).
///
/// The SVG uses class names for colours (``PlotColor``), so ``PlotStyle/css`` (or a page that includes it) gives it
/// light and dark colours through `prefers-color-scheme`; it scales to its container's width.
public struct SVGPlot: Sendable {
    /// The title above the plot.
    public var title: String
    /// The x axis' label, with its unit, e.g. `time (s)`.
    public var xLabel: String
    /// The y axis' label, with its unit, e.g. `pulse (bpm)`.
    public var yLabel: String
    /// Width of the drawing in SVG units (CSS pixels at 100 %).
    public var width = 760.0
    /// Height of the drawing.
    public var height = 260.0
    /// The x range; nil fits the data.
    public var xRange: ClosedRange<Double>?
    /// The y range; nil fits the data.
    public var yRange: ClosedRange<Double>?
    /// How x ticks read.
    public var xFormat = AxisFormat.number
    /// Category names for bars (x) ; when set, the x axis is categorical.
    public var categories: [String]?
    /// Row names of a timeline (y); when set, the y axis is categorical and spans use their `lane`.
    public var lanes: [String]?
    /// What is drawn, back to front.
    public var layers: [PlotLayer] = []

    /// Creates an empty plot.
    public init(title: String, xLabel: String, yLabel: String) {
        self.title = title
        self.xLabel = xLabel
        self.yLabel = yLabel
    }

    // MARK: Geometry

    private var left: Double { lanes == nil ? 58 : 130 }
    private let right = 16.0
    private var top: Double { legendFitsBesideTitle ? 34 : 52 }
    private var bottom: Double { categories == nil ? 44 : 64 }
    private var plotWidth: Double { max(width - left - right, 10) }
    private var plotHeight: Double { max(height - top - bottom, 10) }

    /// The x values the data spans.
    private func dataX() -> [Double] {
        layers.flatMap { layer -> [Double] in
            switch layer {
            case .line(_, _, let points, _), .scatter(_, _, let points): points.filter { $0.y != nil }.map(\.x)
            case .band(_, _, let points): points.map(\.x)
            case .spans(let spans, _): spans.flatMap { [$0.start, $0.end] }
            case .marks(_, _, let xs): xs
            case .horizontal, .bars: []
            }
        }.filter(\.isFinite)
    }

    /// The y values the data spans.
    private func dataY() -> [Double] {
        layers.flatMap { layer -> [Double] in
            switch layer {
            case .line(_, _, let points, _), .scatter(_, _, let points): points.compactMap(\.y)
            case .band(_, _, let points): points.flatMap { [$0.low, $0.high] }
            case .horizontal(_, _, let y, _): [y]
            case .bars(_, _, let values, _, _): values.compactMap { $0 } + [0]
            case .spans, .marks: []
            }
        }.filter(\.isFinite)
    }

    /// The scales the plot will use.
    public func scales() -> (x: NiceScale, y: NiceScale) {
        let xs = dataX(), ys = dataY()
        let x: NiceScale
        if let xRange {
            x = NiceScale(exactLow: xRange.lowerBound, high: xRange.upperBound, ticks: 7)
        } else {
            x = NiceScale(low: xs.min() ?? 0, high: xs.max() ?? 1, ticks: 7)
        }
        let y: NiceScale
        if let yRange {
            y = NiceScale(low: yRange.lowerBound, high: yRange.upperBound, ticks: 5)
        } else {
            y = NiceScale(low: ys.min() ?? 0, high: ys.max() ?? 1, ticks: 5)
        }
        return (x, y)
    }

    // MARK: Output

    /// The plot as an `<svg>` element (no XML prolog), with `role="img"` and a title for screen readers.
    public func svg() -> String {
        // The geometry once: the top margin depends on the legend, which walks every layer (and every span), and
        // the coordinate functions below run per point.
        let top = self.top, plotHeight = self.plotHeight, left = self.left, plotWidth = self.plotWidth
        let (xs, ys) = scales()
        let xScale = xs  // `xs` is also the marks' own list below
        let xSpan = categories.map { Double(max($0.count, 1)) } ?? (xs.upper - xs.lower)
        let xLow = categories == nil ? xs.lower : 0
        let ySpan = lanes.map { Double(max($0.count, 1)) } ?? (ys.upper - ys.lower)
        func px(_ x: Double) -> Double { left + (x - xLow) / max(xSpan, 1e-12) * plotWidth }
        func py(_ y: Double) -> Double { top + plotHeight - (y - ys.lower) / max(ySpan, 1e-12) * plotHeight }
        func laneTop(_ lane: Int) -> Double { top + Double(lane) / max(ySpan, 1) * plotHeight }
        let laneHeight = plotHeight / max(ySpan, 1)

        var out = "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"plot\" viewBox=\"0 0 \(f(width)) \(f(height))\" "
            + "role=\"img\" aria-label=\"\(escape(title))\"><title>\(escape(title))</title>"
        out += "<text class=\"title\" x=\"\(f(left))\" y=\"18\">\(escape(title))</text>"
        // Grid and ticks.
        out += "<g class=\"grid\">"
        if let lanes {
            for (index, name) in lanes.enumerated() {
                let y = laneTop(index) + laneHeight / 2
                out += "<text class=\"tick\" x=\"\(f(left - 6))\" y=\"\(f(y + 4))\" text-anchor=\"end\">\(escape(name))</text>"
            }
        } else {
            for tick in ys.ticks {
                let y = py(tick)
                out += "<line x1=\"\(f(left))\" x2=\"\(f(left + plotWidth))\" y1=\"\(f(y))\" y2=\"\(f(y))\"/>"
                out += "<text class=\"tick\" x=\"\(f(left - 6))\" y=\"\(f(y + 4))\" text-anchor=\"end\">\(ys.label(tick))</text>"
            }
        }
        if let categories {
            for (index, name) in categories.enumerated() {
                let x = px(Double(index) + 0.5)
                out += "<text class=\"tick\" x=\"\(f(x))\" y=\"\(f(top + plotHeight + 16))\" text-anchor=\"end\" "
                    + "transform=\"rotate(-30 \(f(x)) \(f(top + plotHeight + 16)))\">\(escape(name))</text>"
            }
        } else {
            for tick in xs.ticks {
                let x = px(tick)
                out += "<line x1=\"\(f(x))\" x2=\"\(f(x))\" y1=\"\(f(top))\" y2=\"\(f(top + plotHeight))\"/>"
                out += "<text class=\"tick\" x=\"\(f(x))\" y=\"\(f(top + plotHeight + 16))\" text-anchor=\"middle\">"
                    + "\(xLabelText(tick, xs))</text>"
            }
        }
        out += "</g>"
        // Layers, clipped to the plot area.
        let clip = "c" + String(stableHash(title + xLabel + yLabel + "\(layers.count)"), radix: 36)
        out += "<clipPath id=\"\(clip)\"><rect x=\"\(f(left))\" y=\"\(f(top))\" width=\"\(f(plotWidth))\" "
            + "height=\"\(f(plotHeight))\"/></clipPath><g clip-path=\"url(#\(clip))\">"
        for layer in layers {
            switch layer {
            case .spans(let spans, let lane):
                for span in spans where span.end > span.start {
                    let x0 = px(span.start), x1 = px(span.end)
                    let (y, h) = lane.map { (laneTop($0) + 2, laneHeight - 4) } ?? (top, plotHeight)
                    out += "<rect class=\"span \(span.color.rawValue)\(lane == nil ? " back" : "")\" x=\"\(f(x0))\" "
                        + "y=\"\(f(y))\" width=\"\(f(max(x1 - x0, 0.5)))\" height=\"\(f(h))\"><title>"
                        + "\(escape(span.label)): \(xLabelText(span.start, xs))–\(xLabelText(span.end, xs))</title></rect>"
                }
            case .band(let label, let color, let points):
                for matching in Self.bandRuns(points) where matching.count >= 2 {
                    let upper = matching.map { "\(f(px($0.x))),\(f(py($0.high)))" }
                    let lower = matching.reversed().map { "\(f(px($0.x))),\(f(py($0.low)))" }
                    out += "<polygon class=\"band \(color.rawValue)\" points=\"\((upper + lower).joined(separator: " "))\">"
                        + "<title>\(escape(label))</title></polygon>"
                }
            case .line(let label, let color, let points, let dashed):
                for run in Self.runs(points) where !run.isEmpty {
                    let d = run.enumerated().map { index, p in
                        "\(index == 0 ? "M" : "L")\(f(px(p.x))),\(f(py(p.y ?? 0)))"
                    }.joined()
                    out += "<path class=\"line \(color.rawValue)\(dashed ? " dashed" : "")\" d=\"\(d)\"><title>"
                        + "\(escape(label))</title></path>"
                    if run.count == 1, let p = run.first, let y = p.y {
                        out += "<circle class=\"dot \(color.rawValue)\" cx=\"\(f(px(p.x)))\" cy=\"\(f(py(y)))\" r=\"2\"/>"
                    }
                }
            case .scatter(let label, let color, let points):
                out += "<g class=\"dots \(color.rawValue)\"><title>\(escape(label))</title>"
                for p in points {
                    guard let y = p.y, p.x.isFinite, y.isFinite else { continue }
                    out += "<circle cx=\"\(f(px(p.x)))\" cy=\"\(f(py(y)))\" r=\"3\"/>"
                }
                out += "</g>"
            case .horizontal(let label, let color, let y, let dashed):
                guard y.isFinite else { continue }
                out += "<line class=\"line \(color.rawValue)\(dashed ? " dashed" : "")\" x1=\"\(f(left))\" "
                    + "x2=\"\(f(left + plotWidth))\" y1=\"\(f(py(y)))\" y2=\"\(f(py(y)))\"><title>\(escape(label))</title></line>"
                out += "<text class=\"note\" x=\"\(f(left + plotWidth - 4))\" y=\"\(f(py(y) - 4))\" text-anchor=\"end\">"
                    + "\(escape(label))</text>"
            case .marks(let label, let color, let xs):
                for x in xs where x.isFinite {
                    out += "<line class=\"mark \(color.rawValue)\" x1=\"\(f(px(x)))\" x2=\"\(f(px(x)))\" y1=\"\(f(top))\" "
                        + "y2=\"\(f(top + plotHeight))\"><title>\(escape(label)) at \(xLabelText(x, xScale))</title></line>"
                }
            case .bars(let label, let color, let values, let group, let groups):
                let slot = 0.8 / Double(max(groups, 1))
                for (index, value) in values.enumerated() {
                    guard let value, value.isFinite else { continue }
                    let x0 = px(Double(index) + 0.1 + Double(group) * slot)
                    let x1 = px(Double(index) + 0.1 + Double(group + 1) * slot)
                    let y0 = py(max(value, 0)), y1 = py(min(value, 0))
                    out += "<rect class=\"bar \(color.rawValue)\" x=\"\(f(x0))\" y=\"\(f(y0))\" width=\"\(f(max(x1 - x0 - 1, 1)))\" "
                        + "height=\"\(f(max(y1 - y0, 0.5)))\"><title>\(escape(label)): \(ys.label(value))</title></rect>"
                }
            }
        }
        out += "</g>"
        // Axes and their labels.
        out += "<g class=\"axis\"><line x1=\"\(f(left))\" x2=\"\(f(left + plotWidth))\" y1=\"\(f(top + plotHeight))\" "
            + "y2=\"\(f(top + plotHeight))\"/><line x1=\"\(f(left))\" x2=\"\(f(left))\" y1=\"\(f(top))\" "
            + "y2=\"\(f(top + plotHeight))\"/></g>"
        out += "<text class=\"label\" x=\"\(f(left + plotWidth / 2))\" y=\"\(f(height - 6))\" text-anchor=\"middle\">"
            + "\(escape(xLabel))</text>"
        if lanes == nil {
            out += "<text class=\"label\" transform=\"translate(14 \(f(top + plotHeight / 2))) rotate(-90)\" "
                + "text-anchor=\"middle\">\(escape(yLabel))</text>"
        }
        out += legend()
        return out + "</svg>"
    }

    /// The legend's entries: label, colour, swatch kind.
    private func legendEntries() -> [(String, PlotColor, String)] {
        var entries: [(String, PlotColor, String)] = []
        func add(_ label: String, _ color: PlotColor, _ kind: String) {
            if !label.isEmpty, !entries.contains(where: { $0.0 == label && $0.1 == color }) { entries.append((label, color, kind)) }
        }
        for layer in layers {
            switch layer {
            case .line(let label, let color, _, let dashed): add(label, color, dashed ? "dashed" : "line")
            case .band(let label, let color, _): add(label, color, "band")
            case .spans(let spans, _): for span in spans { add(span.label, span.color, "span") }
            case .scatter(let label, let color, _): add(label, color, "dot")
            case .marks(let label, let color, let xs): if !xs.isEmpty { add(label, color, "mark") }
            case .bars(let label, let color, _, _, let groups): if groups > 1 { add(label, color, "span") }
            case .horizontal: break
            }
        }
        return entries
    }

    /// The legend's width in SVG units (an estimate from the labels' lengths).
    private var legendWidth: Double {
        legendEntries().reduce(0) { $0 + Double($1.0.count) * 6.2 + 28 }
    }

    /// Whether the legend fits on the title's line; else it gets a line of its own below the title.
    private var legendFitsBesideTitle: Bool {
        58 + Double(title.count) * 7.6 + 16 + legendWidth <= width - right
    }

    /// The legend: one swatch per labelled layer (and per span label), right-aligned above the plot.
    private func legend() -> String {
        let entries = legendEntries()
        guard !entries.isEmpty else { return "" }
        var x = width - right
        let row = legendFitsBesideTitle ? 0.0 : 18
        var out = "<g class=\"legend\"\(row > 0 ? " transform=\"translate(0 \(f(row)))\"" : "")>"
        for (label, color, kind) in entries.reversed() {
            let textWidth = Double(label.count) * 6.2
            x -= textWidth
            out += "<text class=\"tick\" x=\"\(f(x))\" y=\"18\">\(escape(label))</text>"
            x -= 16
            switch kind {
            case "line", "dashed":
                out += "<line class=\"line \(color.rawValue)\(kind == "dashed" ? " dashed" : "")\" x1=\"\(f(x))\" "
                    + "x2=\"\(f(x + 12))\" y1=\"14\" y2=\"14\"/>"
            case "dot": out += "<circle class=\"dot \(color.rawValue)\" cx=\"\(f(x + 6))\" cy=\"14\" r=\"3\"/>"
            case "mark": out += "<line class=\"mark \(color.rawValue)\" x1=\"\(f(x + 6))\" x2=\"\(f(x + 6))\" y1=\"8\" y2=\"20\"/>"
            default: out += "<rect class=\"\(kind == "band" ? "band" : "span") \(color.rawValue)\" x=\"\(f(x))\" y=\"9\" width=\"12\" height=\"10\"/>"
            }
            x -= 12
        }
        return out + "</g>"
    }

    private func xLabelText(_ value: Double, _ scale: NiceScale) -> String {
        switch xFormat {
        case .number: return scale.label(value)
        case .clock:
            let total = Int(value.rounded())
            let sign = total < 0 ? "-" : ""
            let magnitude = abs(total)
            return "\(sign)\(magnitude / 60):" + String(format: "%02d", magnitude % 60)
        }
    }

    /// Runs of consecutive band points with finite edges.
    static func bandRuns(_ points: [BandPoint]) -> [[BandPoint]] {
        var result: [[BandPoint]] = [[]]
        for point in points {
            if point.x.isFinite, point.low.isFinite, point.high.isFinite {
                result[result.count - 1].append(point)
            } else if !(result.last?.isEmpty ?? true) {
                result.append([])
            }
        }
        return result.filter { !$0.isEmpty }
    }

    /// Runs of consecutive points with a value (a nil `y` or a non-finite number ends a run).
    static func runs(_ points: [PlotPoint]) -> [[PlotPoint]] {
        var result: [[PlotPoint]] = [[]]
        for point in points {
            if let y = point.y, y.isFinite, point.x.isFinite {
                result[result.count - 1].append(point)
            } else if !(result.last?.isEmpty ?? true) {
                result.append([])
            }
        }
        return result.filter { !$0.isEmpty }
    }
}

/// FNV-1a of the text: a hash that is the same in every process (Swift's `hashValue` is seeded per process).
func stableHash(_ text: String) -> UInt64 {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in text.utf8 {
        hash ^= UInt64(byte)
        hash = hash &* 0x100_0000_01b3
    }
    return hash
}

/// A number for SVG: at most two decimals, no exponent.
func f(_ value: Double) -> String {
    guard value.isFinite else { return "0" }
    let rounded = (value * 100).rounded() / 100
    // Whole numbers past 1e15 (a wall-clock time in a bad file, say) are printed as such: Int would trap past 2^63.
    if rounded == rounded.rounded() { return abs(rounded) < 1e15 ? String(Int(rounded)) : String(format: "%.0f", rounded) }
    return String(format: "%.2f", rounded)
}

/// Text escaped for XML and HTML (both element content and attribute values).
public func escape(_ text: String) -> String {
    var out = ""
    out.reserveCapacity(text.count)
    for character in text {
        switch character {
        case "&": out += "&amp;"
        case "<": out += "&lt;"
        case ">": out += "&gt;"
        case "\"": out += "&quot;"
        case "'": out += "&#39;"
        default: out.append(character)
        }
    }
    return out
}

/// The style sheet plots need: colours for light and dark (`prefers-color-scheme`), lines, bands, text.
public enum PlotStyle {
    /// CSS for plots, to include once in a page (or inside a standalone SVG).
    public static let css = """
    :root{--fg:#1d2430;--muted:#5b6677;--grid:#e3e7ee;--bg:#ffffff;--panel:#f6f8fb;
    --estimate:#1f6fd1;--reference:#d2462b;--secondary:#7a4fc9;--tertiary:#128a7a;
    --good:#2e9e4f;--caution:#d99a00;--bad:#d13b3b;--neutral:#8a94a6}
    @media (prefers-color-scheme: dark){:root{--fg:#e6e9ef;--muted:#9aa5b8;--grid:#2c3340;--bg:#14181f;--panel:#1b212b;
    --estimate:#6aa8ff;--reference:#ff8a6b;--secondary:#b798ff;--tertiary:#4fd1bd;
    --good:#5cd37e;--caution:#f2c14e;--bad:#ff6b6b;--neutral:#7d889b}}
    svg.plot{width:100%;height:auto;display:block;font:12px system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;fill:var(--fg)}
    svg.plot .title{font-weight:600;font-size:13px}
    svg.plot .tick,svg.plot .note{fill:var(--muted);font-size:11px}
    svg.plot .label{fill:var(--fg);font-size:12px}
    svg.plot .grid line{stroke:var(--grid);stroke-width:1}
    svg.plot .axis line{stroke:var(--muted);stroke-width:1}
    svg.plot .line{fill:none;stroke-width:1.8;stroke-linejoin:round}
    svg.plot .dashed{stroke-dasharray:5 4}
    svg.plot .mark{stroke-width:1.5;stroke-dasharray:2 3}
    svg.plot .band{stroke:none;fill-opacity:.22}
    svg.plot .span{fill-opacity:.55}
    svg.plot .span.back{fill-opacity:.12}
    svg.plot .bar{fill-opacity:.85}
    svg.plot .dots{fill-opacity:.7}
    """ + PlotColor.allCases.map { color in
        "svg.plot .\(color.rawValue){stroke:var(--\(color.rawValue));fill:var(--\(color.rawValue))}"
    }.joined(separator: "\n") + "\nsvg.plot .line{fill:none}svg.plot .dots{stroke:none}svg.plot .band,svg.plot .span,svg.plot .bar{stroke:none}\n"
}
