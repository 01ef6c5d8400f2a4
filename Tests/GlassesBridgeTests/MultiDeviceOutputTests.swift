import Foundation
@testable import GlassesBridge
import SmartSpectraInput
import Testing

/// The output of several devices: the live block (one line per device, within the width), plain lines and CSV
/// rows named by device, and the built binary with a device that cannot start beside two that can.
@Suite("Several devices: output formats and the binary", .serialized)
struct MultiDeviceOutputTests {
    static let devices = ["sim#1", "sim#2", "tcp:127.0.0.1:7001"].map {
        OutputDevice(label: $0, source: $0.hasPrefix("sim") ? "sim" : $0, simulated: $0.hasPrefix("sim"))
    }

    static func stats(fps: Double, received: Int) -> BridgeStats {
        var stats = BridgeStats()
        stats.framesPerSecondIn = fps
        stats.framesPerSecondOut = fps
        for _ in 0..<received { stats.accounting.recordReceived() }
        return stats
    }

    /// What a terminal shows after `output`: a tiny screen model that knows carriage return, line feed, cursor up
    /// (`ESC[nA`) and erase to the end of the screen (`ESC[J`) or of the line (`ESC[2K`).
    static func screen(_ output: String) -> [String] {
        var rows: [[Character]] = [[]]
        var (row, column) = (0, 0)
        var characters = Array(output)[...]
        while let character = characters.popFirst() {
            switch character {
            case "\r": column = 0
            case "\n":
                row += 1
                column = 0
                if row == rows.count { rows.append([]) }
            case "\u{1B}":
                var sequence = ""
                while let next = characters.popFirst() {
                    sequence.append(next)
                    if next.isLetter { break }
                }
                if sequence.hasSuffix("A") { row = max(0, row - (Int(sequence.dropFirst().dropLast()) ?? 1)) }
                if sequence == "[J" {
                    rows[row] = Array(rows[row].prefix(column))
                    rows.removeSubrange((row + 1)...)
                }
                if sequence == "[2K" { rows[row] = [] }
            default:
                while rows[row].count < column { rows[row].append(" ") }
                if column < rows[row].count { rows[row][column] = character } else { rows[row].append(character) }
                column += 1
            }
        }
        return rows.map { String($0) }.filter { !$0.isEmpty }
    }

    @Test func theLiveViewShowsOneLinePerDeviceWithinTheWidthAndMessagesAboveIt() {
        var context = OutputContext()
        context.liveTerminal = true
        context.width = 100
        var formatter = MultiDeviceTextFormatter(devices: Self.devices, context: context)
        var output = ""
        output += formatter.format(.state(.streaming, detail: nil), device: 0, at: 0.5)
        output += formatter.format(.stats(Self.stats(fps: 24, received: 24), vitals: VitalsSnapshot(pulseRate: 71),
                                          truth: nil), device: 0, at: 1)
        output += formatter.format(.stats(Self.stats(fps: 12, received: 12), vitals: VitalsSnapshot(), truth: nil),
                                   device: 1, at: 1)
        output += formatter.format(.error(code: "noFrames", message: "nothing came"), device: 2, at: 1.5)
        output += formatter.format(.stats(Self.stats(fps: 23, received: 47), vitals: VitalsSnapshot(pulseRate: 72),
                                          truth: nil), device: 0, at: 2)
        let shown = Self.screen(output)
        // Messages stay above, named; the block below has exactly one line per device, in order, each within 99.
        #expect(shown.count == 2 + 3, "\(shown)")
        #expect(shown[0].contains("sim#1: streaming"))
        #expect(shown[1].contains("tcp:127.0.0.1:7001: error: nothing came"))
        let block = Array(shown.suffix(3))
        #expect(block[0].hasPrefix("sim#1 streaming") && block[0].contains("in 23.0 fps"), "\(block[0])")
        #expect(block[1].hasPrefix("sim#2 ") && block[1].contains("in 12.0 fps"), "\(block[1])")
        #expect(block[2] == "tcp:127.0.0.1:7001 idle", "\(block[2])")
        for line in block { #expect(line.count <= 99, "\(line.count) columns: \(line)") }
        // A narrow terminal: still one line per device, each cut to the width (29 of 30 columns), never wrapped.
        var narrowContext = context
        narrowContext.width = 30
        var narrow = MultiDeviceTextFormatter(devices: Self.devices, context: narrowContext)
        var narrowOutput = ""
        for device in 0..<3 {
            narrowOutput += narrow.format(.stats(Self.stats(fps: 24, received: 24), vitals: VitalsSnapshot(pulseRate: 71),
                                                 truth: nil), device: device, at: 1)
        }
        let narrowShown = Self.screen(narrowOutput)
        #expect(narrowShown.count == 3, "\(narrowShown)")
        for line in narrowShown { #expect(line.count <= 29, "\(line.count) columns in 30: \(line)") }
        // The totals clear the block and close the output.
        let end = formatter.totals(MultiDeviceTotals(devices: []), at: 3)
        #expect(Self.screen(output + end).last?.contains("exit 0") == true)
    }

    @Test func plainTextAndCSVNameTheDeviceOfEveryLine() throws {
        let context = OutputContext()
        var text = MultiDeviceTextFormatter(devices: Self.devices, context: context)
        #expect(text.format(.state(.waiting, detail: "link lost"), device: 1, at: 2) == "[     2.0s] sim#2: waiting: link lost\n")
        var summary = BridgeSummary()
        summary.reason = "duration"
        #expect(text.format(.summary(summary), device: 2, at: 3).contains("summary of tcp:127.0.0.1:7001 after"))

        var labelled = Self.devices
        labelled[2].label = "file:a,b.mkv"
        var csv = MultiDeviceCSVFormatter(devices: labelled)
        #expect(csv.preamble == "device,time_s,metric,value,confidence,stable\n")
        var metrics = Metrics()
        metrics.cardio.pulseRate = [MeasurementWithConfidence(value: 70, stable: true, confidence: 90, timestamp: 2_000_000)]
        #expect(csv.format(.metrics(metrics, json: "{}"), device: 1, at: 2) == "sim#2,2.000,pulseRate,70.000,90.0,true\n")
        #expect(csv.format(.metrics(metrics, json: "{}"), device: 2, at: 2).hasPrefix("\"file:a,b.mkv\",2.000,"))
    }

    @Test func theBinaryRunsTwoSimulatorsBesideADeviceThatCannotStartAndExits69() throws {
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent("no-such-\(UUID().uuidString).mkv").path
        let result = try BinaryRunner.run([
            "--device", "sim", "--device", "sim", "--device", "file:\(missing)", "--no-realtime", "--duration", "3",
            "--resolution", "low", "--fps", "15", "--format", "ndjson",
        ])
        #expect(result.status == 69, "stderr: \(result.stderr)")
        #expect(result.stderr.contains("file:\(missing): Cannot read"), "stderr: \(result.stderr)")
        let lines = try result.lines.map { try #require(TestJSON.parse($0), "not JSON: \($0)") }
        #expect(lines.first?["schemaVersion"] == .integer(2))
        let totals = try #require(lines.last)
        #expect(totals["type"]?.string == "totals" && totals["exitCode"] == .integer(69))
        guard case .array(let entries)? = totals["devices"] else {
            Issue.record("totals without devices")
            return
        }
        #expect(entries.compactMap { $0["device"]?.string } == ["sim#1", "sim#2", "file:\(missing)"])
        #expect(entries.compactMap { $0["exitCode"] } == [.integer(0), .integer(0), .integer(69)])
        for entry in entries.prefix(2) {
            if case .integer(let received)? = entry["framesReceived"] { #expect(received >= 15 * 2) } else {
                Issue.record("no framesReceived in \(entry)")
            }
        }
        // The two simulators are two devices with their own seeds: their frames differ, so do their stats lines'
        // truth or counters at some point; at least each one's lines are its own.
        for label in ["sim#1", "sim#2", "file:\(missing)"] {
            #expect(lines.contains { $0["type"]?.string == "summary" && $0["device"]?.string == label }, "no summary of \(label)")
        }
        for (index, line) in lines.enumerated() {
            let kind = try #require(line["type"]?.string)
            #expect(JSONSchemaValidator.problems(line, against: try NDJSONSchemaTests.schema(kind)).isEmpty, "line \(index + 1)")
        }
        // `glasses-bridge report` shows one device's run: a run of several is refused, not mixed into one page.
        let saved = FileManager.default.temporaryDirectory.appendingPathComponent("multi-\(UUID().uuidString).ndjson")
        defer { try? FileManager.default.removeItem(at: saved) }
        try Data(result.stdout.utf8).write(to: saved)
        let page = saved.deletingPathExtension().appendingPathExtension("html").path
        let report = try BinaryRunner.run(["report", saved.path, "-o", page])
        #expect(report.status == 65 && report.stderr.contains("several devices"), "report: \(report.status) \(report.stderr)")
        #expect(!FileManager.default.fileExists(atPath: page))
    }
}
