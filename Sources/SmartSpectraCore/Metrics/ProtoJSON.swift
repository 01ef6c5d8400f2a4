// A small JSON reader and writer for protobuf's canonical JSON mapping (no Foundation JSON: it loses int64 precision
// and confuses booleans with numbers).

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
    /// Parses a complete JSON document.
    static func parse(_ bytes: [UInt8], depthLimit: Int) throws(MetricsJSONError) -> JSONValue {
        var parser = JSONParser(bytes: bytes, depthLimit: depthLimit)
        parser.skipWhitespace()
        let value = try parser.parseValue(depth: 0)
        parser.skipWhitespace()
        guard parser.index == bytes.count else { throw parser.failure("trailing characters after the JSON value") }
        return value
    }
}

/// A recursive-descent parser over UTF-8 bytes (RFC 8259).
private struct JSONParser {
    let bytes: [UInt8]
    let depthLimit: Int
    var index = 0

    init(bytes: [UInt8], depthLimit: Int) {
        self.bytes = bytes
        self.depthLimit = depthLimit
    }

    func failure(_ message: String) -> MetricsJSONError {
        MetricsJSONError(code: .malformedJSON, message: message, path: "byte \(index)")
    }

    mutating func skipWhitespace() {
        while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
    }

    mutating func expect(_ literal: String) throws(MetricsJSONError) {
        for byte in literal.utf8 {
            guard index < bytes.count, bytes[index] == byte else { throw failure("expected \(literal)") }
            index += 1
        }
    }

    mutating func parseValue(depth: Int) throws(MetricsJSONError) -> JSONValue {
        guard depth <= depthLimit else {
            throw MetricsJSONError(code: .tooDeep, message: "nesting deeper than \(depthLimit)", path: "byte \(index)")
        }
        guard index < bytes.count else { throw failure("unexpected end of input") }
        switch bytes[index] {
        case UInt8(ascii: "n"): try expect("null"); return .null
        case UInt8(ascii: "t"): try expect("true"); return .bool(true)
        case UInt8(ascii: "f"): try expect("false"); return .bool(false)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "["):
            index += 1
            var items: [JSONValue] = []
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "]") { index += 1; return .array(items) }
            while true {
                skipWhitespace()
                items.append(try parseValue(depth: depth + 1))
                skipWhitespace()
                guard index < bytes.count else { throw failure("unterminated array") }
                if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                if bytes[index] == UInt8(ascii: "]") { index += 1; return .array(items) }
                throw failure("expected , or ] in array")
            }
        case UInt8(ascii: "{"):
            index += 1
            var members: [(String, JSONValue)] = []
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "}") { index += 1; return .object(members) }
            while true {
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw failure("expected a member name") }
                let key = try parseString()
                skipWhitespace()
                try expect(":")
                skipWhitespace()
                members.append((key, try parseValue(depth: depth + 1)))
                skipWhitespace()
                guard index < bytes.count else { throw failure("unterminated object") }
                if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                if bytes[index] == UInt8(ascii: "}") { index += 1; return .object(members) }
                throw failure("expected , or } in object")
            }
        default:
            return .number(try parseNumber())
        }
    }

    mutating func parseNumber() throws(MetricsJSONError) -> String {
        let start = index
        func digits(_ parser: inout JSONParser) -> Int {
            let from = parser.index
            while parser.index < parser.bytes.count, (0x30 ... 0x39).contains(parser.bytes[parser.index]) { parser.index += 1 }
            return parser.index - from
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
        let intStart = index
        let intDigits = digits(&self)
        guard intDigits > 0 else { throw failure("invalid value") }
        if intDigits > 1, bytes[intStart] == UInt8(ascii: "0") { throw failure("leading zero in number") }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard digits(&self) > 0 else { throw failure("digits expected after the decimal point") }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard digits(&self) > 0 else { throw failure("digits expected in the exponent") }
        }
        return String(decoding: bytes[start ..< index], as: UTF8.self)
    }

    mutating func parseString() throws(MetricsJSONError) -> String {
        index += 1  // opening quote
        var scalars = String.UnicodeScalarView()
        var run: [UInt8] = []
        func flush(_ run: inout [UInt8], into scalars: inout String.UnicodeScalarView) {
            if run.isEmpty { return }
            scalars.append(contentsOf: String(decoding: run, as: UTF8.self).unicodeScalars)
            run.removeAll(keepingCapacity: true)
        }
        while true {
            guard index < bytes.count else { throw failure("unterminated string") }
            let byte = bytes[index]
            index += 1
            if byte == UInt8(ascii: "\"") {
                flush(&run, into: &scalars)
                return String(scalars)
            }
            if byte < 0x20 { throw failure("control character in string") }
            guard byte == UInt8(ascii: "\\") else { run.append(byte); continue }
            flush(&run, into: &scalars)
            guard index < bytes.count else { throw failure("unterminated escape") }
            let escape = bytes[index]
            index += 1
            switch escape {
            case UInt8(ascii: "\""): scalars.append("\"")
            case UInt8(ascii: "\\"): scalars.append("\\")
            case UInt8(ascii: "/"): scalars.append("/")
            case UInt8(ascii: "b"): scalars.append("\u{08}")
            case UInt8(ascii: "f"): scalars.append("\u{0C}")
            case UInt8(ascii: "n"): scalars.append("\n")
            case UInt8(ascii: "r"): scalars.append("\r")
            case UInt8(ascii: "t"): scalars.append("\t")
            case UInt8(ascii: "u"):
                var code = try parseHex4()
                if (0xD800 ..< 0xDC00).contains(code) {
                    try expect("\\u")
                    let low = try parseHex4()
                    guard (0xDC00 ..< 0xE000).contains(low) else { throw failure("unpaired surrogate") }
                    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                } else if (0xDC00 ..< 0xE000).contains(code) {
                    throw failure("unpaired surrogate")
                }
                guard let scalar = Unicode.Scalar(code) else { throw failure("invalid \\u escape") }
                scalars.append(scalar)
            default:
                throw failure("invalid escape")
            }
        }
    }

    mutating func parseHex4() throws(MetricsJSONError) -> UInt32 {
        guard index + 4 <= bytes.count,
              let value = UInt32(String(decoding: bytes[index ..< index + 4], as: UTF8.self), radix: 16)
        else { throw failure("invalid \\u escape") }
        index += 4
        return value
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
