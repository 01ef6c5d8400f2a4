import Foundation
import SmartSpectraInput

/// The metrics a run asks for: the value of `--metrics`, bundles and single metrics.
public struct MetricSelection: Sendable, Hashable, CustomStringConvertible {
    /// The named bundles, as SmartSpectra groups them.
    public static let bundles: [(name: String, metrics: [MetricType])] = [
        ("breathing", [
            .chestBreathing, .abdomenBreathing, .breathingRate, .breathingAmplitude, .apnea,
            .respiratoryLineLength, .baseline, .inhaleExhaleRatio,
        ]),
        ("cardio", [.pulseRate, .arterialPressureTrace, .hrv]),
        ("face", [.faceLandmarks, .blinking, .talking, .expressions]),
        ("eda", [.edaTrace]),
    ]

    /// The single metrics by their command-line names.
    public static let singles: [(name: String, metric: MetricType)] = [
        ("chest-breathing", .chestBreathing), ("abdomen-breathing", .abdomenBreathing),
        ("breathing-rate", .breathingRate), ("breathing-amplitude", .breathingAmplitude), ("apnea", .apnea),
        ("respiratory-line-length", .respiratoryLineLength), ("baseline", .baseline),
        ("inhale-exhale-ratio", .inhaleExhaleRatio), ("eda-trace", .edaTrace), ("face-landmarks", .faceLandmarks),
        ("blinking", .blinking), ("talking", .talking), ("expressions", .expressions), ("pulse-rate", .pulseRate),
        ("arterial-pressure-trace", .arterialPressureTrace), ("hrv", .hrv),
    ]

    /// The default: the breathing and cardio bundles.
    public static let `default` = MetricSelection(names: ["breathing", "cardio"], metrics: Set(
        bundles[0].metrics + bundles[1].metrics
    ))

    /// The names as given (bundles and single metrics), in order, without duplicates.
    public let names: [String]
    /// The expanded set of metrics.
    public let metrics: Set<MetricType>

    private init(names: [String], metrics: Set<MetricType>) {
        self.names = names
        self.metrics = metrics
    }

    /// Parses a comma-separated list such as `breathing,pulse-rate,hrv`.
    /// - Throws: ``BridgeUsageError`` listing the valid names when a name is unknown or the list is empty.
    public init(parsing text: String) throws(BridgeUsageError) {
        var names: [String] = []
        var metrics = Set<MetricType>()
        for raw in text.split(separator: ",", omittingEmptySubsequences: true) {
            let name = raw.trimmingCharacters(in: .whitespaces).lowercased()
            if name.isEmpty { continue }
            if let bundle = Self.bundles.first(where: { $0.name == name }) {
                metrics.formUnion(bundle.metrics)
            } else if let single = Self.singles.first(where: { $0.name == name }) {
                metrics.insert(single.metric)
            } else {
                throw BridgeUsageError(
                    "unknown metric '\(name)' in --metrics. Bundles: \(Self.bundles.map(\.name).joined(separator: ", ")); "
                        + "single metrics: \(Self.singles.map(\.name).joined(separator: ", "))."
                )
            }
            if !names.contains(name) { names.append(name) }
        }
        guard !metrics.isEmpty else {
            throw BridgeUsageError("--metrics needs at least one name, e.g. --metrics breathing,cardio.")
        }
        self.init(names: names, metrics: metrics)
    }

    /// Checks the selection against what an engine produces: a single metric it does not produce, or a bundle of
    /// which it produces nothing, is refused (never accepted and then left empty).
    /// - Returns: the message naming what was refused and what the engine does produce; nil when all is produced.
    public func unproducedMessage(produced: Set<MetricType>, engine: String) -> String? {
        var refused: [String] = []
        for name in names {
            if let bundle = Self.bundles.first(where: { $0.name == name }) {
                if produced.isDisjoint(with: bundle.metrics) { refused.append(name) }
            } else if let single = Self.singles.first(where: { $0.name == name }), !produced.contains(single.metric) {
                refused.append(name)
            }
        }
        guard !refused.isEmpty else { return nil }
        let producedNames = Self.singles.filter { produced.contains($0.metric) }.map(\.name)
        let bundlesWithSome = Self.bundles.filter { !produced.isDisjoint(with: $0.metrics) }.map(\.name)
        return "the \(engine) engine does not produce \(refused.map { "'\($0)'" }.joined(separator: ", ")). "
            + "It produces \(producedNames.joined(separator: ", "))"
            + (bundlesWithSome.isEmpty ? "" : " (the bundles \(bundlesWithSome.joined(separator: " and ")) give what it has of them)")
            + "."
    }

    /// Whether the selection includes a metric.
    public func contains(_ metric: MetricType) -> Bool { metrics.contains(metric) }

    /// The names joined by commas.
    public var description: String { names.joined(separator: ",") }
}
