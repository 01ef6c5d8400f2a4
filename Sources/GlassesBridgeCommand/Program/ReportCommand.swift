import CommandSupport
import Foundation
import GlassesMedia
import GlassesBridge
import GlassesReport

/// `glasses-bridge report` and `--report`: reads a run's NDJSON and writes its HTML page.
enum ReportCommand {
    /// Builds the page the options describe; returns the exit code (65 for input problems, 73 for the page).
    static func run(_ options: ReportOptions) -> BridgeExitCode {
        if let problem = OutputPathCheck.problem(writing: options.outputPath) {
            printError("glasses-bridge report: error: cannot write -o \(options.outputPath): \(problem).")
            return .cannotWriteOutput
        }
        do {
            let text = try read(options.inputPath, what: "the run")
            let run = try RunRecord.parse(ndjson: text, name: options.inputPath)
            if let version = run.schemaVersion, version == MultiDeviceNDJSONFormatter.schemaVersion {
                // Its lines belong to several devices: one page of them would mix their vitals and counters.
                printError("glasses-bridge report: error: \(options.inputPath) is a run of several devices (schemaVersion "
                    + "\(version)); a report shows one device's run: save each device's run on its own (one --device).")
                return .dataError
            }
            if let version = run.schemaVersion, version > MultiDeviceNDJSONFormatter.schemaVersion {
                // Newer kinds of line are skipped, so a newer run is read as far as this report understands it.
                printError("glasses-bridge report: warning: \(options.inputPath) was written by a newer glasses-bridge (schemaVersion "
                    + "\(version)); what this report does not know is left out.")
            }
            let reference = try comparison(options, run: run)
            var context = ReportContext()
            context.input = options.inputPath
            context.generator = BridgeHelp.version + " report"
            context.tracesEnd = options.tracesAt
            let html = RunReport(run: run, reference: reference, context: context).html()
            return write(html, to: options.outputPath, flag: "-o")
        } catch {
            printError("glasses-bridge report: error: \(error.message)")
            return .dataError
        }
    }

    /// The truth or reference the options name, read and put on the run's clock.
    static func comparison(_ options: ReportOptions, run: RunRecord) throws(ReportError) -> ReferenceSeries? {
        let path: String
        let kind: ReferenceSeries.Kind
        if let truth = options.truthPath {
            (path, kind) = (truth, .truth)
        } else if let reference = options.referencePath {
            (path, kind) = (reference, .reference)
        } else {
            return nil
        }
        let text = try read(path, what: kind == .truth ? "--truth" : "--reference")
        return try ReferenceReader.parse(text, name: path, kind: kind, runStart: options.runStart ?? run.startedAt,
                                         run: 0...max(run.endTime, 0))
    }

    /// The largest run file read: about 40 hours of a run's NDJSON at the default rates.
    static let maximumRunBytes = 1 << 30

    /// A file's text (a run at most ``maximumRunBytes``, a truth or reference at most
    /// `ReferenceReader.maximumBytes`); UTF-8 is required. Pipes work too (`report <(zcat run.ndjson.gz)`).
    static func read(_ path: String, what: String) throws(ReportError) -> String {
        let data: Data
        do {
            data = try InputFileReader.read(path, limit: what == "the run" ? maximumRunBytes : ReferenceReader.maximumBytes)
        } catch {
            throw ReportError(error.code == .tooLarge ? .malformedInput : .unreadable, "cannot read \(what) \(path): \(error.reason).")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw ReportError(.malformedInput, "\(path) is not UTF-8 text.")
        }
        return text
    }

    /// Writes the page (atomically, so a reader never sees half of it); 73 when it cannot.
    static func write(_ html: String, to path: String, flag: String) -> BridgeExitCode {
        guard let problem = writeProblem(html, to: path, flag: flag) else { return .success }
        printError("glasses-bridge: error: \(problem)")
        return .cannotWriteOutput
    }

    /// Writes `text` to `path`; why it could not be written (`cannot write FLAG PATH: REASON.`), else nil.
    static func writeProblem(_ text: String, to path: String, flag: String) -> String? {
        do {
            try OutputFileWriter.write(Data(text.utf8), to: path)
            return nil
        } catch {
            let reason = OutputPathCheck.problem(writing: path) ?? FileErrorText.reason(error)
            return "cannot write \(flag) \(path): \(reason)."
        }
    }

    static func printError(_ message: String) {
        ConsoleText.standardError((message + "\n"))
    }
}
