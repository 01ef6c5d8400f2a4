import Foundation

/// Appends big-endian fields to a byte array.
struct ByteWriter {
    var bytes: [UInt8]

    init(capacity: Int = 64) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    mutating func u8(_ value: UInt8) { bytes.append(value) }
    mutating func u16(_ value: UInt16) { withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) } }
    mutating func u32(_ value: UInt32) { withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) } }
    mutating func u64(_ value: UInt64) { withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) } }
    mutating func i64(_ value: Int64) { u64(UInt64(bitPattern: value)) }
    mutating func bool(_ value: Bool) { u8(value ? 1 : 0) }
    /// A non-negative integer as u32 (negative values are written as 0).
    mutating func count32(_ value: Int) { u32(UInt32(clamping: max(0, value))) }

    /// u32 length, then the bytes.
    mutating func blob(_ data: Data) {
        count32(data.count)
        bytes.append(contentsOf: data)
    }

    /// u32 length, then UTF-8.
    mutating func string(_ value: String) {
        let utf8 = Array(value.utf8)
        count32(utf8.count)
        bytes.append(contentsOf: utf8)
    }

    /// u16 count, then each element.
    mutating func array<T>(_ values: [T], _ write: (inout ByteWriter, T) -> Void) {
        u16(UInt16(clamping: values.count))
        for value in values.prefix(Int(UInt16.max)) { write(&self, value) }
    }
}

/// Why a frame body could not be read.
struct BodyDecodingError: Error {
    var reason: String
}

/// Reads big-endian fields from a frame body, never past its end.
///
/// With an `owner` (the storage `bytes` lies at the start of), blobs are views of that storage rather than copies.
struct ByteReader {
    private let bytes: UnsafeRawBufferPointer
    private let owner: FrameStorage?
    private(set) var offset = 0

    /// Reads `bytes`; blobs are copied out of them.
    init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
        self.owner = nil
    }

    /// Reads the first bytes of `owner` (`bytes` must be `owner.bytes(count:)`); blobs share its storage.
    init(_ bytes: UnsafeRawBufferPointer, owner: FrameStorage) {
        self.bytes = bytes
        self.owner = owner
    }

    var remaining: Int { bytes.count - offset }

    private mutating func take(_ count: Int, _ what: @autoclosure () -> String) throws(BodyDecodingError) -> Int {
        guard count >= 0, count <= remaining else {
            throw BodyDecodingError(reason: "\(what()) needs \(count) bytes, \(remaining) left")
        }
        defer { offset += count }
        return offset
    }

    mutating func u8(_ what: String) throws(BodyDecodingError) -> UInt8 {
        bytes[try take(1, what)]
    }

    mutating func u16(_ what: String) throws(BodyDecodingError) -> UInt16 {
        UInt16(bigEndian: bytes.loadUnaligned(fromByteOffset: try take(2, what), as: UInt16.self))
    }

    mutating func u32(_ what: String) throws(BodyDecodingError) -> UInt32 {
        UInt32(bigEndian: bytes.loadUnaligned(fromByteOffset: try take(4, what), as: UInt32.self))
    }

    mutating func u64(_ what: String) throws(BodyDecodingError) -> UInt64 {
        UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: try take(8, what), as: UInt64.self))
    }

    mutating func i64(_ what: String) throws(BodyDecodingError) -> Int64 {
        Int64(bitPattern: try u64(what))
    }

    mutating func bool(_ what: String) throws(BodyDecodingError) -> Bool {
        switch try u8(what) {
        case 0: return false
        case 1: return true
        case let other: throw BodyDecodingError(reason: "\(what): \(other) is not a boolean")
        }
    }

    mutating func blob(_ what: String) throws(BodyDecodingError) -> Data {
        let count = Int(try u32("\(what) length"))
        let start = try take(count, what)
        if let owner { return owner.data(start..<start + count) }
        return Data(UnsafeRawBufferPointer(rebasing: bytes[start..<start + count]))
    }

    mutating func string(_ what: String) throws(BodyDecodingError) -> String {
        let count = Int(try u32("\(what) length"))
        let start = try take(count, what)
        let slice = UnsafeRawBufferPointer(rebasing: bytes[start..<start + count])
        guard let value = String(validating: slice.assumingMemoryBound(to: UInt8.self), as: UTF8.self) else {
            throw BodyDecodingError(reason: "\(what) is not valid UTF-8")
        }
        return value
    }

    mutating func array<T>(
        _ what: String,
        _ read: (inout ByteReader) throws(BodyDecodingError) -> T
    ) throws(BodyDecodingError) -> [T] {
        let count = Int(try u16("\(what) count"))
        // Every element takes at least one byte: a count beyond what is left is malformed, not an allocation.
        guard count <= remaining else {
            throw BodyDecodingError(reason: "\(what) claims \(count) elements, \(remaining) bytes left")
        }
        var values: [T] = []
        values.reserveCapacity(count)
        for _ in 0..<count { values.append(try read(&self)) }
        return values
    }
}

/// A fixed, documented mapping between an enum's cases and wire codes (the index in `cases`).
struct WireEnum<Value: Equatable & Sendable>: Sendable {
    let name: String
    let cases: [Value]

    func code(_ value: Value) -> UInt8 {
        guard let index = cases.firstIndex(of: value) else {
            preconditionFailure("\(name) \(value) has no wire code")
        }
        return UInt8(index)
    }

    func write(_ value: Value, to writer: inout ByteWriter) { writer.u8(code(value)) }

    func read(from reader: inout ByteReader) throws(BodyDecodingError) -> Value {
        let code = Int(try reader.u8(name))
        guard code < cases.count else { throw BodyDecodingError(reason: "unknown \(name) code \(code)") }
        return cases[code]
    }
}
