import CommandSupport
import Foundation
import GlassesBridge

/// What `glasses-bridge report` is told: a saved NDJSON run, an optional truth or reference, the page to write.
package struct ReportOptions: Sendable, Hashable {
    /// The bridge's NDJSON output of a run (`--format ndjson`).
    package var inputPath = ""
    /// The simulator's truth export (`--truth`): the bridge's `--truth-out` or `glasses-sim --truth`.
    package var truthPath: String?
    /// A reference recording (`--reference`): a chest strap's CSV or NDJSON.
    package var referencePath: String?
    /// The wall-clock time the run began (`--run-start`), for references with wall-clock times.
    package var runStart: Date?
    /// Where the trace windows end, in seconds of the run (`--traces-at`); nil: the run's last seconds.
    package var tracesAt: Double?
    /// Where the page goes (`--output`, `-o`).
    package var outputPath = ""

    /// Creates empty options.
    package init() {}
}

/// The parse of `glasses-bridge report` in progress.
struct ReportParse: Sendable {
    var options = ReportOptions()
    var output: String?
    var help = false
}

extension BridgeCommand {
    /// Every option of `glasses-bridge report`, declared once, in the order `report --help` lists them.
    static let reportOptions = OptionTable<ReportParse>([
        .setting("--truth", argument: .path("FILE")) { state, value in state.options.truthPath = value },
        .setting("--reference", argument: .path("FILE")) { state, value in state.options.referencePath = value },
        .setting("--run-start", argument: .value("TIME")) { state, value in
            let value = value ?? ""
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            let plain = ISO8601DateFormatter()
            guard let date = formatter.date(from: value) ?? plain.date(from: value) else {
                throw BridgeUsageError("invalid --run-start '\(value)': give an ISO 8601 time with its zone, e.g. 2026-12-01T17:46:23Z.")
            }
            state.options.runStart = date
        },
        .setting("--traces-at", argument: .value("SECONDS")) { state, value in
            let value = value ?? ""
            guard let seconds = DecimalArgument.parse(value), seconds > 0, seconds <= 1e9 else {
                throw BridgeUsageError("invalid --traces-at '\(value)': give the second of the run the trace windows end at (up to 1e9), e.g. 45.")
            }
            state.options.tracesAt = seconds
        },
        .setting("--output", "-o", argument: .path("PAGE")) { state, value in state.output = value },
        OptionDeclaration("--help", "-h") { state, _ in
            state.help = true
            return .stop
        },
    ])

    /// Parses `glasses-bridge report RUN.ndjson [--truth FILE | --reference FILE] -o PAGE.html`.
    static func parseReport(_ parser: inout ArgumentCursor) throws(BridgeUsageError) -> BridgeCommand {
        var state = ReportParse()
        if try reportOptions.parse(&parser, into: &state, unknown: {
            unknownOptionMessage($0, known: reportOptions.longNames, command: "report")
        }), state.help {
            return .help(topic: "report")
        }
        var options = state.options
        let output = state.output
        guard let input = parser.strayPositional else {
            throw BridgeUsageError("report needs the run's NDJSON file: glasses-bridge report run.ndjson -o run.html.")
        }
        if parser.positionals.count > 1 {
            throw BridgeUsageError("report reads one run, and got \(parser.positionals.count) files ('\(parser.positionals[0])', '\(parser.positionals[1])'): make one page per run.")
        }
        guard let output else {
            throw BridgeUsageError("report needs -o PAGE.html: where to write the page.")
        }
        if options.truthPath != nil, options.referencePath != nil {
            throw BridgeUsageError("--truth and --reference are two kinds of comparison: give one.")
        }
        if OutputPathCheck.sameFile(output, input) {
            throw BridgeUsageError("-o \(output) would overwrite the run it reads: name another file.")
        }
        for (option, path) in [("--truth", options.truthPath), ("--reference", options.referencePath)] {
            if let path, OutputPathCheck.sameFile(output, path) {
                throw BridgeUsageError("-o \(output) would overwrite the \(option) file it reads: name another file.")
            }
        }
        options.inputPath = input
        options.outputPath = output
        return .report(options)
    }
}

extension BridgeHelp {
    /// The help text of `glasses-bridge report`.
    package static let report = """
    glasses-bridge report: one HTML page from a saved run, to look at rather than read.

    It reads the bridge's NDJSON (--format ndjson) and writes one self-contained page (inline SVG and
    CSS, no scripts, nothing fetched; opens offline, light or dark, prints on A4): pulse, breathing and
    HRV over time with confidence bands and stable spans, the truth or reference on the same axes, the
    pulse wave and breathing traces, MAE, RMSE, bias, share within 3 and 5 bpm and Bland-Altman plots,
    the validation timeline with hints, frames per second, drops, rejections, restarts, reconnects and
    stalls, latency (when the stats lines carry it), and the run's settings and source.
    A simulated run carries its own truth (the stats lines' truth); --truth or --reference replaces it.

    USAGE
      glasses-bridge report RUN.ndjson [--truth FILE | --reference FILE] [--traces-at S] -o PAGE.html

    OPTIONS
      --truth FILE          the simulator's truth: glasses-bridge --truth-out or glasses-sim --truth
                            (.csv or .ndjson; keys pulseRate, breathingRate, hrvRmssd; time t or time_s)
      --reference FILE      a reference recording (chest strap): CSV or NDJSON with a time column
                            (seconds since the run began, or wall-clock ISO 8601 / Unix time), heart
                            rate (hr, heartRate, bpm, pulseRate) and optional RR intervals (rr, rr_ms);
                            the columns are listed in docs/REPORT.md
      --run-start TIME      when the run began (ISO 8601 with zone), for wall-clock references when the
                            run's start line has no startedAt
      --traces-at SECONDS   end the pulse-wave (12 s) and breathing (40 s) windows there (default: the
                            run's last seconds)
      --output PAGE, -o     where to write the page (.html)

    EXAMPLES
      glasses-bridge --no-realtime --duration 90 --format ndjson -o run.ndjson --truth-out truth.csv
      glasses-bridge report run.ndjson --truth truth.csv -o run.html
      glasses-bridge report worn.ndjson --reference polar.csv -o worn.html
      glasses-bridge --duration 120 --report run.html      (the page is written when the run ends, also
                                                            after Ctrl-C)

    EXIT CODES
      0 written, 64 usage error, 65 an input that cannot be read or has a malformed line (named with
      its number), or a reference that does not overlap the run, 73 the page cannot be written
    """
}
