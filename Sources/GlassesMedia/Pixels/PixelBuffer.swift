import Foundation

/// A pixel layout, named by its four-character code as CoreVideo names `OSType` pixel formats.
///
/// Custom input accepts ``bgra32``, ``nv12VideoRange`` and ``nv12FullRange``; the other constants exist so that
/// callers can describe (and be told off for) layouts it does not accept.
public struct PixelFormat: Sendable, Hashable, CustomStringConvertible {
    /// The four-character code, big-endian packed (`'BGRA'` is 0x42475241).
    public let fourCC: UInt32

    /// Creates a format from its four-character code.
    public init(fourCC: UInt32) { self.fourCC = fourCC }

    /// Creates a format from a four-character string such as `"BGRA"`.
    public init?(code: String) {
        let bytes = Array(code.utf8)
        guard bytes.count == 4 else { return nil }
        self.fourCC = bytes.reduce(0) { $0 << 8 | UInt32($1) }
    }

    /// 32-bit BGRA, one plane (`kCVPixelFormatType_32BGRA`).
    public static let bgra32 = PixelFormat(code: "BGRA")!
    /// 8-bit bi-planar Y'CbCr 4:2:0, video range 16–235 (`kCVPixelFormatType_420YpCbCr8BiPlanarVideoRange`).
    public static let nv12VideoRange = PixelFormat(code: "420v")!
    /// 8-bit bi-planar Y'CbCr 4:2:0, full range 0–255 (`kCVPixelFormatType_420YpCbCr8BiPlanarFullRange`).
    public static let nv12FullRange = PixelFormat(code: "420f")!
    /// 32-bit RGBA, one plane (not accepted by custom input).
    public static let rgba32 = PixelFormat(code: "RGBA")!
    /// 8-bit tri-planar Y'CbCr 4:2:0 (not accepted by custom input).
    public static let yuv420Planar = PixelFormat(code: "y420")!
    /// 10-bit bi-planar Y'CbCr 4:2:0, video range (not accepted by custom input).
    public static let nv12TenBitVideoRange = PixelFormat(code: "x420")!

    /// The four characters, e.g. `BGRA`.
    public var description: String {
        let bytes = [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: fourCC >> UInt32($0)) }
        if bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) { return String(decoding: bytes, as: UTF8.self) }
        return "0x" + String(fourCC, radix: 16)
    }

    /// Whether this is one of the two NV12 layouts.
    public var isNV12: Bool { self == .nv12VideoRange || self == .nv12FullRange }
}

/// The geometry of one plane of a ``PixelBuffer``.
public struct PixelPlane: Sendable, Hashable {
    /// Width of the plane in samples (pixels for BGRA and luma, CbCr pairs for NV12 chroma).
    public let width: Int
    /// Height of the plane in rows.
    public let height: Int
    /// Bytes per row, padding included.
    public let bytesPerRow: Int
    /// Offset of the plane's first byte in the buffer's storage.
    public let offset: Int

    /// Creates a plane description.
    public init(width: Int, height: Int, bytesPerRow: Int, offset: Int) {
        self.width = width
        self.height = height
        self.bytesPerRow = bytesPerRow
        self.offset = offset
    }
}

/// A picture in memory: the Linux stand-in for `CVPixelBuffer`.
///
/// A pixel buffer has a format, a size and one plane (BGRA) or two (NV12: luma, then interleaved CbCr at half
/// height), each with its own bytes per row, so padded rows and separately placed planes are described exactly.
/// Its bytes live in one allocation it owns. A buffer made by a ``PixelBufferPool``-style owner can carry a
/// release hook that runs when the last reference goes, which is how pooled buffers go back to their pool only once
/// every consumer is done.
///
/// Like `CVPixelBuffer`, it is a shared, mutable reference: whoever fills it must finish writing before handing it
/// on, and must not write while others read.
public final class PixelBuffer: @unchecked Sendable {
    // @unchecked Sendable: the bytes are mutable through `withUnsafeMutableBytes`, under the same single-writer
    // contract as CVPixelBuffer; all other state is immutable.

    /// The pixel layout.
    public let format: PixelFormat
    /// Width in pixels.
    public let width: Int
    /// Height in pixels.
    public let height: Int
    /// The planes, in order (BGRA: one; NV12: luma, chroma).
    public let planes: [PixelPlane]

    /// Where the bytes live: memory this buffer owns (or adopted from a pool), or bytes shared with a `Data`.
    private enum Storage {
        case owned(UnsafeMutableRawBufferPointer, onRelease: (@Sendable (UnsafeMutableRawBufferPointer) -> Void)?)
        case shared(Data)
    }

    private var storage: Storage

    /// The number of bytes of storage.
    public var byteCount: Int {
        switch storage {
        case .owned(let bytes, _): bytes.count
        case .shared(let data): data.count
        }
    }

    /// Whether the buffer reads bytes it shares with a `Data` (a view, e.g. over a received raw frame) rather than
    /// memory of its own.
    public var isView: Bool {
        if case .shared = storage { return true }
        return false
    }

    /// Creates a buffer with zeroed, freshly allocated storage laid out with the given planes.
    ///
    /// - Precondition: every plane lies inside `byteCount` bytes and has `bytesPerRow` at least as large as its
    ///   row; violations are programmer errors and trap.
    public init(format: PixelFormat, width: Int, height: Int, planes: [PixelPlane], byteCount: Int) {
        precondition(width >= 0 && height >= 0 && byteCount >= 0, "negative pixel buffer geometry")
        Self.checkPlanes(planes, fit: byteCount)
        self.format = format
        self.width = width
        self.height = height
        self.planes = planes
        let bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: max(byteCount, 1), alignment: 64)
        bytes.initializeMemory(as: UInt8.self, repeating: 0)
        self.storage = .owned(bytes, onRelease: nil)
    }

    /// Adopts storage that the caller allocated; `onRelease` is called with it exactly once, when the buffer goes.
    ///
    /// This is the hook buffer pools use: the storage returns to the pool only when the last reference is dropped.
    public init(
        format: PixelFormat, width: Int, height: Int, planes: [PixelPlane],
        adopting storage: UnsafeMutableRawBufferPointer,
        onRelease: @escaping @Sendable (UnsafeMutableRawBufferPointer) -> Void
    ) {
        Self.checkPlanes(planes, fit: storage.count)
        self.format = format
        self.width = width
        self.height = height
        self.planes = planes
        self.storage = .owned(storage, onRelease: onRelease)
    }

    /// A view over bytes held by `data`, without copying them: how a received raw frame reaches custom input.
    ///
    /// Reading shares the bytes with `data` (and with every other copy of that `Data`); writing through
    /// ``withUnsafeMutableBytes(ofPlane:_:)`` first gives the buffer bytes of its own (copy on write), so the bytes
    /// it was made from never change.
    /// - Precondition: every plane lies inside `data`.
    public init(format: PixelFormat, width: Int, height: Int, planes: [PixelPlane], sharing data: Data) {
        Self.checkPlanes(planes, fit: data.count)
        self.format = format
        self.width = width
        self.height = height
        self.planes = planes
        self.storage = .shared(data)
    }

    private static func checkPlanes(_ planes: [PixelPlane], fit byteCount: Int) {
        for plane in planes {
            precondition(plane.offset >= 0 && plane.bytesPerRow >= 0 && plane.height >= 0)
            let (rows, o1) = plane.bytesPerRow.multipliedReportingOverflow(by: plane.height)
            let (end, o2) = plane.offset.addingReportingOverflow(rows)
            precondition(!o1 && !o2 && end <= byteCount, "plane exceeds pixel buffer storage")
        }
    }

    deinit {
        if case .owned(let bytes, let onRelease) = storage {
            if let onRelease {
                onRelease(bytes)
            } else {
                bytes.deallocate()
            }
        }
    }

    /// Creates a tightly or explicitly padded BGRA buffer.
    /// - Parameter bytesPerRow: defaults to `width * 4`; must be at least that.
    public static func makeBGRA(width: Int, height: Int, bytesPerRow: Int? = nil) -> PixelBuffer {
        let (row, rowOverflow) = width.multipliedReportingOverflow(by: 4)
        precondition(width >= 0 && height >= 0 && !rowOverflow, "BGRA geometry \(width)x\(height) is not representable")
        let stride = bytesPerRow ?? row
        precondition(stride >= row, "bytesPerRow smaller than a BGRA row")
        let (byteCount, sizeOverflow) = stride.multipliedReportingOverflow(by: height)
        precondition(!sizeOverflow, "BGRA geometry \(width)x\(height) at \(stride) bytes per row is not representable")
        return PixelBuffer(
            format: .bgra32, width: width, height: height,
            planes: [PixelPlane(width: width, height: height, bytesPerRow: stride, offset: 0)],
            byteCount: byteCount
        )
    }

    /// Creates an NV12 buffer (video or full range); odd sizes are allowed here so that they can be rejected later.
    /// - Parameters:
    ///   - lumaBytesPerRow: defaults to `width`.
    ///   - chromaBytesPerRow: defaults to the luma stride.
    /// - Precondition: the geometry is representable (see ``NV12Layout``); callers check figures from outside first.
    public static func makeNV12(
        width: Int, height: Int, fullRange: Bool = false, lumaBytesPerRow: Int? = nil, chromaBytesPerRow: Int? = nil
    ) -> PixelBuffer {
        guard let layout = NV12Layout(
            width: width, height: height, lumaBytesPerRow: lumaBytesPerRow, chromaBytesPerRow: chromaBytesPerRow)
        else { preconditionFailure("NV12 geometry \(width)x\(height) is not representable") }
        return PixelBuffer(
            format: fullRange ? .nv12FullRange : .nv12VideoRange, width: width, height: height,
            planes: layout.planes, byteCount: layout.byteCount
        )
    }

    /// Calls `body` with the bytes of plane `index` (from its first row to the end of its last row).
    public func withUnsafeBytes<R, E: Error>(
        ofPlane index: Int, _ body: (UnsafeRawBufferPointer) throws(E) -> R
    ) throws(E) -> R {
        let plane = planes[index]
        let range = plane.offset ..< plane.offset + plane.bytesPerRow * plane.height
        switch storage {
        case .owned(let bytes, _):
            return try body(UnsafeRawBufferPointer(rebasing: bytes[range]))
        case .shared(let data):
            return try Self.withBytes(of: data) { (all: UnsafeRawBufferPointer) throws(E) -> R in
                try body(UnsafeRawBufferPointer(rebasing: all[range]))
            }
        }
    }

    /// Calls `body` with the writable bytes of plane `index`.
    public func withUnsafeMutableBytes<R, E: Error>(
        ofPlane index: Int, _ body: (UnsafeMutableRawBufferPointer) throws(E) -> R
    ) throws(E) -> R {
        let plane = planes[index]
        let range = plane.offset ..< plane.offset + plane.bytesPerRow * plane.height
        return try withUnsafeStorage { (all: UnsafeMutableRawBufferPointer) throws(E) -> R in
            try body(UnsafeMutableRawBufferPointer(rebasing: all[range]))
        }
    }

    /// Calls `body` with the whole storage, writable (a view first takes bytes of its own).
    public func withUnsafeStorage<R, E: Error>(_ body: (UnsafeMutableRawBufferPointer) throws(E) -> R) throws(E) -> R {
        if case .shared(let data) = storage {
            // Copy on write: the bytes this view shares belong to someone else.
            let bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: max(data.count, 1), alignment: 64)
            bytes.initializeMemory(as: UInt8.self, repeating: 0)
            data.withUnsafeBytes { source in
                if let base = source.baseAddress, source.count > 0 { bytes.baseAddress!.copyMemory(from: base, byteCount: source.count) }
            }
            storage = .owned(bytes, onRelease: nil)
        }
        guard case .owned(let bytes, _) = storage else { preconditionFailure("storage was just made owned") }
        return try body(bytes)
    }

    /// Calls `body` with the whole storage, read-only (never copies).
    public func withUnsafeReadOnlyStorage<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        switch storage {
        case .owned(let bytes, _): return try body(UnsafeRawBufferPointer(bytes))
        case .shared(let data): return try Self.withBytes(of: data, body)
        }
    }

    /// `Data.withUnsafeBytes` with a typed throw.
    private static func withBytes<R, E: Error>(of data: Data, _ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        let result: Result<R, E> = data.withUnsafeBytes { raw in
            do throws(E) { return .success(try body(raw)) } catch { return .failure(error) }
        }
        return try result.get()
    }
}
