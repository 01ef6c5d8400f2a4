import Foundation
import GlassesMedia
import WearablesKit

/// Turns a byte stream back into ``LinkFrame``s, incrementally and with bounded memory and work.
///
/// Feed it chunks as they arrive, in any sizes. Garbage between frames (and headers whose CRC does not match) is
/// skipped by scanning for the next magic and counted. A frame whose header is valid but whose body fails its CRC is
/// skipped whole (exactly the length its header announced) and counted, so one corrupted frame loses only itself.
/// Frames of unknown type, or with a body this version cannot read, are skipped and counted.
///
/// It fails for good (one ``Output/failure(_:)``, then nothing) when a header announces more than its message type
/// may carry (checked before any of the body is buffered), when the peer speaks another wire version, after too much
/// garbage in a row, or after too many corrupted frames in a row. Every limit is listed in `docs/PROTOCOL.md` §5.
///
/// Work is linear in the bytes received: each body byte is copied once and checksummed once as it arrives; each
/// garbage byte costs a bounded scan. It never holds more than ``maximumBufferSize`` bytes. A pure value: no I/O.
///
/// Copies: the bytes of a frame body are copied once, from the chunk handed to `decode` into storage of the frame's
/// own; the `Data` values of the decoded message (video sample payloads, photos, parameter sets) are views of that
/// storage, not copies. Strings are decoded (one copy, as `String` needs). Blobs of up to 14 bytes are stored inline
/// by `Data` itself (a copy of at most 14 bytes).
public struct LinkFrameDecoder: Sendable {
    /// What a chunk of input produced.
    public enum Output: Sendable, Hashable {
        /// A complete, valid frame.
        case frame(LinkFrame)
        /// A frame of a known type whose header was valid but whose body was lost: it failed its CRC or could not
        /// be read. Its type is known (the header's CRC held), so a lost video sample still returns its credit.
        case lost(LinkMessageType)
        /// The stream is beyond repair; the decoder ignores all further input.
        case failure(LinkError)
    }

    /// Counters of what the decoder met.
    public struct Statistics: Sendable, Hashable {
        /// Valid frames decoded (including skipped unknown or unreadable ones).
        public var framesDecoded: UInt64 = 0
        /// Bytes skipped while looking for the next frame.
        public var garbageBytesSkipped: UInt64 = 0
        /// Times the decoder lost sync and scanned for the magic.
        public var resynchronisations: UInt64 = 0
        /// Header or frame CRC mismatches.
        public var checksumFailures: UInt64 = 0
        /// Valid frames of a type this version does not know.
        public var unknownFramesSkipped: UInt64 = 0
        /// Valid frames of a known type whose body could not be read.
        public var malformedFramesSkipped: UInt64 = 0
        /// Frames with a valid header whose body failed its CRC, skipped whole (each also counts as a checksum
        /// failure).
        public var corruptFramesSkipped: UInt64 = 0
        /// The most bytes the decoder held at once (never more than ``LinkFrameDecoder/maximumBufferSize``).
        public var peakBufferedBytes: Int = 0
        /// Creates zeroed statistics.
        public init() {}
    }

    /// The largest body accepted (for any type; most types have a smaller limit, see
    /// ``LinkWireFormat/maxBodySize(of:maxPayloadSize:)``).
    public let maxPayloadSize: Int
    /// Garbage bytes tolerated in a row before the decoder fails.
    public let maxConsecutiveGarbage: Int
    /// Frames with a bad body CRC tolerated in a row (without a valid frame between them) before the decoder fails.
    public let maxConsecutiveCorruptFrames: Int
    /// Counters so far.
    public private(set) var statistics = Statistics()
    /// Why the most recent malformed frame was skipped, for diagnostics.
    public private(set) var lastMalformedReason: String?
    /// Whether the decoder failed and ignores input.
    public private(set) var hasFailed = false

    /// Bytes fed through CRC-32 so far: the decoder's work, for tests that bound it.
    private(set) var checksummedByteCount: UInt64 = 0

    /// Header bytes (and garbage) not yet resolved: at most one header's worth.
    private var window: [UInt8] = []
    /// The frame whose header was accepted and whose body is arriving.
    private var pending: PendingFrame?
    /// Where that body goes (nil while no body is kept: no frame pending, an empty body, or an unknown type).
    private var storage: FrameStorage?
    private var consecutiveGarbage = 0
    private var consecutiveCorruptFrames = 0
    private var inGarbageRun = false

    /// A frame between its accepted header and the end of its body.
    private struct PendingFrame: Sendable {
        var type: UInt8
        var length: Int
        var expectedCRC: UInt32
        /// CRC over the header's first 16 bytes and the body received so far.
        var crc: CRC32
        var received = 0
    }

    /// Creates a decoder.
    public init(
        maxPayloadSize: Int = LinkWireFormat.maxPayloadSize,
        maxConsecutiveGarbage: Int = LinkWireFormat.maxConsecutiveGarbage,
        maxConsecutiveCorruptFrames: Int = LinkWireFormat.maxConsecutiveCorruptFrames
    ) {
        self.maxPayloadSize = max(0, maxPayloadSize)
        self.maxConsecutiveGarbage = max(0, maxConsecutiveGarbage)
        self.maxConsecutiveCorruptFrames = max(0, maxConsecutiveCorruptFrames)
        window.reserveCapacity(LinkWireFormat.headerSize)
    }

    /// The most bytes the decoder ever buffers: one header plus the largest body.
    public var maximumBufferSize: Int { LinkWireFormat.headerSize + maxPayloadSize }

    /// Bytes received but not yet part of a complete frame.
    public var bufferedByteCount: Int { window.count + (storage == nil ? 0 : pending?.received ?? 0) }

    /// Feeds bytes; returns the frames (and at most one failure) they completed.
    public mutating func decode(_ chunk: [UInt8]) -> [Output] {
        chunk.withUnsafeBytes { decode($0) }
    }

    /// Feeds bytes; returns the frames (and at most one failure) they completed.
    public mutating func decode(_ chunk: Data) -> [Output] {
        chunk.withUnsafeBytes { decode($0) }
    }

    /// Feeds bytes; returns the frames (and at most one failure) they completed.
    public mutating func decode(_ chunk: UnsafeRawBufferPointer) -> [Output] {
        var outputs: [Output] = []
        var offset = 0
        while offset < chunk.count, !hasFailed {
            let rest = UnsafeRawBufferPointer(rebasing: chunk[offset...])
            offset += pending == nil ? takeHeaderBytes(rest, outputs: &outputs) : takeBodyBytes(rest, outputs: &outputs)
        }
        if hasFailed {
            window = []
            pending = nil
            storage = nil
        }
        return outputs
    }

    // MARK: Headers and garbage

    /// Moves up to one header's worth of `bytes` into the window and resolves what it can; returns the count taken.
    private mutating func takeHeaderBytes(_ bytes: UnsafeRawBufferPointer, outputs: inout [Output]) -> Int {
        let take = min(LinkWireFormat.headerSize - window.count, bytes.count)
        window.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[0..<take]))
        notePeak()
        resolveWindow(outputs: &outputs)
        return take
    }

    /// Skips garbage at the front of the window and accepts a header once the window holds a valid one.
    private mutating func resolveWindow(outputs: inout [Output]) {
        let headerSize = LinkWireFormat.headerSize
        while !hasFailed, pending == nil, !window.isEmpty {
            // 1. Find the magic (or a prefix of it at the very end).
            let start = Self.findMagic(in: window, from: 0)
            if start > 0 {
                skipGarbage(start, outputs: &outputs)
                window.removeFirst(start)
                continue
            }
            if window.count < headerSize { return }
            // 2. Header: check its CRC before trusting anything in it.
            let fields = window.withUnsafeBytes { bytes in
                (
                    length: UInt32(bigEndian: bytes.loadUnaligned(fromByteOffset: 8, as: UInt32.self)),
                    headerCRC: UInt32(bigEndian: bytes.loadUnaligned(fromByteOffset: 12, as: UInt32.self)),
                    frameCRC: UInt32(bigEndian: bytes.loadUnaligned(fromByteOffset: 16, as: UInt32.self)),
                    computedHeaderCRC: CRC32.checksum(UnsafeRawBufferPointer(rebasing: bytes[0..<12]))
                )
            }
            checksummedByteCount += 12
            guard fields.headerCRC == fields.computedHeaderCRC else {
                statistics.checksumFailures += 1
                skipGarbage(1, outputs: &outputs)
                window.removeFirst(1)
                continue
            }
            let version = window[4]
            guard version == LinkWireFormat.version else {
                fail(
                    LinkError(
                        .incompatible,
                        "the peer speaks wire format version \(version), this side speaks \(LinkWireFormat.version)"),
                    outputs: &outputs)
                return
            }
            // 3. The announced length, against the limit of its type, before anything is buffered.
            let typeCode = window[5]
            let type = LinkMessageType(rawValue: typeCode)
            let limit = LinkWireFormat.maxBodySize(of: type, maxPayloadSize: maxPayloadSize)
            guard let length = Int(exactly: fields.length), length <= limit else {
                let what = type.map { "a \($0) frame" } ?? "a frame of unknown type 0x\(String(typeCode, radix: 16))"
                fail(
                    LinkError(
                        .protocolViolation, "\(what) announces \(fields.length) bytes, beyond its limit of \(limit)"),
                    outputs: &outputs)
                return
            }
            // 4. Accept the header; the body is copied and checksummed as it arrives.
            var crc = CRC32()
            window.withUnsafeBytes { crc.update(UnsafeRawBufferPointer(rebasing: $0[0..<16])) }
            checksummedByteCount += 16
            pending = PendingFrame(type: typeCode, length: length, expectedCRC: fields.frameCRC, crc: crc)
            // An unknown type's body is checksummed but not kept: it is skipped anyway.
            storage = type != nil && length > 0 ? FrameStorage(capacity: length) : nil
            window.removeAll(keepingCapacity: true)
            if length == 0 { finishFrame(outputs: &outputs) }
        }
    }

    // MARK: Bodies

    /// Copies and checksums up to the rest of the pending body from `bytes`; returns the count taken.
    private mutating func takeBodyBytes(_ bytes: UnsafeRawBufferPointer, outputs: inout [Output]) -> Int {
        guard var frame = pending else { return 0 }
        let take = min(frame.length - frame.received, bytes.count)
        let piece = UnsafeRawBufferPointer(rebasing: bytes[0..<take])
        frame.crc.update(piece)
        checksummedByteCount += UInt64(take)
        if storage != nil {
            // A copy of this decoder (it is a value) may share the storage: write only into storage of our own.
            if !isKnownUniquelyReferenced(&storage) { storage = storage?.copy(prefix: frame.received) }
            storage?.write(piece, at: frame.received)
        }
        frame.received += take
        pending = frame
        notePeak()
        if frame.received == frame.length { finishFrame(outputs: &outputs) }
        return take
    }

    /// The pending frame's body is complete: check it, then decode, skip or count it.
    private mutating func finishFrame(outputs: inout [Output]) {
        guard let frame = pending else { return }
        let body = storage
        pending = nil
        storage = nil
        guard frame.crc.value == frame.expectedCRC else {
            // The header was valid, so the frame's extent is known: skip exactly it and stay in sync.
            statistics.checksumFailures += 1
            statistics.corruptFramesSkipped += 1
            consecutiveCorruptFrames += 1
            if consecutiveCorruptFrames > maxConsecutiveCorruptFrames {
                fail(
                    LinkError(
                        .protocolViolation,
                        "\(consecutiveCorruptFrames) frames in a row failed their checksum (limit \(maxConsecutiveCorruptFrames))"
                    ),
                    outputs: &outputs)
            } else if let type = LinkMessageType(rawValue: frame.type) {
                outputs.append(.lost(type))
            }
            return
        }
        consecutiveGarbage = 0
        consecutiveCorruptFrames = 0
        inGarbageRun = false
        statistics.framesDecoded += 1
        guard let type = LinkMessageType(rawValue: frame.type) else {
            statistics.unknownFramesSkipped += 1
            return
        }
        let result: Result<LinkFrame, BodyDecodingError> = Self.decodeBody(type, body, length: frame.length)
        switch result {
        case .success(let decoded):
            // A video sample's body was gathered into its own storage as it arrived: one copy of the frame's
            // bytes, counted here once it is whole (control messages are not frame bytes).
            if type == .videoSample { FrameCopyCounter.record(.linkBody, bytes: Int(frame.length)) }
            outputs.append(.frame(decoded))
        case .failure(let error):
            statistics.malformedFramesSkipped += 1
            lastMalformedReason = "\(type): \(error.reason)"
            outputs.append(.lost(type))
        }
    }

    private static func decodeBody(
        _ type: LinkMessageType, _ body: FrameStorage?, length: Int
    ) -> Result<LinkFrame, BodyDecodingError> {
        guard let body else {
            var reader = ByteReader(UnsafeRawBufferPointer(start: nil, count: 0))
            return Result { () throws(BodyDecodingError) in try MessageBodies.decode(type, &reader) }
        }
        var reader = ByteReader(body.bytes(count: length), owner: body)
        return Result { () throws(BodyDecodingError) in try MessageBodies.decode(type, &reader) }
    }

    // MARK: Failure and accounting

    private mutating func skipGarbage(_ count: Int, outputs: inout [Output]) {
        if !inGarbageRun {
            inGarbageRun = true
            statistics.resynchronisations += 1
        }
        statistics.garbageBytesSkipped += UInt64(count)
        consecutiveGarbage += count
        if consecutiveGarbage > maxConsecutiveGarbage {
            fail(
                LinkError(
                    .protocolViolation,
                    "\(consecutiveGarbage) bytes without a valid frame (limit \(maxConsecutiveGarbage))"),
                outputs: &outputs
            )
        }
    }

    private mutating func fail(_ error: LinkError, outputs: inout [Output]) {
        hasFailed = true
        outputs.append(.failure(error))
    }

    private mutating func notePeak() {
        let buffered = bufferedByteCount
        if buffered > statistics.peakBufferedBytes { statistics.peakBufferedBytes = buffered }
    }

    /// The index of the first possible frame start at or after `from`: a full magic, a magic prefix that runs
    /// into the end of the buffer, or the end of the buffer.
    static func findMagic(in buffer: [UInt8], from: Int) -> Int {
        let magic = LinkWireFormat.magic
        return buffer.withUnsafeBufferPointer { bytes in
            var index = from
            let count = bytes.count
            while index < count {
                if bytes[index] == magic[0] {
                    var matched = 1
                    while matched < 4, index + matched < count, bytes[index + matched] == magic[matched] {
                        matched += 1
                    }
                    if matched == 4 || index + matched == count { return index }
                }
                index += 1
            }
            return count
        }
    }
}

/// The body of one frame: written by the decoder that owns it while the body arrives, read-only afterwards, when the
/// decoded message's `Data` values are views of it (each keeps it alive).
///
/// `@unchecked Sendable`: the decoder writes only while it holds the sole reference (it copies otherwise), and
/// nothing writes once the frame is complete and shared.
final class FrameStorage: @unchecked Sendable {
    private let base: UnsafeMutableRawPointer
    /// Bytes allocated.
    let capacity: Int

    /// Allocates `capacity` bytes (uninitialised until written).
    init(capacity: Int) {
        self.capacity = max(1, capacity)
        base = UnsafeMutableRawPointer.allocate(byteCount: self.capacity, alignment: 16)
    }

    deinit {
        base.deallocate()
    }

    /// Copies `bytes` to `offset`; the caller keeps `offset + bytes.count` within the capacity.
    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int) {
        guard let source = bytes.baseAddress, bytes.count > 0 else { return }
        precondition(offset >= 0 && bytes.count <= capacity - offset, "frame storage overrun")
        (base + offset).copyMemory(from: source, byteCount: bytes.count)
    }

    /// Another storage of the same capacity holding the first `prefix` bytes of this one.
    func copy(prefix: Int) -> FrameStorage {
        let copy = FrameStorage(capacity: capacity)
        copy.write(UnsafeRawBufferPointer(start: base, count: min(prefix, capacity)), at: 0)
        return copy
    }

    /// The first `count` bytes (read-only).
    func bytes(count: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: base, count: min(max(0, count), capacity))
    }

    /// A `Data` that views `range` of this storage without copying and keeps the storage alive while it exists.
    func data(_ range: Range<Int>) -> Data {
        guard range.lowerBound >= 0, range.upperBound <= capacity, !range.isEmpty else { return Data() }
        return Data(
            bytesNoCopy: base + range.lowerBound, count: range.count,
            deallocator: .custom { [self] _, _ in withExtendedLifetime(self) {} })
    }
}
