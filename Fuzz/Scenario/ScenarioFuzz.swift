// libFuzzer target: the simulator's scenario parser (built by `Scripts/fuzz Scenario SECONDS`).
//
// The input is scenario JSON, given to `Scenario(json:)` (the path of `glasses-sim --scenario` and
// `Scenario(contentsOf:)`). Checks, besides AddressSanitizer and Swift's traps:
// - every rejection is a `SimulatorError` (typed throws) of code `invalidScenario` or `invalidProfile` with a
//   message; one about a place in the text names it: `context` has `line` and `column` (both ≥ 1) and the message
//   starts with "line L, column C";
// - an accepted scenario keeps the documented limits (docs/SCENARIOS.md): at most `Scenario.maxEvents` events, each
//   `at` finite in 0...`Scenario.maxEventTime`, sorted by time; `duration` in (0, 86400]; every action's parameters in
//   their ranges; the subject passes `validate()`;
// - parsing is deterministic (the same text gives the same scenario or the same error twice).
import Foundation
import GlassesSimulator
import WearablesKit

@_cdecl("LLVMFuzzerTestOneInput")
public func scenarioFuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    ScenarioFuzz.run(Data(UnsafeRawBufferPointer(start: data, count: size)))
    return 0
}

enum ScenarioFuzz {
    static func check(_ condition: Bool, _ message: @autoclosure () -> String) {
        if !condition { fatalError("property failed: \(message())") }
    }

    static func parse(_ data: Data) -> Result<Scenario, SimulatorError> {
        Result { () throws(SimulatorError) in try Scenario(json: data) }
    }

    static func run(_ data: Data) {
        let first = parse(data)
        switch (first, parse(data)) {
        case (.success(let a), .success(let b)): check(a == b, "two parses differ")
        case (.failure(let a), .failure(let b)):
            check(a.code == b.code && a.message == b.message && a.context == b.context, "two rejections differ")
        default: check(false, "one parse accepted, the other rejected")
        }
        switch first {
        case .success(let scenario): checkAccepted(scenario)
        case .failure(let error): checkRejection(error, size: data.count)
        }
    }

    static func checkRejection(_ error: SimulatorError, size: Int) {
        check(error.code == .invalidScenario || error.code == .invalidProfile, "undocumented code \(error.code): \(error)")
        check(!error.message.isEmpty, "a rejection without a message")
        // Only the size check names no place (it happens before the text is read).
        guard size <= Scenario.maxFileSize else { return }
        guard let lineText = error.context["line"], let columnText = error.context["column"],
            let line = Int(lineText), let column = Int(columnText)
        else {
            check(false, "a rejection without a line and column: \(error.message) \(error.context)")
            return
        }
        check(line >= 1 && column >= 1, "position \(line):\(column)")
        check(error.message.hasPrefix("line \(line), column \(column): "), "message does not start with its position: \(error.message)")
    }

    static func inRange(_ value: Double, _ range: ClosedRange<Double>) -> Bool { value.isFinite && range.contains(value) }

    static func checkAccepted(_ scenario: Scenario) {
        check(scenario.events.count <= Scenario.maxEvents, "\(scenario.events.count) events")
        if let duration = scenario.duration {
            check(duration.isFinite && duration > 0 && duration <= 86_400, "duration \(duration)")
        }
        do { try scenario.subject.validate() } catch { check(false, "accepted subject fails validation: \(error)") }
        var previous = 0.0
        for (index, event) in scenario.events.enumerated() {
            check(inRange(event.at, 0...Scenario.maxEventTime), "event \(index) at \(event.at)")
            check(event.at >= previous, "events not sorted at \(index)")
            previous = event.at
            check(actionInRange(event.action), "event \(index): \(event.action) outside its documented range")
        }
    }

    static func actionInRange(_ action: ScenarioAction) -> Bool {
        switch action {
        case .powerOn, .powerOff, .don, .doff, .fold, .unfold, .tap, .captureFailure, .charging, .thermal, .permission,
            .permissionRequestResult:
            return true
        case .battery(let level): return level.map { (0...100).contains($0) } ?? true
        case .bandwidthCap(let cap): return cap.map { inRange(Double($0), 1000...Scenario.maxBandwidthCap) } ?? true
        case .pulseRate(let bpm): return inRange(bpm, 25...240)
        case .breathingRate(let brpm): return inRange(brpm, 3...60)
        case .fault(let fault):
            switch fault {
            case .linkLoss, .zombieStream, .dropKeyframe, .duplicateTimestamp, .deviceFault, .dropPhoto, .corruptPhoto, .stallAfterPhoto: return true
            case .frameRate(let fps): return fps.map { inRange($0, 1...240) } ?? true
            case .dropFrames(let count), .corruptSamples(let count), .truncateSamples(let count), .garbageBytes(let count):
                return (0...1_000_000).contains(count)
            case .burst(let count): return (1...1000).contains(count)
            case .latency(let latency, let jitter): return inRange(latency, 0...60_000) && inRange(jitter, 0...60_000)
            case .timestampJump(let ms): return inRange(ms, -3_600_000...3_600_000)
            case .frameGap(let ms): return inRange(ms, 0...3_600_000)
            }
        }
    }
}
