import Synchronization

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

    private let storage: UnsafeMutableRawBufferPointer
    private let onRelease: (@Sendable (UnsafeMutableRawBufferPointer) -> Void)?

    /// The number of bytes of storage.
    public var byteCount: Int { storage.count }

    /// Creates a buffer with zeroed, freshly allocated storage laid out with the given planes.
    ///
    /// - Precondition: every plane lies inside `byteCount` bytes and has `bytesPerRow` at least as large as its
    ///   row; violations are programmer errors and trap.
    public init(format: PixelFormat, width: Int, height: Int, planes: [PixelPlane], byteCount: Int) {
        precondition(width >= 0 && height >= 0 && byteCount >= 0, "negative pixel buffer geometry")
        for plane in planes {
            precondition(plane.offset >= 0 && plane.bytesPerRow >= 0 && plane.height >= 0)
            precondition(plane.height == 0 || plane.offset + plane.bytesPerRow * plane.height <= byteCount,
                         "plane exceeds pixel buffer storage")
        }
        self.format = format
        self.width = width
        self.height = height
        self.planes = planes
        self.storage = UnsafeMutableRawBufferPointer.allocate(byteCount: max(byteCount, 1), alignment: 64)
        self.storage.initializeMemory(as: UInt8.self, repeating: 0)
        self.onRelease = nil
    }

    /// Adopts storage that the caller allocated; `onRelease` is called with it exactly once, when the buffer goes.
    ///
    /// This is the hook buffer pools use: the storage returns to the pool only when the last reference is dropped.
    public init(
        format: PixelFormat, width: Int, height: Int, planes: [PixelPlane],
        adopting storage: UnsafeMutableRawBufferPointer,
        onRelease: @escaping @Sendable (UnsafeMutableRawBufferPointer) -> Void
    ) {
        for plane in planes {
            precondition(plane.height == 0 || plane.offset + plane.bytesPerRow * plane.height <= storage.count,
                         "plane exceeds pixel buffer storage")
        }
        self.format = format
        self.width = width
        self.height = height
        self.planes = planes
        self.storage = storage
        self.onRelease = onRelease
    }

    deinit {
        if let onRelease {
            onRelease(storage)
        } else {
            storage.deallocate()
        }
    }

    /// Creates a tightly or explicitly padded BGRA buffer.
    /// - Parameter bytesPerRow: defaults to `width * 4`; must be at least that.
    public static func makeBGRA(width: Int, height: Int, bytesPerRow: Int? = nil) -> PixelBuffer {
        let stride = bytesPerRow ?? width * 4
        precondition(stride >= width * 4, "bytesPerRow smaller than a BGRA row")
        return PixelBuffer(
            format: .bgra32, width: width, height: height,
            planes: [PixelPlane(width: width, height: height, bytesPerRow: stride, offset: 0)],
            byteCount: stride * height
        )
    }

    /// Creates an NV12 buffer (video or full range); odd sizes are allowed here so that they can be rejected later.
    /// - Parameters:
    ///   - lumaBytesPerRow: defaults to `width`.
    ///   - chromaBytesPerRow: defaults to the luma stride.
    public static func makeNV12(
        width: Int, height: Int, fullRange: Bool = false, lumaBytesPerRow: Int? = nil, chromaBytesPerRow: Int? = nil
    ) -> PixelBuffer {
        let chromaWidth = (width + 1) / 2
        let chromaHeight = (height + 1) / 2
        let lumaStride = lumaBytesPerRow ?? width
        let chromaStride = chromaBytesPerRow ?? max(lumaStride, chromaWidth * 2)
        precondition(lumaStride >= width && chromaStride >= chromaWidth * 2, "stride smaller than a row")
        let lumaBytes = lumaStride * height
        return PixelBuffer(
            format: fullRange ? .nv12FullRange : .nv12VideoRange, width: width, height: height,
            planes: [
                PixelPlane(width: width, height: height, bytesPerRow: lumaStride, offset: 0),
                PixelPlane(width: chromaWidth, height: chromaHeight, bytesPerRow: chromaStride, offset: lumaBytes),
            ],
            byteCount: lumaBytes + chromaStride * chromaHeight
        )
    }

    /// Calls `body` with the bytes of plane `index` (from its first row to the end of its last row).
    public func withUnsafeBytes<R, E: Error>(
        ofPlane index: Int, _ body: (UnsafeRawBufferPointer) throws(E) -> R
    ) throws(E) -> R {
        let plane = planes[index]
        let slice = UnsafeRawBufferPointer(rebasing: storage[plane.offset ..< plane.offset + plane.bytesPerRow * plane.height])
        return try body(slice)
    }

    /// Calls `body` with the writable bytes of plane `index`.
    public func withUnsafeMutableBytes<R, E: Error>(
        ofPlane index: Int, _ body: (UnsafeMutableRawBufferPointer) throws(E) -> R
    ) throws(E) -> R {
        let plane = planes[index]
        let slice = UnsafeMutableRawBufferPointer(rebasing: storage[plane.offset ..< plane.offset + plane.bytesPerRow * plane.height])
        return try body(slice)
    }

    /// Calls `body` with the whole storage.
    public func withUnsafeStorage<R, E: Error>(_ body: (UnsafeMutableRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(storage)
    }
}
