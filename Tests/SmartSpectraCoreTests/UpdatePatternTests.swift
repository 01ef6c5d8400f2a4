import Testing
@testable import SmartSpectraCore

/// The caller the SmartSpectra docs recommend: keep the last valid rate sample, never overwrite it with nil, show a
/// placeholder until the first sample, clear when a session starts.
final class PulseRateDisplay {
    private var lastPulseRate: Double?

    func pulseRateText(from metrics: Metrics?) -> String {
        if let pulse = metrics?.cardio.pulseRate.last(where: { $0.timestamp > 0 })?.value {
            lastPulseRate = Double(pulse)
            return "\(Int(Double(pulse).rounded())) bpm"
        }
        guard let lastPulseRate else { return "-- bpm" }
        return "\(Int(lastPulseRate.rounded())) bpm"
    }

    func sessionStarted() { lastPulseRate = nil }
}

@Suite("Metric update patterns")
struct UpdatePatternTests {
    /// Frame-driven traces on every payload; a pulse rate only on some (event-driven), one with no timestamp.
    static func script(_ index: Int, _ timestamp: Int64) -> ProcessingUpdate {
        var metrics = Metrics()
        metrics.breathing.upperTrace = [Measurement(value: 0.1 * Float(index), stable: true, timestamp: timestamp)]
        switch index {
        case 1: metrics.cardio.pulseRate = [MeasurementWithConfidence(value: 70.4, stable: true, confidence: 85, timestamp: timestamp)]
        case 3: metrics.cardio.pulseRate = [MeasurementWithConfidence(value: 99, stable: false, confidence: 5, timestamp: 0)]
        case 4: metrics.cardio.pulseRate = [MeasurementWithConfidence(value: 72.6, stable: true, confidence: 88, timestamp: timestamp)]
        default: break
        }
        return ProcessingUpdate(metrics: metrics)
    }

    @Test("keeping the last valid sample shows a steady rate while raw payloads go empty between events")
    func keepLastValidSample() async throws {
        let backend = RecordingBackend(script: Self.script)
        let harness = try await Harness.started(
            requestedMetrics: SmartSpectraConfig.breathingMetrics + [.pulseRate], backend: backend
        )
        let display = PulseRateDisplay()
        var shown: [String] = [display.pulseRateText(from: harness.sdk.metrics)]
        var raw: [Float?] = []
        var traces: [Bool] = []
        for index in 0 ..< 6 {
            #expect(harness.input.sendFrame(SubmissionCase.bgra(), timestampUs: Int64(index + 1) * 33_333) == .accepted)
            await harness.sdk.waitUntilProcessed()
            raw.append(harness.sdk.metrics?.cardio.pulseRate.last?.value)
            traces.append(harness.sdk.metrics?.breathing.upperTrace.last != nil)
            shown.append(display.pulseRateText(from: harness.sdk.metrics))
        }
        // Raw reads: nil between events (and the timestamp-less sample 99 is there, unfiltered).
        #expect(raw == [nil, 70.4, nil, 99, 72.6, nil])
        // Frame-driven traces are present on every payload.
        #expect(traces == [true, true, true, true, true, true])
        // The recommended caller: placeholder first, then the last valid rate, never blanked by an empty payload.
        #expect(shown == ["-- bpm", "-- bpm", "70 bpm", "70 bpm", "70 bpm", "73 bpm", "73 bpm"])

        // A new session: the SDK clears its payload and the caller clears its retained value.
        try await harness.sdk.stop()
        try await harness.sdk.start()
        display.sessionStarted()
        #expect(harness.sdk.metrics == nil)
        #expect(display.pulseRateText(from: harness.sdk.metrics) == "-- bpm")
        try await harness.sdk.stop()
    }
}
