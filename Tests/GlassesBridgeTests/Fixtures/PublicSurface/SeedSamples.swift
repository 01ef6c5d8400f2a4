// The seeds' code as an app developer writes it on Linux, against the public products alone (WearablesKit,
// SmartSpectraInput, GlassesBridge). PublicSurfaceTests type-checks this file, with the walkthrough in
// Tests/WearablesKitTests/Walkthrough.swift, outside the package: a `package` symbol here fails that test. It is
// never run; the behaviour of each call is tested elsewhere.
import Foundation
import GlassesBridge
import SmartSpectraInput
import WearablesKit

// SmartSpectra headless mode with custom input (seed 000), as docs/SMARTSPECTRA-ON-LINUX.md shows it.
func headlessCustomInput(pixelBuffer: PixelBuffer, presentationTimeUs: Int64) async throws {
    let sdk = SmartSpectraSDK.shared
    sdk.config.apiKey = "YOUR_API_KEY"
    sdk.config.requestedMetrics = SmartSpectraConfig.breathingMetrics + [.pulseRate]
    let input = try sdk.useCustomInput(frameTransform: .none)
    try await sdk.start()
    switch input.sendFrame(pixelBuffer, timestampUs: presentationTimeUs) {
    case .accepted:
        break
    case .rejected(let error):
        print("Frame rejected: \(error.code): \(error.message)")
    }
    if let pulse = sdk.metrics?.cardio.pulseRate.last?.value { print("\(pulse) bpm") }
    try await sdk.stop()
}

// Reading metrics (seed 001): the latest payload, the advanced fields, and a pulse label that keeps its last value.
nonisolated(unsafe) private var lastPulseRate: Double?

func pulseRateText(from metrics: Metrics?) -> String {
    if let pulse = metrics?.cardio.pulseRate.last(where: { $0.timestamp > 0 })?.value {
        lastPulseRate = Double(pulse)
        return "\(Int(pulse.rounded())) bpm"
    }
    guard let lastPulseRate else { return "-- bpm" }
    return "\(Int(lastPulseRate.rounded())) bpm"
}

func readMetrics(_ sdk: SmartSpectraSDK) {
    sdk.config.requestedMetrics = SmartSpectraConfig.breathingMetrics + [.pulseRate, .arterialPressureTrace, .hrv]
    if let metrics = sdk.metrics {
        let breathingRate = metrics.breathing.rate.last?.value
        let chestTrace = metrics.breathing.upperTrace.last?.value
        let abdomenTrace = metrics.breathing.lowerTrace.last?.value
        let pulseRate = metrics.cardio.pulseRate.last?.value
        let pressureTrace = metrics.cardio.arterialPressureTrace.last?.value
        let hrvRmssd = metrics.cardio.hrv.last?.rmssd
        print(breathingRate as Any, chestTrace as Any, abdomenTrace as Any, pulseRate as Any, pressureTrace as Any, hrvRmssd as Any)
    }
}

// Glasses frames into custom input: DAT's `sendFrame(frame.sampleBuffer)` on Linux (GlassesFrameInput).
func glassesFramesIntoCustomInput(stream: WearablesKit.Stream) async throws -> AnyListenerToken {
    let sdk = SmartSpectraSDK(config: SmartSpectraConfig(requestedMetrics: SmartSpectraConfig.cardioMetrics))
    let input = GlassesFrameInput(customInput: try sdk.useCustomInput())
    try await sdk.start()
    return stream.videoFramePublisher.listen { frame in
        do {
            for result in try input.send(frame) {
                if case .rejected(let error) = result { print("frame rejected: \(error.localizedDescription)") }
            }
        } catch {
            print(error.localizedDescription)
        }
    }
}

// The bridge's pipeline embedded in an app: a recording through custom input, its judged events, the summary.
func pipelineOverARecording(path: String) async -> BridgeSummary {
    var settings = BridgeSettings(streamConfiguration: StreamConfiguration(videoCodec: .raw, resolution: .medium, frameRate: 24))
    settings.metrics = .default
    settings.duration = .seconds(30)
    let pipeline = BridgePipeline(settings: settings, source: .file(path), clock: .realTime(DispatchEventScheduler(label: "app.clock"))) { event, seconds in
        switch event {
        case .stats(let stats, let vitals, _, _):
            print(seconds, stats.accounting.received, vitals.pulseRate as Any)
        case .summary(let summary):
            print(summary.vitals.pulseRate as Any, summary.stats.accounting.isBalanced)
        default:
            break
        }
    }
    return await pipeline.run().summary
}
