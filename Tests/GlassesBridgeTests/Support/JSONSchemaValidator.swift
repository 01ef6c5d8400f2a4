import Foundation

/// A JSON value as the test support reads it: integers kept apart from other numbers, as JSON Schema's `integer`
/// type needs.
indirect enum TestJSON: Equatable {
    case null
    case bool(Bool)
    case integer(Int64)
    case number(Double)
    case string(String)
    case array([TestJSON])
    case object([String: TestJSON])

    /// Parses one JSON text (RFC 8259); nil when it is not JSON.
    static func parse(_ text: String) -> TestJSON? {
        var parser = Parser(bytes: Array(text.utf8))
        guard let value = parser.value() else { return nil }
        parser.skipSpace()
        return parser.index == parser.bytes.count ? value : nil
    }

    subscript(key: String) -> TestJSON? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    var string: String? { if case .string(let s) = self { s } else { nil } }

    private struct Parser {
        let bytes: [UInt8]
        var index = 0

        mutating func skipSpace() {
            while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        }

        mutating func value() -> TestJSON? {
            skipSpace()
            guard index < bytes.count else { return nil }
            switch bytes[index] {
            case UInt8(ascii: "{"):
                index += 1
                var members: [String: TestJSON] = [:]
                skipSpace()
                if index < bytes.count, bytes[index] == UInt8(ascii: "}") { index += 1; return .object(members) }
                while true {
                    skipSpace()
                    guard case .string(let key)? = stringValue() else { return nil }
                    skipSpace()
                    guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { return nil }
                    index += 1
                    guard let member = value() else { return nil }
                    members[key] = member
                    skipSpace()
                    guard index < bytes.count else { return nil }
                    if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                    if bytes[index] == UInt8(ascii: "}") { index += 1; return .object(members) }
                    return nil
                }
            case UInt8(ascii: "["):
                index += 1
                var items: [TestJSON] = []
                skipSpace()
                if index < bytes.count, bytes[index] == UInt8(ascii: "]") { index += 1; return .array(items) }
                while true {
                    guard let item = value() else { return nil }
                    items.append(item)
                    skipSpace()
                    guard index < bytes.count else { return nil }
                    if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                    if bytes[index] == UInt8(ascii: "]") { index += 1; return .array(items) }
                    return nil
                }
            case UInt8(ascii: "\""):
                return stringValue()
            case UInt8(ascii: "t"): return literal("true", .bool(true))
            case UInt8(ascii: "f"): return literal("false", .bool(false))
            case UInt8(ascii: "n"): return literal("null", .null)
            default:
                return numberValue()
            }
        }

        mutating func literal(_ word: String, _ result: TestJSON) -> TestJSON? {
            let chars = Array(word.utf8)
            guard index + chars.count <= bytes.count, Array(bytes[index..<index + chars.count]) == chars else { return nil }
            index += chars.count
            return result
        }

        mutating func numberValue() -> TestJSON? {
            let start = index
            var isInteger = true
            while index < bytes.count, let c = Optional(bytes[index]),
                  (c >= 0x30 && c <= 0x39) || c == UInt8(ascii: "-") || c == UInt8(ascii: "+") || c == UInt8(ascii: ".")
                    || c == UInt8(ascii: "e") || c == UInt8(ascii: "E") {
                if c == UInt8(ascii: ".") || c == UInt8(ascii: "e") || c == UInt8(ascii: "E") { isInteger = false }
                index += 1
            }
            let text = String(decoding: bytes[start..<index], as: UTF8.self)
            if isInteger, let value = Int64(text) { return .integer(value) }
            return Double(text).map { .number($0) }
        }

        mutating func stringValue() -> TestJSON? {
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return nil }
            index += 1
            var out: [UInt8] = []
            while index < bytes.count {
                let c = bytes[index]
                index += 1
                if c == UInt8(ascii: "\"") { return .string(String(decoding: out, as: UTF8.self)) }
                guard c == UInt8(ascii: "\\") else { out.append(c); continue }
                guard index < bytes.count else { return nil }
                let e = bytes[index]
                index += 1
                switch e {
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "u"):
                    guard index + 4 <= bytes.count,
                          let code = UInt32(String(decoding: bytes[index..<index + 4], as: UTF8.self), radix: 16)
                    else { return nil }
                    index += 4
                    out += Array(String(Unicode.Scalar(code).map(Character.init) ?? "\u{FFFD}").utf8)
                default: out.append(e)
                }
            }
            return nil
        }
    }
}

/// Validates JSON against the subset of JSON Schema (draft 2020-12) that `docs/schema/` uses: `type` (a name or a
/// list), `const`, `enum`, `properties`, `required`, `additionalProperties` (false or a schema), `minimum`,
/// `maximum`, `items`. Annotations (`$schema`, `$id`, `title`, `description`) are ignored; any other keyword is
/// reported, so a schema cannot silently use more than this checks.
struct JSONSchemaValidator {
    static let understood: Set<String> = [
        "$schema", "$id", "title", "description", "type", "const", "enum", "properties", "required",
        "additionalProperties", "minimum", "maximum", "items",
    ]

    /// The problems of `value` against `schema`, each with its JSON path; empty when it is valid.
    static func problems(_ value: TestJSON, against schema: TestJSON, path: String = "$") -> [String] {
        guard case .object(let keywords) = schema else { return ["\(path): the schema is not an object"] }
        var problems = keywords.keys.filter { !understood.contains($0) }.map { "\(path): unsupported keyword \($0)" }
        if let type = keywords["type"] {
            let names: [String] = switch type {
            case .string(let name): [name]
            case .array(let items): items.compactMap(\.string)
            default: []
            }
            if !names.contains(where: { matches(value, type: $0) }) {
                problems.append("\(path): \(describe(value)) is not \(names.joined(separator: " or "))")
            }
        }
        if let constant = keywords["const"], !same(constant, value) {
            problems.append("\(path): \(describe(value)) is not the constant \(describe(constant))")
        }
        if case .array(let options)? = keywords["enum"], !options.contains(where: { same($0, value) }) {
            problems.append("\(path): \(describe(value)) is not one of \(options.map(describe).joined(separator: ", "))")
        }
        if let number = numeric(value) {
            if let minimum = keywords["minimum"].flatMap(numeric), number < minimum {
                problems.append("\(path): \(number) is below \(minimum)")
            }
            if let maximum = keywords["maximum"].flatMap(numeric), number > maximum {
                problems.append("\(path): \(number) is above \(maximum)")
            }
        }
        if case .object(let members) = value {
            var properties: [String: TestJSON] = [:]
            if case .object(let declared)? = keywords["properties"] { properties = declared }
            if case .array(let required)? = keywords["required"] {
                for name in required.compactMap(\.string) where members[name] == nil {
                    problems.append("\(path): lacks required \(name)")
                }
            }
            for (name, member) in members.sorted(by: { $0.key < $1.key }) {
                if let schema = properties[name] {
                    problems += Self.problems(member, against: schema, path: "\(path).\(name)")
                } else if let additional = keywords["additionalProperties"] {
                    if additional == .bool(false) {
                        problems.append("\(path): unexpected member \(name)")
                    } else if case .object = additional {
                        problems += Self.problems(member, against: additional, path: "\(path).\(name)")
                    }
                }
            }
        }
        if case .array(let items) = value, let schema = keywords["items"] {
            for (index, item) in items.enumerated() {
                problems += Self.problems(item, against: schema, path: "\(path)[\(index)]")
            }
        }
        return problems
    }

    private static func matches(_ value: TestJSON, type: String) -> Bool {
        switch (type, value) {
        case ("null", .null), ("boolean", .bool), ("integer", .integer), ("number", .integer), ("number", .number),
             ("string", .string), ("array", .array), ("object", .object): true
        default: false
        }
    }

    private static func numeric(_ value: TestJSON) -> Double? {
        switch value {
        case .integer(let i): Double(i)
        case .number(let d): d
        default: nil
        }
    }

    private static func same(_ a: TestJSON, _ b: TestJSON) -> Bool {
        if let x = numeric(a), let y = numeric(b) { return x == y }
        return a == b
    }

    private static func describe(_ value: TestJSON) -> String {
        switch value {
        case .null: "null"
        case .bool(let b): "\(b)"
        case .integer(let i): "\(i)"
        case .number(let d): "\(d)"
        case .string(let s): "\"\(s)\""
        case .array: "an array"
        case .object: "an object"
        }
    }
}

/// The repository's `docs/` folder, found from this file's place in the checkout.
func docsDirectory() -> URL {
    URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("docs")
}
