import GlassesJSON

// Protobuf's canonical JSON mapping: a writer, and a reader over GlassesJSON's parsed values (no Foundation JSON: it
// loses int64 precision and confuses booleans with numbers).

/// Options for writing metrics as JSON, named as in swift-protobuf.
public struct JSONEncodingOptions: Sendable, Hashable {
    /// Write enums as numbers instead of names.
    public var alwaysPrintEnumsAsInts = false
    /// Write the `.proto` field names (`upper_trace`) instead of lowerCamelCase JSON names (`upperTrace`).
    public var preserveProtoFieldNames = false
    /// Creates the default options (names, lowerCamelCase).
    public init() {}
}

/// Options for reading metrics from JSON, named as in swift-protobuf.
public struct JSONDecodingOptions: Sendable, Hashable {
    /// Skip fields the schema does not know instead of failing.
    public var ignoreUnknownFields = false
    /// The deepest nesting accepted.
    public var messageDepthLimit = 64
    /// Creates the default options (unknown fields are errors).
    public init() {}
}

/// Why a metrics JSON document could not be read.
public struct MetricsJSONError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure.
    public enum Code: Int, Sendable, Hashable {
        /// The text is not JSON.
        case malformedJSON = 1
        /// A field name the schema does not know (see ``JSONDecodingOptions/ignoreUnknownFields``).
        case unknownField = 2
        /// A value of the wrong JSON type, or out of range for its field.
        case invalidValue = 3
        /// Nesting deeper than ``JSONDecodingOptions/messageDepthLimit``.
        case tooDeep = 4
    }

    /// The kind of failure.
    public let code: Code
    /// What went wrong, for a person.
    public let message: String
    /// Where: a field path such as `cardio.pulseRate[2].timestamp`, or a byte offset for malformed text.
    public let path: String

    /// Creates an error.
    public init(code: Code, message: String, path: String) {
        self.code = code
        self.message = message
        self.path = path
    }

    /// `code at path: message`.
    public var description: String { "\(code) at \(path.isEmpty ? "<root>" : path): \(message)" }
}

extension JSONValue {
    /// Parses a complete JSON document with GlassesJSON's parser; its errors become `malformedJSON` or `tooDeep`
    /// at `byte N`.
    static func parse(_ bytes: [UInt8], depthLimit: Int) throws(MetricsJSONError) -> JSONValue {
        do throws(JSONParseError) {
            return JSONValue(try JSONNode.parse(bytes, depthLimit: depthLimit))
        } catch {
            let code: MetricsJSONError.Code = error.kind == .tooDeep ? .tooDeep : .malformedJSON
            throw MetricsJSONError(code: code, message: error.message, path: "byte \(error.offset)")
        }
    }
}

/// Writes one JSON object in protobuf's canonical style: fields in schema order, defaults omitted.
struct ProtoJSONWriter {
    let options: JSONEncodingOptions
    private(set) var text = "{"
    private var first = true

    init(options: JSONEncodingOptions) {
        self.options = options
    }

    private mutating func key(_ jsonName: String, _ protoName: String) {
        if !first { text += "," }
        first = false
        text += "\"" + (options.preserveProtoFieldNames ? protoName : jsonName) + "\":"
    }

    /// The finished object.
    mutating func finish() -> String {
        text += "}"
        return text
    }

    mutating func float(_ jsonName: String, _ protoName: String, _ value: Float) {
        guard value.bitPattern != 0 else { return }  // proto3 omits exactly +0; -0 is kept
        key(jsonName, protoName)
        text += Self.format(Double(value), description: value.description)
    }

    mutating func double(_ jsonName: String, _ protoName: String, _ value: Double) {
        guard value.bitPattern != 0 else { return }
        key(jsonName, protoName)
        text += Self.format(value, description: value.description)
    }

    mutating func bool(_ jsonName: String, _ protoName: String, _ value: Bool) {
        guard value else { return }
        key(jsonName, protoName)
        text += "true"
    }

    mutating func int64(_ jsonName: String, _ protoName: String, _ value: Int64) {
        guard value != 0 else { return }
        key(jsonName, protoName)
        text += "\"\(value)\""
    }

    mutating func enumValue(_ jsonName: String, _ protoName: String, number: Int, name: String) {
        guard number != 0 else { return }
        key(jsonName, protoName)
        text += options.alwaysPrintEnumsAsInts ? "\(number)" : "\"\(name)\""
    }

    mutating func message(_ jsonName: String, _ protoName: String, _ json: String?) {
        guard let json else { return }
        key(jsonName, protoName)
        text += json
    }

    mutating func repeated(_ jsonName: String, _ protoName: String, _ items: [String]) {
        guard !items.isEmpty else { return }
        key(jsonName, protoName)
        text += "[" + items.joined(separator: ",") + "]"
    }

    /// A float or double as protobuf writes it: shortest round-trip digits, integers without `.0`, and the
    /// non-finite values as the strings `NaN`, `Infinity`, `-Infinity`.
    static func format(_ value: Double, description: String) -> String {
        if value.isNaN { return "\"NaN\"" }
        if value.isInfinite { return value < 0 ? "\"-Infinity\"" : "\"Infinity\"" }
        if description.hasSuffix(".0") { return String(description.dropLast(2)) }
        return description
    }
}

/// Reads one JSON object as a protobuf message: accepts JSON and `.proto` names, `null` as the default value,
/// quoted or bare numbers, enum names or numbers.
struct ProtoJSONReader {
    let options: JSONDecodingOptions
    let path: String
    let depth: Int

    func child(_ name: String) -> ProtoJSONReader {
        ProtoJSONReader(options: options, path: path.isEmpty ? name : path + "." + name, depth: depth + 1)
    }

    func element(_ index: Int) -> ProtoJSONReader {
        ProtoJSONReader(options: options, path: path + "[\(index)]", depth: depth)
    }

    func invalid(_ message: String) -> MetricsJSONError {
        MetricsJSONError(code: .invalidValue, message: message, path: path)
    }

    /// Calls `field` with each member, translating `.proto` names to JSON names; unknown names fail or are skipped.
    func members(
        of value: JSONValue, fields: [(json: String, proto: String)],
        _ field: (String, ProtoJSONReader, JSONValue) throws(MetricsJSONError) -> Void
    ) throws(MetricsJSONError) {
        guard depth <= options.messageDepthLimit else {
            throw MetricsJSONError(code: .tooDeep, message: "message nesting too deep", path: path)
        }
        guard case .object(let members) = value else { throw invalid("expected an object") }
        for (name, member) in members {
            guard let known = fields.first(where: { $0.json == name || $0.proto == name }) else {
                if options.ignoreUnknownFields { continue }
                throw MetricsJSONError(code: .unknownField, message: "unknown field \"\(name)\"", path: path)
            }
            try field(known.json, child(known.json), member)
        }
    }

    func float(_ value: JSONValue) throws(MetricsJSONError) -> Float {
        let double = try self.double(value)
        guard double.isNaN || double.isInfinite || abs(double) <= Double(Float.greatestFiniteMagnitude) else {
            throw invalid("\(double) is out of range for a float")
        }
        return Float(double)
    }

    func double(_ value: JSONValue) throws(MetricsJSONError) -> Double {
        switch value {
        case .null: return 0
        case .number(let text):
            guard let parsed = Double(text) else { throw invalid("invalid number \(text)") }
            return parsed
        case .string(let text):
            switch text {
            case "NaN": return .nan
            case "Infinity": return .infinity
            case "-Infinity": return -.infinity
            default:
                guard !text.isEmpty, text.allSatisfy({ "0123456789+-.eE".contains($0) }), let parsed = Double(text) else {
                    throw invalid("invalid number string \"\(text)\"")
                }
                return parsed
            }
        default:
            throw invalid("expected a number")
        }
    }

    func int64(_ value: JSONValue) throws(MetricsJSONError) -> Int64 {
        let text: String
        switch value {
        case .null: return 0
        case .number(let raw), .string(let raw): text = raw
        default: throw invalid("expected an integer")
        }
        if let exact = Int64(text) { return exact }
        // Protobuf accepts integral values written with a fraction or an exponent, such as 1e3.
        guard let parsed = Double(text), parsed.rounded() == parsed, parsed >= -9.223372036854775808e18,
              parsed < 9.223372036854775808e18
        else { throw invalid("\(text) is not a 64-bit integer") }
        return Int64(parsed)
    }

    func bool(_ value: JSONValue) throws(MetricsJSONError) -> Bool {
        switch value {
        case .null: return false
        case .bool(let flag): return flag
        default: throw invalid("expected true or false")
        }
    }

    func array(_ value: JSONValue) throws(MetricsJSONError) -> [JSONValue] {
        switch value {
        case .null: return []
        case .array(let items): return items
        default: throw invalid("expected an array")
        }
    }

    func messages<T>(
        _ value: JSONValue, _ decode: (ProtoJSONReader, JSONValue) throws(MetricsJSONError) -> T
    ) throws(MetricsJSONError) -> [T] {
        var result: [T] = []
        for (index, item) in try array(value).enumerated() {
            result.append(try decode(element(index), item))
        }
        return result
    }
}
