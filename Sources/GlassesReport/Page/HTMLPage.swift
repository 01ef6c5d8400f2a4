import Foundation

/// A self-contained HTML page: inline CSS and SVG, no scripts, nothing fetched (a Content-Security-Policy says so).
public struct HTMLPage: Sendable {
    /// The page title.
    public var title: String
    /// The body's HTML, already escaped.
    public var body = ""

    /// Creates an empty page.
    public init(title: String) { self.title = title }

    /// Appends raw (already escaped) HTML.
    public mutating func append(_ html: String) { body += html }

    /// A section with a heading.
    public mutating func section(_ heading: String, id: String, _ content: String) {
        body += "<section id=\"\(escape(id))\"><h2>\(escape(heading))</h2>\(content)</section>\n"
    }

    /// A figure holding a plot, with a caption.
    public static func figure(_ plot: SVGPlot, caption: String? = nil) -> String {
        "<figure>\(plot.svg())" + (caption.map { "<figcaption>\(escape($0))</figcaption>" } ?? "") + "</figure>\n"
    }

    /// A table with a header row; cells are escaped.
    public static func table(_ header: [String], _ rows: [[String]], numericFrom: Int = 1) -> String {
        var out = "<table><thead><tr>"
        for (index, cell) in header.enumerated() { out += "<th\(index >= numericFrom ? " class=\"num\"" : "")>\(escape(cell))</th>" }
        out += "</tr></thead><tbody>"
        for row in rows {
            out += "<tr>"
            for (index, cell) in row.enumerated() { out += "<td\(index >= numericFrom ? " class=\"num\"" : "")>\(escape(cell))</td>" }
            out += "</tr>"
        }
        return out + "</tbody></table>\n"
    }

    /// A paragraph of escaped text with a class.
    public static func note(_ text: String, kind: String = "note") -> String {
        "<p class=\"\(escape(kind))\">\(escape(text))</p>\n"
    }

    /// The page's style sheet: plots' colours and the layout, light and dark, screen and print.
    public static let css = PlotStyle.css + """
    *{box-sizing:border-box}
    html{background:var(--bg);color:var(--fg)}
    body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
    main{max-width:1000px;margin:0 auto;padding:20px 24px 40px}
    h1{font-size:22px;margin:0 0 4px}
    h2{font-size:17px;margin:28px 0 8px;padding-bottom:4px;border-bottom:1px solid var(--grid)}
    p{margin:6px 0}
    .sub{color:var(--muted);margin:0 0 12px}
    .cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(150px,1fr));gap:10px;margin:14px 0}
    .card{background:var(--panel);border-radius:8px;padding:10px 12px}
    .card .k{color:var(--muted);font-size:12px}
    .card .v{font-size:20px;font-weight:600}
    .card .u{color:var(--muted);font-size:12px;margin-left:3px}
    .card .why{color:var(--muted);font-size:11px;margin-top:4px}
    figure{margin:10px 0 16px;background:var(--panel);border-radius:8px;padding:8px 10px;break-inside:avoid}
    figcaption{color:var(--muted);font-size:12px;margin-top:2px}
    table{border-collapse:collapse;width:100%;margin:6px 0 12px;font-size:13px;break-inside:avoid}
    th,td{text-align:left;padding:4px 8px;border-bottom:1px solid var(--grid);vertical-align:top}
    th{color:var(--muted);font-weight:600}
    .num{text-align:right;font-variant-numeric:tabular-nums}
    .empty{font-size:18px;font-weight:600;background:var(--panel);border-left:4px solid var(--caution);padding:12px 14px;border-radius:6px}
    .warn{border-left:4px solid var(--caution);padding-left:8px}
    .bad{border-left:4px solid var(--bad);padding-left:8px}
    .note{color:var(--muted)}
    code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px}
    @media print{html{background:#fff}main{max-width:none;padding:0}figure{background:none;border:1px solid #ccc}
    h2{break-after:avoid}}
    @page{size:A4;margin:12mm}
    """

    /// The whole document.
    public func html() -> String {
        """
        <!DOCTYPE html>
        <html lang="en"><head><meta charset="utf-8">
        <meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="color-scheme" content="light dark">
        <title>\(escape(title))</title>
        <style>
        \(Self.css)
        </style></head>
        <body><main>
        \(body)</main></body></html>

        """
    }
}
