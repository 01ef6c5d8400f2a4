import WearablesKit

/// Turns ``LinkFrame``s into wire bytes: a 20-byte header (magic, version, type, flags, length, two CRC-32s)
/// followed by the body. A pure value: no I/O, no state.
public struct LinkFrameEncoder: Sendable {
    /// The largest body this encoder produces.
    public var maxPayloadSize: Int

    /// Creates an encoder with a body limit (8 MiB by default; the decoder on the other end must accept as much).
    public init(maxPayloadSize: Int = LinkWireFormat.maxPayloadSize) {
        self.maxPayloadSize = maxPayloadSize
    }

    /// The wire bytes of one frame.
    /// - Throws: ``LinkError`` `.protocolViolation` when the body exceeds the limit of its type
    ///   (``LinkWireFormat/maxBodySize(of:maxPayloadSize:)`` with ``maxPayloadSize``).
    public func encode(_ frame: LinkFrame) throws(LinkError) -> [UInt8] {
        var writer = ByteWriter(capacity: LinkWireFormat.headerSize + Self.estimatedBodySize(frame))
        writer.bytes.append(contentsOf: LinkWireFormat.magic)
        writer.u8(LinkWireFormat.version)
        writer.u8(0)  // type, patched below
        writer.u16(0)  // flags: none defined in version 1
        writer.u32(0)  // length, patched below
        writer.u32(0)  // header CRC
        writer.u32(0)  // frame CRC
        let type = MessageBodies.encode(frame, into: &writer)
        let length = writer.bytes.count - LinkWireFormat.headerSize
        // The same limit the decoder on the other end applies to this type.
        let limit = LinkWireFormat.maxBodySize(of: type, maxPayloadSize: maxPayloadSize)
        guard length <= limit, let wireLength = UInt32(exactly: length) else {
            throw LinkError(
                .protocolViolation,
                "a \(type) message of \(length) bytes exceeds the link's limit of \(limit) bytes for that type"
            )
        }
        writer.bytes.withUnsafeMutableBytes { bytes in
            bytes[5] = type.rawValue
            bytes.storeBytes(of: wireLength.bigEndian, toByteOffset: 8, as: UInt32.self)
            var header = CRC32()
            header.update(UnsafeRawBufferPointer(rebasing: bytes[0..<12]))
            bytes.storeBytes(of: header.value.bigEndian, toByteOffset: 12, as: UInt32.self)
            var whole = CRC32()
            whole.update(UnsafeRawBufferPointer(rebasing: bytes[0..<16]))
            whole.update(UnsafeRawBufferPointer(rebasing: bytes[LinkWireFormat.headerSize...]))
            bytes.storeBytes(of: whole.value.bigEndian, toByteOffset: 16, as: UInt32.self)
        }
        return writer.bytes
    }

    private static func estimatedBodySize(_ frame: LinkFrame) -> Int {
        switch frame {
        case .device(.videoSample(let sample)): sample.payload.count + 64
        case .device(.photo(let photo, _)): photo.data.count + 16
        default: 128
        }
    }
}
