import Foundation

/// A JSON value with ordered object keys, serialized compactly: the bridge's NDJSON writer (no Codable reflection,
/// stable key order, embedded pre-encoded JSON).
public indirect enum JSONValue: Sendable, Hashable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// An integer.
    case int(Int64)
    /// A number; non-finite values are written as `null`.
    case double(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object; keys keep their order.
    case object([(String, JSONValue)])
    /// Text that is already JSON (for example a protobuf JSON payload), written as is.
    case raw(String)

    /// The value as compact JSON text.
    public var serialized: String {
        var out = ""
        write(to: &out)
        return out
    }

    /// Appends the compact JSON text of the value to `out`.
    public func write(to out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let value): out += value ? "true" : "false"
        case .int(let value): out += String(value)
        case .double(let value): out += Self.number(value)
        case .string(let value): Self.writeString(value, to: &out)
        case .raw(let text): out += text
        case .array(let values):
            out += "["
            for (index, value) in values.enumerated() {
                if index > 0 { out += "," }
                value.write(to: &out)
            }
            out += "]"
        case .object(let members):
            out += "{"
            for (index, (key, value)) in members.enumerated() {
                if index > 0 { out += "," }
                Self.writeString(key, to: &out)
                out += ":"
                value.write(to: &out)
            }
            out += "}"
        }
    }

    /// A number as JSON: integers without a fraction, others in shortest round-trip form, non-finite as null.
    static func number(_ value: Double) -> String {
        guard value.isFinite else { return "null" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }

    static func writeString(_ value: String, to out: inout String) {
        out += "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }

    /// An optional number: `null` when absent.
    public static func number(_ value: Double?) -> JSONValue { value.map { .double($0) } ?? .null }

    /// Compares structurally; raw text compares as text.
    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool { lhs.serialized == rhs.serialized }

    /// Hashes the serialized form.
    public func hash(into hasher: inout Hasher) { hasher.combine(serialized) }
}
