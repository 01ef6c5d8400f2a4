import Foundation

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

    /// `line L, column C`.
    public var description: String { "line \(line), column \(column)" }

    /// The position of byte `offset` in UTF-8 `bytes` (one pass up to the offset, for error messages only).
    static func of(offset: Int, in bytes: UnsafeRawBufferPointer) -> TextPosition {
        var line = 1
        var column = 1
        for index in 0..<min(offset, bytes.count) {
            let byte = bytes[index]
            if byte == 0x0A {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80 {
                column += 1  // continuation bytes do not start a character
            }
        }
        return TextPosition(line: line, column: column)
    }
}

/// A JSON value that remembers where it starts in the text, so that scenario errors can name a line and column.
///
/// Foundation's `JSONSerialization` gives no positions; this small reader does (RFC 8259, UTF-8, nesting at most
/// ``ScenarioJSON/maxDepth`` deep). Positions are kept as byte offsets and turned into lines and columns only for
/// an error message.
struct ScenarioJSON: Sendable {
    /// What the value is.
    enum Value: Sendable {
        case object([Member])
        case array([ScenarioJSON])
        case string(String)
        /// The literal as written (for exact integers) and its value as a Double (infinite when out of range).
        case number(text: String, value: Double)
        case bool(Bool)
        case null
    }

    /// One `"key": value` of an object, in file order.
    struct Member: Sendable {
        var key: String
        var keyOffset: Int
        var value: ScenarioJSON
    }

    /// The value.
    var value: Value
    /// Byte offset of its first character.
    var offset: Int
    /// Byte offset just past its last character.
    var end: Int

    /// The deepest nesting of arrays and objects accepted.
    static let maxDepth = 64

    /// The member named `key`, if any.
    subscript(key: String) -> ScenarioJSON? {
        guard case .object(let members) = value else { return nil }
        return members.first { $0.key == key }?.value
    }

    /// A short name of the value's type, for messages.
    var typeName: String {
        switch value {
        case .object: "an object"
        case .array: "an array"
        case .string: "a string"
        case .number: "a number"
        case .bool: "a boolean"
        case .null: "null"
        }
    }

    /// A syntax error: what was expected, at which byte.
    struct SyntaxError: Error, Sendable {
        var message: String
        var offset: Int
    }

    /// Parses a whole document (one value, surrounded only by whitespace; a UTF-8 byte order mark is skipped).
    static func parse(_ bytes: UnsafeRawBufferPointer) throws(SyntaxError) -> ScenarioJSON {
        var reader = Reader(bytes: bytes)
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { reader.index = 3 }
        reader.skipWhitespace()
        let value = try reader.value(depth: 0)
        reader.skipWhitespace()
        guard reader.index == bytes.count else {
            throw SyntaxError(message: "unexpected text after the end of the JSON value", offset: reader.index)
        }
        return value
    }

    private struct Reader {
        let bytes: UnsafeRawBufferPointer
        var index = 0

        init(bytes: UnsafeRawBufferPointer) {
            self.bytes = bytes
        }

        var atEnd: Bool { index >= bytes.count }
        var current: UInt8 { bytes[index] }

        mutating func skipWhitespace() {
            while !atEnd, current == 0x20 || current == 0x0A || current == 0x0D || current == 0x09 { index += 1 }
        }

        func fail(_ message: String, at offset: Int? = nil) -> SyntaxError {
            SyntaxError(message: message, offset: offset ?? index)
        }

        func describeCurrent() -> String {
            guard !atEnd else { return "the end of the text" }
            let byte = current
            return byte >= 0x20 && byte < 0x7F ? "'\(Character(UnicodeScalar(byte)))'" : String(format: "byte 0x%02X", byte)
        }

        mutating func value(depth: Int) throws(SyntaxError) -> ScenarioJSON {
            guard !atEnd else { throw fail("expected a value, found the end of the text") }
            let start = index
            switch current {
            case UInt8(ascii: "{"):
                guard depth < ScenarioJSON.maxDepth else { throw fail("nested more than \(ScenarioJSON.maxDepth) deep") }
                return try object(start: start, depth: depth + 1)
            case UInt8(ascii: "["):
                guard depth < ScenarioJSON.maxDepth else { throw fail("nested more than \(ScenarioJSON.maxDepth) deep") }
                return try array(start: start, depth: depth + 1)
            case UInt8(ascii: "\""):
                let text = try string()
                return ScenarioJSON(value: .string(text), offset: start, end: index)
            case UInt8(ascii: "t"):
                try literal("true")
                return ScenarioJSON(value: .bool(true), offset: start, end: index)
            case UInt8(ascii: "f"):
                try literal("false")
                return ScenarioJSON(value: .bool(false), offset: start, end: index)
            case UInt8(ascii: "n"):
                try literal("null")
                return ScenarioJSON(value: .null, offset: start, end: index)
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                return try number(start: start)
            default:
                throw fail("expected a value, found \(describeCurrent())")
            }
        }

        mutating func literal(_ word: StaticString) throws(SyntaxError) {
            let start = index
            let count = word.utf8CodeUnitCount
            guard bytes.count - index >= count else { throw fail("expected '\(word)'", at: start) }
            for k in 0..<count where bytes[index + k] != word.utf8Start[k] {
                throw fail("expected '\(word)'", at: start)
            }
            index += count
        }

        mutating func object(start: Int, depth: Int) throws(SyntaxError) -> ScenarioJSON {
            index += 1
            var members: [Member] = []
            var seen = Set<String>()
            skipWhitespace()
            if !atEnd, current == UInt8(ascii: "}") {
                index += 1
                return ScenarioJSON(value: .object(members), offset: start, end: index)
            }
            while true {
                skipWhitespace()
                guard !atEnd, current == UInt8(ascii: "\"") else { throw fail("expected a key in quotes, found \(describeCurrent())") }
                let keyOffset = index
                let key = try string()
                guard seen.insert(key).inserted else { throw fail("the key '\(key)' appears twice in this object", at: keyOffset) }
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
                return ScenarioJSON(value: .object(members), offset: start, end: index)
            }
        }

        mutating func array(start: Int, depth: Int) throws(SyntaxError) -> ScenarioJSON {
            index += 1
            var elements: [ScenarioJSON] = []
            skipWhitespace()
            if !atEnd, current == UInt8(ascii: "]") {
                index += 1
                return ScenarioJSON(value: .array(elements), offset: start, end: index)
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
                return ScenarioJSON(value: .array(elements), offset: start, end: index)
            }
        }

        mutating func string() throws(SyntaxError) -> String {
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

        mutating func hex4() throws(SyntaxError) -> UInt32 {
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

        mutating func number(start: Int) throws(SyntaxError) -> ScenarioJSON {
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
            // Double(text) is nil only for text that is not a number; a huge literal becomes infinity.
            let value = Double(text) ?? .nan
            return ScenarioJSON(value: .number(text: text, value: value), offset: start, end: index)
        }
    }
}
