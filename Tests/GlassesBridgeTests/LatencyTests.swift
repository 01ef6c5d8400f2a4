import Foundation
import GlassesSimulator
import SmartSpectraInput
import Testing
import WearablesKit

@testable import GlassesBridge

@Suite("Latency tracker")
struct LatencyTrackerTests {
    @Test("percentiles are within 0.8 % and the maximum is exact, in a fixed number of counters")
    func histogramPrecision() {
        var histogram = LatencyHistogram()
        // 1 … 10,000 ms in 1 ms steps (µs values), shuffled.
        for value in (1...10_000).map({ UInt64($0) * 1_000 }).shuffled() { histogram.record(value) }
        #expect(histogram.count == 10_000)
        #expect(histogram.maximum == 10_000_000)
        let p50 = Double(histogram.percentile(0.5) ?? 0)
        let p99 = Double(histogram.percentile(0.99) ?? 0)
        #expect(abs(p50 - 5_000_000) / 5_000_000 < 0.008, "p50 \(p50)")
        #expect(abs(p99 - 9_900_000) / 9_900_000 < 0.008, "p99 \(p99)")
        // Exact below 128 µs, and every bucket's representative lies in its own bucket.
        var small = LatencyHistogram()
        for value in [3, 7, 7, 90] as [UInt64] { small.record(value) }
        #expect(small.percentile(0.5) == 7)
        #expect(small.percentile(1) == 90)
        for index in 0..<LatencyHistogram.bucketCount {
            #expect(LatencyHistogram.index(of: LatencyHistogram.representative(ofBucket: index)) == index)
        }
        #expect(LatencyHistogram.index(of: (1 << 26) - 1) == LatencyHistogram.bucketCount - 1)
    }

    @Test("the interval restarts at each take; the run keeps everything; absurd figures are counted, not measured")
    func intervalsAndRun() throws {
        var tracker = LatencyTracker()
        #expect(tracker.takeInterval() == nil)
        #expect(tracker.run == nil)
        tracker.record(FrameTiming(captureUs: 1_000_000, sentUs: 1_010_000, receivedUs: 1_013_000), acceptedUs: 1_040_000)
        tracker.record(FrameTiming(captureUs: 2_000_000, sentUs: 2_010_000, receivedUs: 2_011_000), acceptedUs: 2_020_000)
        let taken = tracker.takeInterval()
        let first = try #require(taken)
        func close(_ value: Double, _ expected: Double) -> Bool { abs(value - expected) <= expected * 0.008 }
        #expect(first.samples == 2)
        #expect(close(first.p50Ms, 20) && first.p99Ms == 40 && first.maxMs == 40, "\(first)")
        #expect(close(first.linkP50Ms, 1) && first.linkP99Ms == 3 && first.linkMaxMs == 3, "\(first)")
        #expect(tracker.takeInterval() == nil)
        // Received after it was accepted (the link's clock is not the pipeline's), a minute and more: not measured.
        tracker.record(FrameTiming(captureUs: 0, sentUs: 0, receivedUs: 5_000_000), acceptedUs: 4_000_000)
        tracker.record(FrameTiming(captureUs: 0, sentUs: 0, receivedUs: 0), acceptedUs: 61_000_000)
        tracker.record(FrameTiming(captureUs: .min, sentUs: 0, receivedUs: 0), acceptedUs: 1)
        #expect(tracker.implausible == 3)
        // Slightly negative (clock offset error on a short hop): counted as zero.
        tracker.record(FrameTiming(captureUs: 3_000_100, sentUs: 3_000_200, receivedUs: 3_000_000), acceptedUs: 3_000_050)
        #expect(tracker.takeInterval() == LatencySummary(samples: 1, p50Ms: 0, p99Ms: 0, maxMs: 0, linkP50Ms: 0, linkP99Ms: 0, linkMaxMs: 0))
        #expect(tracker.run?.samples == 3)
        #expect(tracker.run?.maxMs == 40)
    }

    @Test("NDJSON carries latencyMs (null when not measured); the text summary has one latency line")
    func formats() {
        var summary = BridgeSummary()
        #expect(NDJSONEventFormatter.json(for: .summary(summary), at: 1).serialized.contains(#""latencyMs":null"#))
        #expect(TextEventFormatter.summaryText(summary).contains("latency capture→sendFrame not measured\n"))
        summary.stats.latency = LatencySummary(
            samples: 12, p50Ms: 20.5, p99Ms: 40.26, maxMs: 41, linkP50Ms: 1.5, linkP99Ms: 3, linkMaxMs: 3.14)
        let json = NDJSONEventFormatter.json(for: .stats(summary.stats, vitals: VitalsSnapshot(), truth: nil), at: 1)
        #expect(json.serialized.contains(
            #""latencyMs":{"p50":20.5,"p99":40.26,"max":41,"linkP50":1.5,"linkP99":3,"linkMax":3.14,"samples":12}"#),
            "\(json.serialized)")
        #expect(TextEventFormatter.summaryText(summary).contains(
            "latency capture→sendFrame p50 20.5 p99 40.3 max 41.0 ms (link p50 1.5 p99 3.0 max 3.1 ms, 12 frames)\n"))
    }
}

@Suite("Latency end to end (in-process simulator, virtual time)", .serialized)
struct LatencyEndToEndTests {
    static func latencies(_ run: SimulatedRun) -> [LatencySummary] {
        run.events.all.compactMap { if case .stats(let stats, _, _, _) = $0.event { stats.latency } else { nil } }
    }

    @Test("every accepted frame is measured; in virtual time the latency is the virtual processing delay, 0 here")
    func cleanRun() async throws {
        let run = try SimulatedRun(seconds: 4)
        let result = await run.run()
        let latency = try #require(result.summary.stats.latency)
        #expect(latency.samples == result.summary.stats.accounting.submitted)
        #expect(latency.samples > 0)
        #expect(latency == LatencySummary(
            samples: latency.samples, p50Ms: 0, p99Ms: 0, maxMs: 0, linkP50Ms: 0, linkP99Ms: 0, linkMaxMs: 0))
        let intervals = Self.latencies(run)
        #expect(intervals.count >= 2)
        #expect(intervals.map(\.samples).reduce(0, +) <= latency.samples)
    }

    @Test("glasses that hold each frame back 80 ms before sending: 80 ms capture → sendFrame, 0 ms on the link", arguments: [VideoCodec.raw, .hvc1])
    func heldBack(codec: VideoCodec) async throws {
        let run = try SimulatedRun(codec: codec, seconds: 4)
        run.glasses.inject(.latency(latencyMs: 80, jitterMs: 0))
        let result = await run.run()
        let latency = try #require(result.summary.stats.latency)
        #expect(latency.samples == result.summary.stats.accounting.submitted)
        #expect(latency.samples > 60)
        #expect(latency.p50Ms == 80)
        #expect(latency.p99Ms == 80)
        #expect(latency.maxMs == 80)
        #expect(latency.linkMaxMs == 0)
        for interval in Self.latencies(run) { #expect(interval.p50Ms == 80) }
        let summaryLine = TextEventFormatter.summaryText(result.summary)
        #expect(summaryLine.contains("latency capture→sendFrame p50 80.0 p99 80.0 max 80.0 ms (link p50 0.0"))
        var formatter = NDJSONEventFormatter(simulated: true)
        let last = formatter.format(.summary(result.summary), at: 4)
        #expect(last.contains(#""latencyMs":{"p50":80,"p99":80,"max":80,"linkP50":0,"linkP99":0,"linkMax":0,"samples":"#))
    }
}
