import Foundation
import Testing
@testable import GlassesReport

/// A small benchmark result by hand: raw and two HEVC bitrates, three subjects each.
enum BenchmarkFixture {
    static func condition(_ name: String, bitrate: Int?, offset: Double) -> BenchmarkCondition {
        let subjects = (0..<3).map { index in
            BenchmarkSubject(index: index, truePulse: 60 + 20 * Double(index), trueBreathing: 12,
                             pulseErrors: [offset + Double(index) * 0.5, -(offset + Double(index) * 0.5)],
                             breathingErrors: [0.2, -0.4], rmssdError: 3, failure: nil)
        }
        return BenchmarkCondition(name: name, bitrate: bitrate, fps: 30, duration: 65, subjects: subjects)
    }

    static let all = [condition("raw", bitrate: nil, offset: 1), condition("hvc1-1M", bitrate: 1_000_000, offset: 3),
                      condition("hvc1-2M", bitrate: 2_000_000, offset: 2)]
}

@Suite("Benchmark pages")
struct BenchmarkPageTests {
    @Test("a condition's page: summary, error distribution, per-subject bars and the accuracy-vs-bitrate curve")
    func page() throws {
        let all = BenchmarkFixture.all
        // Subject MAEs for hvc1-2M: 2, 2.5, 3; over all samples: (2+2+2.5+2.5+3+3)/6 = 2.5.
        let condition = all[2]
        #expect(condition.subjects.map(\.pulseMAE) == [2, 2.5, 3] && condition.pulseMAE == 2.5)
        let html = BenchmarkReport.html(condition, all: all, generator: "test")
        #expect(html.contains("<td>pulse MAE over all samples (bpm)</td><td class=\"num\">2.50</td>"))
        #expect(html.contains("Pulse error across subjects (hvc1-2M)") && html.contains("Mean absolute error per subject (hvc1-2M)"))
        // The histogram: bins of 0.5 bpm from 0 to 3 (6 bars, 1 subject at 2–2.5, 2 at 2.5–3), then 3 pulse bars.
        let histogram = BenchmarkReport.distribution(condition).svg()
        #expect(occurrences(of: "<rect class=\"bar estimate\"", in: histogram) == 6)
        #expect(histogram.contains("<title>subjects: 1.0</title>") && histogram.contains("<title>subjects: 2.0</title>"))
        #expect(occurrences(of: "<rect class=\"bar estimate\"", in: html) == 6 + 3)
        #expect(occurrences(of: "<rect class=\"bar tertiary\"", in: html) == 3)
        let curve = try #require(BenchmarkReport.bitrateCurve(all, highlight: "hvc1-2M")).svg()
        #expect(ReportPageTests.vertices(curve, class: "line estimate").count == 2)  // 1 and 2 Mbit/s
        #expect(curve.contains(">raw frames: pulse 1.50</text>"))  // raw: errors ±1, ±1.5, ±2 → MAE 1.5
        #expect(html.contains("href=\"vitals-raw.html\"") && BenchmarkReport.fileName(all[1]) == "vitals-hvc1-1M.html")
    }
}
