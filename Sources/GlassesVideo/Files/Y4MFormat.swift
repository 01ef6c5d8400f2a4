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

    /// Bytes of one frame's payload.
    public var frameByteCount: Int {
        switch layout {
        case .yuv420: width * height + 2 * ((width + 1) / 2) * ((height + 1) / 2)
        case .bgraPlanes: width * height * 4
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

    /// Parses a header line (without its newline).
    static func parse(_ line: String) throws(VideoCodecError) -> Y4MHeader {
        let fields = line.split(separator: " ")
        guard fields.first == "YUV4MPEG2" else {
            throw VideoCodecError(code: .unsupportedFile, message: "not a Y4M file (no YUV4MPEG2 signature)")
        }
        var width = 0, height = 0, rateNumerator = 25, rateDenominator = 1
        var colour = "420jpeg", fullRange = false, bgraTag = false
        for field in fields.dropFirst() {
            let value = String(field.dropFirst())
            switch field.first {
            case "W": width = Int(value) ?? 0
            case "H": height = Int(value) ?? 0
            case "F":
                let parts = value.split(separator: ":")
                if parts.count == 2, let n = Int(parts[0]), let d = Int(parts[1]), n > 0, d > 0 {
                    rateNumerator = n
                    rateDenominator = d
                }
            case "C": colour = value
            case "I":
                guard value == "p" || value == "?" else {
                    throw VideoCodecError(code: .unsupportedFile, message: "Y4M interlacing I\(value) is not supported")
                }
            case "X":
                if value == "COLORRANGE=FULL" { fullRange = true }
                if value == "GLASSES=BGRA" { bgraTag = true }
            default: break
            }
        }
        guard width > 0, height > 0, width <= 16384, height <= 16384 else {
            throw VideoCodecError(code: .unsupportedFile, message: "Y4M size \(width)x\(height) is missing or out of range")
        }
        let layout: Layout
        switch colour {
        case "420jpeg", "420mpeg2", "420paldv", "420": layout = .yuv420
        case "444alpha" where bgraTag: layout = .bgraPlanes
        default:
            throw VideoCodecError(code: .unsupportedFile, message: "Y4M colour space C\(colour) is not supported (8-bit 4:2:0 only)")
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
    private let handle: FileHandle
    private var frameIndex = 0

    /// Opens a file and reads its header.
    /// - Throws: `.fileError` if it cannot be opened, `.unsupportedFile` for a bad header.
    public init(path: String) throws(VideoCodecError) {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw VideoCodecError(code: .fileError, message: "cannot open \(path)")
        }
        self.handle = handle
        var line = Data()
        while line.count < 1024 {
            guard let byte = try? handle.read(upToCount: 1), let first = byte.first else { break }
            if first == 0x0A { break }
            line.append(first)
        }
        header = try Y4MHeader.parse(String(decoding: line, as: UTF8.self))
    }

    deinit { try? handle.close() }

    /// The presentation time of frame `index` in microseconds, from the header's frame rate.
    public func presentationTimeUs(ofFrame index: Int) -> Int64 {
        Int64(index) * 1_000_000 * Int64(header.frameRateDenominator) / Int64(header.frameRateNumerator)
    }

    /// Reads the next frame's payload bytes, or nil at the end of the file.
    /// - Throws: `.unsupportedFile` for a bad frame marker or a truncated frame.
    public func nextFramePayload() throws(VideoCodecError) -> Data? {
        var marker = Data()
        while marker.count < 1024 {
            guard let byte = try? handle.read(upToCount: 1), let first = byte.first else {
                if marker.isEmpty { return nil }
                throw VideoCodecError(code: .unsupportedFile, message: "Y4M file ends inside a frame marker")
            }
            if first == 0x0A { break }
            marker.append(first)
        }
        guard marker.starts(with: Data("FRAME".utf8)) else {
            throw VideoCodecError(code: .unsupportedFile, message: "Y4M frame \(frameIndex) has no FRAME marker")
        }
        let size = header.frameByteCount
        guard let payload = try? handle.read(upToCount: size), payload.count == size else {
            throw VideoCodecError(code: .unsupportedFile, message: "Y4M frame \(frameIndex) is truncated")
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
/// de-interleaved, no value changed; `XCOLORRANGE` says video or full range), BGRA buffers as this module's
/// lossless `C444alpha` representation (see ``Y4MHeader/Layout/bgraPlanes``). Every frame must have the first
/// frame's size and format. Blocking file I/O: use it off the cooperative pool.
public final class Y4MWriter {
    private let handle: FileHandle
    private let frameRateNumerator: Int
    private let frameRateDenominator: Int
    private var header: Y4MHeader?
    /// Frames written so far.
    public private(set) var framesWritten = 0

    /// Creates (or truncates) the file; the header is written with the first frame.
    public init(path: String, frameRateNumerator: Int = 30, frameRateDenominator: Int = 1) throws(VideoCodecError) {
        guard FileManager.default.createFile(atPath: path, contents: nil),
              let handle = FileHandle(forWritingAtPath: path)
        else { throw VideoCodecError(code: .fileError, message: "cannot create \(path)") }
        self.handle = handle
        self.frameRateNumerator = max(1, frameRateNumerator)
        self.frameRateDenominator = max(1, frameRateDenominator)
    }

    deinit { try? handle.close() }

    /// Writes a pixel buffer (`BGRA`, `420v` or `420f`).
    public func write(_ buffer: PixelBuffer) throws(VideoCodecError) {
        let width = buffer.width, height = buffer.height
        if buffer.format.isNV12 {
            try begin(Y4MHeader(width: width, height: height, frameRateNumerator: frameRateNumerator,
                                frameRateDenominator: frameRateDenominator, layout: .yuv420,
                                fullRange: buffer.format == .nv12FullRange))
            guard let payload = ChromaRepacking.i420Data(from: buffer) else { return }
            try append(payload)
        } else if buffer.format == .bgra32 {
            try begin(Y4MHeader(width: width, height: height, frameRateNumerator: frameRateNumerator,
                                frameRateDenominator: frameRateDenominator, layout: .bgraPlanes, fullRange: true))
            var payload = Data(count: width * height * 4)
            let planeSize = width * height
            payload.withUnsafeMutableBytes { target in
                let out = target.bindMemory(to: UInt8.self)
                buffer.withUnsafeBytes(ofPlane: 0) { source in
                    let input = source.bindMemory(to: UInt8.self)
                    let stride = buffer.planes[0].bytesPerRow
                    for y in 0 ..< height {
                        for x in 0 ..< width {
                            for channel in 0 ..< 4 {
                                out[channel * planeSize + y * width + x] = input[y * stride + 4 * x + channel]
                            }
                        }
                    }
                }
            }
            try append(payload)
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
            throw VideoCodecError(code: .fileError, message: "cannot write the Y4M file: \(error)")
        }
    }
}
