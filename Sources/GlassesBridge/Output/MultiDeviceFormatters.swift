import Foundation
import SmartSpectraInput

/// One device of a run, as the output names it.
package struct OutputDevice: Sendable, Hashable {
    /// The label every line of the device carries (`sim#1`, `tcp:127.0.0.1:7001`).
    package var label: String
    /// Its `--device` form (`sim`, `file:a.mkv`).
    package var source: String
    /// Whether it is the built-in simulator.
    package var simulated: Bool

    /// Creates a device entry.
    package init(label: String, source: String, simulated: Bool) {
        self.label = label
        self.source = source
        self.simulated = simulated
    }
}

/// Turns the events of one or several devices into one output: every event comes with the index of its device.
package protocol DeviceEventFormatter: Sendable {
    /// Text written once before any event (the NDJSON start line, a CSV header).
    var preamble: String { get }
    /// The text for an event of the device at `device` (an index into the run's devices), `seconds` into its run.
    mutating func format(_ event: BridgeEvent, device: Int, at seconds: Double) -> String
    /// The text that closes a run of several devices (empty for one device).
    mutating func totals(_ totals: MultiDeviceTotals, at seconds: Double) -> String
}

/// A one-device formatter as a ``DeviceEventFormatter``: the output of a one-device run, unchanged.
package struct SingleDeviceFormatter: DeviceEventFormatter {
    private var inner: any BridgeEventFormatter

    /// Wraps `inner`.
    package init(_ inner: any BridgeEventFormatter) { self.inner = inner }

    /// The inner formatter's preamble.
    package var preamble: String { inner.preamble }

    /// The inner formatter's text (the device index is always 0).
    package mutating func format(_ event: BridgeEvent, device: Int, at seconds: Double) -> String {
        inner.format(event, at: seconds)
    }

    /// Nothing: a one-device run ends with its summary.
    package mutating func totals(_ totals: MultiDeviceTotals, at seconds: Double) -> String { "" }
}

/// Makes the formatter of a run: the one-device formatter for one device, the tagged one for several.
package func makeDeviceEventFormatter(
    _ format: OutputFormat, context: OutputContext, devices: [OutputDevice]
) -> any DeviceEventFormatter {
    guard devices.count > 1 else { return SingleDeviceFormatter(makeEventFormatter(format, context: context)) }
    switch format {
    case .ndjson: return MultiDeviceNDJSONFormatter(devices: devices, startedAt: context.startedAt)
    case .text: return MultiDeviceTextFormatter(devices: devices, context: context)
    case .csv: return MultiDeviceCSVFormatter(devices: devices)
    }
}

// MARK: - NDJSON

/// NDJSON for several devices (schema version 2): the start line lists `devices`, every other line carries
/// `device`, each device ends with its own `summary`, and a `totals` line is last.
package struct MultiDeviceNDJSONFormatter: DeviceEventFormatter {
    /// The schema version of a run of several devices.
    package static let schemaVersion = 2

    private let devices: [OutputDevice]
    private let startedAt: Date?
    private var formatters: [NDJSONEventFormatter]

    /// Creates the formatter for `devices`.
    package init(devices: [OutputDevice], startedAt: Date? = nil) {
        self.devices = devices
        self.startedAt = startedAt
        formatters = devices.map { NDJSONEventFormatter(simulated: $0.simulated, startedAt: nil, device: $0.label) }
    }

    /// `{"type":"start","t":0.0,"schemaVersion":2,"simulated":…,"devices":[{"device":…,"source":…,"simulated":…}]}`.
    package var preamble: String {
        var members: [(String, JSONValue)] = [
            ("type", .string("start")), ("t", .double(0)), ("schemaVersion", .int(Int64(Self.schemaVersion))),
            ("simulated", .bool(devices.allSatisfy(\.simulated))),
        ]
        if let startedAt {
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            members.append(("startedAt", .string(formatter.string(from: startedAt))))
        }
        members.append(("devices", .array(devices.map { device in
            .object([("device", .string(device.label)), ("source", .string(device.source)),
                     ("simulated", .bool(device.simulated))])
        })))
        return JSONValue.object(members).serialized + "\n"
    }

    /// The device's line, tagged with its label.
    package mutating func format(_ event: BridgeEvent, device: Int, at seconds: Double) -> String {
        formatters[device].format(event, at: seconds)
    }

    /// The `totals` line.
    package mutating func totals(_ totals: MultiDeviceTotals, at seconds: Double) -> String {
        Self.json(for: totals, at: seconds).serialized + "\n"
    }

    /// `{"type":"totals","t":…,"devices":[{"device":…,"reason":…,"exitCode":…,…}],"framesReceived":…,…,"exitCode":…}`.
    package static func json(for totals: MultiDeviceTotals, at seconds: Double) -> JSONValue {
        let entries: [JSONValue] = totals.devices.map { outcome in
            let accounting = outcome.summary.stats.accounting
            var members: [(String, JSONValue)] = [
                ("device", .string(outcome.device)), ("reason", .string(outcome.summary.reason)),
                ("exitCode", .int(Int64(outcome.exitCode.rawValue))),
                ("framesReceived", .int(Int64(accounting.received))),
                ("framesSubmitted", .int(Int64(accounting.submitted))),
                ("framesRejected", .int(Int64(accounting.rejected))),
                ("framesDropped", .int(Int64(accounting.dropped))),
            ]
            if let failure = outcome.summary.failure { members.append(("message", .string(failure.message))) }
            return .object(members)
        }
        let dropped = FrameDropReason.allCases.compactMap { reason in
            totals.droppedByReason[reason].map { (reason.rawValue, JSONValue.int(Int64($0))) }
        }
        let rejected = totals.rejectedByCode.sorted { $0.key < $1.key }.map { ($0.key, JSONValue.int(Int64($0.value))) }
        var members: [(String, JSONValue)] = [
            ("type", .string("totals")), ("t", .double((seconds * 1000).rounded() / 1000)),
            ("devices", .array(entries)),
            ("framesReceived", .int(Int64(totals.framesReceived))),
            ("framesSubmitted", .int(Int64(totals.framesSubmitted))),
            ("framesRejected", .int(Int64(totals.framesRejected))),
            ("framesDropped", .int(Int64(totals.framesDropped))),
            ("droppedByReason", .object(dropped)), ("rejectedByCode", .object(rejected)),
            ("deviceDroppedFrames", .int(Int64(totals.deviceDroppedFrames))),
            ("engineDroppedFrames", .int(Int64(totals.engineDroppedFrames))),
            ("exitCode", .int(Int64(totals.exitCode.rawValue))),
        ]
        if let failure = totals.runFailure { members.append(("message", .string(failure.message))) }
        return .object(members)
    }
}

// MARK: - Text

/// Text for several devices: on a terminal one live line per device, redrawn in place as a block (each fits the
/// width, so the block never wraps or scrolls), messages above it naming their device; otherwise each device's
/// timestamped lines, named. Each device's summary, then the totals, close the output.
package struct MultiDeviceTextFormatter: DeviceEventFormatter {
    private let devices: [OutputDevice]
    private let context: OutputContext
    private var formatters: [TextEventFormatter]
    private var drawnLines = 0

    /// Creates the formatter for `devices`.
    package init(devices: [OutputDevice], context: OutputContext) {
        self.devices = devices
        self.context = context
        formatters = devices.map { device in
            var inner = context
            inner.liveTerminal = false
            inner.deviceLabel = device.label
            inner.simulated = device.simulated
            var formatter = TextEventFormatter(context: inner)
            // Above the live block, stats lines come every 5 s even with --verbose, as above the one live line.
            if context.liveTerminal { formatter.plainStatsInterval = 5 }
            return formatter
        }
    }

    /// Nothing before the first event.
    package var preamble: String { "" }

    /// The device's text: messages (and, plain, its stats lines) named by the device; the live block redrawn.
    package mutating func format(_ event: BridgeEvent, device: Int, at seconds: Double) -> String {
        var text = formatters[device].format(event, at: seconds)
        guard context.liveTerminal else { return text }
        if case .stats = event, context.verbosity != .verbose { text = "" }
        if case .stats = event, context.verbosity == .quiet { return "" }
        return redraw(above: text)
    }

    /// The totals, after the block is cleared.
    package mutating func totals(_ totals: MultiDeviceTotals, at seconds: Double) -> String {
        let text = TextEventFormatter.stamp(seconds) + Self.totalsText(totals)
        guard context.liveTerminal else { return text }
        let cleared = clearBlock()
        drawnLines = 0
        return cleared + text
    }

    /// The live block: one line per device, each `LABEL STATUS` within the width.
    package func blockLines() -> [String] {
        zip(devices, formatters).map { device, formatter in
            let room = context.width - device.label.count - 1
            let status = formatter.lastStatus?.line(width: max(2, room)) ?? formatter.phase.rawValue
            return String((device.label + " " + status).prefix(max(1, context.width - 1)))
        }
    }

    private func clearBlock() -> String {
        guard drawnLines > 0 else { return "" }
        return "\r" + (drawnLines > 1 ? "\u{1B}[\(drawnLines - 1)A" : "") + "\u{1B}[J"
    }

    private mutating func redraw(above text: String) -> String {
        guard context.verbosity != .quiet else { return text }
        let lines = blockLines()
        let output = clearBlock() + text + lines.joined(separator: "\n")
        drawnLines = lines.count
        return output
    }

    /// The totals in a few lines: the counters over every device, each device's outcome, the exit code.
    package static func totalsText(_ totals: MultiDeviceTotals) -> String {
        var lines = [
            "totals of \(totals.devices.count) devices: frames received \(totals.framesReceived) = submitted "
                + "\(totals.framesSubmitted) + rejected \(totals.framesRejected) + dropped \(totals.framesDropped)",
        ]
        for outcome in totals.devices {
            var line = "  \(outcome.device): \(outcome.summary.reason), exit \(outcome.exitCode.rawValue), "
                + "\(outcome.summary.stats.accounting.received) frames"
            if let failure = outcome.summary.failure { line += ": \(failure.message)" }
            lines.append(line)
        }
        if let failure = totals.runFailure { lines.append("  the run: \(failure.message)") }
        let failed = totals.failedDevices.count
        lines.append("  exit \(totals.exitCode.rawValue): " + (totals.exitCode == .success
            ? "every device did what was asked"
            : "\(failed) of \(totals.devices.count) devices did not do what was asked (the most severe code)"))
        return lines.joined(separator: "\n") + "\n"
    }
}

// MARK: - CSV

/// The vitals time series of several devices: `device,time_s,metric,value,confidence,stable`.
package struct MultiDeviceCSVFormatter: DeviceEventFormatter {
    private let labels: [String]
    private var formatters: [CSVEventFormatter]

    /// Creates the formatter for `devices`.
    package init(devices: [OutputDevice]) {
        labels = devices.map { Self.field($0.label) }
        formatters = devices.map { _ in CSVEventFormatter() }
    }

    /// The header line.
    package var preamble: String { "device," + CSVEventFormatter().preamble }

    /// The device's rows, each after its label.
    package mutating func format(_ event: BridgeEvent, device: Int, at seconds: Double) -> String {
        let rows = formatters[device].format(event, at: seconds)
        guard !rows.isEmpty else { return "" }
        return rows.split(separator: "\n").map { labels[device] + "," + $0 + "\n" }.joined()
    }

    /// Nothing: the CSV holds vitals only.
    package mutating func totals(_ totals: MultiDeviceTotals, at seconds: Double) -> String { "" }

    /// A CSV field: quoted when it holds a comma, a quote or a line break.
    static func field(_ text: String) -> String {
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" }) else { return text }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
