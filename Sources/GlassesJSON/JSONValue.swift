import Foundation

/// A JSON value, the one type for reading and writing JSON in GlassesBridge: object keys keep their order, numbers
/// keep their text (so 64-bit integers stay exact), and already-encoded JSON can be embedded as is.
///
/// ``JSONNode/parse(_:depthLimit:duplicateKeys:byteOrderMark:)`` reads text into a tree that remembers where each
/// value stands and converts to it (``init(_:)``); SmartSpectraCore reads protobuf JSON that way, and the bridge
/// writes its NDJSON events with it (no Codable reflection, stable key order).
public indirect enum JSONValue: Sendable, Hashable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number, as its JSON text.
    case number(String)
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
        case .number(let text): out += text
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

    /// An integer.
    public static func int(_ value: Int64) -> JSONValue { .number(String(value)) }

    /// A number; non-finite values are written as `null`.
    public static func double(_ value: Double) -> JSONValue { value.isFinite ? .number(number(value)) : .null }

    /// An optional number: `null` when absent.
    public static func number(_ value: Double?) -> JSONValue { value.map { .double($0) } ?? .null }

    /// Compares structurally; raw text compares as text.
    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool { lhs.serialized == rhs.serialized }

    /// Hashes the serialized form.
    public func hash(into hasher: inout Hasher) { hasher.combine(serialized) }
}
