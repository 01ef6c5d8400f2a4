import Foundation
import GlassesMedia
import Testing

@Suite("Media types: NV12 layout, raw images, pixel views, NAL framing, durations")
struct MediaTypesTests {
    @Test("a device's absurd NV12 strides are refused, never an arithmetic trap")
    func overflowingStridesAreRefused() {
        // A stride whose product with the height overflows Int (the crash a hostile device could cause).
        let data = Data(count: 64)
        #expect(RawVideoImage(width: 2, height: 2, lumaBytesPerRow: .max / 2, chromaBytesPerRow: 2, data: data) == nil)
        #expect(RawVideoImage(width: 2, height: 4, lumaBytesPerRow: 2, chromaBytesPerRow: .max, data: data) == nil)
        #expect(NV12Layout(width: .max, height: 2) == nil)
        #expect(NV12Layout(width: 4, height: 4, lumaBytesPerRow: 3) == nil)
        #expect(NV12Layout.aligned(width: .max - 8, height: 2, rowAlignment: 64) == nil)
        // A sane frame still fits.
        let layout = NV12Layout(width: 504, height: 896)
        #expect(layout?.byteCount == 504 * 896 * 3 / 2)
        #expect(layout?.chroma.offset == 504 * 896)
    }

    @Test("a raw image becomes a 420v pixel buffer that shares its bytes; writing gives the buffer its own")
    func rawImageViewSharesBytes() throws {
        let width = 8, height = 4
        var bytes = Data(count: width * height * 3 / 2)
        for index in bytes.indices { bytes[index] = UInt8(truncatingIfNeeded: index) }
        let image = try #require(
            RawVideoImage(width: width, height: height, lumaBytesPerRow: width, chromaBytesPerRow: width, data: bytes))
        let view = image.pixelBufferView()
        #expect(view.isView)
        #expect(view.format == .nv12VideoRange)
        let imageBase = image.data.withUnsafeBytes { UInt(bitPattern: $0.baseAddress) }
        let viewBase = view.withUnsafeBytes(ofPlane: 0) { UInt(bitPattern: $0.baseAddress) }
        #expect(imageBase == viewBase)
        let chromaFirst = view.withUnsafeBytes(ofPlane: 1) { $0[0] }
        #expect(chromaFirst == UInt8(truncatingIfNeeded: width * height))

        view.withUnsafeMutableBytes(ofPlane: 0) { $0[0] = 0xAB }
        #expect(!view.isView)
        #expect(view.withUnsafeBytes(ofPlane: 0) { $0[0] } == 0xAB)
        #expect(image.data[0] == 0, "the received bytes never change")
    }

    @Test("length-prefixed NAL units: walked once, damage named")
    func lengthPrefixedFraming() {
        let unit = Data([0x40, 0x01, 0x0C])
        let sample = HEVCNALUnits.lengthPrefixed([unit, unit])
        #expect(HEVCNALUnits.splitLengthPrefixed(sample) == [unit, unit])
        #expect(HEVCNALUnits.walkLengthPrefixed(sample.dropLast()) != nil)
        #expect(HEVCNALUnits.walkLengthPrefixed(Data([0, 0, 0, 1, 0x40]), minimumUnitLength: 2) != nil)
        #expect(HEVCNALUnits.walkLengthPrefixed(Data([0xFF, 0xFF, 0xFF, 0xFF, 0])) != nil)
        // Two-byte lengths, as an MP4 track may use.
        #expect(HEVCNALUnits.splitLengthPrefixed(Data([0, 3]) + unit, lengthSize: 2) == [unit])
        // Indices of a slice are honoured.
        let slice = (Data([9, 9]) + sample).dropFirst(2)
        #expect(HEVCNALUnits.splitLengthPrefixed(slice) == [unit, unit])
    }

    @Test("durations convert in one place and saturate instead of trapping")
    func durationConversions() {
        #expect(Duration.milliseconds(1500).wholeMicroseconds == 1_500_000)
        #expect(Duration.microseconds(-2500).wholeMilliseconds == -2)
        #expect(Duration.seconds(2).inSeconds == 2)
        #expect(Duration.seconds(Int64.max).wholeMicroseconds == .max)
        #expect(Duration.seconds(Int64.min).wholeNanoseconds == .min)
        #expect(Duration.checkedSeconds(1e300) == nil)
        #expect(Duration.checkedSeconds(.nan) == nil)
        #expect(Duration.checkedSeconds(1.25) == .milliseconds(1250))
    }
}
