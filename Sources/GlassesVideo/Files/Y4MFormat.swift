import Foundation
import GlassesMedia

/// The YUV4MPEG2 (Y4M) stream header fields this module reads and writes.
public struct Y4MHeader: Sendable, Hashable {
    /// How the frames' bytes are laid out.
    public enum Layout: Sendable, Hashable {
        /// 8-bit 4:2:0 planar (Y, Cb, Cr): `C420jpeg`, `C420mpeg2`, `C420paldv` or `C420`.
        case yuv420
        /// This module's lossless BGRA representation: `C444alpha` whose four planes hold B, G, R and A
        /// (tagged `XGLASSES=BGRA`). Other tools read it as YUVA 4:4:4, so the colours look wrong there,
        /// but every byte is kept.
        case bgraPlanes
    }

    /// Width in pixels.
    public var width: Int
    /// Height in pixels.
    public var height: Int
    /// Frame rate numerator.
    public var frameRateNumerator: Int
    /// Frame rate denominator.
    public var frameRateDenominator: Int
    /// Frame layout.
    public var layout: Layout
    /// Whether the samples are full range (`XCOLORRANGE=FULL`); video range otherwise.
    public var fullRange: Bool

    /// Creates a header.
    public init(width: Int, height: Int, frameRateNumerator: Int, frameRateDenominator: Int, layout: Layout, fullRange: Bool) {
        self.width = width
        self.height = height
        self.frameRateNumerator = frameRateNumerator
        self.frameRateDenominator = frameRateDenominator
        self.layout = layout
        self.fullRange = fullRange
    }

    /// Bytes of one frame's payload (`Int.max` for a size whose byte count does not fit, which no reader accepts:
    /// headers read from files are within ``VideoFileLimits``).
    public var frameByteCount: Int {
        guard width >= 0, height >= 0 else { return 0 }
        switch layout {
        case .yuv420:
            let chroma = (width / 2 + width % 2).multipliedReportingOverflow(by: height / 2 + height % 2)
            let luma = width.multipliedReportingOverflow(by: height)
            guard !chroma.overflow, !luma.overflow, chroma.partialValue <= (Int.max - luma.partialValue) / 2 else { return .max }
            return luma.partialValue + 2 * chroma.partialValue
        case .bgraPlanes:
            let pixels = width.multipliedReportingOverflow(by: height)
            guard !pixels.overflow, pixels.partialValue <= Int.max / 4 else { return .max }
            return pixels.partialValue * 4
        }
    }

    /// The header line, without the trailing newline.
    var line: String {
        var fields = ["YUV4MPEG2", "W\(width)", "H\(height)", "F\(frameRateNumerator):\(frameRateDenominator)", "Ip", "A1:1"]
        switch layout {
        case .yuv420: fields.append("C420jpeg")
        case .bgraPlanes: fields += ["C444alpha", "XGLASSES=BGRA"]
        }
        fields.append(fullRange || layout == .bgraPlanes ? "XCOLORRANGE=FULL" : "XCOLORRANGE=LIMITED")
        return fields.joined(separator: " ")
    }

    /// Checks a frame rate against ``VideoFileLimits``: both terms in 1…``VideoFileLimits/maximumFrameRateTerm``
    /// and the rate in ``VideoFileLimits/minimumFrameRate``…``VideoFileLimits/maximumFrameRate`` fps.
    static func checkFrameRate(numerator: Int, denominator: Int, path: String) throws(VideoCodecError) {
        let limit = VideoFileLimits.maximumFrameRateTerm
        let valid = (1 ... limit).contains(numerator) && (1 ... limit).contains(denominator)
            // Both terms are at most 10^6, so these products cannot overflow.
            && numerator >= VideoFileLimits.minimumFrameRate * denominator
            && numerator <= VideoFileLimits.maximumFrameRate * denominator
        guard valid else {
            throw VideoCodecError(
                code: .fileLimitExceeded,
                message: "\(path): the Y4M frame rate F\(numerator):\(denominator) is out of range; this reads "
                    + "\(VideoFileLimits.minimumFrameRate) to \(VideoFileLimits.maximumFrameRate) frames per second, "
                    + "each term at most \(limit) (e.g. F30:1 or F30000:1001)",
                context: ["path": path, "limit": "frameRate"]
            )
        }
    }

    /// Parses a header line (without its newline); every number is checked against ``VideoFileLimits``.
    /// - Throws: `.unsupportedFile` for a malformed header or an unsupported layout, `.fileLimitExceeded` for a size
    ///   or frame rate out of range.
    static func parse(_ line: String, path: String = "the Y4M file") throws(VideoCodecError) -> Y4MHeader {
        let fields = line.split(separator: " ")
        guard fields.first == "YUV4MPEG2" else {
            throw VideoCodecError(code: .unsupportedFile, message: "\(path) is not a Y4M file (no YUV4MPEG2 signature)",
                                  context: ["path": path])
        }
        func malformed(_ field: Substring) -> VideoCodecError {
            VideoCodecError(code: .unsupportedFile,
                            message: "\(path): the Y4M header field '\(field.prefix(40))' is not a number in range",
                            context: ["path": path])
        }
        var width: Int?, height: Int?, rateNumerator = 25, rateDenominator = 1
        var colour = "420jpeg", fullRange = false, bgraTag = false
        for field in fields.dropFirst() {
            let value = field.dropFirst()
            switch field.first {
            case "W":
                guard let number = Int(value) else { throw malformed(field) }
                width = number
            case "H":
                guard let number = Int(value) else { throw malformed(field) }
                height = number
            case "F":
                let parts = value.split(separator: ":", omittingEmptySubsequences: false)
                guard parts.count == 2, let n = Int(parts[0]), let d = Int(parts[1]) else { throw malformed(field) }
                rateNumerator = n
                rateDenominator = d
            case "C": colour = String(value)
            case "I":
                guard value == "p" || value == "?" else {
                    throw VideoCodecError(code: .unsupportedFile, message: "\(path): Y4M interlacing I\(value) is not supported",
                                          context: ["path": path])
                }
            case "X":
                if value == "COLORRANGE=FULL" { fullRange = true }
                if value == "GLASSES=BGRA" { bgraTag = true }
            default: break
            }
        }
        guard let width, let height else {
            throw VideoCodecError(code: .unsupportedFile, message: "\(path): the Y4M header has no picture size (W and H)",
                                  context: ["path": path])
        }
        try VideoFileLimits.checkSize(width: width, height: height, path: path, what: "the Y4M header")
        try checkFrameRate(numerator: rateNumerator, denominator: rateDenominator, path: path)
        let layout: Layout
        switch colour {
        case "420jpeg", "420mpeg2", "420paldv", "420": layout = .yuv420
        case "444alpha" where bgraTag: layout = .bgraPlanes
        default:
            throw VideoCodecError(code: .unsupportedFile,
                                  message: "\(path): Y4M colour space C\(colour.prefix(20)) is not supported (8-bit 4:2:0 only)",
                                  context: ["path": path])
        }
        return Y4MHeader(width: width, height: height, frameRateNumerator: rateNumerator,
                         frameRateDenominator: rateDenominator, layout: layout, fullRange: fullRange)
    }
}

/// Reads a Y4M file frame by frame into pixel buffers: 4:2:0 as NV12 (video or full range as the header says),
/// the BGRA representation as BGRA. Blocking file I/O: use it off the cooperative pool.
public final class Y4MReader {
    /// The stream header.
    public let header: Y4MHeader
    /// The file being read.
    public let path: String
    private let handle: FileHandle
    private var frameIndex = 0
    /// The longest header line or frame marker read, in bytes.
    static let maximumLineLength = 1024

    /// Opens a file and reads its header; every number in it is checked against ``VideoFileLimits``.
    /// - Throws: `.fileError` if it cannot be opened, `.unsupportedFile` for a bad header, `.fileLimitExceeded` for
    ///   a picture size or frame rate out of range.
    public init(path: String) throws(VideoCodecError) {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw VideoCodecError(code: .fileError, message: "cannot open \(path)", context: ["path": path])
        }
        self.handle = handle
        self.path = path
        guard let line = try Self.readLine(handle, path: path) else {
            throw VideoCodecError(code: .unsupportedFile, message: "\(path) is empty, not a Y4M file", context: ["path": path])
        }
        guard line.complete else {
            throw VideoCodecError(
                code: line.bytes.count >= Self.maximumLineLength ? .unsupportedFile : .truncatedFile,
                message: line.bytes.count >= Self.maximumLineLength
                    ? "\(path): the Y4M header is longer than \(Self.maximumLineLength) bytes"
                    : "\(path) is truncated inside its Y4M header",
                context: ["path": path]
            )
        }
        header = try Y4MHeader.parse(String(decoding: line.bytes, as: UTF8.self), path: path)
        let headerBytes = Int64(line.bytes.count + 1)
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.int64Value
        let perFrame = Int64(6 + header.frameByteCount)
        frameCount = size.map { Int(max(0, $0 - headerBytes) / perFrame) }
    }

    deinit { try? handle.close() }

    /// How many whole frames the file holds, from its size (nil when the size cannot be read): Y4M has no index.
    public let frameCount: Int?

    /// The playing time of the whole file in seconds, from ``frameCount`` and the header's frame rate.
    public var durationSeconds: Double? {
        frameCount.map { Double(presentationTimeUs(ofFrame: $0)) / 1e6 }
    }

    /// Reads up to a newline (not included) or ``maximumLineLength`` bytes; nil at the end of the file. `complete`
    /// is false when the line had no newline.
    private static func readLine(_ handle: FileHandle, path: String) throws(VideoCodecError) -> (bytes: Data, complete: Bool)? {
        var line = Data()
        while line.count < maximumLineLength {
            let byte: Data?
            do { byte = try handle.read(upToCount: 1) } catch {
                throw VideoCodecError(code: .fileError, message: "cannot read \(path): \(error.localizedDescription)",
                                      context: ["path": path])
            }
            guard let first = byte?.first else { return line.isEmpty ? nil : (line, false) }
            if first == 0x0A { return (line, true) }
            line.append(first)
        }
        return (line, false)
    }

    /// The presentation time of frame `index` in microseconds, from the header's frame rate (which the header
    /// check keeps at 1…240 fps, so this is at most `index` seconds and cannot overflow for any frame a file can
    /// hold; it saturates at `Int64.max` for indices beyond that).
    public func presentationTimeUs(ofFrame index: Int) -> Int64 {
        guard index > 0 else { return 0 }
        let scaled = Int64(index).multipliedFullWidth(by: 1_000_000 * Int64(header.frameRateDenominator))
        let numerator = Int64(header.frameRateNumerator)
        // The quotient fits when the high word is below the divisor (it is index × 10^6 × d / n ≤ index × 10^6).
        guard numerator > 0, scaled.high < numerator else { return .max }
        return numerator.dividingFullWidth(scaled).quotient
    }

    /// Reads the next frame's payload bytes, or nil at the end of the file.
    /// - Throws: `.unsupportedFile` for a bad frame marker, `.truncatedFile` for a file that ends inside a frame,
    ///   `.fileError` for a read error.
    public func nextFramePayload() throws(VideoCodecError) -> Data? {
        let context = ["path": path, "frame": "\(frameIndex)"]
        guard let marker = try Self.readLine(handle, path: path) else { return nil }
        let tag = Data("FRAME".utf8)
        let endsInMarker = !marker.complete && marker.bytes.count < Self.maximumLineLength
        if endsInMarker, marker.bytes.starts(with: tag) || tag.starts(with: marker.bytes) {
            throw VideoCodecError(code: .truncatedFile, message: "\(path) is truncated: it ends inside the marker of frame \(frameIndex + 1)",
                                  context: context)
        }
        guard marker.complete, marker.bytes.starts(with: tag) else {
            throw VideoCodecError(code: .unsupportedFile, message: "\(path): Y4M frame \(frameIndex + 1) has no FRAME marker",
                                  context: context)
        }
        // The header was checked against VideoFileLimits, so this is at most about 25 MB.
        let size = header.frameByteCount
        let payload: Data?
        do { payload = try handle.read(upToCount: size) } catch {
            throw VideoCodecError(code: .fileError, message: "cannot read \(path): \(error.localizedDescription)", context: context)
        }
        guard let payload, payload.count == size else {
            throw VideoCodecError(
                code: .truncatedFile,
                message: "\(path) is truncated: frame \(frameIndex + 1) has \(payload?.count ?? 0) of its \(size) bytes",
                context: context
            )
        }
        frameIndex += 1
        return payload
    }

    /// Reads the next frame as a pixel buffer (tight rows), or nil at the end.
    public func nextPixelBuffer() throws(VideoCodecError) -> PixelBuffer? {
        guard let payload = try nextFramePayload() else { return nil }
        let width = header.width, height = header.height
        switch header.layout {
        case .yuv420:
            let buffer = PixelBuffer.makeNV12(width: width, height: height, fullRange: header.fullRange)
            let chromaWidth = (width + 1) / 2, chromaHeight = (height + 1) / 2
            payload.withUnsafeBytes { source in
                buffer.withUnsafeStorage { storage in
                    let base = storage.baseAddress!, start = source.baseAddress!
                    let luma = buffer.planes[0], chroma = buffer.planes[1]
                    ChromaRepacking.copyPlane(source: start, sourceStride: width, destination: base + luma.offset,
                                              destinationStride: luma.bytesPerRow, width: width, height: height)
                    ChromaRepacking.interleave(
                        cb: start + width * height, cbStride: chromaWidth,
                        cr: start + width * height + chromaWidth * chromaHeight, crStride: chromaWidth,
                        destination: base + chroma.offset, destinationStride: chroma.bytesPerRow,
                        width: chromaWidth, height: chromaHeight
                    )
                }
            }
            return buffer
        case .bgraPlanes:
            let buffer = PixelBuffer.makeBGRA(width: width, height: height)
            let planeSize = width * height
            payload.withUnsafeBytes { source in
                buffer.withUnsafeStorage { storage in
                    let out = storage.bindMemory(to: UInt8.self)
                    let input = source.bindMemory(to: UInt8.self)
                    let stride = buffer.planes[0].bytesPerRow
                    for y in 0 ..< height {
                        for x in 0 ..< width {
                            for channel in 0 ..< 4 {
                                out[y * stride + 4 * x + channel] = input[channel * planeSize + y * width + x]
                            }
                        }
                    }
                }
            }
            return buffer
        }
    }
}

/// Writes frames exactly as given to a Y4M file: NV12 buffers and raw images as 4:2:0 (`C420jpeg`, chroma
/// de-interleaved, no value changed; `XCOLORRANGE` says video or full range). Every frame must have the first
/// frame's size and format. Blocking file I/O: use it off the cooperative pool.
///
/// BGRA is refused (`.unsupportedPixelFormat`): YUV4MPEG2 has no RGB layout, and a BGRA frame stored under a YUV
/// header (as ``Y4MHeader/Layout/bgraPlanes`` once did) is read by every other tool as the wrong colours. Check
/// ``canWrite(_:)`` before a run to refuse `--pixel-format bgra --video-out x.y4m` up front. ``Y4MReader`` still
/// reads `bgraPlanes` files written before.
public final class Y4MWriter {
    private let handle: FileHandle
    private let frameRateNumerator: Int
    private let frameRateDenominator: Int
    private var header: Y4MHeader?
    /// Frames written so far.
    public private(set) var framesWritten = 0

    /// Whether this writer stores buffers of `format` (NV12 video or full range; not BGRA, see the type's notes).
    public static func canWrite(_ format: PixelFormat) -> Bool { format.isNV12 }

    /// Creates (or truncates) the file; the header is written with the first frame.
    /// - Throws: `.invalidArgument` for a frame rate outside ``VideoFileLimits`` (so that ``Y4MReader`` reads the
    ///   file back), `.fileError` when the file cannot be created.
    public init(path: String, frameRateNumerator: Int = 30, frameRateDenominator: Int = 1) throws(VideoCodecError) {
        let numerator = max(1, frameRateNumerator), denominator = max(1, frameRateDenominator)
        do { try Y4MHeader.checkFrameRate(numerator: numerator, denominator: denominator, path: path) } catch {
            throw VideoCodecError(code: .invalidArgument, message: error.message, context: error.context)
        }
        guard FileManager.default.createFile(atPath: path, contents: nil),
              let handle = FileHandle(forWritingAtPath: path)
        else { throw VideoCodecError(code: .fileError, message: "cannot create \(path)", context: ["path": path]) }
        self.handle = handle
        self.frameRateNumerator = numerator
        self.frameRateDenominator = denominator
    }

    deinit { try? handle.close() }

    /// Writes a pixel buffer (`420v` or `420f`).
    /// - Throws: `.unsupportedPixelFormat` for BGRA or any other format, `.invalidArgument` for a frame whose size or
    ///   format differs from the first, `.fileError` when writing fails.
    public func write(_ buffer: PixelBuffer) throws(VideoCodecError) {
        let width = buffer.width, height = buffer.height
        if buffer.format.isNV12 {
            try begin(Y4MHeader(width: width, height: height, frameRateNumerator: frameRateNumerator,
                                frameRateDenominator: frameRateDenominator, layout: .yuv420,
                                fullRange: buffer.format == .nv12FullRange))
            guard let payload = ChromaRepacking.i420Data(from: buffer) else { return }
            try append(payload)
        } else if buffer.format == .bgra32 {
            throw VideoCodecError(
                code: .unsupportedPixelFormat,
                message: "a Y4M file cannot hold BGRA frames (YUV4MPEG2 has no RGB layout; other tools would show wrong "
                    + "colours): submit NV12 (--pixel-format nv12) to write --video-out, or leave --video-out out"
            )
        } else {
            throw VideoCodecError(code: .unsupportedPixelFormat, message: "Y4M writer takes BGRA, 420v or 420f, not \(buffer.format)")
        }
    }

    /// Writes a raw NV12 video-range image.
    public func write(_ raw: RawVideoImage) throws(VideoCodecError) {
        try begin(Y4MHeader(width: raw.width, height: raw.height, frameRateNumerator: frameRateNumerator,
                            frameRateDenominator: frameRateDenominator, layout: .yuv420, fullRange: false))
        try append(ChromaRepacking.i420Data(from: raw))
    }

    /// Flushes and closes the file.
    public func close() throws(VideoCodecError) {
        do { try handle.synchronize(); try handle.close() } catch {
            throw VideoCodecError(code: .fileError, message: "cannot close the Y4M file: \(error)")
        }
    }

    private func begin(_ wanted: Y4MHeader) throws(VideoCodecError) {
        if let header {
            guard header == wanted else {
                throw VideoCodecError(code: .invalidArgument,
                                      message: "Y4M frame \(framesWritten) is \(wanted.width)x\(wanted.height) \(wanted.layout); the file is \(header.width)x\(header.height) \(header.layout)")
            }
            return
        }
        header = wanted
        try write(Data((wanted.line + "\n").utf8))
    }

    private func append(_ payload: Data) throws(VideoCodecError) {
        try write(Data("FRAME\n".utf8) + payload)
        framesWritten += 1
    }

    private func write(_ data: Data) throws(VideoCodecError) {
        do { try handle.write(contentsOf: data) } catch {
            throw VideoCodecError(code: .fileError, message: "cannot write the Y4M file: \(FileErrorText.reason(error))")
        }
    }
}
