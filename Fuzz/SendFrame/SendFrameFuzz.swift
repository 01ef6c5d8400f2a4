// libFuzzer target: `CustomInput.sendFrame` with arbitrary buffers (built by `Scripts/fuzz SendFrame SECONDS`).
//
// The input describes a `PixelBuffer` (format, width, height, up to three planes with width, height, stride and
// offset, storage size and kind: owned, adopted or a view over `Data`) and a list of timestamps, and sends it to a
// started `SmartSpectraSDK` (one per `FrameTransform`, each with a trivial recording backend) once per timestamp;
// every input starts a fresh timeline (`beginNewTimeline()`). Figures come from `Figures`: small numbers, 16-bit
// and 64-bit ones and the edges (0, −1, Int.max, Int.min, Int.max/4 + 1 …), so overflowing products are tried.
// Geometries that PixelBuffer's initializers refuse by precondition (negative sizes, a plane beyond its storage,
// checked with overflow-reporting arithmetic here first) are not built; storage is capped at 8 MiB.
//
// Checks: every result is `.accepted` or `.rejected` with a documented code (`invalidState`,
// `frameConversionFailed`, `nonMonotonicTimestamp`, `timestampGap`); a frame is accepted only if its layout is one
// custom input documents (BGRA or even NV12 with consistent, non-overlapping planes) and its timestamp rises by at
// most `CustomInput.maximumTimestampGapUs`; a layout the documentation refuses is never accepted; the backend gets
// tightly packed frames of the documented format with strictly increasing timestamps.
import Foundation
import GlassesMedia
import SmartSpectraCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

@_cdecl("LLVMFuzzerTestOneInput")
public func sendFrameFuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    SendFrameFuzz.run(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}

@_cdecl("LLVMFuzzerInitialize")
public func sendFrameFuzzInitialize(
    _ argc: UnsafeMutablePointer<CInt>?, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>?
) -> CInt {
    if let directory = getenv("LINK_FUZZ_WRITE_SEEDS") {
        do {
            try SendFrameFuzz.writeSeeds(to: URL(fileURLWithPath: String(cString: directory)))
            exit(0)
        } catch {
            FileHandle.standardError.write(Data("cannot write seeds: \(error)\n".utf8))
            exit(1)
        }
    }
    _ = SendFrameFuzz.inputs
    return 0
}

/// A backend that checks what it is given (on the SDK's worker thread) and produces nothing.
final class CheckingBackend: ProcessingBackend {
    let name = "fuzz-checking"
    let producedMetrics = Set(MetricType.allCases)
    let processed = Mutex(0)

    func makeProcessor(configuration: ProcessingConfiguration) throws -> any FrameProcessor { Processor(backend: self) }

    final class Processor: FrameProcessor {
        let backend: CheckingBackend
        var last: Int64?
        init(backend: CheckingBackend) { self.backend = backend }

        func process(_ frame: PixelBuffer, timestampUs: Int64) -> ProcessingUpdate {
            SendFrameFuzz.check(last.map { timestampUs > $0 } ?? true, "backend got timestamp \(timestampUs) after \(last!)")
            last = timestampUs
            let tight: Bool
            if frame.format == .bgra32 {
                tight = frame.planes.count == 1 && frame.planes[0].bytesPerRow == 4 * frame.width
            } else {
                tight = frame.format.isNV12 && frame.planes.count == 2 && frame.planes.allSatisfy { $0.bytesPerRow == frame.width }
            }
            SendFrameFuzz.check(tight, "backend got \(frame.format) \(frame.width)x\(frame.height) planes \(frame.planes)")
            for index in frame.planes.indices {
                frame.withUnsafeBytes(ofPlane: index) { bytes in _ = bytes.last }
            }
            backend.processed.withLock { $0 += 1 }
            return ProcessingUpdate()
        }

        func finish() -> ProcessingUpdate { ProcessingUpdate() }
    }
}

/// Reads figures from the input: small, 16-bit, 64-bit, or an edge value.
struct Figures {
    let bytes: UnsafeRawBufferPointer
    var index: Int

    mutating func byte() -> UInt8 {
        guard index < bytes.count else { return 0 }
        defer { index += 1 }
        return bytes[index]
    }

    static let edges: [Int] = [
        0, 1, 2, -1, -2, Int.max, Int.min, Int.max / 2, Int.max / 2 + 1, Int.max / 4, Int.max / 4 + 1, 1 << 31, 1 << 32,
        Int(Int32.max), 65_536, 4096, 8192, 720, 1280, 504, 896, 3 << 61, Int.max - 63,
    ]

    /// A figure: the selector's top two bits pick the kind.
    mutating func figure() -> Int {
        let selector = byte()
        switch selector >> 6 {
        case 0: return Int(selector & 0x3F)
        case 1: return Int(selector & 0x3F) << 8 | Int(byte())
        case 2: return Self.edges[Int(selector & 0x3F) % Self.edges.count]
        default:
            var value: UInt64 = 0
            for _ in 0..<8 { value = value << 8 | UInt64(byte()) }
            return Int(truncatingIfNeeded: value)
        }
    }

    /// A timestamp: a step from the previous one, or an absolute (edge) value.
    mutating func timestamp(after previous: Int64) -> Int64 {
        let selector = byte()
        switch selector >> 6 {
        case 0: return previous &+ Int64(selector & 0x3F) * 33_333
        case 1: return previous &+ (Int64(selector & 0x3F) << 8 | Int64(byte())) * 1000
        case 2:
            let edges: [Int64] = [0, -1, .max, .min, previous, previous &- 1, previous &+ 2_000_000, previous &+ 2_000_001]
            return edges[Int(selector & 0x3F) % edges.count]
        default: return Int64(figure())
        }
    }
}

enum SendFrameFuzz {
    static func check(_ condition: Bool, _ message: @autoclosure () -> String) {
        if !condition { fatalError("property failed: \(message())") }
    }

    static let maximumStorage = 8 << 20
    static let formats: [PixelFormat] = [.bgra32, .nv12VideoRange, .nv12FullRange, .rgba32, .yuv420Planar, .nv12TenBitVideoRange]

    /// One started SDK per transform (started once; every input begins a new timeline).
    static let inputs: [(SmartSpectraSDK, CustomInput)] = FrameTransform.allCases.map { transform in
        let sdk = SmartSpectraSDK(config: SmartSpectraConfig(logLevel: .none), backend: CheckingBackend(), frameQueueCapacity: 4)
        do {
            let input = try sdk.useCustomInput(frameTransform: transform)
            try input.beginNewTimeline()
            return (sdk, input)
        } catch {
            fatalError("the SDK does not start: \(error)")
        }
    }

    struct Geometry {
        var format: PixelFormat
        var width: Int
        var height: Int
        var planes: [PixelPlane]
        var byteCount: Int
        var storage: UInt8
    }

    /// Whether PixelBuffer's initializers take this geometry (their preconditions, in checked arithmetic).
    static func isConstructible(_ g: Geometry) -> Bool {
        guard g.byteCount >= 0, g.byteCount <= maximumStorage else { return false }
        // The owning initializer also requires non-negative sizes; the others do not.
        if g.storage % 3 == 0, g.width < 0 || g.height < 0 { return false }
        for plane in g.planes {
            guard plane.offset >= 0, plane.bytesPerRow >= 0, plane.height >= 0 else { return false }
            if plane.height == 0 {
                // An empty plane must still start inside the storage (PixelBuffer's precondition).
                guard plane.offset <= g.byteCount else { return false }
                continue
            }
            let (rows, o1) = plane.bytesPerRow.multipliedReportingOverflow(by: plane.height)
            let (end, o2) = plane.offset.addingReportingOverflow(rows)
            guard !o1, !o2, end <= g.byteCount else { return false }
        }
        return true
    }

    /// Whether docs (PixelBuffer+CustomInput) say custom input accepts the layout, in checked arithmetic.
    static func isAcceptedLayout(_ g: Geometry) -> Bool {
        guard g.width > 0, g.height > 0 else { return false }
        if g.format == .bgra32 {
            guard g.planes.count == 1 else { return false }
            let plane = g.planes[0]
            let (row, overflow) = g.width.multipliedReportingOverflow(by: 4)
            return plane.width == g.width && plane.height == g.height && !overflow && plane.bytesPerRow >= row
        }
        guard g.format.isNV12, g.width % 2 == 0, g.height % 2 == 0, g.planes.count == 2 else { return false }
        let (luma, chroma) = (g.planes[0], g.planes[1])
        guard luma.width == g.width, luma.height == g.height, luma.bytesPerRow >= g.width else { return false }
        guard chroma.width == g.width / 2, chroma.height == g.height / 2, chroma.bytesPerRow >= g.width else { return false }
        let lumaRange = luma.offset..<(luma.offset + luma.bytesPerRow * luma.height)
        let chromaRange = chroma.offset..<(chroma.offset + chroma.bytesPerRow * chroma.height)
        return !lumaRange.overlaps(chromaRange)
    }

    static func run(_ input: UnsafeRawBufferPointer) {
        guard input.count >= 2 else { return }
        var figures = Figures(bytes: input, index: 0)
        let head = figures.byte()
        let transform = Int(head & 7) % inputs.count
        var format = formats[Int(head >> 3) % formats.count]
        if head >> 3 == 31 { format = PixelFormat(fourCC: UInt32(truncatingIfNeeded: figures.figure())) }
        let storage = figures.byte()
        var geometry = Geometry(format: format, width: figures.figure(), height: figures.figure(), planes: [], byteCount: 0, storage: storage)
        let planeCount = Int(figures.byte() % 4)
        // Planes: derived from the frame size (bit 7 of the plane's first byte clear) so that mutations stay near
        // valid layouts, or four free figures.
        var offset = 0
        for index in 0..<planeCount {
            let mode = figures.byte()
            if mode & 0x80 == 0 {
                let chroma = index > 0 && format.isNV12
                let width = chroma ? geometry.width / 2 : geometry.width
                let height = chroma ? geometry.height / 2 : geometry.height
                let element = format == .bgra32 ? 4 : 1
                let pad = Int(mode & 0x3F)
                let (row, o1) = geometry.width.multipliedReportingOverflow(by: element)
                let (stride, o2) = row.addingReportingOverflow(pad)
                let (size, o3) = stride.multipliedReportingOverflow(by: max(height, 0))
                guard !o1, !o2, !o3 else { return }
                geometry.planes.append(PixelPlane(width: width, height: height, bytesPerRow: stride, offset: offset))
                let (next, o4) = offset.addingReportingOverflow(size)
                guard !o4 else { return }
                // Bit 6: overlap the previous plane. `size` is negative for a negative width, so checked here too.
                let (overlapped, o5) = offset.subtractingReportingOverflow(size / 2)
                guard !o5 else { return }
                offset = mode & 0x40 == 0 ? next : max(0, overlapped)
            } else {
                geometry.planes.append(
                    PixelPlane(width: figures.figure(), height: figures.figure(), bytesPerRow: figures.figure(), offset: figures.figure()))
            }
        }
        let slack = figures.figure()
        geometry.byteCount = storage & 0x80 == 0 ? offset &+ slack : slack
        guard isConstructible(geometry) else { return }

        let buffer: PixelBuffer
        switch geometry.storage % 3 {
        case 0:
            buffer = PixelBuffer(
                format: format, width: geometry.width, height: geometry.height, planes: geometry.planes, byteCount: geometry.byteCount)
        case 1:
            let bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: geometry.byteCount, alignment: 16)
            bytes.initializeMemory(as: UInt8.self, repeating: 0x5A)
            buffer = PixelBuffer(
                format: format, width: geometry.width, height: geometry.height, planes: geometry.planes, adopting: bytes,
                onRelease: { $0.deallocate() })
        default:
            buffer = PixelBuffer(
                format: format, width: geometry.width, height: geometry.height, planes: geometry.planes,
                sharing: Data(repeating: 0xA5, count: geometry.byteCount))
        }
        let layoutAccepted = isAcceptedLayout(geometry)

        let (_, custom) = inputs[transform]
        do {
            try custom.beginNewTimeline()
        } catch {
            fatalError("a new timeline does not start: \(error)")
        }
        let count = 1 + Int(figures.byte() % 8)
        var time: Int64 = 0
        var lastAccepted: Int64?
        for _ in 0..<count {
            time = figures.timestamp(after: time)
            let result = custom.sendFrame(buffer, timestampUs: time)
            switch result {
            case .accepted:
                check(layoutAccepted, "accepted a layout custom input refuses: \(geometry)")
                if let lastAccepted {
                    let (step, overflow) = time.subtractingReportingOverflow(lastAccepted)
                    check(!overflow && step > 0 && step <= CustomInput.maximumTimestampGapUs,
                          "accepted \(time) after \(lastAccepted)")
                }
                lastAccepted = time
            case .rejected(let error):
                let documented: [SmartSpectraError.Code] = [.invalidState, .frameConversionFailed, .nonMonotonicTimestamp, .timestampGap]
                check(documented.contains(error.code), "rejected with an undocumented code: \(error)")
                check(!error.message.isEmpty, "a rejection without a message")
                if error.code == .frameConversionFailed { check(!layoutAccepted, "refused a documented layout: \(geometry), \(error)") }
            }
        }
    }

    // MARK: Seeds

    static func writeSeeds(to directory: URL) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        func medium(_ value: Int) -> [UInt8] { [0x40 | UInt8(value >> 8), UInt8(value & 0xFF)] }
        // head (format << 3 | transform), storage, width, height, planes, [plane modes], slack, count, timestamps
        let seeds: [(String, [UInt8])] = [
            ("bgra-tight", [0 << 3 | 0, 0] + medium(64) + medium(48) + [1, 0x00, 0, 4, 1, 1, 1, 1]),
            ("bgra-padded-view", [0 << 3 | 1, 2] + medium(63) + medium(31) + [1, 0x10, 0x05, 3, 0x40, 0x01, 0x0A]),
            ("nv12-tight", [1 << 3 | 0, 0] + medium(64) + medium(48) + [2, 0x00, 0x00, 0, 3, 1, 1, 1]),
            ("nv12-fullrange-rotated", [2 << 3 | 1, 1] + medium(504) + medium(896) + [2, 0x10, 0x10, 0, 2, 1, 1]),
            ("nv12-mirrored-padded", [1 << 3 | 4, 2] + medium(32) + medium(18) + [2, 0x3F, 0x08, 7, 4, 1, 1, 0x80, 0x86]),
            ("nv12-odd", [1 << 3 | 0, 0] + medium(63) + medium(47) + [2, 0x00, 0x00, 0, 1, 1]),
            ("nv12-overlap", [1 << 3 | 3, 0] + medium(16) + medium(16) + [2, 0x00, 0x40, 32, 1, 1]),
            ("nv12-one-plane", [2 << 3 | 5, 0] + medium(16) + medium(16) + [1, 0x00, 0, 1, 1]),
            ("rgba-refused", [3 << 3 | 0, 0] + medium(16) + medium(16) + [1, 0x00, 0, 1, 1]),
            ("yuv420-three-planes", [4 << 3 | 2, 0] + medium(16) + medium(16) + [3, 0, 0, 0, 0, 1, 1]),
            ("bgra-free-plane", [0 << 3 | 0, 0x80] + medium(8) + medium(8) + [1, 0x80, 8, 8, 32, 0, medium(256)[0], medium(256)[1], 1, 1]),
            ("bgra-edge-width", [0 << 3 | 0, 0x80, 0x8A, 1, 1, 0x80, 0x8A, 1, 8, 0, 8, 1, 1]),
            ("timestamps-back-and-gap", [0 << 3 | 0, 0] + medium(8) + medium(8) + [1, 0, 0, 7, 1, 0x84, 1, 0x86, 0x87, 0x82, 0x83]),
            ("timestamps-edges", [1 << 3 | 0, 0] + medium(8) + medium(8) + [2, 0, 0, 0, 5, 0x83, 0x82, 0x80, 0x81, 0x80]),
            ("fourcc-free", [31 << 3 | 0, 0x42, 0x47, 0x52, 0x41, 0] + medium(8) + medium(8) + [1, 0, 0, 1, 1]),
        ]
        for (name, bytes) in seeds { try Data(bytes).write(to: directory.appendingPathComponent(name)) }
    }
}
