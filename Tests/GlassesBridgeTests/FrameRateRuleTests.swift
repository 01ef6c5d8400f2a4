import Foundation
@testable import GlassesBridge
import SmartSpectraInput
import Testing

/// The frame-rate table: what each DAT rate gives, what is refused, and that nothing below a rate's reach is stable.
@Suite("Frame-rate rule", .serialized)
struct FrameRateRuleTests {
    static func pulsePayload(_ bpm: Float, stable: Bool) -> Metrics {
        var metrics = Metrics()
        var cardio = Cardio()
        cardio.pulseRate = [MeasurementWithConfidence(value: bpm, stable: stable, confidence: 90, timestamp: 20_000_000)]
        metrics.cardio = cardio
        return metrics
    }

    @Test func everyDATRateHasOneRowAndTheMeasuredOnesAreTheBenchmarksRates() {
        #expect(FrameRateTable.rows.map(\.frameRate) == [30, 24, 15, 7, 2])
        for rate: UInt in [15, 24, 30] {
            let row = FrameRateTable.capability(at: rate)
            #expect(row.pulse == .measured && row.hrv == .measured && row.breathing == .measured)
        }
        #expect(FrameRateTable.capability(at: 2).pulse == .impossible)
        #expect(FrameRateTable.capability(at: 7).pulse == .unverified)
    }

    @Test func twoFramesPerSecondIsRefusedForPulseButNotForBreathingAlone() throws {
        let refusal = try #require(FrameRateTable.refusal(frameRate: 2, metrics: .default))
        #expect(refusal.message.contains("pulse-rate") && refusal.message.contains("--metrics breathing"))
        #expect(FrameRateTable.refusal(frameRate: 2, metrics: try MetricSelection(parsing: "breathing")) == nil)
        #expect(FrameRateTable.refusal(frameRate: 7, metrics: .default) == nil)
        #expect(FrameRateTable.refusal(frameRate: 15, metrics: .default) == nil)
    }

    @Test func aValueBelowWhatTheRateSupportsIsNeverStable() {
        var gate = FrameRateGate(askedRate: 7)
        guard case .metrics(let clamped, let json)? = gate.adjust(.metrics(Self.pulsePayload(48.6, stable: true), json: "{}"))
        else { Issue.record("metrics left out"); return }
        #expect(clamped.cardio.pulseRate.allSatisfy { !$0.stable })
        #expect(!json.contains("\"stable\":true"))
        var summary = BridgeSummary()
        summary.vitals = VitalsSnapshot(pulseRate: 48.6, breathingRate: 15, hrvRmssd: 40)
        summary.basis = VitalsBasis(pulseRate: VitalBasis([48.6]), breathingRate: VitalBasis([15]), hrvRmssd: VitalBasis([40]))
        guard case .summary(let shown)? = gate.adjust(.summary(summary)) else { Issue.record("summary left out"); return }
        #expect(shown.vitals == VitalsSnapshot())
        // What a withheld value rested on goes with it.
        #expect(shown.basis == VitalsBasis())
    }

    @Test func theLowFrameRateHintAgreesWithTheTable() {
        // At 15 fps the engine's own threshold (22) calls the rate too low; the table measures 15 fps as accurate.
        var gate = FrameRateGate(askedRate: 15)
        _ = gate.adjust(.stats({ var s = BridgeStats(); s.framesPerSecondIn = 15; return s }(), vitals: .init(), truth: nil))
        guard case .validation(let status)? = gate.adjust(.validation(ValidationStatus(
            code: .frameRateTooLow, hint: "Frame rate too low: stream at 24–30 fps"))) else {
            Issue.record("verdict left out"); return
        }
        #expect(status.code == .ok)
        // Frames that really arrive slowly are told the table's floor, not 24–30.
        var starved = FrameRateGate(askedRate: 24)
        _ = starved.adjust(.stats({ var s = BridgeStats(); s.framesPerSecondIn = 6; return s }(), vitals: .init(), truth: nil))
        guard case .validation(let slow)? = starved.adjust(.validation(ValidationStatus(code: .frameRateTooLow))) else {
            Issue.record("verdict left out"); return
        }
        #expect(slow.code == .frameRateTooLow)
        #expect(slow.hint.contains("15 fps") && !slow.hint.contains("24–30") && !slow.hint.contains("24 or 30 fps"))
        let seven = FrameRateTable.lowFrameRateHint(askedRate: 7, arrivingRate: 7)
        #expect(seven.contains("15 fps") && !seven.contains("24–30"))
    }

    @Test("a network stream is judged at the rate its frames arrive, smoothed: 20 fps as 24, 12 as 15, 10 as 7 (never stable); the summary by the run's mean rate")
    func networkStreamsAreJudgedAtTheArrivingRate() throws {
        #expect(FrameRateGate.tableRate(arriving: 30) == 30 && FrameRateGate.tableRate(arriving: 20) == 24)
        #expect(FrameRateGate.tableRate(arriving: 12) == 15 && FrameRateGate.tableRate(arriving: 10) == 7)
        #expect(FrameRateGate.tableRate(arriving: 1) == 2)
        func stats(_ fps: Double) -> BridgeEvent { .stats({ var s = BridgeStats(); s.framesPerSecondIn = fps; return s }(), vitals: .init(), truth: nil) }
        var gate = FrameRateGate.networkStream()
        _ = gate.adjust(stats(10))
        guard case .metrics(let clamped, _)? = gate.adjust(.metrics(Self.pulsePayload(72, stable: true), json: "{}")) else {
            Issue.record("metrics left out"); return
        }
        #expect(clamped.cardio.pulseRate.allSatisfy { !$0.stable }, "a stable pulse passed at 10 fps")
        guard case .validation(let slow)? = gate.adjust(.validation(ValidationStatus(code: .frameRateTooLow))) else {
            Issue.record("verdict left out"); return
        }
        #expect(slow.code == .frameRateTooLow && slow.hint.contains("the stream arrives at 10 fps") && !slow.hint.contains("--fps"))
        _ = gate.adjust(stats(23.5))
        guard case .metrics(let kept, _)? = gate.adjust(.metrics(Self.pulsePayload(72, stable: true), json: "{}")) else {
            Issue.record("metrics left out"); return
        }
        #expect(kept.cardio.pulseRate.allSatisfy { $0.stable }, "a stable pulse at 23.5 fps was withheld")
        // Mostly at 24 (mean 19.8): the summary keeps its pulse, though the last second was slow.
        for _ in 0 ..< 5 { _ = gate.adjust(stats(24)) }
        _ = gate.adjust(stats(5))
        var summary = BridgeSummary()
        summary.vitals = VitalsSnapshot(pulseRate: 72, breathingRate: 15, hrvRmssd: 40)
        guard case .summary(let shown)? = gate.adjust(.summary(summary)) else { Issue.record("summary left out"); return }
        #expect(shown.vitals.pulseRate == 72)
        // Mostly at 6 fps (mean 10.5): the summary withholds it, in the table's words.
        var starved = FrameRateGate.networkStream()
        for fps in [24.0, 6, 6, 6] { _ = starved.adjust(stats(fps)) }
        guard case .summary(let withheld)? = starved.adjust(.summary(summary)) else { Issue.record("summary left out"); return }
        #expect(withheld.vitals.pulseRate == nil && withheld.pulseAbsence != nil)
    }

    @Test("a network stream's summary is judged by the frames received after the first stats line over the time since: a starting burst does not lift 11 fps to 15's row")
    func aStartingBurstDoesNotLiftTheRunsRate() throws {
        func stats(received: UInt64, fps: Double) -> BridgeEvent {
            var s = BridgeStats()
            for _ in 0 ..< received { s.accounting.recordReceived() }
            s.framesPerSecondIn = fps
            return .stats(s, vitals: .init(), truth: nil)
        }
        var summary = BridgeSummary()
        summary.vitals = VitalsSnapshot(pulseRate: 78, breathingRate: 15, hrvRmssd: nil)
        // 60 frames in the first second (the probe's and the latency buffer's), then 11 a second for 15 s: the mean
        // of the lines' rates is 14.1 (15's row), the frames over their time 11 (7's row, pulse never stable).
        var gate = FrameRateGate.networkStream()
        _ = gate.adjust(stats(received: 60, fps: 60), at: 1)
        for second in 1 ... 15 { _ = gate.adjust(stats(received: 60 + UInt64(second) * 11, fps: 11), at: 1 + Double(second)) }
        guard case .summary(let judged)? = gate.adjust(.summary(summary), at: 16.2) else { Issue.record("summary left out"); return }
        #expect(judged.vitals.pulseRate == nil && judged.pulseAbsence?.code == .frameRate, "\(judged)")
        // Steady at 15 after the same burst: kept.
        var steady = FrameRateGate.networkStream()
        _ = steady.adjust(stats(received: 60, fps: 60), at: 1)
        for second in 1 ... 15 { _ = steady.adjust(stats(received: 60 + UInt64(second) * 15, fps: 15), at: 1 + Double(second)) }
        guard case .summary(let kept)? = steady.adjust(.summary(summary), at: 16.2) else { Issue.record("summary left out"); return }
        #expect(kept.vitals.pulseRate == 78)
    }

    @Test("a recording is judged at the rate it declares: 15 fps passes as ok, 7 fps is never stable", arguments: [15, 7])
    func recordingsAreJudgedAtTheirDeclaredRate(fps: Int) throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("rate-\(fps)-\(getpid()).mkv").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        let record = try BinaryRunner.run(["--fps", "\(fps)", "--no-realtime", "--duration", "30", "--resolution", "low",
                                           "--codec", "hvc1", "--record", file, "--format", "ndjson"])
        #expect(record.status == 0, "stderr: \(record.stderr)")
        let replay = try BinaryRunner.run(["--device", "file:" + file, "--no-realtime", "--format", "ndjson"])
        #expect(replay.status == 0, "stderr: \(replay.stderr)")
        let objects = try replay.lines.map { try #require(TestJSON.parse($0)) }
        let verdicts = objects.filter { $0["type"]?.string == "validation" && $0["code"]?.string == "frameRateTooLow" }
        let summary = try #require(objects.last)
        if fps >= 15 {
            // The engine's own threshold (22 fps) is not the table's: no verdict asks a 15 fps file for 24–30 fps.
            #expect(verdicts.isEmpty, "\(verdicts)")
            #expect(summary["pulseRate"] != nil && summary["pulseRate"] != .null, "\(summary)")
        } else {
            #expect(!replay.stdout.contains("\"stable\":true"))
            #expect(summary["pulseUnavailable"]?["code"]?.string == "frameRate", "\(summary)")
            #expect(verdicts.allSatisfy { $0["hint"]?.string?.contains("the recording is at 7 fps") == true }, "\(verdicts)")
            #expect(!replay.stdout.contains("24–30") && !replay.stdout.contains("--fps"))
        }
    }

    @Test func theBinaryRefusesTwoFramesPerSecondForPulseWithAUsageError() throws {
        let result = try BinaryRunner.run(["--fps", "2", "--no-realtime", "--duration", "30", "--format", "ndjson"])
        #expect(result.status == 64, "stdout: \(result.stdout.suffix(300))")
        #expect(result.stderr.contains("--fps 2 cannot measure pulse-rate"))
    }

    @Test func atSevenFramesPerSecondTheRunWarnsAndNothingIsStable() throws {
        let result = try BinaryRunner.run([
            "--fps", "7", "--no-realtime", "--duration", "30", "--format", "ndjson", "--resolution", "low",
        ])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let objects = try result.lines.map { try #require(TestJSON.parse($0)) }
        #expect(objects.contains { $0["type"]?.string == "warning" })
        #expect(!result.stdout.contains("\"stable\":true"))
        let summary = try #require(objects.last)
        #expect(summary["pulseRate"] == .null && summary["hrvRmssd"] == .null && summary["breathingRate"] == .null)
        // The summary says why there is no value: the frame rate, not the face.
        for member in ["pulseUnavailable", "breathingUnavailable", "hrvUnavailable"] {
            #expect(summary[member]?["code"]?.string == "frameRate", "\(member): \(String(describing: summary[member]))")
        }
        #expect(!result.stdout.contains("24–30"))
    }

    @Test func atFifteenFramesPerSecondTheRunIsNotToldToStreamFaster() throws {
        let result = try BinaryRunner.run([
            "--fps", "15", "--no-realtime", "--duration", "12", "--format", "ndjson", "--resolution", "low",
        ])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(!result.stdout.contains("frameRateTooLow"), "\(result.stdout.split(separator: "\n").filter { $0.contains("validation") })")
        #expect(!result.stdout.contains("\"type\":\"warning\""))
    }
}

/// The pipeline judges its own events: what its `emit` receives, and the summary `run()` returns, are what users see.
@Suite("Judged events from the pipeline")
struct PipelineJudgementTests {
    @Test("at 7 fps no pulse is ever stable in the pipeline's own events, and the summary it returns is the one it emitted last, judged; at 24 fps the same engine's values stand")
    func thePipelineEmitsJudgedEvents() async throws {
        var backend = RecordingBackend()
        backend.rmssd = 40
        let slow = try SimulatedRun(frameRate: 7, seconds: 20, backend: backend)
        let result = await slow.run()
        let events = slow.events.all
        let payloads = events.compactMap { if case .metrics(let metrics, let json) = $0.event { (metrics, json) } else { nil } }
        #expect(!payloads.isEmpty)
        #expect(payloads.allSatisfy { metrics, json in
            metrics.cardio.pulseRate.allSatisfy { !$0.stable } && metrics.cardio.hrv.allSatisfy { !$0.stable } && !json.isEmpty
        }, "a payload at 7 fps kept a stable pulse or HRV")
        guard case .summary(let emitted)? = events.last?.event else {
            Issue.record("the last event is not the summary: \(String(describing: events.last?.event))")
            return
        }
        #expect(emitted == result.summary)
        #expect(result.summary.vitals.pulseRate == nil && result.summary.pulseAbsence?.code == .frameRate,
                "\(String(describing: result.summary.pulseAbsence))")

        let fast = try SimulatedRun(frameRate: 24, seconds: 20, backend: RecordingBackend())
        let fastResult = await fast.run()
        #expect(fastResult.summary.vitals.pulseRate == 70, "\(String(describing: fastResult.summary.pulseAbsence))")
    }

    @Test("a run ends in one order: the engine's last payload (from its drain, after the source finished), then the finished state, then the summary")
    func theFinishedStateFollowsTheEnginesDrain() async throws {
        var backend = RecordingBackend()
        backend.drainPulse = 71
        let run = try SimulatedRun(frameRate: 24, seconds: 5, backend: backend)
        _ = await run.run()
        let events = run.events.all.map(\.event)
        let finished = events.lastIndex { if case .state(.finished, _) = $0 { true } else { false } }
        let drained = events.lastIndex { event in
            if case .metrics(let metrics, _) = event { metrics.cardio.pulseRate.contains { $0.value == 71 } } else { false }
        }
        let finishedIndex = try #require(finished, "no finished state")
        let drainedIndex = try #require(drained, "the engine's drain payload never arrived")
        #expect(drainedIndex < finishedIndex, "the drain's payload came after finished")
        #expect(finishedIndex == events.count - 2, "finished is not just before the summary: \(events.suffix(3))")
        #expect(events.filter { if case .state(.finished, _) = $0 { true } else { false } }.count == 1)
    }
}
