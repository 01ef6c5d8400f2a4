import Foundation
@testable import GlassesBridge
import SmartSpectraInput
import Testing

/// The live status line: width, unstable marks, time, position and speed, and `--quiet` / `--verbose`.
@Suite("Live line and verbosity")
struct LiveLineTests {
    static func stats() -> BridgeStats {
        var stats = BridgeStats()
        stats.framesPerSecondIn = 24
        stats.framesPerSecondOut = 23.9
        return stats
    }

    static func context(width: Int, verbosity: Verbosity = .normal, file: Double? = nil) -> OutputContext {
        var context = OutputContext()
        context.liveTerminal = true
        context.width = width
        context.verbosity = verbosity
        if let file {
            context.isFile = true
            context.fileDuration = file
        }
        // A wall clock that advances 1 s for every call, so speed is fixed.
        let ticks = TickClock()
        context.wallClock = { ticks.next() }
        return context
    }

    /// What is visible after the last carriage return: the live line as the terminal shows it.
    static func visibleLine(_ output: String) -> String {
        let last = output.split(separator: "\r", omittingEmptySubsequences: false).last.map(String.init) ?? output
        return last.replacingOccurrences(of: "\u{1B}[2K", with: "")
    }

    static func payload(pulse: Float, stable: Bool) -> Metrics {
        var metrics = Metrics()
        var cardio = Cardio()
        cardio.pulseRate = [MeasurementWithConfidence(value: pulse, stable: stable, confidence: 50, timestamp: 1_000_000)]
        metrics.cardio = cardio
        return metrics
    }

    @Test(arguments: [40, 60, 80, 100, 132, 200])
    func theLiveLineFitsTheWidthAndNeverHoldsANewline(width: Int) {
        var formatter = TextEventFormatter(context: Self.context(width: width))
        _ = formatter.format(.state(.streaming, detail: nil), at: 0)
        _ = formatter.format(.validation(ValidationStatus(code: .tooDark)), at: 1)
        let truth = VitalsSnapshot(pulseRate: 72.4, breathingRate: 15.1, hrvRmssd: 41.2)
        let output = formatter.format(
            .stats(Self.stats(), vitals: VitalsSnapshot(pulseRate: 71.2, breathingRate: 14.8, hrvRmssd: 39.9), truth: truth),
            at: 12
        )
        #expect(!output.contains("\n"))
        let line = Self.visibleLine(output)
        #expect(line.count <= width - 1, "\(line.count) columns at width \(width): \(line)")
        #expect(line.hasPrefix("streaming"))
        if width >= 80 { #expect(line.contains("pulse 71? bpm") || line.contains("pulse 71?")) }
    }

    @Test func unstableValuesAreMarkedAndStableOnesAreNot() {
        var formatter = TextEventFormatter(context: Self.context(width: 200))
        _ = formatter.format(.metrics(Self.payload(pulse: 70, stable: false), json: "{}"), at: 5)
        var line = Self.visibleLine(formatter.format(.stats(Self.stats(), vitals: VitalsSnapshot(pulseRate: 70), truth: nil), at: 5))
        #expect(line.contains("pulse 70? bpm"), "\(line)")
        #expect(line.contains("breathing -- /min"))
        _ = formatter.format(.metrics(Self.payload(pulse: 71, stable: true), json: "{}"), at: 6)
        line = Self.visibleLine(formatter.format(.stats(Self.stats(), vitals: VitalsSnapshot(pulseRate: 71), truth: nil), at: 6))
        #expect(line.contains("pulse 71 bpm"), "\(line)")
    }

    @Test func elapsedTimeAndForAFilePositionDurationAndSpeed() {
        var live = TextEventFormatter(context: Self.context(width: 120))
        let sim = Self.visibleLine(live.format(.stats(Self.stats(), vitals: .init(), truth: nil), at: 75))
        #expect(sim.contains("1:15"), "\(sim)")
        var file = TextEventFormatter(context: Self.context(width: 120, file: 600))
        _ = file.format(.state(.streaming, detail: nil), at: 0)   // wall clock starts: tick 1
        let line = Self.visibleLine(file.format(.stats(Self.stats(), vitals: .init(), truth: nil), at: 6))
        // 6 s of the file in 1 s of wall time (the clock ticks once more for the speed).
        #expect(line.contains("time=0:06/10:00"), "\(line)")
        #expect(line.contains("speed=6.0x"), "\(line)")
        let narrow = Self.visibleLine(file.format(.stats(Self.stats(), vitals: .init(), truth: nil), at: 7))
        #expect(narrow.contains("time=0:07/10:00"))
    }

    @Test("a device's words reach the terminal without their control characters (no escape sequence of its own)")
    func deviceTextIsMadePrintable() {
        var plain = TextEventFormatter(context: Self.context(width: 80, verbosity: .normal))
        let line = plain.format(.error(code: "deviceLost", message: "the device closed the link: \u{1B}[2Jgone\nfor good"), at: 1)
        // The formatter's own escapes (it redraws the live line) come before the stamp; the message has none.
        let message = line.components(separatedBy: "error: ").dropFirst().joined(separator: "error: ")
        #expect(!message.contains("\u{1B}"), "\(line.debugDescription)")
        #expect(message.hasPrefix("the device closed the link: \u{FFFD}[2Jgone for good\n"), "\(line.debugDescription)")
    }

    @Test func quietPrintsOnlyErrorsAndTheSummary() {
        var quiet = TextEventFormatter(context: Self.context(width: 80, verbosity: .quiet))
        #expect(quiet.format(.state(.streaming, detail: nil), at: 0).isEmpty)
        #expect(quiet.format(.notice("source: sim"), at: 0).isEmpty)
        #expect(quiet.format(.warning("--fps 7 gives no trustworthy pulse"), at: 0).isEmpty)
        #expect(quiet.format(.validation(ValidationStatus(code: .tooDark)), at: 0).isEmpty)
        #expect(quiet.format(.stats(Self.stats(), vitals: .init(), truth: nil), at: 1).isEmpty)
        #expect(quiet.format(.error(code: "noFrames", message: "no frame arrived"), at: 2).contains("no frame arrived"))
        #expect(quiet.format(.summary(BridgeSummary()), at: 3).contains("summary"))
    }

    @Test func normalHidesNoticesAndVerboseShowsThemWithStatsLines() {
        var normal = TextEventFormatter(context: Self.context(width: 80))
        #expect(normal.format(.notice("source: sim"), at: 0).isEmpty)
        #expect(normal.format(.warning("careful"), at: 0).contains("warning: careful"))
        var verbose = TextEventFormatter(context: Self.context(width: 80, verbosity: .verbose))
        #expect(verbose.format(.notice("source: sim"), at: 0).contains("source: sim"))
        let withStats = verbose.format(.stats(Self.stats(), vitals: .init(), truth: nil), at: 5)
        #expect(withStats.contains("\n"), "verbose prints a stats line above the live line")
        var plain = OutputContext()
        plain.verbosity = .verbose
        var plainVerbose = TextEventFormatter(context: plain)
        #expect(!plainVerbose.format(.stats(Self.stats(), vitals: .init(), truth: nil), at: 1).isEmpty)
        #expect(!plainVerbose.format(.stats(Self.stats(), vitals: .init(), truth: nil), at: 2).isEmpty)
    }
}

/// A fake wall clock: 1, 2, 3, … seconds, one step per reading.
final class TickClock: @unchecked Sendable {
    // @unchecked Sendable: read from one test thread only.
    private var now = 0.0
    func next() -> Double {
        now += 1
        return now
    }
}
