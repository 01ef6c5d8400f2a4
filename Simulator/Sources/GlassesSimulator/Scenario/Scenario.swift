import Foundation
import WearablesKit

/// One thing that happens to the glasses at a scenario time.
public enum ScenarioAction: Sendable, Hashable {
    case powerOn, powerOff, don, doff, fold, unfold, tap
    case battery(Int?)
    case charging(ChargingState)
    case thermal(ThermalLevel)
    case permission(Permission, PermissionStatus)
    case permissionRequestResult(Permission, PermissionStatus)
    case bandwidthCap(Int?)
    case captureFailure
    case pulseRate(Double)
    case breathingRate(Double)
    case fault(SimulatedFault)
}

/// A timed event of a scenario.
public struct ScenarioEvent: Sendable, Hashable {
    /// Seconds after the scenario starts.
    public var at: Double
    /// What happens.
    public var action: ScenarioAction

    /// Creates an event.
    public init(at: Double, action: ScenarioAction) {
        self.at = at
        self.action = action
    }
}

/// A script of timed events and faults for the simulated glasses (see `docs/SCENARIOS.md` for the JSON format).
public struct Scenario: Sendable, Hashable {
    /// A name for logs.
    public var name: String
    /// The simulated person (and the seed for everything random).
    public var subject: SubjectProfile
    /// How long the scenario runs, in seconds (nil: until stopped).
    public var duration: Double?
    /// The events, sorted by time (stable for equal times).
    public var events: [ScenarioEvent]

    /// Creates a scenario.
    public init(name: String = "scenario", subject: SubjectProfile = SubjectProfile(), duration: Double? = nil,
                events: [ScenarioEvent] = []) {
        self.name = name
        self.subject = subject
        self.duration = duration
        self.events = events.enumerated().sorted { ($0.element.at, $0.offset) < ($1.element.at, $1.offset) }.map(\.element)
    }

    /// Reads a scenario file.
    /// - Throws: ``SimulatorError`` `invalidScenario` naming the file and the problem.
    public init(contentsOf url: URL) throws(SimulatorError) {
        let data: Data
        do { data = try Data(contentsOf: url) } catch {
            throw SimulatorError(.invalidScenario, "cannot read scenario \(url.path): \(error.localizedDescription)",
                                 context: ["file": url.path])
        }
        guard data.count <= 4 * 1024 * 1024 else {
            throw SimulatorError(.invalidScenario, "scenario \(url.path) is larger than 4 MiB", context: ["file": url.path])
        }
        do { self = try Scenario(json: data) } catch {
            var e = error
            e.context["file"] = url.path
            e.message = "\(url.lastPathComponent): \(e.message)"
            throw e
        }
    }

    /// Parses a scenario from JSON.
    /// - Throws: ``SimulatorError`` `invalidScenario` with the event index and the problem.
    public init(json data: Data) throws(SimulatorError) {
        let object: Any
        do { object = try JSONSerialization.jsonObject(with: data) } catch {
            throw SimulatorError(.invalidScenario, "not valid JSON: \(error.localizedDescription)")
        }
        guard let root = object as? [String: Any] else {
            throw SimulatorError(.invalidScenario, "the top level must be a JSON object")
        }
        let known: Set<String> = ["name", "seed", "subject", "duration", "events"]
        if let unknown = root.keys.first(where: { !known.contains($0) }) {
            throw SimulatorError(.invalidScenario, "unknown top-level key '\(unknown)' (expected \(known.sorted().joined(separator: ", ")))")
        }
        var subject = SubjectProfile()
        if let s = root["subject"] {
            guard let dict = s as? [String: Any], let subjectData = try? JSONSerialization.data(withJSONObject: dict) else {
                throw SimulatorError(.invalidScenario, "'subject' must be an object of profile fields")
            }
            do { subject = try JSONDecoder().decode(SubjectProfile.self, from: subjectData) } catch {
                throw SimulatorError(.invalidScenario, "'subject' has a field of the wrong type: \(error)")
            }
        }
        if let seed = root["seed"] {
            guard let n = seed as? NSNumber, n.int64Value >= 0, Double(n.int64Value) == n.doubleValue else {
                throw SimulatorError(.invalidScenario, "'seed' must be a non-negative integer")
            }
            subject.seed = UInt64(n.int64Value)
        }
        try subject.validate()
        var duration: Double?
        if let d = root["duration"] {
            guard let n = d as? NSNumber, n.doubleValue.isFinite, n.doubleValue > 0, n.doubleValue <= 86_400 else {
                throw SimulatorError(.invalidScenario, "'duration' must be a number of seconds in (0, 86400]")
            }
            duration = n.doubleValue
        }
        let rawEvents = root["events"] ?? [Any]()
        guard let list = rawEvents as? [Any], list.count <= 100_000 else {
            throw SimulatorError(.invalidScenario, "'events' must be an array (at most 100000 events)")
        }
        var events: [ScenarioEvent] = []
        for (index, item) in list.enumerated() {
            guard let dict = item as? [String: Any] else {
                throw SimulatorError(.invalidScenario, "event \(index) must be an object", context: ["event": "\(index)"])
            }
            do { events.append(try Self.parseEvent(dict)) } catch {
                throw SimulatorError(.invalidScenario, "event \(index): \(error.message)", context: ["event": "\(index)"])
            }
        }
        self.init(name: root["name"] as? String ?? "scenario", subject: subject, duration: duration, events: events)
    }

    private static func parseEvent(_ d: [String: Any]) throws(SimulatorError) -> ScenarioEvent {
        func fail(_ message: String) -> SimulatorError { SimulatorError(.invalidScenario, message) }
        guard let atNumber = d["at"] as? NSNumber, atNumber.doubleValue.isFinite, atNumber.doubleValue >= 0 else {
            throw fail("'at' must be a non-negative number of seconds")
        }
        guard let name = d["do"] as? String else { throw fail("'do' must name an action") }
        func number(_ key: String) throws(SimulatorError) -> Double {
            guard let n = d[key] as? NSNumber, n.doubleValue.isFinite else { throw fail("'\(name)' needs a number '\(key)'") }
            return n.doubleValue
        }
        func optionalNumber(_ key: String, default value: Double) throws(SimulatorError) -> Double {
            d[key] == nil ? value : try number(key)
        }
        func count(_ key: String = "count", default value: Int = 1) throws(SimulatorError) -> Int {
            let n = try optionalNumber(key, default: Double(value))
            guard n >= 0, n <= 1_000_000, n == n.rounded() else { throw fail("'\(key)' must be a whole number 0...1000000") }
            return Int(n)
        }
        func enumValue<E: RawRepresentable>(_ key: String, _ type: E.Type) throws(SimulatorError) -> E where E.RawValue == String {
            guard let s = d[key] as? String, let v = E(rawValue: s) else {
                throw fail("'\(name)' needs '\(key)' to be one of the documented values")
            }
            return v
        }
        let action: ScenarioAction
        switch name {
        case "powerOn": action = .powerOn
        case "powerOff": action = .powerOff
        case "don": action = .don
        case "doff": action = .doff
        case "fold": action = .fold
        case "unfold": action = .unfold
        case "tap": action = .tap
        case "battery":
            if d["level"] is NSNull { action = .battery(nil) } else {
                let level = try number("level")
                guard (0...100).contains(level) else { throw fail("'level' must be 0...100") }
                action = .battery(Int(level))
            }
        case "charging": action = .charging(try enumValue("state", ChargingState.self))
        case "thermal": action = .thermal(try enumValue("level", ThermalLevel.self))
        case "permission":
            action = .permission(d["permission"] == nil ? .camera : try enumValue("permission", Permission.self),
                                 try enumValue("status", PermissionStatus.self))
        case "permissionRequestResult":
            action = .permissionRequestResult(d["permission"] == nil ? .camera : try enumValue("permission", Permission.self),
                                              try enumValue("status", PermissionStatus.self))
        case "bandwidthCap":
            if d["bitsPerSecond"] == nil || d["bitsPerSecond"] is NSNull { action = .bandwidthCap(nil) } else {
                let bps = try number("bitsPerSecond")
                guard bps >= 1000 else { throw fail("'bitsPerSecond' must be at least 1000") }
                action = .bandwidthCap(Int(bps))
            }
        case "captureFailure": action = .captureFailure
        case "pulseRate":
            let bpm = try number("bpm")
            guard (25...240).contains(bpm) else { throw fail("'bpm' must be 25...240") }
            action = .pulseRate(bpm)
        case "breathingRate":
            let brpm = try number("brpm")
            guard (3...60).contains(brpm) else { throw fail("'brpm' must be 3...60") }
            action = .breathingRate(brpm)
        case "linkLoss": action = .fault(.linkLoss)
        case "zombie": action = .fault(.zombieStream(d["on"] as? Bool ?? true))
        case "dropFrames": action = .fault(.dropFrames(count: try count()))
        case "dropKeyframe": action = .fault(.dropKeyframe)
        case "corrupt": action = .fault(.corruptSamples(count: try count()))
        case "truncate": action = .fault(.truncateSamples(count: try count()))
        case "latency":
            let ms = try optionalNumber("ms", default: 0), jitter = try optionalNumber("jitterMs", default: 0)
            guard (0...60_000).contains(ms), (0...60_000).contains(jitter) else { throw fail("'ms' and 'jitterMs' must be 0...60000") }
            action = .fault(.latency(latencyMs: ms, jitterMs: jitter))
        case "duplicateTimestamp": action = .fault(.duplicateTimestamp)
        case "timestampJump":
            let ms = try number("ms")
            guard abs(ms) <= 3_600_000 else { throw fail("'ms' must be within ±3600000") }
            action = .fault(.timestampJump(ms: ms))
        case "frameGap":
            let ms = try number("ms")
            guard (0...3_600_000).contains(ms) else { throw fail("'ms' must be 0...3600000") }
            action = .fault(.frameGap(durationMs: ms))
        case "deviceFault":
            action = .fault(.deviceFault(try enumValue("fault", DeviceStreamFault.self),
                                         message: d["message"] as? String ?? "simulated fault"))
        case "burst": action = .fault(.burst(count: max(1, min(try count(default: 10), 1000))))
        case "garbage": action = .fault(.garbageBytes(count: min(try count(default: 64), 1_000_000)))
        default:
            throw fail("unknown action '\(name)'")
        }
        return ScenarioEvent(at: atNumber.doubleValue, action: action)
    }
}

extension SimulatedGlasses {
    /// Performs one scenario action now.
    public func perform(_ action: ScenarioAction) {
        switch action {
        case .powerOn: powerOn()
        case .powerOff: powerOff()
        case .don: don()
        case .doff: doff()
        case .fold: fold()
        case .unfold: unfold()
        case .tap: tap()
        case .battery(let level): setBatteryLevel(level)
        case .charging(let state): setChargingState(state)
        case .thermal(let level): setThermalLevel(level)
        case .permission(let p, let s): setPermission(p, s)
        case .permissionRequestResult(let p, let s): setPermissionRequestResult(p, s)
        case .bandwidthCap(let cap): setBandwidthCap(bitsPerSecond: cap)
        case .captureFailure: simulateCaptureFailure()
        case .pulseRate(let bpm): setPulseRate(bpm)
        case .breathingRate(let brpm): setBreathingRate(brpm)
        case .fault(let fault): inject(fault)
        }
    }

    /// Schedules every event of `scenario` relative to now on the glasses' scheduler.
    /// - Returns: handles that cancel the events not yet run.
    @discardableResult
    public func run(_ scenario: Scenario) -> [ScheduledAction] {
        scenario.events.map { event in
            let delay = Duration.microseconds(Int64((event.at * 1_000_000).rounded()))
            return scheduler.schedule(after: delay) { [weak self] in self?.perform(event.action) }
        }
    }
}
