import GlassesBridge
import Foundation
import GlassesJSON
import WearablesKit

/// The bounds the checks hold a device to; every one can be set in a plan's `tolerances`.
package struct CheckTolerances: Sendable, Hashable {
    /// Frame rate within this many percent of the requested (or adapted) rate, over the measurement window.
    package var frameRatePercent = 5.0
    /// The stream reaches `.streaming` within this many seconds of the run's start.
    package var streamingWithinSeconds = 8.0
    /// 99th percentile of |frame interval − median interval| (device timestamps), ms; gaps of 1.5 intervals or more are
    /// left to the continuity check.
    package var jitterMs = 5.0
    /// Longest time between two hvc1 keyframes, seconds.
    package var keyframeIntervalSeconds = 1.5
    /// Longest time between two frames arriving in the measurement window, seconds.
    package var maxGapSeconds = 0.5
    /// Watchdog restarts of a stalled stream allowed per configuration (a stall is 5 s without frames).
    package var maxStallRestarts = 0.0
    /// Capture → `sendFrame` latency: median, 99th percentile and maximum, ms.
    package var latencyP50Ms = 150.0
    /// See ``latencyP50Ms``.
    package var latencyP99Ms = 300.0
    /// See ``latencyP50Ms``.
    package var latencyMaxMs = 500.0
    /// A photo asked for mid-stream arrives within this many seconds.
    package var photoWithinSeconds = 5.0
    /// Video frames arrive again within this many seconds of the photo.
    package var videoResumesWithinSeconds = 3.0
    /// Frames arrive again within this many seconds of the resume (tap).
    package var resumeWithinSeconds = 5.0
    /// Frames arrive again within this many seconds of a link loss (the bridge's backoff starts at 2 s).
    package var reconnectWithinSeconds = 15.0
    /// The device introduces itself within this many seconds of the link opening.
    package var helloWithinSeconds = 10.0
    /// Heartbeat round trip (the link's clock exchange), ms.
    package var heartbeatRoundTripMs = 250.0
    /// A stable pulse within this many seconds of streaming.
    package var pulseStableWithinSeconds = 25.0
    /// A stable breathing rate within this many seconds of streaming.
    package var breathingStableWithinSeconds = 50.0
    /// Mean absolute pulse error against the reference, bpm.
    package var referencePulseBpm = 5.0
    /// RMSSD error against the reference's RR intervals, ms.
    package var referenceRmssdMs = 20.0
    /// The lowest frame rate DAT adapts to; an adapted rate below it fails.
    package var minimumAdaptedFrameRate = 15.0

    /// The default bounds (`docs/HIL.md` lists them).
    package init() {}

    /// Every key a plan's `tolerances` object may hold, with the property it sets.
    static var keys: [(String, WritableKeyPath<CheckTolerances, Double>, ClosedRange<Double>)] { [
        ("frameRatePercent", \.frameRatePercent, 0...100),
        ("streamingWithinSeconds", \.streamingWithinSeconds, 0...600),
        ("jitterMs", \.jitterMs, 0...10_000),
        ("keyframeIntervalSeconds", \.keyframeIntervalSeconds, 0...600),
        ("maxGapSeconds", \.maxGapSeconds, 0...600),
        ("maxStallRestarts", \.maxStallRestarts, 0...1000),
        ("latencyP50Ms", \.latencyP50Ms, 0...600_000),
        ("latencyP99Ms", \.latencyP99Ms, 0...600_000),
        ("latencyMaxMs", \.latencyMaxMs, 0...600_000),
        ("photoWithinSeconds", \.photoWithinSeconds, 0...600),
        ("videoResumesWithinSeconds", \.videoResumesWithinSeconds, 0...600),
        ("resumeWithinSeconds", \.resumeWithinSeconds, 0...600),
        ("reconnectWithinSeconds", \.reconnectWithinSeconds, 0...600),
        // Above 0: a device gets some time to say hello, or every device is "unreachable" (exit 69).
        ("helloWithinSeconds", \.helloWithinSeconds, 0.1...600),
        ("heartbeatRoundTripMs", \.heartbeatRoundTripMs, 0...600_000),
        ("pulseStableWithinSeconds", \.pulseStableWithinSeconds, 0...3600),
        ("breathingStableWithinSeconds", \.breathingStableWithinSeconds, 0...3600),
        ("referencePulseBpm", \.referencePulseBpm, 0...250),
        ("referenceRmssdMs", \.referenceRmssdMs, 0...1000),
        ("minimumAdaptedFrameRate", \.minimumAdaptedFrameRate, 1...30),
    ] }
}

/// The groups of checks a plan can run.
package enum CheckGroup: String, Sendable, Hashable, CaseIterable {
    /// hello, identity and capabilities, protocol version, heartbeat round trip.
    case link
    /// Every stream configuration: streaming, size, rate, timestamps, jitter, keyframes, decoding, accounting, latency.
    case streams
    /// A photo mid-stream: arrives, decodes at its size, video resumes.
    case photo
    /// Pause and resume (tap), where the device can be driven or an operator prompted.
    case pauseResume
    /// Link loss and reconnect, where the device can be driven or an operator prompted.
    case linkLoss
    /// Stable pulse and breathing within their warm-up bounds; against `--reference` when one is given.
    case vitals
}

/// What a `glasses-bridge check` run does: which checks, which stream configurations, for how long, within what.
package struct CheckPlan: Sendable, Hashable {
    /// The plan's name (the JUnit testsuite).
    package var name = "default-plan"
    /// The groups to run, in this order.
    package var groups: [CheckGroup] = CheckGroup.allCases
    /// The stream configurations, each driven through the pipeline.
    package var streams: [StreamConfiguration] = [
        StreamConfiguration(videoCodec: .hvc1, resolution: .high, frameRate: 24),
        StreamConfiguration(videoCodec: .hvc1, resolution: .medium, frameRate: 24),
        StreamConfiguration(videoCodec: .hvc1, resolution: .low, frameRate: 24),
        StreamConfiguration(videoCodec: .raw, resolution: .medium, frameRate: 30),
    ]
    /// The configuration of the photo, pause/resume, link-loss and vitals runs.
    package var lifecycleStream = StreamConfiguration(videoCodec: .raw, resolution: .medium, frameRate: 24)
    /// Seconds of streaming before measuring (the first frames settle the link and the decoder).
    package var warmUpSeconds = 2.0
    /// Seconds measured per configuration.
    package var measureSeconds = 10.0
    /// Seconds of the vitals run.
    package var vitalsSeconds = 60.0
    /// The bounds.
    package var tolerances = CheckTolerances()

    /// The default plan: every group, the three resolutions at 24 fps in hvc1 and raw medium at 30.
    package init() {}

    /// Reads a plan file (`docs/HIL.md`): every key is optional; an unknown key, a wrong type or a number out of
    /// range is an error naming its line and column.
    /// - Throws: ``CheckPlanError``.
    package static func load(contentsOf path: String) throws(CheckPlanError) -> CheckPlan {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw CheckPlanError(code: .unreadable, message: "\(path): cannot be read: \(FileErrorText.reason(error))")
        }
        guard data.count <= 1 << 20 else {
            throw CheckPlanError(code: .invalid, message: "\(path): \(data.count) bytes; a plan is at most 1 MiB")
        }
        return try parse(Array(data), source: path)
    }

    /// Reads a plan from JSON bytes; `source` prefixes messages.
    /// - Throws: ``CheckPlanError``.
    package static func parse(_ bytes: [UInt8], source: String = "plan") throws(CheckPlanError) -> CheckPlan {
        let root: JSONNode
        do {
            root = try JSONNode.parse(bytes, rejectsDuplicateKeys: true, skipsByteOrderMark: true)
        } catch {
            let position = TextPosition(offset: error.offset, in: bytes)
            throw CheckPlanError(code: .invalid, message: "\(source): \(position): not valid JSON: \(error.message)")
        }
        var reader = PlanReader(bytes: bytes, source: source)
        return try reader.plan(root)
    }
}

/// A plan file that cannot be used.
package struct CheckPlanError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of problem.
    package struct Code: RawRepresentable, Sendable, Hashable {
        /// The code's name.
        package let rawValue: String
        /// Creates a code.
        package init(rawValue: String) { self.rawValue = rawValue }
        /// The file could not be read.
        package static let unreadable = Code(rawValue: "unreadable")
        /// The file is not a valid plan (syntax, unknown key, type, range).
        package static let invalid = Code(rawValue: "invalid")
    }

    /// What kind of problem.
    package var code: Code
    /// `FILE: line L, column C: what is wrong`.
    package var message: String

    /// The message.
    package var description: String { message }
}

/// Walks a parsed plan, checking every key, type and range, with positions for messages.
private struct PlanReader {
    let bytes: [UInt8]
    let source: String

    func fail(_ node: JSONNode, _ what: String) -> CheckPlanError {
        CheckPlanError(code: .invalid, message: "\(source): \(TextPosition(offset: node.offset, in: bytes)): \(what)")
    }

    func members(_ node: JSONNode, _ context: String, allowed: [String]) throws(CheckPlanError) -> [JSONNode.Member] {
        guard case .object(let members) = node.value else {
            throw fail(node, "\(context) must be an object, not \(node.typeName)")
        }
        for member in members where !allowed.contains(member.key) {
            let position = TextPosition(offset: member.keyOffset, in: bytes)
            throw CheckPlanError(
                code: .invalid,
                message: "\(source): \(position): unknown key '\(member.key)' in \(context); known keys: \(allowed.joined(separator: ", "))")
        }
        return members
    }

    func number(_ node: JSONNode, _ key: String, in range: ClosedRange<Double>) throws(CheckPlanError) -> Double {
        guard let value = node.numberValue else { throw fail(node, "'\(key)' must be a number, not \(node.typeName)") }
        guard value.isFinite else { throw fail(node, "'\(key)' is too large a number") }
        guard range.contains(value) else {
            throw fail(node, "'\(key)' is \(value); allowed \(range.lowerBound)...\(range.upperBound)")
        }
        return value
    }

    func string(_ node: JSONNode, _ key: String) throws(CheckPlanError) -> String {
        guard case .string(let text) = node.value else { throw fail(node, "'\(key)' must be a string, not \(node.typeName)") }
        return text
    }

    mutating func plan(_ root: JSONNode) throws(CheckPlanError) -> CheckPlan {
        var plan = CheckPlan()
        let keys = ["name", "checks", "streams", "lifecycleStream", "durations", "tolerances"]
        for member in try members(root, "the plan", allowed: keys) {
            let node = member.value
            switch member.key {
            case "name": plan.name = try string(node, "name")
            case "checks":
                guard case .array(let items) = node.value else { throw fail(node, "'checks' must be an array of group names") }
                var groups: [CheckGroup] = []
                for item in items {
                    let name = try string(item, "checks")
                    guard let group = CheckGroup(rawValue: name) else {
                        throw fail(item, "unknown check group '\(name)'; known: \(CheckGroup.allCases.map(\.rawValue).joined(separator: ", "))")
                    }
                    if !groups.contains(group) { groups.append(group) }
                }
                // A plan that runs nothing would pass, and a rack's CI would go green having tested nothing.
                guard !groups.isEmpty else { throw fail(node, "'checks' is empty: a plan runs at least one group (leave it out for all)") }
                plan.groups = groups
            case "streams":
                guard case .array(let items) = node.value else { throw fail(node, "'streams' must be an array of stream objects") }
                guard items.count <= 64 else { throw fail(node, "'streams' has \(items.count) entries; at most 64") }
                guard !items.isEmpty else { throw fail(node, "'streams' is empty: give at least one stream (leave it out for the default set)") }
                var streams: [StreamConfiguration] = []
                for item in items { streams.append(try stream(item, "a stream")) }
                plan.streams = streams
            case "lifecycleStream": plan.lifecycleStream = try stream(node, "'lifecycleStream'")
            case "durations":
                for entry in try members(node, "'durations'", allowed: ["warmUp", "measure", "vitals"]) {
                    switch entry.key {
                    case "warmUp": plan.warmUpSeconds = try number(entry.value, "warmUp", in: 0...600)
                    case "measure": plan.measureSeconds = try number(entry.value, "measure", in: 0.5...3600)
                    default: plan.vitalsSeconds = try number(entry.value, "vitals", in: 1...86_400)
                    }
                }
            default:
                let known = CheckTolerances.keys
                for entry in try members(node, "'tolerances'", allowed: known.map(\.0)) {
                    guard let (_, path, range) = known.first(where: { $0.0 == entry.key }) else { continue }
                    plan.tolerances[keyPath: path] = try number(entry.value, entry.key, in: range)
                }
            }
        }
        return plan
    }

    func stream(_ node: JSONNode, _ context: String) throws(CheckPlanError) -> StreamConfiguration {
        var codec = VideoCodec.hvc1, resolution = StreamingResolution.medium, rate: UInt = 24
        for member in try members(node, context, allowed: ["codec", "resolution", "fps"]) {
            switch member.key {
            case "codec":
                let name = try string(member.value, "codec")
                guard let value = VideoCodec(rawValue: name) else { throw fail(member.value, "unknown codec '\(name)'; use raw or hvc1") }
                codec = value
            case "resolution":
                let name = try string(member.value, "resolution")
                guard let value = StreamingResolution(rawValue: name) else {
                    throw fail(member.value, "unknown resolution '\(name)'; use high, medium or low")
                }
                resolution = value
            default:
                let fps = try number(member.value, "fps", in: 1...30)
                guard let whole = UInt(exactly: fps), StreamConfiguration.supportedFrameRates.contains(whole) else {
                    throw fail(member.value, "'fps' is \(fps); the glasses stream at \(StreamConfiguration.supportedFrameRates.map(String.init).joined(separator: ", "))")
                }
                rate = whole
            }
        }
        return StreamConfiguration(videoCodec: codec, resolution: resolution, frameRate: rate)
    }
}

extension StreamConfiguration {
    /// `hvc1.medium.24`: the group name of a configuration's checks.
    var checkName: String { "\(videoCodec.rawValue).\(resolution.rawValue).\(frameRate)" }
}
