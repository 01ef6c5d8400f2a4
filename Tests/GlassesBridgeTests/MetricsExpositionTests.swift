import Foundation
import GlassesBridge
@testable import GlassesBridgeCommand
import SmartSpectraInput
import Testing

/// The Prometheus endpoint's pure parts: what the registry shows of a run's events, how it is written in
/// OpenMetrics and in the older text format, and how the endpoint answers a request head.
@Suite struct MetricsExpositionTests {
    /// Two devices; the first streamed, was measured and has latency, the second reported nothing.
    private func registry() -> BridgeMetricsRegistry {
        var registry = BridgeMetricsRegistry(deviceLabels: ["sim#1", "sim#2"])
        var stats = BridgeStats()
        for _ in 0..<10 { stats.accounting.recordReceived() }
        for _ in 0..<7 { stats.accounting.recordSubmitted() }
        stats.accounting.recordRejected(code: "timestampGap")
        stats.accounting.recordDropped(.late)
        stats.accounting.recordDropped(.decodeFailed)
        stats.inputRestarts = 2
        stats.stallRestarts = 1
        stats.reconnects = 3
        stats.sessionRestarts = 4
        stats.deviceDroppedFrames = 5
        var buckets = LatencyBuckets()
        buckets.record(microseconds: 1_000)  // ≤ 2.5 ms
        buckets.record(microseconds: 40_000)  // ≤ 50 ms
        buckets.record(microseconds: 20_000_000)  // above 10 s
        stats.latencyBuckets = buckets
        registry.take(.stats(stats, vitals: VitalsSnapshot(), truth: nil), device: 0)
        registry.take(.state(.streaming, detail: nil), device: 0)
        var metrics = Metrics()
        metrics.cardio.pulseRate = [
            MeasurementWithConfidence(value: 60, stable: false, confidence: 10, timestamp: 1),
            MeasurementWithConfidence(value: 72.5, stable: true, confidence: 80, timestamp: 2),
        ]
        metrics.cardio.hrv = [
            Hrv(rmssd: 42, meanNn: 800, sdnn: 40, baevsky: 100, timestamp: 2, confidence: 50, stable: true),
        ]
        registry.take(.metrics(metrics, json: "{}"), device: 0)
        // A later payload without cardio leaves the pulse as it was; breathing arrives.
        var breathing = Metrics()
        breathing.breathing.rate = [MeasurementWithConfidence(value: 15.25, stable: false, confidence: 25, timestamp: 3)]
        registry.take(.metrics(breathing, json: "{}"), device: 0)
        registry.take(.state(.connecting, detail: nil), device: 1)
        registry.take(.state(.finished, detail: nil), device: 7)  // no such device: ignored
        return registry
    }

    @Test func openMetricsCarriesEveryCounterGaugeAndTheHistogram() {
        let text = registry().render(.openMetrics)
        let lines = Set(text.split(separator: "\n").map(String.init))
        let expected = [
            "# TYPE glasses_bridge_frames_received counter",
            "glasses_bridge_frames_received_total{device=\"sim#1\"} 10",
            "glasses_bridge_frames_received_total{device=\"sim#2\"} 0",
            "glasses_bridge_frames_submitted_total{device=\"sim#1\"} 7",
            "glasses_bridge_frames_rejected_total{device=\"sim#1\"} 1",
            "glasses_bridge_frames_dropped_total{device=\"sim#1\",reason=\"late\"} 1",
            "glasses_bridge_frames_dropped_total{device=\"sim#1\",reason=\"decodeFailed\"} 1",
            "glasses_bridge_frames_dropped_total{device=\"sim#1\",reason=\"duplicateTimestamp\"} 0",
            "glasses_bridge_input_restarts_total{device=\"sim#1\"} 2",
            "glasses_bridge_stall_restarts_total{device=\"sim#1\"} 1",
            "glasses_bridge_reconnects_total{device=\"sim#1\"} 3",
            "glasses_bridge_session_restarts_total{device=\"sim#1\"} 4",
            "glasses_bridge_device_dropped_frames_total{device=\"sim#1\"} 5",
            "# TYPE glasses_bridge_frame_latency_seconds histogram",
            "# UNIT glasses_bridge_frame_latency_seconds seconds",
            "glasses_bridge_frame_latency_seconds_bucket{device=\"sim#1\",le=\"0.0025\"} 1",
            "glasses_bridge_frame_latency_seconds_bucket{device=\"sim#1\",le=\"0.025\"} 1",
            "glasses_bridge_frame_latency_seconds_bucket{device=\"sim#1\",le=\"0.05\"} 2",
            "glasses_bridge_frame_latency_seconds_bucket{device=\"sim#1\",le=\"10.0\"} 2",
            "glasses_bridge_frame_latency_seconds_bucket{device=\"sim#1\",le=\"+Inf\"} 3",
            "glasses_bridge_frame_latency_seconds_sum{device=\"sim#1\"} 20.041",
            "glasses_bridge_frame_latency_seconds_count{device=\"sim#1\"} 3",
            "glasses_bridge_stream_state{device=\"sim#1\",state=\"streaming\"} 1",
            "glasses_bridge_stream_state{device=\"sim#1\",state=\"idle\"} 0",
            "glasses_bridge_stream_state{device=\"sim#2\",state=\"connecting\"} 1",
            "glasses_bridge_stream_state{device=\"sim#2\",state=\"streaming\"} 0",
            "# UNIT glasses_bridge_pulse_beats_per_minute beats_per_minute",
            "glasses_bridge_pulse_beats_per_minute{device=\"sim#1\"} 72.5",
            "glasses_bridge_pulse_confidence_ratio{device=\"sim#1\"} 0.8",
            "glasses_bridge_pulse_stable{device=\"sim#1\"} 1",
            "glasses_bridge_breathing_breaths_per_minute{device=\"sim#1\"} 15.25",
            "glasses_bridge_breathing_confidence_ratio{device=\"sim#1\"} 0.25",
            "glasses_bridge_breathing_stable{device=\"sim#1\"} 0",
            "glasses_bridge_hrv_rmssd_seconds{device=\"sim#1\"} 0.042",
            "glasses_bridge_hrv_rmssd_stable{device=\"sim#1\"} 1",
        ]
        for line in expected { #expect(lines.contains(line), "missing: \(line)") }
        #expect(text.hasSuffix("\n# EOF\n"))
        #expect(text.components(separatedBy: "# EOF").count == 2, "one # EOF, at the end")
        // Exactly one current phase per device.
        #expect(lines.filter { $0.hasPrefix("glasses_bridge_stream_state{device=\"sim#1\"") && $0.hasSuffix(" 1") }.count == 1)
        // What the second device never measured is absent, not zero.
        for absent in ["pulse", "breathing", "hrv", "frame_latency"] {
            #expect(!lines.contains { $0.contains("glasses_bridge_\(absent)") && $0.contains("sim#2") }, "\(absent) for sim#2")
        }
    }

    @Test func nothingMeasuredMeansNoVitalOrLatencyFamilyAtAll() {
        let text = BridgeMetricsRegistry(deviceLabels: ["sim"]).render(.openMetrics)
        #expect(!text.contains("glasses_bridge_pulse"))
        #expect(!text.contains("glasses_bridge_hrv"))
        #expect(!text.contains("glasses_bridge_frame_latency"))
        #expect(text.contains("glasses_bridge_frames_received_total{device=\"sim\"} 0\n"))
        #expect(text.contains("glasses_bridge_stream_state{device=\"sim\",state=\"idle\"} 1\n"))
    }

    @Test func theTextFormatNamesCountersByTheirSamplesAndHasNoUnitOrEOF() {
        let text = registry().render(.prometheusText)
        #expect(text.contains("# HELP glasses_bridge_frames_received_total Frames that arrived from the device.\n# TYPE glasses_bridge_frames_received_total counter\n"))
        #expect(text.contains("# TYPE glasses_bridge_frame_latency_seconds histogram\n"))
        #expect(!text.contains("# UNIT"))
        #expect(!text.contains("# EOF"))
    }

    @Test func labelValuesAndHelpAreEscaped() {
        #expect(MetricsExposition.escapeLabelValue("a\"b\\c\nd") == "a\\\"b\\\\c\\nd")
        var family = MetricFamily("x_ratio", .gauge, unit: "ratio", help: "say \"hi\"\\ there\nnow")
        family.add(0.5, [MetricFamily.Label("device", "tcp:[::1]:7000 \"quoted\"")])
        #expect(MetricsExposition.render([family], format: .openMetrics) == """
            # TYPE x_ratio gauge
            # UNIT x_ratio ratio
            # HELP x_ratio say \\"hi\\"\\\\ there\\nnow
            x_ratio{device="tcp:[::1]:7000 \\"quoted\\""} 0.5
            # EOF

            """)
        #expect(MetricsExposition.render([family], format: .prometheusText).contains("# HELP x_ratio say \"hi\"\\\\ there\\nnow\n"))
    }

    @Test func numbersAreWrittenAsBothFormatsReadThem() {
        #expect(MetricsExposition.number(72) == "72")
        #expect(MetricsExposition.number(72.5) == "72.5")
        #expect(MetricsExposition.number(1, forceFraction: true) == "1.0")
        #expect(MetricsExposition.number(0.0025, forceFraction: true) == "0.0025")
        #expect(MetricsExposition.number(.nan) == "NaN")
        #expect(MetricsExposition.number(.infinity) == "+Inf")
        #expect(MetricsExposition.number(-.infinity) == "-Inf")
        #expect(MetricsExposition.number(1e20) == "1e+20")
    }

    @Test func latencyBucketsCountEachFrameOnceAtItsBound() {
        var buckets = LatencyBuckets()
        buckets.record(microseconds: 2_500)  // on the bound: that bucket
        buckets.record(microseconds: 2_501)  // just over: the next
        buckets.record(microseconds: 10_000_001)  // over the last bound
        #expect(buckets.counts.count == LatencyBuckets.upperBoundsUs.count + 1)
        #expect(buckets.counts[0] == 1 && buckets.counts[1] == 1 && buckets.counts.last == 1)
        #expect(buckets.count == 3)
        #expect(buckets.sumUs == 10_005_002)
    }

    // MARK: HTTP

    private func respond(_ head: String, token: String? = nil) -> MetricsHTTP.Response {
        MetricsHTTP.respond(toHead: Array(head.utf8), token: token) { format in
            format == .openMetrics ? "om\n# EOF\n" : "text\n"
        }
    }

    @Test func getMetricsIsServedInOpenMetricsUnlessOnlyTextIsAccepted() {
        let plain = respond("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(plain.status == 200)
        #expect(plain.header("Content-Type") == "application/openmetrics-text; version=1.0.0; charset=utf-8")
        #expect(plain.body == "om\n# EOF\n")
        let prometheus = respond(
            "GET /metrics?x=1 HTTP/1.1\r\nAccept: application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5\r\n\r\n")
        #expect(prometheus.header("Content-Type")?.hasPrefix("application/openmetrics-text") == true)
        let text = respond("GET /metrics HTTP/1.0\r\naccept: text/plain\r\n\r\n")
        #expect(text.header("Content-Type") == "text/plain; version=0.0.4; charset=utf-8")
        #expect(text.body == "text\n")
        let head = respond("HEAD /metrics HTTP/1.1\r\n\r\n")
        #expect(head.status == 200)
        let wire = String(decoding: head.bytes, as: UTF8.self)
        #expect(wire.hasPrefix("HTTP/1.1 200 OK\r\n"))
        #expect(wire.contains("Content-Length: 9\r\n"))
        #expect(wire.hasSuffix("\r\n\r\n"), "HEAD gets no body")
    }

    @Test(arguments: [
        ("GET / HTTP/1.1\r\n\r\n", 404),
        ("GET /metricsx HTTP/1.1\r\n\r\n", 404),
        ("POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n", 405),
        ("DELETE /metrics HTTP/1.1\r\n\r\n", 405),
        ("hello\r\n\r\n", 400),
        ("GET /metrics\r\n\r\n", 400),
        ("GET /metrics HTTP/2\r\n\r\n", 400),
        ("GET metrics HTTP/1.1\r\n\r\n", 400),
        ("GET /metrics HTTP/1.1\r\nno colon here\r\n\r\n", 400),
        ("get /metrics HTTP/1.1\r\n\r\n", 400),
    ])
    func otherRequestsAreRefusedWithTheirStatus(head: String, status: Int) {
        let response = respond(head)
        #expect(response.status == status, "\(head.debugDescription)")
        if status == 405 { #expect(response.header("Allow") == "GET, HEAD") }
        #expect(String(decoding: response.bytes, as: UTF8.self).hasPrefix("HTTP/1.1 \(status) "))
    }

    @Test func nonUTF8HeadIsABadRequest() {
        let response = MetricsHTTP.respond(toHead: Array("GET /metrics HTTP/1.1\r\nX: ".utf8) + [0xFF, 0xFE] + Array("\r\n\r\n".utf8), token: nil) { _ in "" }
        #expect(response.status == 400)
    }

    @Test func withATokenEveryRequestNeedsTheBearerToken() {
        let token = "s3cret-token"
        #expect(respond("GET /metrics HTTP/1.1\r\n\r\n", token: token).status == 401)
        let refused = respond("GET /metrics HTTP/1.1\r\nAuthorization: Bearer wrong\r\n\r\n", token: token)
        #expect(refused.status == 401)
        #expect(refused.header("WWW-Authenticate")?.hasPrefix("Bearer") == true)
        #expect(!refused.body.contains("om"), "no metrics without the token")
        #expect(respond("GET /metrics HTTP/1.1\r\nAuthorization: Bearer s3cret-toke\r\n\r\n", token: token).status == 401)
        #expect(respond("GET /metrics HTTP/1.1\r\nAuthorization: Bearer s3cret-token2\r\n\r\n", token: token).status == 401)
        #expect(respond("GET /metrics HTTP/1.1\r\nAuthorization: Basic czNjcmV0LXRva2Vu\r\n\r\n", token: token).status == 401)
        #expect(respond("GET /metrics HTTP/1.1\r\nAuthorization: s3cret-token\r\n\r\n", token: token).status == 401)
        // Other paths are not revealed either.
        #expect(respond("GET /other HTTP/1.1\r\n\r\n", token: token).status == 401)
        #expect(respond("GET /metrics HTTP/1.1\r\nAuthorization: Bearer s3cret-token\r\n\r\n", token: token).status == 200)
        #expect(respond("GET /metrics HTTP/1.1\r\nauthorization: bearer  s3cret-token \r\n\r\n", token: token).status == 200)
    }

    @Test func constantTimeComparisonComparesWholeValues() {
        func equal(_ a: String, _ b: String) -> Bool { MetricsHTTP.constantTimeEqual(Array(a.utf8), Array(b.utf8)) }
        #expect(equal("abc", "abc"))
        #expect(!equal("abd", "abc"))
        #expect(!equal("ab", "abc"))
        #expect(!equal("abcd", "abc"))
        #expect(!equal("", "abc"))
        #expect(equal("", ""))
    }

    @Test func theHeadEndsAtTheFirstBlankLine() {
        #expect(MetricsHTTP.headEnd(in: Array("GET / HTTP/1.1\r\n".utf8)) == nil)
        #expect(MetricsHTTP.headEnd(in: Array("GET / HTTP/1.1\r\n\r\nrest".utf8)) == 18)
        #expect(MetricsHTTP.headEnd(in: []) == nil)
    }
}
