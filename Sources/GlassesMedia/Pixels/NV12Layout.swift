/// Where the two planes of an NV12 picture lie in one block of memory: the one place that computes it.
///
/// NV12 is a `width × height` luma plane followed by an interleaved CbCr plane of `⌈width/2⌉ × ⌈height/2⌉` pairs.
/// Every size comes from outside (a device, a file, a caller), so the layout is computed with checked arithmetic:
/// ``init(width:height:lumaBytesPerRow:chromaBytesPerRow:chromaOffset:)`` returns nil instead of trapping when a
/// stride or size is negative, smaller than a row, or so large that the byte counts overflow.
public struct NV12Layout: Sendable, Hashable {
    /// Width in pixels.
    public let width: Int
    /// Height in pixels.
    public let height: Int
    /// The luma plane (offset 0).
    public let luma: PixelPlane
    /// The interleaved CbCr plane.
    public let chroma: PixelPlane
    /// Bytes from the first luma byte to the end of the last chroma row.
    public let byteCount: Int

    /// CbCr pairs per row.
    public var chromaWidth: Int { chroma.width }
    /// Rows of the CbCr plane.
    public var chromaHeight: Int { chroma.height }

    /// Computes a layout; nil when any figure is out of range or the byte counts overflow.
    /// - Parameters:
    ///   - lumaBytesPerRow: defaults to `width`; must be at least `width`.
    ///   - chromaBytesPerRow: defaults to the luma stride (at least two bytes per CbCr pair).
    ///   - chromaOffset: where the chroma plane starts; defaults to directly after the luma plane.
    public init?(
        width: Int, height: Int, lumaBytesPerRow: Int? = nil, chromaBytesPerRow: Int? = nil, chromaOffset: Int? = nil
    ) {
        guard width >= 0, height >= 0 else { return nil }
        let chromaWidth = width / 2 + width % 2
        let chromaHeight = height / 2 + height % 2
        let (chromaRow, rowOverflow) = chromaWidth.multipliedReportingOverflow(by: 2)
        guard !rowOverflow else { return nil }
        let lumaStride = lumaBytesPerRow ?? width
        let chromaStride = chromaBytesPerRow ?? max(lumaStride, chromaRow)
        guard lumaStride >= width, chromaStride >= chromaRow else { return nil }
        let (lumaBytes, lumaOverflow) = lumaStride.multipliedReportingOverflow(by: height)
        let (chromaBytes, chromaOverflow) = chromaStride.multipliedReportingOverflow(by: chromaHeight)
        guard !lumaOverflow, !chromaOverflow else { return nil }
        let offset = chromaOffset ?? lumaBytes
        guard offset >= lumaBytes else { return nil }
        let (total, totalOverflow) = offset.addingReportingOverflow(chromaBytes)
        guard !totalOverflow else { return nil }
        self.width = width
        self.height = height
        self.luma = PixelPlane(width: width, height: height, bytesPerRow: lumaStride, offset: 0)
        self.chroma = PixelPlane(width: chromaWidth, height: chromaHeight, bytesPerRow: chromaStride, offset: offset)
        self.byteCount = total
    }

    /// A layout whose rows are padded to a multiple of `rowAlignment` bytes; nil when the figures overflow.
    public static func aligned(width: Int, height: Int, rowAlignment: Int) -> NV12Layout? {
        guard width >= 0, let lumaStride = align(width, to: rowAlignment),
              let chromaStride = align(width / 2 + width % 2, to: rowAlignment, scale: 2)
        else { return nil }
        return NV12Layout(width: width, height: height, lumaBytesPerRow: lumaStride, chromaBytesPerRow: chromaStride)
    }

    /// The two planes, luma first.
    public var planes: [PixelPlane] { [luma, chroma] }

    /// `value · scale` rounded up to a multiple of `alignment`; nil on overflow.
    static func align(_ value: Int, to alignment: Int, scale: Int = 1) -> Int? {
        let step = max(1, alignment)
        let (scaled, o1) = value.multipliedReportingOverflow(by: scale)
        let (padded, o2) = scaled.addingReportingOverflow(step - 1)
        guard !o1, !o2 else { return nil }
        return padded / step * step
    }
}
