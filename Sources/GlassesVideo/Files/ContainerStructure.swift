import Foundation

/// Tells a complete MP4 or Matroska file from a truncated one by its own structure, without libavformat: libavformat
/// reports the end of a cut-off file as a plain end of file (Matroska: "File ended prematurely" in its log only),
/// or as a generic read error. Every size read is checked against the file's size before it is used, and the walk
/// is bounded (``maximumElements``), so a hostile file costs at most that many small reads.
enum ContainerStructure {
    /// The most top-level boxes (MP4) or segment children (Matroska) walked.
    static let maximumElements = 1_000_000

    /// Why the file at `path` is truncated, in words (with the byte offsets), or nil when its structure is complete
    /// or it is neither MP4 nor Matroska (or its structure cannot tell, such as a Matroska element of unknown size).
    static func truncation(ofFileAt path: String) -> String? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        guard let end = try? handle.seekToEnd(), end <= UInt64(Int64.max) else { return nil }
        let reader = Reader(handle: handle, size: Int64(end))
        guard let start = reader.read(at: 0, count: 8), start.count >= 4 else { return nil }
        if Array(start.prefix(4)) == [0x1A, 0x45, 0xDF, 0xA3] { return matroska(reader) }
        guard start.count == 8 else { return nil }
        let type = String(decoding: start[4 ..< 8], as: UTF8.self)
        if ["ftyp", "moov", "mdat", "free", "skip", "wide"].contains(type) { return mp4(reader) }
        return nil
    }

    private final class Reader {
        let handle: FileHandle
        let size: Int64

        init(handle: FileHandle, size: Int64) {
            self.handle = handle
            self.size = size
        }

        /// Up to `count` bytes at `offset` (fewer at the end of the file).
        func read(at offset: Int64, count: Int) -> [UInt8]? {
            guard offset >= 0, offset <= size else { return nil }
            do {
                try handle.seek(toOffset: UInt64(offset))
                return try handle.read(upToCount: count).map { [UInt8]($0) } ?? []
            } catch {
                return nil
            }
        }
    }

    /// ISO base media: each top-level box's size must fit in the file, and there must be an index (`moov`): a
    /// recording that was never finished has its samples (an `mdat` running to the end of the file) but no index.
    private static func mp4(_ file: Reader) -> String? {
        var offset: Int64 = 0
        var sawIndex = false
        let unfinished = "it has no 'moov' index box (a recording that was not finished)"
        for _ in 0 ..< maximumElements {
            let remaining = file.size - offset
            if remaining == 0 { return sawIndex ? nil : unfinished }
            guard remaining >= 8 else { return "it ends inside an MP4 box header at byte \(offset)" }
            guard let header = file.read(at: offset, count: 16), header.count >= 8 else { return nil }
            let type = header[4 ..< 8]
            guard type.allSatisfy({ (0x20 ... 0x7E).contains($0) }) else { return nil }
            var size = Int64(header[0 ..< 4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
            var headerLength: Int64 = 8
            if size == 1 {
                guard header.count == 16 else { return "it ends inside an MP4 box header at byte \(offset)" }
                let large = header[8 ..< 16].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
                guard large <= UInt64(Int64.max) else { return nil }
                size = Int64(large)
                headerLength = 16
            }
            let name = String(decoding: type, as: UTF8.self)
            if name == "moov" { sawIndex = true }
            if size == 0 {
                // The box runs to the end of the file, whatever its length.
                return sawIndex || name == "moov" ? nil : unfinished
            }
            guard size >= headerLength else { return nil }
            guard size <= remaining else {
                return "its MP4 '\(name)' box at byte \(offset) needs \(size) bytes, the file has \(remaining) from there"
            }
            offset += size
        }
        return nil
    }

    /// An EBML variable-length integer: its value (nil for "unknown", all value bits set) and its length.
    private static func vint(_ bytes: ArraySlice<UInt8>, keepMarker: Bool) -> (value: UInt64?, length: Int)? {
        guard let first = bytes.first, first != 0 else { return nil }
        let length = first.leadingZeroBitCount + 1
        guard bytes.count >= length else { return nil }
        var value = UInt64(keepMarker ? first : first & (0xFF >> length))
        var allOnes = (first | ~(0xFF >> length)) == 0xFF
        for byte in bytes.dropFirst().prefix(length - 1) {
            value = value << 8 | UInt64(byte)
            allOnes = allOnes && byte == 0xFF
        }
        return (keepMarker || !allOnes ? value : nil, length)
    }

    /// Matroska: the EBML header, then the Segment, whose size (or, when unknown, each child's size) must fit.
    private static func matroska(_ file: Reader) -> String? {
        var offset: Int64 = 0
        var insideSegment = false
        for _ in 0 ..< maximumElements {
            let remaining = file.size - offset
            if remaining == 0 { return nil }
            guard let header = file.read(at: offset, count: 12), !header.isEmpty else { return nil }
            guard let id = vint(header[...], keepMarker: true), id.length <= 4 else { return nil }
            guard let size = vint(header[id.length...], keepMarker: false) else {
                return header.count < 12 ? "it ends inside a Matroska element header at byte \(offset)" : nil
            }
            let headerLength = Int64(id.length + size.length)
            guard let length = size.value else {
                // Unknown size: only the Segment's children can be checked (live-written files).
                if id.value == 0x1853_8067, !insideSegment {
                    insideSegment = true
                    offset += headerLength
                    continue
                }
                return nil
            }
            guard length <= UInt64(Int64.max - headerLength) else { return nil }
            let total = headerLength + Int64(length)
            guard total <= remaining else {
                let what = id.value == 0x1853_8067 ? "segment" : id.value == 0x1F43_B675 ? "cluster" : "element"
                return "its Matroska \(what) at byte \(offset) needs \(total) bytes, the file has \(remaining) from there"
            }
            if id.value == 0x1853_8067 { return nil }  // A complete segment of known size.
            offset += total
        }
        return nil
    }
}
