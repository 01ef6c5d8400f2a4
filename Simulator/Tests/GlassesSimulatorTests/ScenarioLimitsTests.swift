import Foundation
import GlassesLink
import Synchronization
import Testing
import WearablesKit
@testable import GlassesSimulator

/// Parses `json`, expecting a typed error; returns it (nil, with an issue recorded, when the scenario was accepted).
private func parseError(_ json: String) -> SimulatorError? {
    do {
        _ = try Scenario(json: Data(json.utf8))
        Issue.record("accepted \(json.prefix(200))")
        return nil
    } catch {
        return error
    }
}

@Suite("Scenario limits and error positions (#13, #19)")
struct ScenarioLimitsTests {
    @Test("an event time beyond the limit is an error naming 'at', its value and the range (no trap)",
          arguments: ["1e300", "9.3e12", "31536000.5", "-1"])
    func eventTimeLimit(at: String) throws {
        let error = try #require(parseError(#"{"events": [{"at": \#(at), "do": "tap"}]}"#))
        #expect(error.code == .invalidScenario)
        #expect(error.message.contains("'at' is \(at)"), "\(error.message)")
        #expect(error.message.contains("0...31536000"), "\(error.message)")
        #expect(error.context["field"] == "at" && error.context["value"] == at && error.context["event"] == "0")
    }

    @Test("a bandwidth cap beyond the limit is an error naming 'bitsPerSecond', its value and the range (no trap)",
          arguments: ["9.3e18", "1e300", "999"])
    func bandwidthCapLimit(bps: String) throws {
        let error = try #require(parseError(#"{"events": [{"at": 1, "do": "bandwidthCap", "bitsPerSecond": \#(bps)}]}"#))
        #expect(error.message.contains("'bitsPerSecond' is \(bps)"), "\(error.message)")
        #expect(error.context["allowed"] == "1000...1000000000000 bit/s", "\(error.context)")
    }

    @Test("a huge seed or battery level is an error, not a trap")
    func otherNumbers() throws {
        #expect(parseError(#"{"seed": 1e300}"#)?.message.contains("'seed'") == true)
        #expect(parseError(#"{"seed": 18446744073709551616}"#)?.message.contains("'seed'") == true)
        #expect(parseError(#"{"events": [{"at": 1, "do": "battery", "level": 1e300}]}"#)?.message.contains("'level'") == true)
        #expect(parseError(#"{"events": [{"at": 1, "do": "burst", "count": 1e300}]}"#)?.message.contains("'count'") == true)
        let s = try Scenario(json: Data(#"{"seed": 18446744073709551615}"#.utf8))
        #expect(s.subject.seed == UInt64.max)
    }

    @Test("an unknown action gives its line and column and lists the valid actions")
    func unknownActionPosition() throws {
        let json = """
        {"name": "x",
         "events": [{"at": 1, "do": "tap"},
           {"at": 2, "do": "explode"}]}
        """
        let error = try #require(parseError(json))
        #expect(error.message.hasPrefix("line 3, column 20: event 1: unknown action 'explode'"), "\(error.message)")
        #expect(error.context["line"] == "3" && error.context["column"] == "20")
        for action in ["powerOff", "tap", "bandwidthCap", "garbage", "deviceFault"] {
            #expect(error.message.contains(action), "\(error.message)")
        }
    }

    @Test("syntax errors, wrong types and bad values point at the offending character")
    func positions() throws {
        let syntax = try #require(parseError("{\"events\": [\n  {\"at\": 1 \"do\": \"tap\"}]}"))
        #expect(syntax.message.hasPrefix("line 2, column 12: not valid JSON: expected ',' or '}'"), "\(syntax.message)")
        let type = try #require(parseError("{\"events\": [\n{\"at\": \"soon\", \"do\": \"tap\"}]}"))
        #expect(type.message.hasPrefix("line 2, column 8: event 0: 'tap': 'at' must be a number"), "\(type.message)")
        let value = try #require(parseError("{\"events\": [\n\n   {\"at\": 1, \"do\": \"thermal\", \"level\": \"warm\"}]}"))
        #expect(value.message.hasPrefix("line 3, column 40: event 0: 'thermal': 'level' must be one of unknown, none"),
                "\(value.message)")
        // Columns count characters, not bytes.
        let wide = try #require(parseError("{\"name\": \"é\", \"bogus\": 1}"))
        #expect(wide.message.hasPrefix("line 1, column 15: unknown top-level key 'bogus'"), "\(wide.message)")
        let deep = try #require(parseError(String(repeating: "[", count: 10_000)))
        #expect(deep.message.contains("nested more than"))
    }

    @Test("more events than the documented limit are refused; the limit itself parses")
    func eventCount() throws {
        func events(_ n: Int) -> String {
            "{\"events\": [" + Array(repeating: #"{"at":1,"do":"tap"}"#, count: n).joined(separator: ",") + "]}"
        }
        #expect(try Scenario(json: Data(events(Scenario.maxEvents).utf8)).events.count == 100_000)
        let error = try #require(parseError(events(Scenario.maxEvents + 1)))
        #expect(error.message.contains("at most 100000"), "\(error.message)")
    }

    @Test("100 000 events keep one scheduled entry at a time and all run in order")
    func manyEventsRunLinearly() throws {
        let rig = try Rig()
        let performed = Mutex(0)
        rig.glasses.setLogHandler { line in
            if line.hasSuffix("permission camera granted") { performed.withLock { $0 += 1 } }
        }
        let events = (0..<100_000).map { ScenarioEvent(at: Double($0) * 0.00003, action: .permission(.camera, .granted)) }
        rig.start(config())
        let before = rig.scheduler.pendingCount
        rig.glasses.run(Scenario(events: events))
        // Before: one pending scheduler entry per event (100 000), each frame paying for all of them.
        try #require(rig.scheduler.pendingCount <= before + 1, "pending \(rig.scheduler.pendingCount)")
        var peak = 0
        for _ in 0..<30 {
            rig.run(0.1)
            peak = max(peak, rig.scheduler.pendingCount)
        }
        #expect(peak <= before + 2)
        #expect(performed.withLock { $0 } == 100_000)
        #expect(rig.probe.samples.count >= 44)  // the stream went on meanwhile (3 s at 15 fps)
    }

    @Test("a programmatic event time beyond the limit is skipped and reported, not a trap")
    func hugeEventTimeAtRun() throws {
        let rig = try Rig()
        rig.start(config())
        rig.glasses.run(Scenario(events: [ScenarioEvent(at: 1e300, action: .tap), ScenarioEvent(at: 1, action: .tap)]))
        rig.run(2)
        #expect(rig.probe.streamEvents.last == .paused)  // the valid event still ran
        #expect(rig.glasses.statistics.failedEvents == 1)
    }
}

@Suite("No reference cycles through the scheduler (#19)")
struct SchedulerCycleTests {
    @Test("pending scenario events and delayed samples do not keep the scheduler or the glasses alive")
    func pendingWorkReleases() throws {
        weak var weakScheduler: ManualScheduler?
        weak var weakGlasses: SimulatedGlasses?
        do {
            let rig = try Rig()
            weakScheduler = rig.scheduler
            weakGlasses = rig.glasses
            rig.start(config())
            rig.glasses.inject(.latency(latencyMs: 500, jitterMs: 0))
            rig.glasses.run(Scenario(events: [ScenarioEvent(at: 100, action: .tap)]))
            rig.run(0.3)  // delayed samples and the scenario's next event are pending
            rig.probe.link.close()
            rig.run(0.01)  // deliver the close to both ends
            #expect(rig.scheduler.pendingCount > 0)
        }
        #expect(weakGlasses == nil)
        #expect(weakScheduler == nil)
    }
}
