import Foundation
import GlassesJSON
import SmartSpectraInput

/// One JSON object per line per event: first `{RunLineKeys.type:RunLineKeys.start,RunLineKeys.schemaVersion:…}`, last `{RunLineKeys.type:RunLineKeys.summary,…}`.
///
/// Every field has one JSON type across event kinds (`code` is always a string, the code's name); the schemas are
/// in `docs/schema/`.
package struct NDJSONEventFormatter: BridgeEventFormatter {
    /// The version of the event schema (`docs/schema/`), in the first object; raised when a field changes meaning
    /// or type.
    package static let schemaVersion = 1

    /// Whether the source is simulated: every `stats` line then has `truth` (its values null until known).
    package let simulated: Bool

    /// When the run began on the wall clock, written as the start line's `startedAt` (nil leaves it out).
    package let startedAt: Date?

    /// The device's label in a run of several devices: every event then carries `"device":…` after `t`.
    package let device: String?

    /// Creates the formatter.
    /// - Parameter device: the device's label in a run of several devices (nil: a one-device run, no `device`).
    package init(simulated: Bool = false, startedAt: Date? = nil, device: String? = nil) {
        self.simulated = simulated
        self.startedAt = startedAt
        self.device = device
    }

    /// The first line: `{RunLineKeys.type:RunLineKeys.start,RunLineKeys.t:0.0,RunLineKeys.schemaVersion:1,RunLineKeys.simulated:…}` (and `startedAt` when known).
    package var preamble: String {
        var members: [(String, JSONValue)] = [
            (RunLineKeys.type, .string(RunLineKeys.start)), (RunLineKeys.t, .double(0)), (RunLineKeys.schemaVersion, .int(Int64(Self.schemaVersion))),
            (RunLineKeys.simulated, .bool(simulated)),
        ]
        if let startedAt {
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            members.append((RunLineKeys.startedAt, .string(formatter.string(from: startedAt))))
        }
        return JSONValue.object(members).serialized + "\n"
    }

    /// One line of JSON for the event.
    package mutating func format(_ event: BridgeEvent, at seconds: Double) -> String {
        var event = event
        if simulated, case .stats(let stats, let vitals, nil, let reference) = event {
            event = .stats(stats, vitals: vitals, truth: VitalsSnapshot(), reference: reference)
        }
        if simulated, case .summary(var summary) = event, summary.truth == nil {
            summary.truth = VitalsSnapshot()
            event = .summary(summary)
        }
        return Self.tagged(Self.json(for: event, at: seconds), device: device).serialized + "\n"
    }

    /// The object with `"device":label` after its `type` and `t` (unchanged when `device` is nil).
    package static func tagged(_ object: JSONValue, device: String?) -> JSONValue {
        guard let device, case .object(var members) = object else { return object }
        members.insert(("device", .string(device)), at: min(2, members.count))
        return .object(members)
    }

    /// The JSON object for an event.
    package static func json(for event: BridgeEvent, at seconds: Double) -> JSONValue {
        let time: (String, JSONValue) = (RunLineKeys.t, .double((seconds * 1000).rounded() / 1000))
        switch event {
        case .state(let phase, let detail):
            var members: [(String, JSONValue)] = [(RunLineKeys.type, .string(RunLineKeys.state)), time, (RunLineKeys.state, .string(phase.rawValue))]
            if let detail { members.append((RunLineKeys.detail, .string(detail))) }
            return .object(members)
        case .notice(let message):
            return .object([(RunLineKeys.type, .string(RunLineKeys.notice)), time, (RunLineKeys.message, .string(NoticeWording.sentence(message)))])
        case .warning(let message):
            return .object([(RunLineKeys.type, .string(RunLineKeys.warning)), time, (RunLineKeys.message, .string(message))])
        case .error(let code, let message):
            return .object([(RunLineKeys.type, .string(RunLineKeys.error)), time, (RunLineKeys.code, .string(code)), (RunLineKeys.message, .string(message))])
        case .validation(let status):
            return .object([
                (RunLineKeys.type, .string(RunLineKeys.validation)), time, (RunLineKeys.code, .string(status.code.description)),
                ("number", .int(Int64(status.code.rawValue))), (RunLineKeys.hint, .string(status.hint)),
            ])
        case .metrics(_, let json):
            return .object([(RunLineKeys.type, .string(RunLineKeys.metrics)), time, (RunLineKeys.metrics, .raw(json))])
        case .stats(let stats, let vitals, let truth, let reference):
            var members: [(String, JSONValue)] = [(RunLineKeys.type, .string(RunLineKeys.stats)), time]
            members += counters(stats)
            members += [
                (RunLineKeys.fpsIn, .double((stats.framesPerSecondIn * 10).rounded() / 10)),
                (RunLineKeys.fpsOut, .double((stats.framesPerSecondOut * 10).rounded() / 10)),
                latencyMember(stats.latency),
            ]
            members += vitalsMembers(vitals)
            if let truth { members.append((RunLineKeys.truth, .object(vitalsMembers(truth)))) }
            if let reference { members.append((RunLineKeys.reference, .object([(RunLineKeys.pulseRate, .number(reference.pulseRate.map(round1)))]))) }
            return .object(members)
        case .summary(let summary):
            var members: [(String, JSONValue)] = [(RunLineKeys.type, .string(RunLineKeys.summary)), time]
            members += vitalsMembers(summary.vitals)
            members.append(("stableBasis", basisMember(summary.basis)))
            func absence(_ absence: VitalAbsence?) -> JSONValue {
                absence.map { .object([(RunLineKeys.code, .string($0.code.rawValue)), (RunLineKeys.message, .string($0.message))]) } ?? .null
            }
            members.append((RunLineKeys.pulseUnavailable, absence(summary.pulseAbsence)))
            members.append((RunLineKeys.breathingUnavailable, absence(summary.breathingAbsence)))
            members.append((RunLineKeys.hrvUnavailable, absence(summary.hrvAbsence)))
            members += counters(summary.stats)
            members += [
                (RunLineKeys.durationSeconds, .double((summary.durationSeconds * 1000).rounded() / 1000)),
                (RunLineKeys.reason, .string(summary.reason)),
                latencyMember(summary.stats.latency),
            ]
            if let truth = summary.truth { members.append((RunLineKeys.truth, .object(vitalsMembers(truth)))) }
            if let agreement = summary.reference { members.append((RunLineKeys.reference, referenceMember(agreement))) }
            if let received = summary.receivedStream {
                members.append(("receivedStream", .object([
                    ("protocol", .string(received.transport)), ("container", .string(received.container)), ("codec", .string(received.codec)),
                    ("width", .int(Int64(received.width))), ("height", .int(Int64(received.height))), ("audio", .bool(received.hasAudio)),
                ])))
            }
            if let motion = summary.motion { members.append(("motion", Self.motionMember(motion))) }
            if let failure = summary.failure {
                members.append((RunLineKeys.error, .object([
                    (RunLineKeys.code, .string(failure.kind.rawValue)), (RunLineKeys.message, .string(failure.message)),
                    (RunLineKeys.exitCode, .int(Int64(failure.exitCode.rawValue))),
                ])))
            }
            return .object(members)
        }
    }

    /// `{RunLineKeys.pulseRate: {"values": N, "q1": …, "q3": …[, "split": {…}]} | null, RunLineKeys.breathingRate: …, RunLineKeys.hrvRmssd: …,
    /// "hrvFloorMs": … | null}`: `split` when the stable values fell into a rate and its harmonic (``HarmonicSplit``).
    static func basisMember(_ basis: VitalsBasis) -> JSONValue {
        func one(_ b: VitalBasis?) -> JSONValue {
            guard let b else { return .null }
            var members: [(String, JSONValue)] = [("values", .int(Int64(b.stableValues))), ("q1", .double(round1(b.lowerQuartile))),
                                                  ("q3", .double(round1(b.upperQuartile)))]
            if let split = b.harmonicSplit {
                members.append(("split", .object([
                    ("lower", .double(round1(split.lower))), ("lowerValues", .int(Int64(split.lowerValues))),
                    ("upper", .double(round1(split.upper))), ("upperValues", .int(Int64(split.upperValues))),
                ])))
            }
            return .object(members)
        }
        return .object([(RunLineKeys.pulseRate, one(basis.pulseRate)), (RunLineKeys.breathingRate, one(basis.breathingRate)),
                        (RunLineKeys.hrvRmssd, one(basis.hrvRmssd)), ("hrvFloorMs", .number(basis.hrvFloor.map(round1)))])
    }

    /// `{RunLineKeys.source: "lsl:…", RunLineKeys.pulseRate: reference mean | null, "readings": N, "pairs": N, "bridgePulseRate": … | null,
    /// "pulseMeanAbsError": … | null}`: the summary's agreement with a live reference.
    static func referenceMember(_ agreement: ReferenceAgreement) -> JSONValue {
        .object([
            (RunLineKeys.source, .string(agreement.source)), (RunLineKeys.pulseRate, .number(agreement.referenceMean.map(round1))),
            ("readings", .int(Int64(agreement.readings))), ("pairs", .int(Int64(agreement.pairs))),
            ("bridgePulseRate", .number(agreement.bridgeMean.map(round1))),
            ("pulseMeanAbsError", .number(agreement.meanAbsoluteError.map { ($0 * 100).rounded() / 100 })),
        ])
    }

    static func vitalsMembers(_ vitals: VitalsSnapshot) -> [(String, JSONValue)] {
        [
            (RunLineKeys.pulseRate, .number(vitals.pulseRate.map(round1))),
            (RunLineKeys.breathingRate, .number(vitals.breathingRate.map(round1))),
            (RunLineKeys.hrvRmssd, .number(vitals.hrvRmssd.map(round1))),
        ]
    }

    /// `"motion": {"samples":N,"framesMeasured":N,"clockOffsetMs":X|null,"fit":X|null,"pixelsPerRadian":{"across":X,"down":X}|null,"unavailable":S|null,"usedByEngine":B,"engineClockOffsetMs":X|null}`.
    static func motionMember(_ motion: MotionSummary) -> JSONValue {
        func rounded(_ value: Double?, _ scale: Double) -> JSONValue {
            guard let value else { return .null }
            return .double((value * scale).rounded() / scale)
        }
        var perRadian = JSONValue.null
        if let across = motion.pixelsPerRadianAcross, let down = motion.pixelsPerRadianDown {
            perRadian = .object([("across", rounded(across, 10)), ("down", rounded(down, 10))])
        }
        let offsetMs = motion.clockOffsetSeconds.map { $0 * 1000 }
        let members: [(String, JSONValue)] = [
            ("samples", .int(Int64(motion.samples))), ("framesMeasured", .int(Int64(motion.framesMeasured))),
            ("clockOffsetMs", rounded(offsetMs, 10)), ("fit", rounded(motion.fit, 1000)), ("pixelsPerRadian", perRadian),
            ("unavailable", motion.absence.map { JSONValue.string($0) } ?? .null),
            ("usedByEngine", .bool(motion.engineReadings > 0)),
            ("engineClockOffsetMs", rounded(motion.engineClockOffsetSeconds.map { $0 * 1000 }, 10)),
        ]
        return .object(members)
    }

    /// `RunLineKeys.latencyMs: {RunLineKeys.p50:…,RunLineKeys.p99:…,RunLineKeys.max:…,RunLineKeys.linkP50:…,RunLineKeys.linkP99:…,RunLineKeys.linkMax:…,"samples":N}`, or null when
    /// no frame was measured.
    static func latencyMember(_ latency: LatencySummary?) -> (String, JSONValue) {
        guard let latency else { return (RunLineKeys.latencyMs, .null) }
        func ms(_ value: Double) -> JSONValue { .double((value * 1000).rounded() / 1000) }
        return (RunLineKeys.latencyMs, .object([
            (RunLineKeys.p50, ms(latency.p50Ms)), (RunLineKeys.p99, ms(latency.p99Ms)), (RunLineKeys.max, ms(latency.maxMs)),
            (RunLineKeys.linkP50, ms(latency.linkP50Ms)), (RunLineKeys.linkP99, ms(latency.linkP99Ms)), (RunLineKeys.linkMax, ms(latency.linkMaxMs)),
            ("samples", .int(Int64(clamping: latency.samples))),
        ]))
    }

    static func counters(_ stats: BridgeStats) -> [(String, JSONValue)] {
        let accounting = stats.accounting
        let dropped = FrameDropReason.allCases.compactMap { reason in
            accounting.droppedByReason[reason].map { (reason.rawValue, JSONValue.int(Int64($0))) }
        }
        let rejected = accounting.rejectedByCode.sorted { $0.key < $1.key }.map { ($0.key, JSONValue.int(Int64($0.value))) }
        return [
            (RunLineKeys.framesReceived, .int(Int64(accounting.received))),
            (RunLineKeys.framesSubmitted, .int(Int64(accounting.submitted))),
            (RunLineKeys.framesRejected, .int(Int64(accounting.rejected))),
            (RunLineKeys.framesDropped, .int(Int64(accounting.dropped))),
            ("framesInFlight", .int(Int64(accounting.inFlight))),
            (RunLineKeys.droppedByReason, .object(dropped)),
            (RunLineKeys.rejectedByCode, .object(rejected)),
            (RunLineKeys.inputRestarts, .int(Int64(stats.inputRestarts))),
            (RunLineKeys.stallRestarts, .int(Int64(stats.stallRestarts))),
            (RunLineKeys.reconnects, .int(Int64(stats.reconnects))),
            (RunLineKeys.sessionRestarts, .int(Int64(stats.sessionRestarts))),
            (RunLineKeys.deviceDroppedFrames, .int(Int64(stats.deviceDroppedFrames))),
            (RunLineKeys.engineDroppedFrames, .int(Int64(stats.engineDroppedFrames))),
        ]
    }
}

private func round1(_ value: Double) -> Double { (value * 10).rounded() / 10 }
