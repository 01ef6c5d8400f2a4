import CommandSupport
import Foundation
import GlassesBridge
import GlassesReport

extension ReferenceRecording {
    /// Reads `check --reference`: a chest strap's recording, with the report's reader, on the wall clock.
    /// - Throws: ``ReferenceError``: `unreadable` when the file cannot be read, `invalid` when its content is not a
    ///   wall-clock heart-rate recording (the reader's message, with its line) or it is too large.
    static func load(contentsOf path: String) throws(ReferenceError) -> ReferenceRecording {
        let data: Data
        do {
            data = try InputFileReader.read(path, limit: ReferenceReader.maximumBytes)
        } catch {
            throw ReferenceError(code: error.code == .tooLarge ? .invalid : .unreadable, message: "\(path) cannot be read: \(error.reason)")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw ReferenceError(code: .invalid, message: "\(path) is not UTF-8 text")
        }
        return try read(text, source: path)
    }

    /// Reads a recording's text (CSV or NDJSON) as `check` needs it: wall-clock times, and a heart rate (given, or
    /// from the RR intervals) at each reading kept.
    static func read(_ text: String, source: String) throws(ReferenceError) -> ReferenceRecording {
        let series: ReferenceSeries
        do {
            // Put on a clock that starts at the Unix epoch, so that each time is its Unix time.
            series = try ReferenceReader.parse(text, name: source, kind: .reference, runStart: Date(timeIntervalSince1970: 0), run: nil)
        } catch {
            throw ReferenceError(code: .invalid, message: error.message.hasSuffix(".") ? String(error.message.dropLast()) : error.message)
        }
        guard !series.samples.isEmpty else { throw ReferenceError(code: .invalid, message: "\(source): no readings") }
        guard series.wallClock else {
            throw ReferenceError(code: .invalid, message: "\(source): its times are seconds from a start, not wall-clock times; "
                + "check lines a reference up with the run by the wall clock: ISO 8601 (2026-12-01T12:00:00Z) or Unix time, as loggers export it")
        }
        let samples = series.samples.compactMap { sample in
            sample.pulseRate.map { Sample(time: Date(timeIntervalSince1970: sample.t), heartRate: $0, rrIntervalsMs: sample.rrIntervals) }
        }
        guard !samples.isEmpty else {
            throw ReferenceError(code: .invalid, message: "\(source): no heart rate and no RR intervals (\(series.columnsUsed))")
        }
        return ReferenceRecording(samples: samples, columnsUsed: series.columnsUsed, source: source)
    }
}
