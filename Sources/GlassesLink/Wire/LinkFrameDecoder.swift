import Foundation
import WearablesKit

/// Turns a byte stream back into ``LinkFrame``s, incrementally and with bounded memory.
///
/// Feed it chunks as they arrive, in any sizes. Corrupt data (bad CRC, garbage between frames) is skipped by
/// scanning for the next magic and counted; frames of unknown type, or with a body this version cannot read, are
/// skipped and counted. It fails for good (one ``Output/failure(_:)``, then nothing) when a frame announces a body
/// beyond the limit, when the peer speaks another wire version, or after too much garbage in a row. It never holds
/// more than ``maximumBufferSize`` bytes. A pure value: no I/O.
public struct LinkFrameDecoder: Sendable {
    /// What a chunk of input produced.
    public enum Output: Sendable, Hashable {
        /// A complete, valid frame.
        case frame(LinkFrame)
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
        /// Creates zeroed statistics.
        public init() {}
    }

    /// The largest body accepted.
    public let maxPayloadSize: Int
    /// Garbage bytes tolerated in a row before the decoder fails.
    public let maxConsecutiveGarbage: Int
    /// Counters so far.
    public private(set) var statistics = Statistics()
    /// Why the most recent malformed frame was skipped, for diagnostics.
    public private(set) var lastMalformedReason: String?
    /// Whether the decoder failed and ignores input.
    public private(set) var hasFailed = false

    private var buffer: [UInt8] = []
    /// Bytes fed through CRC-32 so far: the decoder's work, for tests that bound it.
    private(set) var checksummedByteCount: UInt64 = 0
    private var consecutiveGarbage = 0
    private var inGarbageRun = false

    /// Creates a decoder.
    public init(
        maxPayloadSize: Int = LinkWireFormat.maxPayloadSize,
        maxConsecutiveGarbage: Int = LinkWireFormat.maxConsecutiveGarbage
    ) {
        self.maxPayloadSize = maxPayloadSize
        self.maxConsecutiveGarbage = maxConsecutiveGarbage
    }

    /// The most bytes the decoder ever buffers: one header plus the largest body.
    public var maximumBufferSize: Int { LinkWireFormat.headerSize + maxPayloadSize }

    /// Bytes received but not yet part of a complete frame.
    public var bufferedByteCount: Int { buffer.count }

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
            let room = maximumBufferSize - buffer.count
            let take = min(room, chunk.count - offset)
            buffer.append(contentsOf: UnsafeRawBufferPointer(rebasing: chunk[offset..<offset + take]))
            offset += take
            parse(into: &outputs)
        }
        return outputs
    }

    private mutating func parse(into outputs: inout [Output]) {
        var position = 0
        defer {
            if hasFailed {
                buffer = []
            } else if position > 0 {
                buffer.removeFirst(position)
            }
        }
        let headerSize = LinkWireFormat.headerSize
        while !hasFailed {
            let available = buffer.count - position
            if available == 0 { return }
            // 1. Find the magic (or a prefix of it at the very end).
            let start = Self.findMagic(in: buffer, from: position)
            if start > position {
                skipGarbage(start - position, outputs: &outputs)
                position = start
                continue
            }
            if available < headerSize { return }
            // 2. Header: check its CRC before trusting the length.
            let header = buffer.withUnsafeBytes { bytes in
                (
                    length: Int(UInt32(bigEndian: bytes.loadUnaligned(fromByteOffset: position + 8, as: UInt32.self))),
                    headerCRC: UInt32(bigEndian: bytes.loadUnaligned(fromByteOffset: position + 12, as: UInt32.self)),
                    frameCRC: UInt32(bigEndian: bytes.loadUnaligned(fromByteOffset: position + 16, as: UInt32.self)),
                    computedHeaderCRC: CRC32.checksum(UnsafeRawBufferPointer(rebasing: bytes[position..<position + 12]))
                )
            }
            checksummedByteCount += 12
            guard header.headerCRC == header.computedHeaderCRC else {
                statistics.checksumFailures += 1
                skipGarbage(1, outputs: &outputs)
                position += 1
                continue
            }
            let version = buffer[position + 4]
            guard version == LinkWireFormat.version else {
                fail(
                    LinkError(
                        .incompatible,
                        "the peer speaks wire format version \(version), this side speaks \(LinkWireFormat.version)"),
                    outputs: &outputs)
                return
            }
            guard header.length <= maxPayloadSize else {
                fail(
                    LinkError(
                        .protocolViolation,
                        "a frame announces \(header.length) bytes, beyond the limit of \(maxPayloadSize)"),
                    outputs: &outputs)
                return
            }
            // 3. Wait for the whole frame, then check it.
            if available < headerSize + header.length { return }
            let frameEnd = position + headerSize + header.length
            let computed = buffer.withUnsafeBytes { bytes in
                var crc = CRC32()
                crc.update(UnsafeRawBufferPointer(rebasing: bytes[position..<position + 16]))
                crc.update(UnsafeRawBufferPointer(rebasing: bytes[(position + headerSize)..<frameEnd]))
                return crc.value
            }
            checksummedByteCount += UInt64(16 + header.length)
            guard computed == header.frameCRC else {
                statistics.checksumFailures += 1
                skipGarbage(1, outputs: &outputs)
                position += 1
                continue
            }
            // 4. A valid frame.
            consecutiveGarbage = 0
            inGarbageRun = false
            statistics.framesDecoded += 1
            let frameStart = position
            let bodyStart = position + headerSize
            position = frameEnd
            guard let type = LinkMessageType(rawValue: buffer[frameStart + 5]) else {
                statistics.unknownFramesSkipped += 1
                continue
            }
            let result: Result<LinkFrame, BodyDecodingError> = buffer.withUnsafeBytes { bytes in
                var reader = ByteReader(UnsafeRawBufferPointer(rebasing: bytes[bodyStart..<frameEnd]))
                do throws(BodyDecodingError) {
                    return .success(try MessageBodies.decode(type, &reader))
                } catch {
                    return .failure(error)
                }
            }
            switch result {
            case .success(let frame):
                outputs.append(.frame(frame))
            case .failure(let error):
                statistics.malformedFramesSkipped += 1
                lastMalformedReason = "\(type): \(error.reason)"
            }
        }
    }

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
