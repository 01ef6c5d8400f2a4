import Foundation
import SmartSpectraInput

/// What the live line shows at one instant, and how it fits a width.
package struct LiveStatus: Sendable {
    /// The lifecycle phase.
    package var phase: LifecyclePolicy.Phase
    /// Seconds since the run began (for a file: the position in it).
    package var seconds: Double
    /// The counters.
    package var stats: BridgeStats
    /// The latest vitals.
    package var vitals: VitalsSnapshot
    /// Which of them are stable.
    package var stability: VitalsStability
    /// The simulator's truth, when simulated.
    package var truth: VitalsSnapshot?
    /// A live reference's heart rate (`--reference lsl:…`), when the run has one.
    package var reference: VitalsSnapshot?
    /// The validation hint while the verdict is not `ok`.
    package var hint: String?
    /// A file's duration in seconds, when known.
    package var fileDuration: Double?
    /// Playback speed relative to real time, for a file.
    package var speed: Double?
    /// Whether the source is a file.
    package var isFile: Bool

    /// Creates the status.
    package init(
        phase: LifecyclePolicy.Phase, seconds: Double, stats: BridgeStats, vitals: VitalsSnapshot,
        stability: VitalsStability, truth: VitalsSnapshot?, hint: String?, fileDuration: Double?, speed: Double?,
        isFile: Bool, reference: VitalsSnapshot? = nil
    ) {
        self.phase = phase
        self.reference = reference
        self.seconds = seconds
        self.stats = stats
        self.vitals = vitals
        self.stability = stability
        self.truth = truth
        self.hint = hint
        self.fileDuration = fileDuration
        self.speed = speed
        self.isFile = isFile
    }

    /// `12:05` under an hour, `1:02:05` above.
    static func clock(_ seconds: Double) -> String {
        let total = Int(max(0, seconds).rounded(.down))
        let (h, m, s) = (total / 3600, total / 60 % 60, total % 60)
        return h > 0 ? String(format: "%d:%02d:%02d", h, m, s) : String(format: "%d:%02d", m, s)
    }

    private func value(_ value: Double?, stable: Bool, decimals: Int = 0) -> String {
        guard let value else { return "--" }
        return String(format: "%.\(decimals)f", value) + (stable ? "" : "?")
    }

    /// The line, at most `width - 1` columns (the last column is left free so the terminal never wraps).
    package func line(width: Int) -> String {
        let limit = width == Int.max ? Int.max : max(1, width - 1)
        var time = isFile ? "time=\(Self.clock(seconds))" : "\(Self.clock(seconds))"
        if isFile, let fileDuration { time += "/\(Self.clock(fileDuration))" }
        if let speed { time += String(format: " speed=%.1fx", speed) }
        func vitals(truth withTruth: Bool) -> [String] {
            func part(_ name: String, _ v: Double?, _ stable: Bool, _ t: Double?, _ unit: String, reference r: Double?? = nil) -> String {
                var text = "\(name) \(value(v, stable: stable))"
                if withTruth, truth != nil { text += " (truth \(value(t, stable: true)))" }
                if withTruth, let r { text += " (ref \(value(r, stable: true)))" }
                return text + unit
            }
            return [
                part("pulse", self.vitals.pulseRate, stability.pulseRate, truth?.pulseRate, " bpm", reference: reference.map(\.pulseRate)),
                part("breathing", self.vitals.breathingRate, stability.breathingRate, truth?.breathingRate, " /min"),
                part("HRV", self.vitals.hrvRmssd, stability.hrvRmssd, truth?.hrvRmssd, " ms"),
            ]
        }
        let rates = [
            String(format: "in %.1f fps", stats.framesPerSecondIn), String(format: "out %.1f fps", stats.framesPerSecondOut),
            "dropped \(stats.accounting.dropped)",
        ]
        let head = [phase.rawValue, time]
        // From the fullest to the barest; the first that fits is shown.
        var candidates: [[String]] = []
        if let hint { candidates.append(head + rates + vitals(truth: true) + [hint]) }
        candidates.append(head + rates + vitals(truth: true))
        candidates.append(head + rates + vitals(truth: false))
        candidates.append(head + [rates[0]] + vitals(truth: false))
        candidates.append(head + vitals(truth: false))
        for parts in candidates {
            let text = parts.joined(separator: " | ")
            if text.count <= limit { return text }
        }
        let bare = candidates[candidates.count - 1].joined(separator: " | ")
        return String(bare.prefix(limit))
    }
}
