import Testing
@testable import SmartSpectraCore

/// A transform and the picture it must produce, written out by hand.
struct TransformCase: Sendable, CustomTestStringConvertible {
    let transform: FrameTransform
    /// BGRA: expected labels of the 3×2 input `a b c / d e f` (a = 1 … f = 6), row by row.
    let bgra: [[UInt8]]
    /// NV12: expected luma of the 4×2 input `0 1 2 3 / 4 5 6 7`, row by row.
    let luma: [[UInt8]]
    /// NV12: expected CbCr pairs of the 2×1 input `P Q` (P = (100, 101), Q = (110, 111)), row by row.
    let chroma: [[(UInt8, UInt8)]]

    var testDescription: String { "\(transform)" }
}

private let p: (UInt8, UInt8) = (100, 101)
private let q: (UInt8, UInt8) = (110, 111)

let transformCases: [TransformCase] = [
    TransformCase(transform: .none,
                  bgra: [[1, 2, 3], [4, 5, 6]],
                  luma: [[0, 1, 2, 3], [4, 5, 6, 7]],
                  chroma: [[p, q]]),
    TransformCase(transform: .rotate90CW,
                  bgra: [[4, 1], [5, 2], [6, 3]],
                  luma: [[4, 0], [5, 1], [6, 2], [7, 3]],
                  chroma: [[p], [q]]),
    TransformCase(transform: .rotate90CCW,
                  bgra: [[3, 6], [2, 5], [1, 4]],
                  luma: [[3, 7], [2, 6], [1, 5], [0, 4]],
                  chroma: [[q], [p]]),
    TransformCase(transform: .rotate180,
                  bgra: [[6, 5, 4], [3, 2, 1]],
                  luma: [[7, 6, 5, 4], [3, 2, 1, 0]],
                  chroma: [[q, p]]),
    TransformCase(transform: .mirrorHorizontal,
                  bgra: [[3, 2, 1], [6, 5, 4]],
                  luma: [[3, 2, 1, 0], [7, 6, 5, 4]],
                  chroma: [[q, p]]),
    TransformCase(transform: .mirrorVertical,
                  bgra: [[4, 5, 6], [1, 2, 3]],
                  luma: [[4, 5, 6, 7], [0, 1, 2, 3]],
                  chroma: [[p, q]]),
]

/// The BGRA bytes `Pictures.bgra` writes for a label.
private func bgraPixel(_ label: UInt8) -> [UInt8] { [label, label &+ 100, label &+ 50, 255] }

@Suite("Frame transforms, pixel-exact")
struct FrameTransformTests {
    /// 3×2 BGRA, labels 1…6, rows padded with 8 bytes of 0xEE.
    static func bgraInput() -> PixelBuffer {
        Pictures.bgra(width: 3, height: 2, padding: 8) { x, y in UInt8(y * 3 + x + 1) }
    }

    /// 4×2 NV12, luma 0…7, CbCr P Q, rows padded with 4 bytes.
    static func nv12Input(fullRange: Bool) -> PixelBuffer {
        Pictures.nv12(luma: [[0, 1, 2, 3], [4, 5, 6, 7]], chroma: [[p, q]], fullRange: fullRange, padding: 4)
    }

    @Test("BGRA", arguments: transformCases)
    func bgra(_ row: TransformCase) throws {
        let output = try row.transform.applied(to: Self.bgraInput())
        #expect(output.format == .bgra32)
        #expect(output.width == row.bgra[0].count)
        #expect(output.height == row.bgra.count)
        #expect(output.planes == [PixelPlane(width: output.width, height: output.height, bytesPerRow: output.width * 4, offset: 0)])
        let expected = row.bgra.flatMap { $0.flatMap(bgraPixel) }
        #expect(output.withUnsafeBytes(ofPlane: 0) { Array($0) } == expected)
    }

    @Test("NV12, video and full range", arguments: transformCases, [false, true])
    func nv12(_ row: TransformCase, fullRange: Bool) throws {
        let output = try row.transform.applied(to: Self.nv12Input(fullRange: fullRange))
        #expect(output.format == (fullRange ? .nv12FullRange : .nv12VideoRange))
        #expect(output.width == row.luma[0].count)
        #expect(output.height == row.luma.count)
        #expect(output.planes.map(\.bytesPerRow) == [output.width, output.width])
        #expect(output.planes[1].width == output.width / 2 && output.planes[1].height == output.height / 2)
        #expect(output.withUnsafeBytes(ofPlane: 0) { Array($0) } == row.luma.flatMap { $0 })
        #expect(output.withUnsafeBytes(ofPlane: 1) { Array($0) } == row.chroma.flatMap { $0.flatMap { [$0.0, $0.1] } })
    }

    @Test("the SDK applies the handle's transform before processing", arguments: transformCases)
    func appliedBySDK(_ row: TransformCase) async throws {
        let harness = try await Harness.started(transform: row.transform)
        #expect(harness.input.frameTransform == row.transform)
        #expect(harness.input.sendFrame(Self.bgraInput(), timestampUs: 10) == .accepted)
        #expect(harness.input.sendFrame(Self.nv12Input(fullRange: false), timestampUs: 20) == .accepted)
        try await harness.sdk.stop()
        let frames = harness.backend.frames
        try #require(frames.count == 2)
        #expect(frames[0].planes == [row.bgra.flatMap { $0.flatMap(bgraPixel) }])
        #expect(frames[0].width == row.bgra[0].count && frames[0].height == row.bgra.count)
        #expect(frames[1].planes == [row.luma.flatMap { $0 }, row.chroma.flatMap { $0.flatMap { [$0.0, $0.1] } }])
    }

    @Test("applying a transform to unsupported pixels throws frameConversionFailed")
    func unsupported() {
        let error = #expect(throws: SmartSpectraError.self) {
            _ = try FrameTransform.rotate90CW.applied(to: Pictures.nv12(width: 3, height: 2))
        }
        #expect(error?.code == .frameConversionFailed)
    }
}
