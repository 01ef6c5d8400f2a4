import Foundation
import GlassesJSON
import GlassesMedia
import WearablesKit

extension Scenario {
    /// The largest scenario file or JSON text accepted: 4 MiB.
    public static let maxFileSize = 4 * 1024 * 1024
    /// The most events a scenario may have.
    public static let maxEvents = 100_000
    /// The latest event time accepted, in seconds (365 days).
    public static let maxEventTime: Double = 31_536_000
    /// The highest bandwidth cap accepted, in bits per second (1 Tbit/s).
    public static let maxBandwidthCap: Double = 1e12
    /// Every action a scenario event may name in `do`, in the order `docs/SCENARIOS.md` lists them.
    public static let actionNames = [
        "powerOff", "powerOn", "doff", "don", "fold", "unfold", "tap", "battery", "charging", "thermal", "permission",
        "permissionRequestResult", "bandwidthCap", "captureFailure", "pulseRate", "breathingRate", "linkLoss", "zombie",
        "dropFrames", "dropKeyframe", "corrupt", "truncate", "latency", "duplicateTimestamp", "timestampJump",
        "frameGap", "deviceFault", "burst", "garbage", "frameRate", "dropPhoto", "corruptPhoto", "stallAfterPhoto",
    ]

    /// Reads a scenario file.
    /// - Throws: ``SimulatorError`` `invalidScenario` naming the file and the problem (with its line and column).
    public init(contentsOf url: URL) throws(SimulatorError) {
        let data: Data
        do { data = try Data(contentsOf: url) } catch {
            throw SimulatorError(.invalidScenario, "cannot read scenario \(url.path): \(FileErrorText.reason(error))",
                                 context: ["file": url.path])
        }
        do { self = try Scenario(json: data) } catch {
            var e = error
            e.context["file"] = url.path
            e.message = "\(url.lastPathComponent): \(e.message)"
            throw e
        }
    }

    /// Parses a scenario from JSON.
    ///
    /// Every number is checked against its documented range before it is converted, so no input traps.
    /// - Throws: ``SimulatorError`` `invalidScenario` (or `invalidProfile` for the subject) whose message starts with
    ///   the line and column of the offending value; `context` holds `line`, `column`, and where they apply
    ///   `event` (its index), `field`, `value` and `allowed`.
    public init(json data: Data) throws(SimulatorError) {
        guard data.count <= Self.maxFileSize else {
            throw SimulatorError(.invalidScenario, "the scenario is larger than 4 MiB (\(data.count) bytes)",
                                 context: ["value": "\(data.count)", "allowed": "0...\(Self.maxFileSize) bytes"])
        }
        let result: Result<Scenario, SimulatorError> = data.withUnsafeBytes { bytes in
            do throws(SimulatorError) {
                return .success(try ScenarioParser(bytes: bytes).scenario())
            } catch {
                return .failure(error)
            }
        }
        self = try result.get()
    }
}

/// Turns scenario JSON into a ``Scenario``, with positions in every error.
private struct ScenarioParser {
    let bytes: UnsafeRawBufferPointer

    func position(_ offset: Int) -> TextPosition { TextPosition(offset: offset, in: bytes) }

    /// An `invalidScenario` error at `node`, naming a field, its value and the allowed range when given.
    func error(_ message: String, at offset: Int, event: Int? = nil, field: String? = nil, value: String? = nil,
               allowed: String? = nil, code: SimulatorError.Code = .invalidScenario) -> SimulatorError {
        let where_ = position(offset)
        var context = ["line": "\(where_.line)", "column": "\(where_.column)"]
        var text = "\(where_): "
        if let event {
            context["event"] = "\(event)"
            text += "event \(event): "
        }
        if let field { context["field"] = field }
        if let value { context["value"] = value }
        if let allowed { context["allowed"] = allowed }
        return SimulatorError(code, text + message, context: context)
    }

    func scenario() throws(SimulatorError) -> Scenario {
        let root: JSONNode
        do { root = try JSONNode.parse(bytes, rejectsDuplicateKeys: true, skipsByteOrderMark: true) } catch {
            throw self.error("not valid JSON: \(error.message)", at: error.offset)
        }
        guard case .object(let members) = root.value else {
            throw self.error("the top level must be a JSON object, found \(root.typeName)", at: root.offset)
        }
        let known = ["duration", "events", "imuClockOffsetMs", "name", "seed", "subject"]
        if let unknown = members.first(where: { !known.contains($0.key) }) {
            throw self.error("unknown top-level key '\(unknown.key)' (expected \(known.joined(separator: ", ")))",
                             at: unknown.keyOffset, field: unknown.key)
        }
        var name = "scenario"
        if let node = root["name"] {
            guard case .string(let text) = node.value else {
                throw self.error("'name' must be a string, found \(node.typeName)", at: node.offset, field: "name")
            }
            name = text
        }
        var subject = SubjectProfile()
        if let node = root["subject"] {
            guard case .object(let members) = node.value else {
                throw self.error("'subject' must be an object of profile fields, found \(node.typeName)", at: node.offset,
                                 field: "subject")
            }
            // A misspelt field would otherwise be ignored, and the run would simulate someone else.
            let fields = SubjectProfile.fieldNames
            if let unknown = members.first(where: { !fields.contains($0.key) }) {
                throw self.error("unknown field '\(unknown.key)' in 'subject'; known: \(fields.joined(separator: ", "))",
                                 at: unknown.keyOffset, field: "subject")
            }
            let slice = Data(UnsafeRawBufferPointer(rebasing: bytes[node.offset..<node.end]))
            do { subject = try JSONDecoder().decode(SubjectProfile.self, from: slice) } catch {
                throw self.error("'subject' has a field of the wrong type: \(Self.describe(error))", at: node.offset,
                                 field: "subject")
            }
        }
        if let node = root["seed"] {
            guard case .number(let text) = node.value, let seed = UInt64(text) else {
                throw self.error("'seed' must be a whole number 0...\(UInt64.max)", at: node.offset, field: "seed",
                                 value: Self.literal(node, in: bytes), allowed: "0...\(UInt64.max)")
            }
            subject.seed = seed
        }
        do { try subject.validate() } catch {
            let offset = root["subject"]?.offset ?? root.offset
            throw self.error(error.message, at: offset, field: "subject", code: error.code)
        }
        var duration: Double?
        if let node = root["duration"] {
            guard let seconds = node.numberValue, seconds.isFinite, seconds > 0, seconds <= 86_400 else {
                throw self.error("'duration' must be a number of seconds in (0, 86400], found \(Self.literal(node, in: bytes))",
                                 at: node.offset, field: "duration", value: Self.literal(node, in: bytes),
                                 allowed: "(0, 86400]")
            }
            duration = seconds
        }
        var imuClockOffset = 0.0
        if let node = root["imuClockOffsetMs"] {
            guard let ms = node.numberValue, ms.isFinite, abs(ms) <= Scenario.maxIMUClockOffsetMs else {
                throw self.error("'imuClockOffsetMs' must be milliseconds in [-\(Int(Scenario.maxIMUClockOffsetMs)), \(Int(Scenario.maxIMUClockOffsetMs))], found \(Self.literal(node, in: bytes))",
                                 at: node.offset, field: "imuClockOffsetMs", value: Self.literal(node, in: bytes),
                                 allowed: "[-\(Int(Scenario.maxIMUClockOffsetMs)), \(Int(Scenario.maxIMUClockOffsetMs))]")
            }
            imuClockOffset = ms / 1000
        }
        var events: [ScenarioEvent] = []
        if let node = root["events"] {
            guard case .array(let list) = node.value else {
                throw self.error("'events' must be an array of events, found \(node.typeName)", at: node.offset, field: "events")
            }
            guard list.count <= Scenario.maxEvents else {
                throw self.error("'events' has \(list.count) events; at most \(Scenario.maxEvents) are allowed",
                                 at: node.offset, field: "events", value: "\(list.count)", allowed: "0...\(Scenario.maxEvents)")
            }
            events.reserveCapacity(list.count)
            for (index, item) in list.enumerated() {
                var reader = EventReader(parser: self, node: item, index: index)
                events.append(try reader.event())
            }
        }
        var scenario = Scenario(name: name, subject: subject, duration: duration, events: events)
        scenario.imuClockOffset = imuClockOffset
        return scenario
    }

    /// The literal text of a value (numbers as written), shortened for messages.
    static func literal(_ node: JSONNode, in bytes: UnsafeRawBufferPointer) -> String {
        let end = min(node.end, node.offset + 40)
        let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[node.offset..<end]), as: UTF8.self)
        return end < node.end ? text + "…" : text
    }

    /// A decoding error in a person's words (the field's path and what was wrong), not the type's dump.
    static func describe(_ error: any Error) -> String {
        guard let decoding = error as? DecodingError else { return "\(error)" }
        func path(_ context: DecodingError.Context) -> String {
            context.codingPath.map(\.stringValue).joined(separator: ".")
        }
        switch decoding {
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            return "'\(path(context))': \(context.debugDescription)"
        case .keyNotFound(let key, _):
            return "'\(key.stringValue)' is missing"
        @unknown default:
            return "\(error)"
        }
    }
}

/// Reads one event object, failing with the event's index and the position of the offending value.
private struct EventReader {
    let parser: ScenarioParser
    let node: JSONNode
    let index: Int
    var action = ""

    init(parser: ScenarioParser, node: JSONNode, index: Int) {
        self.parser = parser
        self.node = node
        self.index = index
    }

    func fail(_ message: String, at target: JSONNode? = nil, field: String? = nil, allowed: String? = nil)
        -> SimulatorError
    {
        let value = target.map { ScenarioParser.literal($0, in: parser.bytes) }
        let what = action.isEmpty ? "" : "'\(action)': "
        return parser.error(what + message, at: target?.offset ?? node.offset, event: index, field: field, value: value,
                            allowed: allowed)
    }

    /// A required number within `range`, checked before any conversion.
    func number(_ key: String, in range: ClosedRange<Double>, unit: String = "") throws(SimulatorError) -> Double {
        let allowed = "\(Self.format(range.lowerBound))...\(Self.format(range.upperBound))\(unit)"
        guard let value = node[key] else { throw fail("needs a number '\(key)' in \(allowed)", field: key, allowed: allowed) }
        guard let n = value.numberValue else {
            throw fail("'\(key)' must be a number in \(allowed), found \(value.typeName)", at: value, field: key, allowed: allowed)
        }
        guard n.isFinite, range.contains(n) else {
            throw fail("'\(key)' is \(ScenarioParser.literal(value, in: parser.bytes)); allowed \(allowed)", at: value,
                       field: key, allowed: allowed)
        }
        return n
    }

    func optionalNumber(_ key: String, in range: ClosedRange<Double>, default fallback: Double) throws(SimulatorError) -> Double {
        node[key] == nil ? fallback : try number(key, in: range)
    }

    /// A whole number within `range` (optional, with a default).
    func count(_ key: String = "count", in range: ClosedRange<Int> = 0...1_000_000, default fallback: Int) throws(SimulatorError) -> Int {
        guard let value = node[key] else { return fallback }
        let allowed = "\(range.lowerBound)...\(range.upperBound)"
        let n = try number(key, in: Double(range.lowerBound)...Double(range.upperBound))
        guard n == n.rounded() else {
            throw fail("'\(key)' must be a whole number in \(allowed), found \(ScenarioParser.literal(value, in: parser.bytes))",
                       at: value, field: key, allowed: allowed)
        }
        return Int(n)  // exact: checked to lie within an Int range above
    }

    func enumValue<E: RawRepresentable & CaseIterable>(_ key: String, _ type: E.Type) throws(SimulatorError) -> E
    where E.RawValue == String {
        let names = E.allCases.map(\.rawValue).joined(separator: ", ")
        guard let value = node[key] else { throw fail("needs '\(key)': one of \(names)", field: key, allowed: names) }
        guard case .string(let text) = value.value, let parsed = E(rawValue: text) else {
            throw fail("'\(key)' must be one of \(names), found \(ScenarioParser.literal(value, in: parser.bytes))", at: value,
                       field: key, allowed: names)
        }
        return parsed
    }

    func status(_ key: String) throws(SimulatorError) -> PermissionStatus {
        let names = "granted, denied"
        guard let value = node[key] else { throw fail("needs '\(key)': one of \(names)", field: key, allowed: names) }
        guard case .string(let text) = value.value, let parsed = PermissionStatus(rawValue: text) else {
            throw fail("'\(key)' must be one of \(names), found \(ScenarioParser.literal(value, in: parser.bytes))", at: value,
                       field: key, allowed: names)
        }
        return parsed
    }

    func isNull(_ key: String) -> Bool {
        if case .null = node[key]?.value { return true }
        return false
    }

    func bool(_ key: String, default fallback: Bool) throws(SimulatorError) -> Bool {
        guard let value = node[key] else { return fallback }
        guard case .bool(let b) = value.value else {
            throw fail("'\(key)' must be true or false, found \(value.typeName)", at: value, field: key, allowed: "true, false")
        }
        return b
    }

    func string(_ key: String, default fallback: String) throws(SimulatorError) -> String {
        guard let value = node[key] else { return fallback }
        guard case .string(let s) = value.value else {
            throw fail("'\(key)' must be a string, found \(value.typeName)", at: value, field: key)
        }
        return s
    }

    static func format(_ x: Double) -> String {
        x == x.rounded() && abs(x) < 1e15 ? String(Int64(x)) : "\(x)"
    }

    mutating func event() throws(SimulatorError) -> ScenarioEvent {
        guard case .object = node.value else { throw fail("must be an object, found \(node.typeName)") }
        let actions = Scenario.actionNames.joined(separator: ", ")
        guard let doNode = node["do"] else {
            throw fail("needs 'do' naming an action: one of \(actions)", field: "do", allowed: actions)
        }
        guard case .string(let name) = doNode.value else {
            throw fail("'do' must name an action (one of \(actions)), found \(doNode.typeName)", at: doNode, field: "do",
                       allowed: actions)
        }
        guard Scenario.actionNames.contains(name) else {
            throw fail("unknown action '\(name)'; the valid actions are \(actions)", at: doNode, field: "do", allowed: actions)
        }
        action = name
        let at = try number("at", in: 0...Scenario.maxEventTime, unit: " seconds")
        return ScenarioEvent(at: at, action: try parseAction(name))
    }

    private func parseAction(_ name: String) throws(SimulatorError) -> ScenarioAction {
        switch name {
        case "powerOn": return .powerOn
        case "powerOff": return .powerOff
        case "don": return .don
        case "doff": return .doff
        case "fold": return .fold
        case "unfold": return .unfold
        case "tap": return .tap
        case "battery":
            if isNull("level") { return .battery(nil) }
            guard node["level"] != nil else {
                throw fail("needs 'level': a whole number 0...100, or null", field: "level", allowed: "0...100, null")
            }
            return .battery(try count("level", in: 0...100, default: 0))
        case "charging": return .charging(try enumValue("state", ChargingState.self))
        case "thermal": return .thermal(try enumValue("level", ThermalLevel.self))
        case "permission", "permissionRequestResult":
            let permission = node["permission"] == nil ? Permission.camera : try enumValue("permission", Permission.self)
            let status = try status("status")
            return name == "permission" ? .permission(permission, status) : .permissionRequestResult(permission, status)
        case "bandwidthCap":
            if node["bitsPerSecond"] == nil || isNull("bitsPerSecond") { return .bandwidthCap(nil) }
            let bps = try number("bitsPerSecond", in: 1000...Scenario.maxBandwidthCap, unit: " bit/s")
            return .bandwidthCap(Int(bps))  // exact enough: checked to lie far inside Int's range above
        case "captureFailure": return .captureFailure
        case "pulseRate": return .pulseRate(try number("bpm", in: SubjectProfile.pulseRateRange))
        case "breathingRate": return .breathingRate(try number("brpm", in: SubjectProfile.breathingRateRange))
        case "linkLoss": return .fault(.linkLoss)
        case "zombie": return .fault(.zombieStream(try bool("on", default: true)))
        case "dropFrames": return .fault(.dropFrames(count: try count(default: 1)))
        case "dropKeyframe": return .fault(.dropKeyframe)
        case "corrupt": return .fault(.corruptSamples(count: try count(default: 1)))
        case "truncate": return .fault(.truncateSamples(count: try count(default: 1)))
        case "latency":
            return .fault(.latency(latencyMs: try optionalNumber("ms", in: 0...60_000, default: 0),
                                   jitterMs: try optionalNumber("jitterMs", in: 0...60_000, default: 0)))
        case "duplicateTimestamp": return .fault(.duplicateTimestamp)
        case "timestampJump": return .fault(.timestampJump(ms: try number("ms", in: -3_600_000...3_600_000)))
        case "frameGap": return .fault(.frameGap(durationMs: try number("ms", in: 0...3_600_000)))
        case "deviceFault":
            return .fault(.deviceFault(try enumValue("fault", DeviceStreamFault.self),
                                       message: try string("message", default: "simulated fault")))
        case "burst": return .fault(.burst(count: try count(in: 1...1000, default: 10)))
        case "garbage": return .fault(.garbageBytes(count: try count(default: 64)))
        case "frameRate":
            if node["fps"] == nil || isNull("fps") { return .fault(.frameRate(fps: nil)) }
            return .fault(.frameRate(fps: try number("fps", in: 1...240, unit: " fps")))
        case "dropPhoto": return .fault(.dropPhoto)
        case "corruptPhoto": return .fault(.corruptPhoto)
        case "stallAfterPhoto": return .fault(.stallAfterPhoto)
        default:
            // Unreachable: `event()` accepted only names in `actionNames`.
            throw fail("unknown action '\(name)'; the valid actions are \(Scenario.actionNames.joined(separator: ", "))")
        }
    }
}
