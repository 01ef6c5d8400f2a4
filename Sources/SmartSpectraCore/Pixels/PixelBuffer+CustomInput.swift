/// The two layouts custom input accepts, after checking a buffer's geometry.
enum CustomInputLayout: Sendable, Hashable {
    /// One BGRA plane.
    case bgra
    /// NV12 (video or full range): a luma plane and an interleaved CbCr plane at half size.
    case nv12
}

extension PixelBuffer {
    /// Checks that the buffer is a layout custom input accepts, with consistent planes.
    ///
    /// BGRA: one plane of `width × height` pixels, at least `4 · width` bytes per row (padding allowed).
    /// NV12 (`420v`/`420f`): even, non-zero dimensions; a `width × height` luma plane with at least `width` bytes per
    /// row, and a `width/2 × height/2` CbCr plane with at least `width` bytes per row, not overlapping the luma.
    /// Everything else is `frameConversionFailed`.
    func checkCustomInputLayout() -> Result<CustomInputLayout, SmartSpectraError> {
        func failure(_ reason: String) -> Result<CustomInputLayout, SmartSpectraError> {
            .failure(SmartSpectraError(
                code: .frameConversionFailed,
                message: "Unsupported pixels (\(format), \(width)×\(height)): \(reason)."
            ))
        }
        guard width > 0, height > 0 else { return failure("the frame is empty") }
        if format == .bgra32 {
            guard planes.count == 1 else { return failure("BGRA needs exactly one plane, found \(planes.count)") }
            let plane = planes[0]
            guard plane.width == width, plane.height == height else {
                return failure("the plane is \(plane.width)×\(plane.height), not the frame size")
            }
            // The width is the caller's figure: 4 × width is computed checked, so an absurd one is refused, not a trap.
            let (row, overflow) = width.multipliedReportingOverflow(by: 4)
            guard !overflow, plane.bytesPerRow >= row else {
                return failure("\(plane.bytesPerRow) bytes per row is less than 4 × width")
            }
            return .success(.bgra)
        }
        if format.isNV12 {
            guard width % 2 == 0, height % 2 == 0 else { return failure("NV12 needs even dimensions") }
            guard planes.count == 2 else { return failure("NV12 needs two planes, found \(planes.count)") }
            let luma = planes[0]
            let chroma = planes[1]
            guard luma.width == width, luma.height == height, luma.bytesPerRow >= width else {
                return failure("the luma plane (\(luma.width)×\(luma.height), \(luma.bytesPerRow) B/row) does not fit the frame")
            }
            guard chroma.width == width / 2, chroma.height == height / 2, chroma.bytesPerRow >= width else {
                return failure(
                    "the CbCr plane (\(chroma.width)×\(chroma.height), \(chroma.bytesPerRow) B/row) is not half the frame size"
                )
            }
            let lumaRange = luma.offset ..< luma.offset + luma.bytesPerRow * luma.height
            let chromaRange = chroma.offset ..< chroma.offset + chroma.bytesPerRow * chroma.height
            guard !lumaRange.overlaps(chromaRange) else { return failure("the luma and CbCr planes overlap") }
            return .success(.nv12)
        }
        return failure("custom input accepts BGRA (BGRA) or 8-bit bi-planar NV12 (420v, 420f)")
    }
}

extension FrameTransform {
    /// Returns a transformed, tightly packed copy of a frame custom input accepts.
    ///
    /// The copy keeps the format (BGRA stays BGRA, NV12 stays NV12 in the same range); rows carry no padding. NV12 is
    /// transformed plane by plane, moving each CbCr pair as a unit, so chroma stays aligned with its 2×2 luma block.
    /// - Throws: `frameConversionFailed` when the buffer is not BGRA or even-sized NV12 with consistent planes.
    public func applied(to buffer: PixelBuffer) throws(SmartSpectraError) -> PixelBuffer {
        let layout = try buffer.checkCustomInputLayout().get()
        return transformedCopy(of: buffer, layout: layout, allocate: Self.freshBuffer)
    }

    /// Allocates a zeroed buffer (used when no pool is at hand).
    static func freshBuffer(format: PixelFormat, width: Int, height: Int, planes: [PixelPlane], byteCount: Int) -> PixelBuffer {
        PixelBuffer(format: format, width: width, height: height, planes: planes, byteCount: byteCount)
    }

    /// Copies `buffer` (already checked to have `layout`) through the transform into storage from `allocate`.
    func transformedCopy(
        of buffer: PixelBuffer, layout: CustomInputLayout,
        allocate: (PixelFormat, Int, Int, [PixelPlane], Int) -> PixelBuffer
    ) -> PixelBuffer {
        let (outWidth, outHeight) = transformedSize(width: buffer.width, height: buffer.height)
        switch layout {
        case .bgra:
            let stride = outWidth * 4
            let output = allocate(
                buffer.format, outWidth, outHeight,
                [PixelPlane(width: outWidth, height: outHeight, bytesPerRow: stride, offset: 0)], stride * outHeight
            )
            copyPlane(from: buffer, plane: 0, to: output, outPlane: 0, elementSize: 4)
            return output
        case .nv12:
            let lumaBytes = outWidth * outHeight
            let chromaBytes = outWidth * (outHeight / 2)
            let output = allocate(
                buffer.format, outWidth, outHeight,
                [
                    PixelPlane(width: outWidth, height: outHeight, bytesPerRow: outWidth, offset: 0),
                    PixelPlane(width: outWidth / 2, height: outHeight / 2, bytesPerRow: outWidth, offset: lumaBytes),
                ],
                lumaBytes + chromaBytes
            )
            copyPlane(from: buffer, plane: 0, to: output, outPlane: 0, elementSize: 1)
            copyPlane(from: buffer, plane: 1, to: output, outPlane: 1, elementSize: 2)
            return output
        }
    }

    /// Copies one plane element by element (an element is a BGRA pixel, a luma sample or a CbCr pair).
    private func copyPlane(from input: PixelBuffer, plane: Int, to output: PixelBuffer, outPlane: Int, elementSize: Int) {
        let source = input.planes[plane]
        let target = output.planes[outPlane]
        input.withUnsafeBytes(ofPlane: plane) { src in
            output.withUnsafeMutableBytes(ofPlane: outPlane) { dst in
                remap(size: elementSize, src, source, dst, target)
            }
        }
    }

    /// Moves elements of type `T` from `src` (geometry `source`) to `dst` (geometry `target`).
    ///
    /// For output element (x', y') the input element is:
    /// none (x', y'); rotate90CW (y', h−1−x'); rotate90CCW (w−1−y', x'); rotate180 (w−1−x', h−1−y');
    /// mirrorHorizontal (w−1−x', y'); mirrorVertical (x', h−1−y'), where w×h is the input plane size.
    private func remap(
        size: Int, _ src: UnsafeRawBufferPointer, _ source: PixelPlane,
        _ dst: UnsafeMutableRawBufferPointer, _ target: PixelPlane
    ) {
        let w = source.width
        let h = source.height
        let rowBytes = target.width * size
        switch self {
        case .none, .mirrorVertical:
            for y in 0 ..< target.height {
                let sy = self == .none ? y : h - 1 - y
                let from = UnsafeRawBufferPointer(rebasing: src[sy * source.bytesPerRow ..< sy * source.bytesPerRow + rowBytes])
                UnsafeMutableRawBufferPointer(rebasing: dst[y * target.bytesPerRow ..< y * target.bytesPerRow + rowBytes])
                    .copyMemory(from: from)
            }
        default:
            // Source byte offset of output element (x', y') is `origin(y') + x' · step`, per the table above.
            let stride = source.bytesPerRow
            let step: Int
            switch self {
            case .rotate90CW: step = -stride
            case .rotate90CCW: step = stride
            default: step = -size  // rotate180, mirrorHorizontal
            }
            guard let srcBase = src.baseAddress, let dstBase = dst.baseAddress else { return }
            let tile = 32  // rotations read columns: walk the output in tiles so source rows stay in cache
            for tileY in Swift.stride(from: 0, to: target.height, by: tile) {
                for tileX in Swift.stride(from: 0, to: target.width, by: tile) {
                    for y in tileY ..< min(tileY + tile, target.height) {
                        let origin: Int
                        switch self {
                        case .rotate90CW: origin = (h - 1) * stride + y * size
                        case .rotate90CCW: origin = (w - 1 - y) * size
                        case .rotate180: origin = (h - 1 - y) * stride + (w - 1) * size
                        default: origin = y * stride + (w - 1) * size  // mirrorHorizontal
                        }
                        Self.copyElements(
                            size: size, from: srcBase + origin, step: step, to: dstBase + y * target.bytesPerRow,
                            range: tileX ..< min(tileX + tile, target.width)
                        )
                    }
                }
            }
        }
    }

    /// Copies the elements `range` of one output row; element `x` comes from `source + x · step`. Concrete loops per
    /// element size (no generic dispatch on the hot path).
    @inline(__always)
    private static func copyElements(
        size: Int, from source: UnsafeRawPointer, step: Int, to row: UnsafeMutableRawPointer, range: Range<Int>
    ) {
        switch size {
        case 1:
            for x in range { row.storeBytes(of: source.load(fromByteOffset: x * step, as: UInt8.self), toByteOffset: x, as: UInt8.self) }
        case 2:
            for x in range {
                row.storeBytes(of: source.loadUnaligned(fromByteOffset: x * step, as: UInt16.self), toByteOffset: x * 2, as: UInt16.self)
            }
        default:
            for x in range {
                row.storeBytes(of: source.loadUnaligned(fromByteOffset: x * step, as: UInt32.self), toByteOffset: x * 4, as: UInt32.self)
            }
        }
    }
}
