internal import CFFmpeg
import GlassesMedia

/// Turns decoded pictures (AVFrame) and raw NV12 images into pooled ``PixelBuffer``s of the requested layout.
///
/// Colour: the Y'CbCr→RGB matrix and range come from the stream (its `matrix_coefficients` and
/// `video_full_range_flag`); when the stream says nothing it is BT.601, video range (16–235), which is what the
/// glasses send and what libswscale assumes. NV12 output of a 4:2:0 8-bit stream of the same range is a pure
/// repack (copy luma, interleave Cb/Cr: bit-exact); everything else goes through libswscale with the flags the
/// ffmpeg CLI uses (bicubic), so BGRA output is byte-identical to `ffmpeg -pix_fmt bgra`.
final class FrameConverter {
    private struct ScaleKey: Equatable {
        var width: Int32
        var height: Int32
        var source: Int32
        var destination: Int32
        var colorspace: Int32
        var sourceFullRange: Bool
        var destinationFullRange: Bool
    }

    private var scaleKey: ScaleKey?
    private var scaler: ScaleContextHandle?
    let pool: PixelBufferPool
    let rowAlignment: Int

    init(pool: PixelBufferPool, rowAlignment: Int) {
        self.pool = pool
        self.rowAlignment = rowAlignment
    }

    /// Converts a decoded picture into a new pooled buffer of `format`.
    func convert(_ frame: UnsafeMutablePointer<AVFrame>, to format: PixelFormat) throws(VideoCodecError) -> PixelBuffer {
        let buffer = try convertPicture(frame, to: format)
        FrameCopyCounter.record(.conversion, bytes: buffer.byteCount)
        return buffer
    }

    private func convertPicture(_ frame: UnsafeMutablePointer<AVFrame>, to format: PixelFormat) throws(VideoCodecError) -> PixelBuffer {
        let width = Int(frame.pointee.width), height = Int(frame.pointee.height)
        let sourceFormat = AVPixelFormat(rawValue: frame.pointee.format)
        let sourceFullRange = frame.pointee.color_range == AVCOL_RANGE_JPEG || sourceFormat == AV_PIX_FMT_YUVJ420P
        let sourcePointers: [UnsafePointer<UInt8>?] = [
            UnsafePointer(frame.pointee.data.0), UnsafePointer(frame.pointee.data.1),
            UnsafePointer(frame.pointee.data.2), UnsafePointer(frame.pointee.data.3),
        ]
        let sourceStrides: [Int32] = [
            frame.pointee.linesize.0, frame.pointee.linesize.1, frame.pointee.linesize.2, frame.pointee.linesize.3,
        ]
        if format.isNV12 {
            let fullRange = format == .nv12FullRange
            let buffer = pool.makeNV12(width: width, height: height, fullRange: fullRange, rowAlignment: rowAlignment)
            if (sourceFormat == AV_PIX_FMT_YUV420P || sourceFormat == AV_PIX_FMT_YUVJ420P), sourceFullRange == fullRange {
                Self.repackPlanar(sourcePointers, sourceStrides, into: buffer)
                return buffer
            }
            try scale(
                sourcePointers, sourceStrides, width: width, height: height, source: sourceFormat,
                colorspace: frame.pointee.colorspace, sourceFullRange: sourceFullRange,
                into: buffer, destination: AV_PIX_FMT_NV12, destinationFullRange: fullRange
            )
            return buffer
        }
        guard format == .bgra32 else {
            throw VideoCodecError(code: .unsupportedPixelFormat, message: "cannot produce \(format); ask for BGRA, 420v or 420f")
        }
        let buffer = pool.makeBGRA(width: width, height: height, rowAlignment: rowAlignment)
        try scale(
            sourcePointers, sourceStrides, width: width, height: height, source: sourceFormat,
            colorspace: frame.pointee.colorspace, sourceFullRange: sourceFullRange,
            into: buffer, destination: AV_PIX_FMT_BGRA, destinationFullRange: true
        )
        return buffer
    }

    /// Converts a raw NV12 video-range image into `format`: for `420v`, a view that shares the image's bytes (no
    /// copy; the glasses already sent what custom input takes); otherwise a new pooled buffer.
    func convert(_ image: RawVideoImage, to format: PixelFormat) throws(VideoCodecError) -> PixelBuffer {
        if format == .nv12VideoRange {
            return image.pixelBufferView()
        }
        let buffer = try convertRaw(image, to: format)
        FrameCopyCounter.record(.conversion, bytes: buffer.byteCount)
        return buffer
    }

    private func convertRaw(_ image: RawVideoImage, to format: PixelFormat) throws(VideoCodecError) -> PixelBuffer {
        let width = image.width, height = image.height
        let buffer: PixelBuffer
        let destination: AVPixelFormat
        switch format {
        case .nv12FullRange:
            buffer = pool.makeNV12(width: width, height: height, fullRange: true, rowAlignment: rowAlignment)
            destination = AV_PIX_FMT_NV12
        case .bgra32:
            buffer = pool.makeBGRA(width: width, height: height, rowAlignment: rowAlignment)
            destination = AV_PIX_FMT_BGRA
        default:
            throw VideoCodecError(code: .unsupportedPixelFormat, message: "cannot produce \(format); ask for BGRA, 420v or 420f")
        }
        var failure: VideoCodecError?
        image.data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) -> Void in
            let base = raw.baseAddress!.assumingMemoryBound(to: UInt8.self)
            do throws(VideoCodecError) {
                try scale(
                    [base, base + image.lumaBytesPerRow * height, nil, nil],
                    [Int32(image.lumaBytesPerRow), Int32(image.chromaBytesPerRow), 0, 0],
                    width: width, height: height, source: AV_PIX_FMT_NV12, colorspace: AVCOL_SPC_UNSPECIFIED,
                    sourceFullRange: false, into: buffer, destination: destination,
                    destinationFullRange: format != .nv12VideoRange
                )
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
        return buffer
    }

    /// Copies luma and interleaves Cb/Cr of a planar 4:2:0 picture into an NV12 buffer: bit-exact.
    private static func repackPlanar(_ planes: [UnsafePointer<UInt8>?], _ strides: [Int32], into buffer: PixelBuffer) {
        let width = buffer.width, height = buffer.height
        buffer.withUnsafeStorage { storage in
            let base = storage.baseAddress!
            let luma = buffer.planes[0], chroma = buffer.planes[1]
            ChromaRepacking.copyPlane(
                source: planes[0]!, sourceStride: Int(strides[0]), destination: base + luma.offset,
                destinationStride: luma.bytesPerRow, width: width, height: height
            )
            ChromaRepacking.interleave(
                cb: planes[1]!, cbStride: Int(strides[1]), cr: planes[2]!, crStride: Int(strides[2]),
                destination: base + chroma.offset, destinationStride: chroma.bytesPerRow,
                width: chroma.width, height: chroma.height
            )
        }
    }

    private func scale(
        _ sourcePlanes: [UnsafePointer<UInt8>?], _ sourceStrides: [Int32], width: Int, height: Int,
        source: AVPixelFormat, colorspace: AVColorSpace, sourceFullRange: Bool,
        into buffer: PixelBuffer, destination: AVPixelFormat, destinationFullRange: Bool
    ) throws(VideoCodecError) {
        // The matrix as the ffmpeg CLI's scale filter picks it: the stream's, or BT.601 when unknown/unsupported.
        var space = colorspace.rawValue
        if space < 1 || space > 10 || space == 8 { space = AVCOL_SPC_BT470BG.rawValue }
        let key = ScaleKey(
            width: Int32(width), height: Int32(height), source: source.rawValue, destination: destination.rawValue,
            colorspace: Int32(space), sourceFullRange: sourceFullRange, destinationFullRange: destinationFullRange
        )
        if key != scaleKey || scaler == nil {
            scaler = nil
            let handle = try ScaleContextHandle(
                width: key.width, height: key.height, source: source, destination: destination, flags: SWS_BICUBIC
            )
            let coefficients = sws_getCoefficients(Int32(space))
            let isRGB = destination == AV_PIX_FMT_BGRA
            let applied = sws_setColorspaceDetails(
                handle.pointer, coefficients, sourceFullRange ? 1 : 0, coefficients,
                isRGB ? 0 : (destinationFullRange ? 1 : 0), 0, 1 << 16, 1 << 16
            )
            guard applied >= 0 else {
                throw VideoCodecError(code: .setupFailed, message: "libswscale refused the colour details for \(source) → \(destination)")
            }
            scaler = handle
            scaleKey = key
        }
        guard let scaler else { return }
        buffer.withUnsafeStorage { storage in
            let base = storage.baseAddress!.assumingMemoryBound(to: UInt8.self)
            var destinationPlanes: [UnsafeMutablePointer<UInt8>?] = [nil, nil, nil, nil]
            var destinationStrides: [Int32] = [0, 0, 0, 0]
            for (index, plane) in buffer.planes.enumerated() {
                destinationPlanes[index] = base + plane.offset
                destinationStrides[index] = Int32(plane.bytesPerRow)
            }
            _ = sws_scale(scaler.pointer, sourcePlanes, sourceStrides, 0, Int32(height), destinationPlanes, destinationStrides)
        }
    }
}
