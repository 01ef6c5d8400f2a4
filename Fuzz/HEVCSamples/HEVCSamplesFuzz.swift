// libFuzzer target: the HEVC sample path into the decoder (built by `Scripts/fuzz HEVCSamples SECONDS`).
//
// The input is a flags byte and then an Annex B stream. Its parameter sets (VPS/SPS/PPS) become the codec
// configuration of the samples that follow them; until the input brings its own, a fixed valid configuration (the
// 64×64 stream committed as corpus/stream-64x64-nv12) is used, so that mutated slice bytes meet a real decoder state.
// The other NAL units are grouped into pictures (a new sample at each first slice segment), length-prefixed as the
// glasses send them, and given to `VideoFrameDecoder.decode` as `VideoFrame`s with rising timestamps; at the end
// the decoder is flushed. Flags: bits 0–1 the output format (420v, 420f, BGRA, 420v); bit 2: each Annex B unit
// is taken verbatim as a whole sample's bytes (so the length prefixes themselves are fuzzed); bit 3: every sample
// is marked a keyframe whatever its NAL types say; bits 4–5: the timestamp step (33 ms, 0, backwards, 3 s).
//
// Checks: every failure is a `VideoCodecError` (typed throws) with a code `decode`/`flush` document
// (`videoStreamingError`, `decodeFailed`) and a message; every picture is non-empty, at most 8192 on a side, with
// the planes of its format inside its storage (AddressSanitizer checks the reads); the statistics add up (samples
// received, pictures returned, skipped samples).
import Foundation
import GlassesMedia
import GlassesVideo

@_cdecl("LLVMFuzzerTestOneInput")
public func hevcSamplesFuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    HEVCSamplesFuzz.run(Data(UnsafeRawBufferPointer(start: data, count: size)))
    return 0
}

enum HEVCSamplesFuzz {
    static func check(_ condition: Bool, _ message: @autoclosure () -> String) {
        if !condition { fatalError("property failed: \(message())") }
    }

    /// The parameter sets of the committed 64×64 stream (ffmpeg testsrc, libx265 ultrafast, keyint 3). Made per
    /// input rather than kept in a global (LeakSanitizer reports a global's lazily made `Data` as leaked).
    static func fixedConfiguration() -> HEVCCodecConfiguration {
        HEVCNALUnits.configuration(
            parameterSets: [
                Data([
                    0x40, 0x01, 0x0c, 0x01, 0xff, 0xff, 0x01, 0x60, 0x00, 0x00, 0x03, 0x00, 0x90, 0x00, 0x00, 0x03,
                    0x00, 0x00, 0x03, 0x00, 0x1e, 0x95, 0x94, 0x09,
                ]),
                Data([
                    0x42, 0x01, 0x01, 0x01, 0x60, 0x00, 0x00, 0x03, 0x00, 0x90, 0x00, 0x00, 0x03, 0x00, 0x00, 0x03,
                    0x00, 0x1e, 0xa0, 0x20, 0x81, 0x05, 0x96, 0x56, 0x54, 0xa4, 0xc2, 0xf0, 0x16, 0x80, 0x80, 0x00,
                    0x00, 0x03, 0x00, 0x80, 0x00, 0x00, 0x0f, 0x04,
                ]),
                Data([0x44, 0x01, 0xc0, 0x73, 0xc0, 0x89]),
            ], width: 64, height: 64)
    }

    static let formats: [PixelFormat] = [.nv12VideoRange, .nv12FullRange, .bgra32, .nv12VideoRange]
    static let maximumSamples = 48

    static func run(_ input: Data) {
        guard let flags = input.first else { return }
        let decoder: VideoFrameDecoder
        do {
            decoder = try VideoFrameDecoder(outputFormat: formats[Int(flags & 3)])
        } catch {
            fatalError("the decoder does not open: \(error)")
        }
        let units = HEVCNALUnits.splitAnnexB(input.dropFirst())
        let verbatim = flags & 4 != 0
        let allKeyframes = flags & 8 != 0
        let step: Int64 = [33_333, 0, -33_333, 3_000_000][Int(flags >> 4) & 3]

        var configuration = fixedConfiguration()
        var pending: [Data] = []  // parameter sets seen since the last complete configuration
        var picture: [Data] = []
        var time: Int64 = 0
        var samples = 0
        var pictures = 0

        func submit(_ data: Data) {
            guard samples < maximumSamples else { return }
            samples += 1
            let types = (HEVCNALUnits.splitLengthPrefixed(data) ?? []).compactMap(HEVCNALUnits.type(of:))
            let keyframe = allKeyframes || types.contains(where: HEVCNALUnits.isRandomAccessPoint(type:))
            let frame = VideoFrame(
                presentationTimeUs: time,
                content: .hevc(HEVCSample(data: data, isKeyframe: keyframe, codecConfiguration: configuration)))
            time = time &+ step
            do {
                let decoded = try decoder.decode(frame)
                pictures += decoded.count
                decoded.forEach(checkPicture)
            } catch {
                checkError(error, "decode")
            }
        }
        func endPicture() {
            guard !picture.isEmpty else { return }
            submit(HEVCNALUnits.lengthPrefixed(picture))
            picture = []
        }

        for unit in units {
            if verbatim {
                submit(unit)
                continue
            }
            guard let type = HEVCNALUnits.type(of: unit) else {
                picture.append(unit)  // a broken header: the decoder must count it corrupt
                continue
            }
            if HEVCNALUnits.isParameterSet(type: type) {
                endPicture()
                pending.append(unit)
                if type == HEVCNALUnits.pictureParameterSetType {
                    configuration = HEVCNALUnits.configuration(
                        parameterSets: pending, width: configuration.width, height: configuration.height)
                    pending = []
                }
                continue
            }
            // A VCL unit whose first_slice_segment_in_pic_flag is set starts a new picture.
            let startsPicture = type < 32 && unit.count > 2 && unit[unit.startIndex + 2] & 0x80 != 0
            if startsPicture && picture.contains(where: { (HEVCNALUnits.type(of: $0) ?? 63) < 32 }) { endPicture() }
            picture.append(unit)
        }
        endPicture()
        do {
            let drained = try decoder.flush()
            pictures += drained.count
            drained.forEach(checkPicture)
        } catch {
            checkError(error, "flush")
        }
        let statistics = decoder.statistics
        if getenv("FUZZ_DEBUG") != nil { print("samples \(samples), pictures \(pictures), \(statistics)") }
        check(statistics.framesReceived == samples, "framesReceived \(statistics.framesReceived) of \(samples)")
        check(statistics.hevcSamples == samples && statistics.rawImages == 0, "sample counts \(statistics)")
        check(statistics.decodedPictures == pictures, "decodedPictures \(statistics.decodedPictures), returned \(pictures)")
        check(statistics.skippedUntilKeyframe <= samples, "skipped \(statistics.skippedUntilKeyframe) of \(samples)")
    }

    static func checkError(_ error: VideoCodecError, _ call: String) {
        check(
            error.code == .videoStreamingError || error.code == .decodeFailed,
            "\(call) threw an undocumented code: \(error)")
        check(!error.message.isEmpty, "\(call) threw an error without a message")
    }

    static func checkPicture(_ frame: DecodedVideoFrame) {
        let buffer = frame.pixelBuffer
        check(buffer.width > 0 && buffer.height > 0, "an empty picture \(buffer.width)x\(buffer.height)")
        check(buffer.width <= 8192 && buffer.height <= 8192, "a picture of \(buffer.width)x\(buffer.height)")
        check(buffer.planes.count == (buffer.format == .bgra32 ? 1 : 2), "\(buffer.planes.count) planes for \(buffer.format)")
        for plane in buffer.planes {
            let end = plane.offset + plane.bytesPerRow * plane.height
            check(end <= buffer.byteCount, "a plane beyond its storage")
        }
        // Touch the bytes (AddressSanitizer checks the reads).
        var sum = 0
        for index in buffer.planes.indices {
            buffer.withUnsafeBytes(ofPlane: index) { bytes in
                if let first = bytes.first, let last = bytes.last { sum &+= Int(first) &+ Int(last) }
            }
        }
        _ = sum
    }
}
