import Foundation

/// A JSON value that remembers where it stands in the text, so that callers can name a line and column.
///
/// The one JSON reader of GlassesBridge (RFC 8259 over UTF-8 bytes; no Foundation JSON, which gives no positions,
/// loses int64 precision and confuses booleans with numbers). ``parse(_:depthLimit:rejectsDuplicateKeys:skipsByteOrderMark:)``
/// reads a whole document: nesting is limited, text after the value is refused, and a syntax error names its byte
/// offset. Positions are kept as byte offsets; ``TextPosition`` turns one into a line and column when a message
/// needs it. ``JSONValue/init(_:)`` drops the positions.
public struct JSONNode: Sendable {
    /// What the value is.
    public enum Value: Sendable {
        /// An object; members keep their order.
        case object([Member])
        /// An array.
        case array([JSONNode])
        /// A string.
        case string(String)
        /// A number, as written (so 64-bit integers stay exact); ``JSONNode/numberValue`` reads it as a Double.
        case number(String)
        /// `true` or `false`.
        case bool(Bool)
        /// `null`.
        case null
    }

    /// One `"key": value` of an object, in text order.
    public struct Member: Sendable {
        /// The key.
        public var key: String
        /// Byte offset of the key's opening quote.
        public var keyOffset: Int
        /// The value.
        public var value: JSONNode

        /// Creates a member.
        public init(key: String, keyOffset: Int, value: JSONNode) {
            self.key = key
            self.keyOffset = keyOffset
            self.value = value
        }
    }

    /// The value.
    public var value: Value
    /// Byte offset of its first character.
    public var offset: Int
    /// Byte offset just past its last character.
    public var end: Int

    /// Creates a node.
    public init(value: Value, offset: Int, end: Int) {
        self.value = value
        self.offset = offset
        self.end = end
    }

    /// The deepest nesting of arrays and objects accepted unless a caller says otherwise.
    public static let defaultDepthLimit = 64

    /// The member named `key`, if any (the first, where keys repeat).
    public subscript(key: String) -> JSONNode? {
        guard case .object(let members) = value else { return nil }
        return members.first { $0.key == key }?.value
    }

    /// The number as a Double (infinite when out of range); nil when the value is not a number.
    public var numberValue: Double? {
        guard case .number(let text) = value else { return nil }
        // Double(text) is nil only for text that is not a number, which the parser never produces.
        return Double(text) ?? .nan
    }

    /// A short name of the value's type, for messages: "an object", "a number", "null"...
    public var typeName: String {
        switch value {
        case .object: "an object"
        case .array: "an array"
        case .string: "a string"
        case .number: "a number"
        case .bool: "a boolean"
        case .null: "null"
        }
    }

    /// Parses a whole document: one value, surrounded only by whitespace.
    /// - Parameters:
    ///   - depthLimit: the most arrays and objects open inside one another; one more is ``JSONParseError/Kind/tooDeep``.
    ///   - rejectsDuplicateKeys: a key that appears twice in one object is an error (otherwise both are kept).
    ///   - skipsByteOrderMark: a leading UTF-8 byte order mark is skipped (offsets still count it).
    /// - Throws: ``JSONParseError`` naming the byte offset of the problem.
    public static func parse(
        _ bytes: UnsafeRawBufferPointer, depthLimit: Int = defaultDepthLimit, rejectsDuplicateKeys: Bool = false,
        skipsByteOrderMark: Bool = false
    ) throws(JSONParseError) -> JSONNode {
        var reader = Reader(bytes: bytes, depthLimit: depthLimit, rejectsDuplicateKeys: rejectsDuplicateKeys)
        if skipsByteOrderMark, bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { reader.index = 3 }
        reader.skipWhitespace()
        let value = try reader.value(depth: 0)
        reader.skipWhitespace()
        guard reader.index == bytes.count else {
            throw reader.fail("unexpected text after the end of the JSON value")
        }
        return value
    }

    /// Parses a whole document held in an array (see ``parse(_:depthLimit:rejectsDuplicateKeys:skipsByteOrderMark:)``).
    public static func parse(
        _ bytes: [UInt8], depthLimit: Int = defaultDepthLimit, rejectsDuplicateKeys: Bool = false,
        skipsByteOrderMark: Bool = false
    ) throws(JSONParseError) -> JSONNode {
        let result: Result<JSONNode, JSONParseError> = bytes.withUnsafeBytes { raw in
            do throws(JSONParseError) {
                return .success(try parse(raw, depthLimit: depthLimit, rejectsDuplicateKeys: rejectsDuplicateKeys,
                                          skipsByteOrderMark: skipsByteOrderMark))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// A recursive-descent reader over UTF-8 bytes.
    private struct Reader {
        let bytes: UnsafeRawBufferPointer
        let depthLimit: Int
        let rejectsDuplicateKeys: Bool
        var index = 0

        init(bytes: UnsafeRawBufferPointer, depthLimit: Int, rejectsDuplicateKeys: Bool) {
            self.bytes = bytes
            self.depthLimit = depthLimit
            self.rejectsDuplicateKeys = rejectsDuplicateKeys
        }

        var atEnd: Bool { index >= bytes.count }
        var current: UInt8 { bytes[index] }

        mutating func skipWhitespace() {
            while !atEnd, current == 0x20 || current == 0x0A || current == 0x0D || current == 0x09 { index += 1 }
        }

        func fail(_ message: String, at offset: Int? = nil) -> JSONParseError {
            JSONParseError(.syntax, message, offset: offset ?? index)
        }

        func describeCurrent() -> String {
            guard !atEnd else { return "the end of the text" }
            let byte = current
            return byte >= 0x20 && byte < 0x7F ? "'\(Character(UnicodeScalar(byte)))'" : String(format: "byte 0x%02X", byte)
        }

        mutating func value(depth: Int) throws(JSONParseError) -> JSONNode {
            guard !atEnd else { throw fail("expected a value, found the end of the text") }
            let start = index
            switch current {
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                guard depth < depthLimit else {
                    throw JSONParseError(.tooDeep, "nested more than \(depthLimit) deep", offset: index)
                }
                let isObject = current == UInt8(ascii: "{")
                return try isObject ? object(start: start, depth: depth + 1) : array(start: start, depth: depth + 1)
            case UInt8(ascii: "\""):
                let text = try string()
                return JSONNode(value: .string(text), offset: start, end: index)
            case UInt8(ascii: "t"):
                try literal("true")
                return JSONNode(value: .bool(true), offset: start, end: index)
            case UInt8(ascii: "f"):
                try literal("false")
                return JSONNode(value: .bool(false), offset: start, end: index)
            case UInt8(ascii: "n"):
                try literal("null")
                return JSONNode(value: .null, offset: start, end: index)
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                return try number(start: start)
            default:
                throw fail("expected a value, found \(describeCurrent())")
            }
        }

        mutating func literal(_ word: StaticString) throws(JSONParseError) {
            let start = index
            let count = word.utf8CodeUnitCount
            guard bytes.count - index >= count else { throw fail("expected '\(word)'", at: start) }
            for k in 0..<count where bytes[index + k] != word.utf8Start[k] {
                throw fail("expected '\(word)'", at: start)
            }
            index += count
        }

        mutating func object(start: Int, depth: Int) throws(JSONParseError) -> JSONNode {
            index += 1
            var members: [Member] = []
            var seen = Set<String>()
            skipWhitespace()
            if !atEnd, current == UInt8(ascii: "}") {
                index += 1
                return JSONNode(value: .object(members), offset: start, end: index)
            }
            while true {
                skipWhitespace()
                guard !atEnd, current == UInt8(ascii: "\"") else { throw fail("expected a key in quotes, found \(describeCurrent())") }
                let keyOffset = index
                let key = try string()
                if rejectsDuplicateKeys, !seen.insert(key).inserted {
                    throw fail("the key '\(key)' appears twice in this object", at: keyOffset)
                }
                skipWhitespace()
                guard !atEnd, current == UInt8(ascii: ":") else { throw fail("expected ':' after the key '\(key)', found \(describeCurrent())") }
                index += 1
                skipWhitespace()
                let member = try value(depth: depth)
                members.append(Member(key: key, keyOffset: keyOffset, value: member))
                skipWhitespace()
                guard !atEnd else { throw fail("expected ',' or '}', found the end of the text") }
                if current == UInt8(ascii: ",") {
                    index += 1
                    continue
                }
                guard current == UInt8(ascii: "}") else { throw fail("expected ',' or '}', found \(describeCurrent())") }
                index += 1
                return JSONNode(value: .object(members), offset: start, end: index)
            }
        }

        mutating func array(start: Int, depth: Int) throws(JSONParseError) -> JSONNode {
            index += 1
            var elements: [JSONNode] = []
            skipWhitespace()
            if !atEnd, current == UInt8(ascii: "]") {
                index += 1
                return JSONNode(value: .array(elements), offset: start, end: index)
            }
            while true {
                skipWhitespace()
                elements.append(try value(depth: depth))
                skipWhitespace()
                guard !atEnd else { throw fail("expected ',' or ']', found the end of the text") }
                if current == UInt8(ascii: ",") {
                    index += 1
                    continue
                }
                guard current == UInt8(ascii: "]") else { throw fail("expected ',' or ']', found \(describeCurrent())") }
                index += 1
                return JSONNode(value: .array(elements), offset: start, end: index)
            }
        }

        mutating func string() throws(JSONParseError) -> String {
            let start = index
            index += 1
            var scalars = String.UnicodeScalarView()
            var runStart = index
            func flush(_ reader: Reader, upTo end: Int, into scalars: inout String.UnicodeScalarView) -> Bool {
                guard end > runStart else { return true }
                guard let text = String(validating: UnsafeRawBufferPointer(rebasing: reader.bytes[runStart..<end]), as: UTF8.self)
                else { return false }
                scalars.append(contentsOf: text.unicodeScalars)
                return true
            }
            while true {
                guard !atEnd else { throw fail("a string that starts here never ends", at: start) }
                let byte = current
                if byte == UInt8(ascii: "\"") {
                    guard flush(self, upTo: index, into: &scalars) else { throw fail("a string is not valid UTF-8", at: start) }
                    index += 1
                    return String(scalars)
                }
                if byte < 0x20 { throw fail("a control character inside a string must be escaped") }
                if byte != UInt8(ascii: "\\") {
                    index += 1
                    continue
                }
                guard flush(self, upTo: index, into: &scalars) else { throw fail("a string is not valid UTF-8", at: start) }
                index += 1
                guard !atEnd else { throw fail("a string that starts here never ends", at: start) }
                let escape = current
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
                    let high = try hex4()
                    var scalar: UnicodeScalar?
                    if (0xD800..<0xDC00).contains(high) {
                        guard bytes.count - index >= 2, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                            throw fail("a \\u escape starts a surrogate pair that is not completed")
                        }
                        index += 2
                        let low = try hex4()
                        guard (0xDC00..<0xE000).contains(low) else { throw fail("a \\u escape has an invalid low surrogate") }
                        scalar = UnicodeScalar(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
                    } else {
                        scalar = UnicodeScalar(high)
                    }
                    guard let scalar else { throw fail("a \\u escape names no character") }
                    scalars.append(scalar)
                default:
                    throw fail("unknown escape in a string", at: index - 2)
                }
                runStart = index
            }
        }

        mutating func hex4() throws(JSONParseError) -> UInt32 {
            guard bytes.count - index >= 4 else { throw fail("a \\u escape needs four hex digits") }
            var value: UInt32 = 0
            for _ in 0..<4 {
                let byte = current
                let digit: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
                default: throw fail("a \\u escape needs four hex digits")
                }
                value = value << 4 | UInt32(digit)
                index += 1
            }
            return value
        }

        mutating func number(start: Int) throws(JSONParseError) -> JSONNode {
            func isDigit(_ b: UInt8) -> Bool { b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9") }
            if current == UInt8(ascii: "-") { index += 1 }
            guard !atEnd, isDigit(current) else { throw fail("a number needs a digit here") }
            if current == UInt8(ascii: "0") {
                index += 1
                if !atEnd, isDigit(current) { throw fail("a number must not start with 0", at: start) }
            } else {
                while !atEnd, isDigit(current) { index += 1 }
            }
            if !atEnd, current == UInt8(ascii: ".") {
                index += 1
                guard !atEnd, isDigit(current) else { throw fail("a number needs a digit after '.'") }
                while !atEnd, isDigit(current) { index += 1 }
            }
            if !atEnd, current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
                index += 1
                if !atEnd, current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
                guard !atEnd, isDigit(current) else { throw fail("a number needs a digit in its exponent") }
                while !atEnd, isDigit(current) { index += 1 }
            }
            // The literal is ASCII by construction.
            let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
            return JSONNode(value: .number(text), offset: start, end: index)
        }
    }
}

/// Why a JSON document could not be read, and at which byte.
public struct JSONParseError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure.
    public enum Kind: Sendable, Hashable {
        /// The text is not JSON (including text after the value).
        case syntax
        /// Arrays and objects nested deeper than the parser's depth limit.
        case tooDeep
    }

    /// The kind of failure.
    public var kind: Kind
    /// What was expected or wrong, for a person.
    public var message: String
    /// Byte offset of the problem in the text (``TextPosition`` turns it into a line and column).
    public var offset: Int

    /// Creates an error.
    public init(_ kind: Kind, _ message: String, offset: Int) {
        self.kind = kind
        self.message = message
        self.offset = offset
    }

    /// `byte N: message`.
    public var description: String { "byte \(offset): \(message)" }
}

/// A place in a text: 1-based line and column (columns count characters, not bytes).
public struct TextPosition: Sendable, Hashable, CustomStringConvertible {
    /// The line, from 1.
    public var line: Int
    /// The column, from 1.
    public var column: Int

    /// Creates a position.
    public init(line: Int, column: Int) {
        self.line = line
        self.column = column
    }

    /// The position of byte `offset` in UTF-8 `bytes` (one pass up to the offset: meant for error messages).
    public init(offset: Int, in bytes: some Collection<UInt8>) {
        var line = 1
        var column = 1
        for byte in bytes.prefix(max(0, offset)) {
            if byte == 0x0A {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80 {
                column += 1  // continuation bytes do not start a character
            }
        }
        self.init(line: line, column: column)
    }

    /// `line L, column C`.
    public var description: String { "line \(line), column \(column)" }
}

extension JSONValue {
    /// The value of a parsed node, without its positions.
    public init(_ node: JSONNode) {
        switch node.value {
        case .null: self = .null
        case .bool(let flag): self = .bool(flag)
        case .number(let text): self = .number(text)
        case .string(let text): self = .string(text)
        case .array(let elements): self = .array(elements.map(JSONValue.init))
        case .object(let members): self = .object(members.map { ($0.key, JSONValue($0.value)) })
        }
    }
}
