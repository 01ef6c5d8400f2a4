import Foundation
import SmartSpectraInput

/// The vitals time series: `time_s,metric,value,confidence,stable`, one row per rate sample.
package struct CSVEventFormatter: BridgeEventFormatter {
    private var tracker: VitalsTracker

    /// Creates the formatter (the events it formats come judged from the pipeline: a vital the frame rate cannot
    /// support is never `stable` in them).
    package init() {
        tracker = VitalsTracker()
    }

    /// The header line.
    package var preamble: String { "time_s,metric,value,confidence,stable\n" }

    /// Rows for a metrics event; nothing for the others.
    package mutating func format(_ event: BridgeEvent, at seconds: Double) -> String {
        guard case .metrics(let metrics, _) = event else { return "" }
        return tracker.ingest(metrics).map { row in
            let confidence = row.confidence.map { String(format: "%.1f", $0) } ?? ""
            return String(format: "%.3f,", row.timeSeconds) + row.metric + "," + String(format: "%.3f", row.value)
                + "," + confidence + "," + (row.stable ? "true" : "false") + "\n"
        }.joined()
    }
}
