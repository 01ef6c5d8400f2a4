import GlassesBridge
import GlassesLSL
import SmartSpectraInput

/// The Lab Streaming Layer streams of one device (`--lsl NAME`), and how a run's events become their samples: plain
/// values, no liblsl, so the layout is testable without it.
///
/// One stream per vital rather than one vitals stream with a channel per vital: the engine gives each vital its own
/// cadence (pulse about once a second, breathing and HRV over longer windows) and its own times, so one shared
/// stream would be mostly NaN and would have to interleave times that arrive out of order across vitals (a
/// breathing value for an instant can come after a pulse value for a later one), which breaks the monotonic sample
/// times recorders expect. Per vital, every sample carries a value, its confidence and its stable flag, and a
/// recorder finds the pulse by type (`HeartRate`) as it finds a chest strap's.
enum LSLStreamPlan {
    /// The streams of a device, in the order their outlets are opened.
    enum Stream: Int, CaseIterable, Sendable {
        case pulse, breathing, hrv, pulseWave, breathingWave, markers

        /// The stream's part of its name and source id.
        var suffix: String {
            switch self {
            case .pulse: "pulse"
            case .breathing: "breathing"
            case .hrv: "hrv"
            case .pulseWave: "pulse-wave"
            case .breathingWave: "breathing-wave"
            case .markers: "markers"
            }
        }
    }

    /// One sample for a stream: numbers at a time on the run's timeline, or a marker.
    struct Sample: Sendable, Equatable {
        var stream: Stream
        /// Seconds on the run's timeline: a frame's capture time for vitals and waves, the event's time for markers.
        var runSeconds: Double
        var values: [Double]
        var marker: String?
    }

    /// What the streams' `desc` says of the device and the run.
    struct Context: Sendable {
        /// The name given to `--lsl`.
        var name: String
        /// The device's label (`sim`, `tcp:127.0.0.1:7001`, `sim#2`).
        var deviceLabel: String
        /// Whether the run has several devices (the label then joins the stream names).
        var multiDevice: Bool
        /// Frames per second asked of the device (the waves' nominal rate); nil for a file, whose rate is its own.
        var frameRate: Double?
        /// `("fps", "24")`, `("resolution", "medium")`, …: the device and stream configuration.
        var configuration: [(String, String)]
        var simulated: Bool
        var version: String
    }

    /// The stream's name: `NAME-pulse`, or `NAME-<device>-pulse` in a run of several devices.
    static func streamName(_ stream: Stream, context: Context) -> String {
        context.multiDevice ? "\(context.name)-\(context.deviceLabel)-\(stream.suffix)" : "\(context.name)-\(stream.suffix)"
    }

    /// `glasses-bridge/NAME/<device>/<stream>`: the same for the same name and device after a restart, so a recorder
    /// picks the stream up again.
    static func sourceID(_ stream: Stream, context: Context) -> String {
        "glasses-bridge/\(context.name)/\(context.deviceLabel)/\(stream.suffix)"
    }

    /// The description of each stream, in ``Stream`` order.
    static func descriptions(_ context: Context) -> [LSLStreamDescription] {
        Stream.allCases.map { description($0, context: context) }
    }

    static func description(_ stream: Stream, context: Context) -> LSLStreamDescription {
        typealias Channel = LSLStreamDescription.Channel
        func rated(_ label: String, unit: String, type: String) -> [Channel] {
            [Channel(label: label, unit: unit, type: type), Channel(label: label + "Confidence", unit: "percent", type: "Confidence"),
             Channel(label: label + "Stable", unit: "boolean", type: "Flag")]
        }
        let (type, channels, rate): (String, [Channel], Double) = switch stream {
        case .pulse: ("HeartRate", rated("PulseRate", unit: "bpm", type: "HeartRate"), 0)
        case .breathing: ("RespirationRate", rated("BreathingRate", unit: "breaths/min", type: "RespirationRate"), 0)
        case .hrv: ("HRV", rated("RMSSD", unit: "ms", type: "HRV"), 0)
        case .pulseWave: ("PPG", [Channel(label: "PulseWave", unit: "normalized", type: "PPG")], context.frameRate ?? 0)
        case .breathingWave: ("Respiration", [Channel(label: "BreathingTrace", unit: "normalized", type: "Respiration")], context.frameRate ?? 0)
        case .markers: ("Markers", [Channel(label: "Event", unit: "", type: "Marker")], 0)
        }
        let extra: [LSLElement] = [
            .branch("acquisition", [
                .leaf("manufacturer", "GlassesBridge"), .leaf("model", context.simulated ? "simulated glasses" : "smart glasses"),
                .leaf("software", context.version), .leaf("method", "camera-based vitals (remote photoplethysmography)"),
            ]),
            .branch("device", [.leaf("label", context.deviceLabel), .leaf("simulated", context.simulated ? "yes" : "no")]),
            .branch("stream", context.configuration.map { LSLElement.leaf($0.0, $0.1) }),
            .branch("timing", [
                .leaf("reference", stream == .markers ? "event time" : "frame capture time"),
                .leaf("clock", "lsl_local_clock"),
            ]),
        ]
        return LSLStreamDescription(
            name: streamName(stream, context: context), type: type, format: stream == .markers ? .string : .double64,
            nominalRate: rate, sourceID: sourceID(stream, context: context), channels: channels, extra: extra
        )
    }

    /// The samples an event brings, in the order to push them: each vital and wave sample at its capture time
    /// (metrics timestamps are microseconds on the run's timeline), state changes, validation verdicts and errors as
    /// markers at the event's time.
    static func samples(for event: BridgeEvent, at seconds: Double) -> [Sample] {
        switch event {
        case .metrics(let metrics, _): return samples(from: metrics)
        case .state(let phase, let detail):
            return [marker("state:" + phase.rawValue + (detail.map { " (\($0))" } ?? ""), at: seconds)]
        case .validation(let status):
            return [marker("validation:\(status.code.description)", at: seconds)]
        case .error(let code, _):
            return [marker("error:\(code)", at: seconds)]
        case .notice, .warning, .stats, .summary:
            return []
        }
    }

    private static func marker(_ text: String, at seconds: Double) -> Sample {
        Sample(stream: .markers, runSeconds: seconds, values: [], marker: text)
    }

    /// The vitals and waves of one metrics payload, each stream's samples in time order.
    static func samples(from metrics: Metrics) -> [Sample] {
        func flag(_ stable: Bool) -> Double { stable ? 1 : 0 }
        func seconds(_ microseconds: Int64) -> Double { Double(microseconds) / 1_000_000 }
        var out: [Sample] = []
        func add(_ stream: Stream, _ samples: [(Int64, [Double])]) {
            for (time, values) in samples.sorted(by: { $0.0 < $1.0 }) {
                out.append(Sample(stream: stream, runSeconds: seconds(time), values: values, marker: nil))
            }
        }
        let cardio = metrics.cardio, breathing = metrics.breathing
        add(.pulse, cardio.pulseRate.map { ($0.timestamp, [Double($0.value), Double($0.confidence), flag($0.stable)]) })
        add(.breathing, breathing.rate.map { ($0.timestamp, [Double($0.value), Double($0.confidence), flag($0.stable)]) })
        add(.hrv, cardio.hrv.map { ($0.timestamp, [$0.rmssd, Double($0.confidence), flag($0.stable)]) })
        add(.pulseWave, cardio.arterialPressureTrace.map { ($0.timestamp, [Double($0.value)]) })
        add(.breathingWave, breathing.upperTrace.map { ($0.timestamp, [Double($0.value)]) })
        return out
    }
}

/// Places times of a run's timeline on liblsl's clock.
///
/// The run's timeline (event seconds, metrics microseconds) counts from the pipeline's start on its scheduler clock
/// (Swift's `ContinuousClock`, CLOCK_BOOTTIME on Linux); liblsl's clock is `std::chrono::steady_clock`
/// (CLOCK_MONOTONIC). Both tick at the same rate but from different origins, so the origin is measured: each event
/// reaches the sink a little after its time, so `lsl_local_clock() − event seconds` is never below the true origin,
/// and the least of them is the origin to within the quickest delivery (well under a millisecond on a live event).
struct LSLClockMapping: Sendable, Equatable {
    /// The run's start on liblsl's clock, once an event has been seen.
    private(set) var origin: Double?
    /// The last time given to each stream, to keep each stream's times increasing.
    private var last: [LSLStreamPlan.Stream: Double] = [:]

    /// Takes an event's run time and liblsl's clock when it arrived.
    mutating func observe(runSeconds: Double, lslNow: Double) {
        guard runSeconds.isFinite, lslNow.isFinite else { return }
        let candidate = lslNow - runSeconds
        if origin.map({ candidate < $0 }) ?? true { origin = candidate }
    }

    /// The liblsl time of `runSeconds` for `stream`: origin + run time, nudged a microsecond past the stream's
    /// previous time if an earlier estimate of the origin put that one later (never by more than the origin moved).
    mutating func time(of runSeconds: Double, stream: LSLStreamPlan.Stream) -> Double? {
        guard let origin, runSeconds.isFinite else { return nil }
        var time = origin + runSeconds
        if let previous = last[stream], time <= previous { time = previous + 1e-6 }
        last[stream] = time
        return time
    }
}
