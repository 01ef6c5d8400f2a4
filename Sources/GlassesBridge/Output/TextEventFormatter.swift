import Foundation
import SmartSpectraInput

/// For people: on a terminal one live status line redrawn in place; otherwise plain timestamped lines.
///
/// The live line fits the terminal's width (it drops the least useful fields first, then cuts), never holds a
/// newline, and so never scrolls; messages print above it. A value followed by `?` is not stable yet (the CSV's
/// `stable` column is false for it); `--` means no value yet.
package struct TextEventFormatter: BridgeEventFormatter {
    /// Whether the output is a terminal that gets a live line.
    package let live: Bool
    /// What the formatter knows of the run.
    package let context: OutputContext
    /// Seconds between stats lines in plain mode (and above the live line with `--verbose`).
    package var plainStatsInterval: Double

    /// The lifecycle phase last reported.
    package private(set) var phase: LifecyclePolicy.Phase = .idle
    /// What the live line showed at the last stats event (nil before the first).
    package private(set) var lastStatus: LiveStatus?
    private var hint: String?
    private var lastLine = ""
    private var lastPlainStats = -Double.infinity
    private var tracker: VitalsTracker
    private var startedWall: Double?

    /// Creates the formatter.
    package init(live: Bool) {
        var context = OutputContext()
        context.liveTerminal = live
        self.init(context: context)
    }

    /// Creates the formatter for a run.
    package init(context: OutputContext) {
        self.context = context
        live = context.liveTerminal
        plainStatsInterval = context.verbosity == .verbose ? 1 : 5
        tracker = VitalsTracker()
    }

    /// The text for an event.
    package mutating func format(_ event: BridgeEvent, at seconds: Double) -> String {
        if startedWall == nil { startedWall = context.wallClock() }
        let verbosity = context.verbosity
        switch event {
        case .state(let newPhase, let detail):
            phase = newPhase
            guard verbosity != .quiet else { return "" }
            return message("\(newPhase.rawValue)\(detail.map { ": \($0)" } ?? "")", at: seconds)
        case .notice(let text):
            guard verbosity == .verbose else { return "" }
            return message(NoticeWording.sentence(text), at: seconds)
        case .warning(let text):
            guard verbosity != .quiet else { return "" }
            return message("warning: \(text)", at: seconds)
        case .error(_, let text):
            return message("error: \(text)", at: seconds)
        case .validation(let status):
            hint = status.code == .ok ? nil : status.hint
            guard verbosity != .quiet else { return "" }
            return message("validation: \(status.hint)", at: seconds)
        case .metrics(let metrics, _):
            tracker.ingest(metrics)
            return ""
        case .stats(let stats, let vitals, let truth, let reference):
            guard verbosity != .quiet else { return "" }
            let status = LiveStatus(
                phase: phase, seconds: seconds, stats: stats, vitals: vitals, stability: tracker.latestIsStable,
                truth: truth, hint: hint, fileDuration: context.isFile ? context.fileDuration : nil,
                speed: context.isFile ? speed(at: seconds) : nil, isFile: context.isFile, reference: reference
            )
            lastStatus = status
            let dueForLine = seconds - lastPlainStats >= plainStatsInterval
            if live {
                lastLine = status.line(width: context.width)
                var text = "\r\u{1B}[2K"
                if verbosity == .verbose, dueForLine {
                    lastPlainStats = seconds
                    text += Self.stamp(seconds) + status.line(width: Int.max) + "\n"
                }
                return text + lastLine
            }
            guard dueForLine else { return "" }
            lastPlainStats = seconds
            return Self.stamp(seconds) + labelled(status.line(width: Int.max)) + "\n"
        case .summary(let summary):
            let text = Self.summaryText(summary, device: context.deviceLabel)
            return live ? "\r\u{1B}[2K" + text : Self.stamp(seconds) + text
        }
    }

    private func speed(at seconds: Double) -> Double? {
        guard let startedWall else { return nil }
        let wall = context.wallClock() - startedWall
        return wall > 0.05 ? seconds / wall : nil
    }

    private mutating func message(_ text: String, at seconds: Double) -> String {
        let text = Self.printable(text)
        if live {
            // Print the message above the live line, then redraw the line.
            return "\r\u{1B}[2K" + Self.stamp(seconds) + labelled(text) + "\n" + lastLine
        }
        return Self.stamp(seconds) + labelled(text) + "\n"
    }

    /// `text` without control characters: messages carry what devices and files say (a device's name, a goodbye's
    /// reason), and an escape sequence from a hostile device must not reach the terminal. Line breaks and tabs
    /// become spaces, every other control character U+FFFD.
    package static func printable(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else { return text }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if scalar.properties.generalCategory != .control {
                out.append(scalar)
            } else {
                out.append(scalar == "\n" || scalar == "\t" || scalar == "\r" ? " " : "\u{FFFD}")
            }
        }
        return String(out)
    }

    /// `text`, after the device's label in a run of several devices (`sim#2: streaming`).
    private func labelled(_ text: String) -> String {
        context.deviceLabel.map { "\($0): \(text)" } ?? text
    }

    /// `pulse mean |error| 1.4 bpm over 12 stable values (bridge 73.1, reference 72.0 bpm)`, or why nothing was paired.
    static func agreementText(_ agreement: ReferenceAgreement) -> String {
        guard agreement.readings > 0, let referenceMean = agreement.referenceMean else {
            return "no heart rate was read from it during the run"
        }
        guard let error = agreement.meanAbsoluteError, let bridge = agreement.bridgeMean else {
            return "heart rate \(vital(referenceMean, decimals: 1)) bpm on average; no stable pulse to compare with it"
        }
        return "pulse mean |error| \(vital(error, decimals: 1)) bpm over \(agreement.pairs) stable values (bridge "
            + "\(vital(bridge, decimals: 1)), reference \(vital(referenceMean, decimals: 1)) bpm)"
    }

    static func stamp(_ seconds: Double) -> String { String(format: "[%8.1fs] ", seconds) }

    static func vital(_ value: Double?, decimals: Int = 0) -> String {
        guard let value else { return "--" }
        return String(format: "%.\(decimals)f", value)
    }

    /// The status line at full length (no width limit), as plain mode prints it.
    static func statusLine(
        phase: LifecyclePolicy.Phase, stats: BridgeStats, vitals: VitalsSnapshot, truth: VitalsSnapshot?,
        hint: String?, stability: VitalsStability = VitalsStability(), seconds: Double = 0
    ) -> String {
        LiveStatus(phase: phase, seconds: seconds, stats: stats, vitals: vitals, stability: stability, truth: truth,
                   hint: hint, fileDuration: nil, speed: nil, isFile: false).line(width: Int.max)
    }

    /// The summary as a few lines of text.
    static func summaryText(_ summary: BridgeSummary, device: String? = nil) -> String {
        let accounting = summary.stats.accounting
        let title = device.map { "summary of \($0)" } ?? "summary"
        var lines = [
            String(format: "%@ after %.1f s (%@)", title, summary.durationSeconds, summary.reason),
            "  pulse \(vital(summary.vitals.pulseRate, decimals: 1)) bpm, breathing "
                + "\(vital(summary.vitals.breathingRate, decimals: 1)) /min, HRV \(vital(summary.vitals.hrvRmssd, decimals: 1)) ms",
        ]
        if let basis = basisText(summary.basis) { lines.append("  " + basis) }
        // One line per reason: vitals that lack a value for the same reason share it ("no pulse or HRV: …").
        var absences: [(names: [String], message: String)] = []
        for (name, absence) in [("pulse", summary.pulseAbsence), ("breathing", summary.breathingAbsence), ("HRV", summary.hrvAbsence)] {
            guard let absence, absence.code != .notRequested else { continue }
            if let i = absences.firstIndex(where: { $0.message == absence.message }) {
                absences[i].names.append(name)
            } else {
                absences.append(([name], absence.message))
            }
        }
        for (names, message) in absences {
            let list = names.count == 1 ? names[0] : names.dropLast().joined(separator: ", ") + " or " + names[names.count - 1]
            lines.append("  no \(list): \(message)")
        }
        if let truth = summary.truth {
            lines.append("  truth: pulse \(vital(truth.pulseRate, decimals: 1)) bpm, breathing "
                + "\(vital(truth.breathingRate, decimals: 1)) /min, HRV \(vital(truth.hrvRmssd, decimals: 1)) ms")
        }
        if let agreement = summary.reference {
            lines.append("  reference \(printable(agreement.source)): " + Self.agreementText(agreement))
        }
        if let received = summary.receivedStream {
            lines.append("  stream: \(received.codec) \(received.width)x\(received.height) over \(received.transport.uppercased()) "
                + "(\(received.container))\(received.hasAudio ? ", its audio ignored" : "")")
        }
        if let motion = summary.motion {
            if let offset = motion.clockOffsetSeconds {
                let ms = String(format: "%.1f", abs(offset) * 1000), fit = String(format: "%.2f", motion.fit ?? 0)
                lines.append("  motion: \(motion.samples) IMU samples; the IMU's clock is \(ms) ms \(offset < 0 ? "behind" : "ahead of") "
                    + "the video's (fit \(fit), over \(motion.framesMeasured) frames)")
            } else {
                lines.append("  motion: \(motion.samples) IMU samples; no clock offset: \(motion.absence ?? "not measured")")
            }
            if motion.engineReadings == 0 {
                lines.append("  motion in the vitals: not used (no gyroscope reading reached the engine)")
            } else if let offset = motion.engineClockOffsetSeconds {
                lines.append("  motion in the vitals: \(motion.engineReadings) gyroscope readings, on the engine's clock offset of "
                    + String(format: "%.1f", offset * 1000) + " ms")
            } else {
                lines.append("  motion in the vitals: \(motion.engineReadings) gyroscope readings, read at the frames' times "
                    + "(the engine never related the clocks)")
            }
        }
        lines.append("  frames: received \(accounting.received) = submitted \(accounting.submitted) + rejected "
            + "\(accounting.rejected) + dropped \(accounting.dropped)")
        let reasons = FrameDropReason.allCases.compactMap { reason in
            accounting.droppedByReason[reason].map { "\(reason.rawValue) \($0)" }
        } + accounting.rejectedByCode.sorted { $0.key < $1.key }.map { "rejected \($0.key) \($0.value)" }
        if !reasons.isEmpty { lines.append("  reasons: " + reasons.joined(separator: ", ")) }
        let stats = summary.stats
        lines.append("  restarts: input \(stats.inputRestarts), stalled stream \(stats.stallRestarts), "
            + "reconnects \(stats.reconnects), sessions \(stats.sessionRestarts)")
        lines.append("  " + latencyText(stats.latency))
        if let failure = summary.failure { lines.append("  stopped: \(failure.message)") }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `medians of the run's stable values: 25 pulse (71.0–72.4 bpm), 11 breathing (14.8–15.2 /min), 1 HRV
    /// (41.3–41.3 ms); quartiles in parentheses`: what the summary's values rest on; nil when no vital had a stable
    /// value.
    static func basisText(_ basis: VitalsBasis) -> String? {
        func one(_ b: VitalBasis?, _ name: String, _ unit: String) -> String? {
            b.map { "\($0.stableValues) \(name) (" + String(format: "%.1f–%.1f", $0.lowerQuartile, $0.upperQuartile) + " \(unit))" }
        }
        let parts = [one(basis.pulseRate, "pulse", "bpm"), one(basis.breathingRate, "breathing", "/min"),
                     one(basis.hrvRmssd, "HRV", "ms")].compactMap { $0 }
        guard !parts.isEmpty else { return nil }
        var text = "medians of the run's stable values: " + parts.joined(separator: ", ") + "; quartiles in parentheses"
        if let split = basis.pulseRate?.harmonicSplit {
            text += "; the pulse values split a factor two apart, " + split.described(unit: "bpm")
                + (split.resolved.map { String(format: ": %.1f bpm taken, the other a passing spell", $0) } ?? ": no value")
        }
        if let floor = basis.hrvFloor, basis.hrvRmssd != nil {
            text += String(format: "; HRV floor %.1f ms (the least RMSSD error the beats' timing noise allows)", floor)
        }
        return text
    }

    /// `latency capture→sendFrame p50 12.3 p99 40.1 max 52.0 ms (link p50 3.2 p99 9.9 max 11.0 ms, 1440 frames)`, or
    /// `latency capture→sendFrame not measured` when no frame carried timing.
    static func latencyText(_ latency: LatencySummary?) -> String {
        guard let latency else { return "latency capture→sendFrame not measured" }
        func ms(_ value: Double) -> String { String(format: "%.1f", value) }
        return "latency capture→sendFrame p50 \(ms(latency.p50Ms)) p99 \(ms(latency.p99Ms)) max \(ms(latency.maxMs)) ms "
            + "(link p50 \(ms(latency.linkP50Ms)) p99 \(ms(latency.linkP99Ms)) max \(ms(latency.linkMaxMs)) ms, "
            + "\(latency.samples) frames)"
    }
}
