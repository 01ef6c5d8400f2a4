import Foundation
import GlassesMedia
import GlassesVideo
import Testing

@Suite("Raw frames reach custom input without a copy")
struct ZeroCopyTests {
    @Test("a raw 420v frame decodes to a view over the received bytes; other layouts are converted copies")
    func raw420vIsAView() throws {
        let image = syntheticImage(width: 360, height: 640, index: 5)
        let frame = VideoFrame(presentationTimeUs: 7, content: .raw(image))
        let picture = try #require(try VideoFrameDecoder(outputFormat: .nv12VideoRange).decode(frame).first)
        #expect(picture.pixelBuffer.isView)
        let received = image.data.withUnsafeBytes { UInt(bitPattern: $0.baseAddress) }
        let submitted = picture.pixelBuffer.withUnsafeBytes(ofPlane: 0) { UInt(bitPattern: $0.baseAddress) }
        #expect(received == submitted, "the submitted buffer shares the received bytes")
        let chroma = picture.pixelBuffer.withUnsafeBytes(ofPlane: 1) { UInt(bitPattern: $0.baseAddress) }
        #expect(chroma == received + UInt(360 * 640))

        let bgra = try #require(try VideoFrameDecoder(outputFormat: .bgra32).decode(frame).first)
        #expect(!bgra.pixelBuffer.isView)
    }
}
