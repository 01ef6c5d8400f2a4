/// The two text formats a Prometheus server scrapes: OpenMetrics 1.0 (what Prometheus asks for first) and the
/// older Prometheus text format 0.0.4 (what `promtool check metrics` reads, and what a client that asks for
/// `text/plain` gets).
///
/// They differ in three places: an OpenMetrics counter family is named without its `_total` (its sample has it)
/// and may carry a `# UNIT` line, and the exposition ends with `# EOF`; the text format names a counter family
/// by its sample's name and has neither.
package enum ExpositionFormat: Sendable, Hashable {
    /// `application/openmetrics-text; version=1.0.0`.
    case openMetrics
    /// `text/plain; version=0.0.4`.
    case prometheusText

    /// The `Content-Type` header value of an exposition in this format.
    package var contentType: String {
        switch self {
        case .openMetrics: "application/openmetrics-text; version=1.0.0; charset=utf-8"
        case .prometheusText: "text/plain; version=0.0.4; charset=utf-8"
        }
    }
}

/// One metric family: a name, a type, help text, perhaps a unit, and its samples (one per label set, or a
/// histogram's buckets, sum and count per label set). Pure data; ``MetricsExposition`` renders it.
package struct MetricFamily: Sendable, Hashable {
    /// The family's type.
    package enum Kind: String, Sendable, Hashable {
        /// A count that only grows (its sample is named `NAME_total`).
        case counter
        /// A value that goes up and down.
        case gauge
        /// Observations in cumulative buckets (`NAME_bucket{le=…}`, `NAME_sum`, `NAME_count`).
        case histogram
    }

    /// One line of the exposition: the family's name plus `suffix`, the labels in order, and the value.
    package struct Sample: Sendable, Hashable {
        /// Appended to the family's name: `_total`, `_bucket`, `_sum`, `_count`, or nothing.
        package var suffix: String
        /// Label names and values, in the order they are written.
        package var labels: [Label]
        /// The value.
        package var value: Double
    }

    /// A label's name and value.
    package struct Label: Sendable, Hashable {
        /// The name (`[a-zA-Z_][a-zA-Z0-9_]*`).
        package var name: String
        /// The value: any text (escaped when written).
        package var value: String

        /// Creates a label.
        package init(_ name: String, _ value: String) {
            self.name = name
            self.value = value
        }
    }

    /// The family's name, without `_total` for a counter; it ends with `_UNIT` when ``unit`` is set.
    package let name: String
    /// The family's type.
    package let kind: Kind
    /// The unit (`seconds`, `ratio`), written as `# UNIT` in OpenMetrics.
    package let unit: String?
    /// One line saying what the family counts or measures.
    package let help: String
    /// The samples, in the order they are written.
    package private(set) var samples: [Sample] = []

    /// Creates a family with no samples yet.
    package init(_ name: String, _ kind: Kind, unit: String? = nil, help: String) {
        precondition(Self.isValidName(name), "invalid metric name \(name)")
        precondition(unit.map { name.hasSuffix("_" + $0) } ?? true, "\(name) must end with its unit")
        self.name = name
        self.kind = kind
        self.unit = unit
        self.help = help
    }

    /// Adds a counter's or a gauge's value for one label set.
    package mutating func add(_ value: Double, _ labels: [Label]) {
        precondition(kind != .histogram, "a histogram's samples are added with addHistogram")
        samples.append(Sample(suffix: kind == .counter ? "_total" : "", labels: labels, value: value))
    }

    /// Adds a histogram for one label set.
    /// - Parameters:
    ///   - upperBounds: the buckets' bounds, ascending (the `+Inf` bucket is added here).
    ///   - counts: observations per bucket, not cumulative: one per bound, then the ones above the last.
    ///   - sum: the sum of the observations.
    package mutating func addHistogram(upperBounds: [Double], counts: [UInt64], sum: Double, _ labels: [Label]) {
        precondition(kind == .histogram && counts.count == upperBounds.count + 1, "a histogram needs one count per bucket and one above")
        var cumulative: UInt64 = 0
        for (bound, count) in zip(upperBounds + [.infinity], counts) {
            cumulative &+= count
            let le = bound.isInfinite ? "+Inf" : MetricsExposition.number(bound, forceFraction: true)
            samples.append(Sample(suffix: "_bucket", labels: labels + [Label("le", le)], value: Double(cumulative)))
        }
        samples.append(Sample(suffix: "_sum", labels: labels, value: sum))
        samples.append(Sample(suffix: "_count", labels: labels, value: Double(cumulative)))
    }

    /// Whether `name` is a valid metric or label name.
    static func isValidName(_ name: String) -> Bool {
        guard let first = name.utf8.first, !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else { return false }
        return name.utf8.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "_")
        }
    }
}

/// Renders metric families as text a Prometheus server scrapes. Pure: no I/O, no clock.
package enum MetricsExposition {
    /// The exposition of `families` in `format`. Families with no samples are left out (a value not measured is
    /// absent, not zero).
    package static func render(_ families: [MetricFamily], format: ExpositionFormat) -> String {
        var text = ""
        text.reserveCapacity(families.count * 256)
        for family in families where !family.samples.isEmpty {
            switch format {
            case .openMetrics:
                text += "# TYPE \(family.name) \(family.kind.rawValue)\n"
                if let unit = family.unit { text += "# UNIT \(family.name) \(unit)\n" }
                text += "# HELP \(family.name) \(escapeHelp(family.help, format: format))\n"
            case .prometheusText:
                let name = family.kind == .counter ? family.name + "_total" : family.name
                text += "# HELP \(name) \(escapeHelp(family.help, format: format))\n"
                text += "# TYPE \(name) \(family.kind.rawValue)\n"
            }
            for sample in family.samples {
                text += family.name
                text += sample.suffix
                if !sample.labels.isEmpty {
                    text += "{"
                    text += sample.labels.map { "\($0.name)=\"\(escapeLabelValue($0.value))\"" }.joined(separator: ",")
                    text += "}"
                }
                text += " "
                text += number(sample.value)
                text += "\n"
            }
        }
        if format == .openMetrics { text += "# EOF\n" }
        return text
    }

    /// A label value with `\`, `"` and line feeds escaped (the same in both formats).
    package static func escapeLabelValue(_ value: String) -> String {
        var escaped = ""
        escaped.reserveCapacity(value.utf8.count)
        for character in value.unicodeScalars {
            switch character {
            case "\\": escaped += "\\\\"
            case "\"": escaped += "\\\""
            case "\n": escaped += "\\n"
            default: escaped.unicodeScalars.append(character)
            }
        }
        return escaped
    }

    /// Help text with `\` and line feeds escaped, and `"` too in OpenMetrics.
    static func escapeHelp(_ help: String, format: ExpositionFormat) -> String {
        var escaped = ""
        for character in help.unicodeScalars {
            switch character {
            case "\\": escaped += "\\\\"
            case "\n": escaped += "\\n"
            case "\"" where format == .openMetrics: escaped += "\\\""
            default: escaped.unicodeScalars.append(character)
            }
        }
        return escaped
    }

    /// A value as both formats write it: a whole number without a fraction (unless `forceFraction`), else the
    /// shortest text that reads back as the same double; `NaN`, `+Inf`, `-Inf`.
    package static func number(_ value: Double, forceFraction: Bool = false) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        if !forceFraction, value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }
}
