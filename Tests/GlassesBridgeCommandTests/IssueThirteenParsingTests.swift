import GlassesBridge
@testable import GlassesBridgeCommand
import Testing

/// Parsing rules added for issue 13: the frame-rate table, BGRA `--video-out`, `--quiet`/`--verbose`, the width.
@Suite("Command-line rules of the frame-rate table and outputs")
struct IssueThirteenParsingTests {
    @Test func twoFramesPerSecondWithPulseIsAUsageErrorAndBreathingAloneIsNot() {
        #expect(usageError(["--fps", "2"])?.contains("cannot measure pulse-rate") == true)
        #expect(usageError(["--fps", "2", "--metrics", "cardio"]) != nil)
        #expect(usageError(["--fps", "2", "--metrics", "breathing"]) == nil)
        #expect(usageError(["--fps", "7"]) == nil)
        #expect(usageError(["--fps", "15"]) == nil)
    }

    @Test func bgraVideoOutIntoY4MIsRefusedAtStart() {
        let message = usageError(["--pixel-format", "bgra", "--video-out", "x.y4m"])
        #expect(message?.contains("--video-out cannot keep BGRA") == true)
        #expect(usageError(["--pixel-format", "nv12", "--video-out", "x.y4m"]) == nil)
    }

    @Test func quietAndVerboseAreParsedAndExclusive() throws {
        guard case .run(let quiet) = try BridgeCommand.parse(["--quiet"]) else { Issue.record("no run"); return }
        #expect(quiet.verbosity == .quiet)
        guard case .run(let verbose) = try BridgeCommand.parse(["-v"]) else { Issue.record("no run"); return }
        #expect(verbose.verbosity == .verbose)
        #expect(usageError(["--quiet", "--verbose"])?.contains("contradict") == true)
    }

    @Test func theTerminalWidthComesFromCOLUMNSFirst() {
        #expect(OutputSink.terminalWidth(environment: ["COLUMNS": "57"]) == 57)
        #expect(OutputSink.terminalWidth(environment: ["COLUMNS": "wide"]) > 0)
    }
}
