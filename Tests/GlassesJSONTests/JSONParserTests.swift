import Testing
import GlassesJSON

/// Parses `text`, expecting a syntax or depth error; returns it (nil, with an issue recorded, when it was accepted).
private func parseError(_ text: String, depthLimit: Int = JSONNode.defaultDepthLimit) -> JSONParseError? {
    parseError(Array(text.utf8), depthLimit: depthLimit)
}

private func parseError(_ bytes: [UInt8], depthLimit: Int = JSONNode.defaultDepthLimit, rejectsDuplicateKeys: Bool = false)
    -> JSONParseError?
{
    do {
        _ = try JSONNode.parse(bytes, depthLimit: depthLimit, rejectsDuplicateKeys: rejectsDuplicateKeys)
        Issue.record("accepted \(String(decoding: bytes.prefix(80), as: UTF8.self))")
        return nil
    } catch {
        return error
    }
}

@Suite("The JSON parser: values, offsets, limits, errors")
struct JSONParserTests {
    @Test("every value records where it starts and ends")
    func offsets() throws {
        //          0         1         2         3         4
        //          0123456789012345678901234567890123456789012
        let text = #"{"a": [1, -2.5e3, "x"], "b": true, "c": null}"#
        let root = try JSONNode.parse(Array(text.utf8))
        #expect(root.offset == 0 && root.end == 45)
        guard case .object(let members) = root.value else { Issue.record("not an object"); return }
        #expect(members.map(\.key) == ["a", "b", "c"])
        #expect(members.map(\.keyOffset) == [1, 24, 35])
        let a = try #require(root["a"])
        #expect(a.offset == 6 && a.end == 22)
        guard case .array(let elements) = a.value else { Issue.record("not an array"); return }
        #expect(elements.map(\.offset) == [7, 10, 18])
        #expect(elements.map(\.end) == [8, 16, 21])
        #expect(elements.map(\.typeName) == ["a number", "a number", "a string"])
        #expect(root["b"]?.offset == 29 && root["b"]?.end == 33)
        #expect(root["c"]?.offset == 40 && root["c"]?.end == 44)
        #expect(root["missing"] == nil && a["a"] == nil)
    }

    @Test("an offset becomes a line and a column; columns count characters, not bytes")
    func lineAndColumn() throws {
        let text = "{\n  \"é\": 1,\n  \"k\": [\n    true ]}"
        let bytes = Array(text.utf8)
        let root = try JSONNode.parse(bytes)
        let k = try #require(root["k"])
        guard case .array(let elements) = k.value, let flag = elements.first else { Issue.record("no array"); return }
        #expect(TextPosition(offset: flag.offset, in: bytes) == TextPosition(line: 4, column: 5))
        #expect(TextPosition(offset: k.offset, in: bytes) == TextPosition(line: 3, column: 8))
        // "é" is two bytes but one column: the value 1 stands at column 8 of line 2.
        #expect(TextPosition(offset: try #require(root["é"]).offset, in: bytes).description == "line 2, column 8")
        #expect(TextPosition(offset: 0, in: bytes) == TextPosition(line: 1, column: 1))
        #expect(TextPosition(offset: -5, in: bytes) == TextPosition(line: 1, column: 1))
        #expect(TextPosition(offset: 1_000, in: bytes) == TextPosition(line: 4, column: 12))
    }

    @Test("a syntax error names its line and column through its offset")
    func errorPosition() throws {
        let bytes = Array("{\"events\": [\n  {\"at\": 1 \"do\": \"tap\"}]}".utf8)
        let error = try #require(parseError(bytes))
        #expect(error.kind == .syntax)
        #expect(error.message.hasPrefix("expected ',' or '}'"), "\(error.message)")
        #expect(TextPosition(offset: error.offset, in: bytes).description == "line 2, column 12")
    }

    @Test("nesting is limited: the limit parses, one more is tooDeep at the bracket that opens it")
    func depthLimit() throws {
        let limit = JSONNode.defaultDepthLimit
        _ = try JSONNode.parse(Array((String(repeating: "[", count: limit) + "1" + String(repeating: "]", count: limit)).utf8))
        let deep = try #require(parseError(String(repeating: "[", count: limit + 1) + String(repeating: "]", count: limit + 1)))
        #expect(deep.kind == .tooDeep && deep.offset == limit)
        #expect(deep.message == "nested more than 64 deep")
        let objects = try #require(parseError(#"{"a":{"b":{"c":1}}}"#, depthLimit: 2))
        #expect(objects.kind == .tooDeep && objects.offset == 10)
        _ = try JSONNode.parse(Array(#"{"a":{"b":1}}"#.utf8), depthLimit: 2)
        #expect(try JSONNode.parse(Array("7".utf8), depthLimit: 0).numberValue == 7)
        #expect(parseError("[]", depthLimit: 0)?.kind == .tooDeep)
        // Deep input without an end fails on depth before it runs out of text, and does not overflow the stack.
        #expect(parseError(String(repeating: "[", count: 100_000))?.kind == .tooDeep)
    }

    @Test("text after the value is refused; whitespace around it is not")
    func trailingText() throws {
        let error = try #require(parseError("{} x"))
        #expect(error.kind == .syntax && error.offset == 3)
        #expect(error.message == "unexpected text after the end of the JSON value")
        #expect(parseError("1 2")?.offset == 2)
        #expect(parseError("[]]")?.offset == 2)
        #expect(try JSONNode.parse(Array(" \t\r\n[ ] \n".utf8)).offset == 4)
    }

    /// A malformed text, the byte offset its error must name, and words of its message.
    struct Malformed: Sendable, CustomTestStringConvertible {
        let bytes: [UInt8]
        let offset: Int
        let mentions: String
        init(_ text: String, _ offset: Int, _ mentions: String) {
            self.init(bytes: Array(text.utf8), offset, mentions)
        }
        init(bytes: [UInt8], _ offset: Int, _ mentions: String) {
            self.bytes = bytes
            self.offset = offset
            self.mentions = mentions
        }
        var testDescription: String { String(decoding: bytes, as: UTF8.self) }
    }

    @Test("syntax errors give their byte offset and say what was expected", arguments: [
        Malformed("", 0, "expected a value, found the end of the text"),
        Malformed("   ", 3, "expected a value, found the end of the text"),
        Malformed("@", 0, "expected a value, found '@'"),
        Malformed("{", 1, "expected a key in quotes, found the end of the text"),
        Malformed("{a:1}", 1, "expected a key in quotes, found 'a'"),
        Malformed(#"{"a" 1}"#, 5, "expected ':' after the key 'a', found '1'"),
        Malformed(#"{"a":1 "b":2}"#, 7, "expected ',' or '}', found '\"'"),
        Malformed(#"{"a":1,}"#, 7, "expected a key in quotes, found '}'"),
        Malformed("[1 2]", 3, "expected ',' or ']', found '2'"),
        Malformed("[1,]", 3, "expected a value, found ']'"),
        Malformed("[1", 2, "expected ',' or ']', found the end of the text"),
        Malformed("tru", 0, "expected 'true'"),
        Malformed("nul!", 0, "expected 'null'"),
        Malformed("01", 0, "a number must not start with 0"),
        Malformed("-", 1, "a number needs a digit here"),
        Malformed("-x", 1, "a number needs a digit here"),
        Malformed("1.", 2, "a number needs a digit after '.'"),
        Malformed("1e+", 3, "a number needs a digit in its exponent"),
        Malformed(#"["abc"#, 1, "a string that starts here never ends"),
        Malformed(#""a\"#, 0, "a string that starts here never ends"),
        Malformed("\"a\u{1}\"", 2, "a control character inside a string must be escaped"),
        Malformed(#""\q""#, 1, "unknown escape in a string"),
        Malformed(#""\u12""#, 3, "a \\u escape needs four hex digits"),
        Malformed(#""\u+abc""#, 3, "a \\u escape needs four hex digits"),
        Malformed(#""\uD800""#, 7, "surrogate pair that is not completed"),
        Malformed(#""\uD800\u0041""#, 13, "invalid low surrogate"),
        Malformed(#""\uDC00""#, 7, "a \\u escape names no character"),
        Malformed(bytes: [0x22, 0xFF, 0x22], 0, "a string is not valid UTF-8"),
        Malformed(bytes: [0x5B, 0xC3], 1, "expected a value, found byte 0xC3"),
    ])
    func malformed(_ row: Malformed) throws {
        let error = try #require(parseError(row.bytes))
        #expect(error.kind == .syntax)
        #expect(error.offset == row.offset, "\(error)")
        #expect(error.message.contains(row.mentions), "\(error.message)")
        #expect(error.description == "byte \(error.offset): \(error.message)")
    }

    @Test("strings: escapes, surrogate pairs and UTF-8 as written")
    func strings() throws {
        let text = #"["a\"\\\/\b\f\n\r\t", "\u00e9\uD83D\uDE00", "é😀", ""]"#
        guard case .array(let elements) = try JSONNode.parse(Array(text.utf8)).value else { Issue.record("no array"); return }
        let strings = elements.map { node -> String? in
            if case .string(let s) = node.value { return s }
            return nil
        }
        #expect(strings == ["a\"\\/\u{08}\u{0C}\n\r\t", "é😀", "é😀", ""])
    }

    @Test("numbers keep their text; numberValue reads them, huge ones as infinity")
    func numbers() throws {
        let text = "[9223372036854775807, -0, 1E+2, 0.5e-3, 1e999]"
        guard case .array(let elements) = try JSONNode.parse(Array(text.utf8)).value else { Issue.record("no array"); return }
        let texts = elements.map { node -> String? in
            if case .number(let t) = node.value { return t }
            return nil
        }
        #expect(texts == ["9223372036854775807", "-0", "1E+2", "0.5e-3", "1e999"])
        #expect(elements.map(\.numberValue) == [9.223372036854775807e18, -0.0, 100, 0.0005, .infinity])
        #expect(try JSONNode.parse(Array(#""1""#.utf8)).numberValue == nil)
    }

    @Test("duplicate keys are kept unless the caller refuses them, then the second is the error")
    func duplicateKeys() throws {
        let bytes = Array(#"{"a": 1, "a": 2}"#.utf8)
        let root = try JSONNode.parse(bytes)
        guard case .object(let members) = root.value else { Issue.record("not an object"); return }
        #expect(members.count == 2 && root["a"]?.numberValue == 1)
        let error = try #require(parseError(bytes, rejectsDuplicateKeys: true))
        #expect(error.kind == .syntax && error.offset == 9)
        #expect(error.message == "the key 'a' appears twice in this object")
    }

    @Test("a byte order mark is refused unless skipped; offsets still count it")
    func byteOrderMark() throws {
        let bytes: [UInt8] = [0xEF, 0xBB, 0xBF] + Array(#"{"a": 1}"#.utf8)
        let refused = try #require(parseError(bytes))
        #expect(refused.offset == 0 && refused.message == "expected a value, found byte 0xEF")
        let root = try JSONNode.parse(bytes, skipsByteOrderMark: true)
        #expect(root.offset == 3 && root["a"]?.offset == 9)
    }

    @Test("type names for messages")
    func typeNames() throws {
        guard case .array(let elements) = try JSONNode.parse(Array(#"[{}, [], "", 0, false, null]"#.utf8)).value else {
            Issue.record("no array")
            return
        }
        #expect(elements.map(\.typeName) == ["an object", "an array", "a string", "a number", "a boolean", "null"])
    }
}

@Suite("JSONValue: parsed values and the writer")
struct JSONValueTests {
    @Test("a parsed node converts to a JSONValue that writes the same compact text")
    func roundTrip() throws {
        let compact = #"{"a":[1,-2.5e3,"x\n\"é"],"b":true,"c":null,"d":{},"e":[],"f":9223372036854775807}"#
        let spaced = #"{ "a": [1, -2.5e3, "x\n\"\u00e9"], "b": true, "c": null, "d": { }, "e": [ ], "f": 9223372036854775807 }"#
        let value = JSONValue(try JSONNode.parse(Array(spaced.utf8)))
        #expect(value.serialized == compact)
        #expect(value == JSONValue(try JSONNode.parse(Array(compact.utf8))))
        #expect(value == .object([
            ("a", .array([.number("1"), .number("-2.5e3"), .string("x\n\"é")])), ("b", .bool(true)), ("c", .null),
            ("d", .object([])), ("e", .array([])), ("f", .int(Int64.max)),
        ]))
    }

    @Test("the writer's helpers: integers, doubles, optional numbers, raw text, escapes")
    func writer() {
        #expect(JSONValue.int(-42).serialized == "-42")
        #expect(JSONValue.double(72).serialized == "72")
        #expect(JSONValue.double(0.5).serialized == "0.5")
        #expect(JSONValue.double(.nan).serialized == "null")
        #expect(JSONValue.number(nil).serialized == "null")
        #expect(JSONValue.number(1.25).serialized == "1.25")
        #expect(JSONValue.raw(#"{"x":1}"#).serialized == #"{"x":1}"#)
        #expect(JSONValue.string("tab\t\u{1}").serialized == #""tab\t\u0001""#)
        var out = "> "
        JSONValue.array([.bool(false), .null]).write(to: &out)
        #expect(out == "> [false,null]")
    }
}
