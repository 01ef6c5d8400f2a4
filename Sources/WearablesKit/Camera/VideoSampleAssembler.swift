import Foundation

/// Why a video sample from the link could not become a ``VideoFrame``.
public struct MalformedSampleError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What was wrong with the sample.
    public let reason: String
    /// The sample's presentation time.
    public let presentationTimeUs: Int64

    /// `reason (pts …)`.
    public var description: String { "\(reason) (pts \(presentationTimeUs) µs)" }
}

/// Turns link samples into ``VideoFrame``s: pairs HEVC samples with the latest codec configuration and checks
/// every sample's layout, so a malformed sample is rejected with a reason instead of crashing a decoder later.
struct VideoSampleAssembler: Sendable {
    let codec: VideoCodec
    private(set) var codecConfiguration: HEVCCodecConfiguration?

    init(codec: VideoCodec) {
        self.codec = codec
    }

    /// Forgets the codec configuration (a new streaming period sends its own).
    mutating func reset() { codecConfiguration = nil }

    /// Records the parameter sets for the samples that follow.
    mutating func configure(_ configuration: HEVCCodecConfiguration) -> MalformedSampleError? {
        guard !configuration.sequenceParameterSets.isEmpty, !configuration.pictureParameterSets.isEmpty,
              configuration.width > 0, configuration.height > 0
        else {
            codecConfiguration = nil
            return MalformedSampleError(reason: "HEVC codec configuration without SPS/PPS or with no size", presentationTimeUs: 0)
        }
        codecConfiguration = configuration
        return nil
    }

    /// The frame for `sample`, or why there is none.
    func frame(from sample: VideoSample) -> Result<VideoFrame, MalformedSampleError> {
        func fail(_ reason: String) -> Result<VideoFrame, MalformedSampleError> {
            .failure(MalformedSampleError(reason: reason, presentationTimeUs: sample.presentationTimeUs))
        }
        switch sample.format {
        case .hevc:
            guard codec == .hvc1 else { return fail("HEVC sample on a .raw stream") }
            guard let configuration = codecConfiguration else { return fail("HEVC sample before any codec configuration") }
            if let problem = Self.checkLengthPrefixedNALUnits(sample.payload) { return fail(problem) }
            let hevc = HEVCSample(data: sample.payload, isKeyframe: sample.isKeyframe, codecConfiguration: configuration)
            return .success(VideoFrame(presentationTimeUs: sample.presentationTimeUs, content: .hevc(hevc)))
        case let .nv12(width, height, lumaBytesPerRow, chromaBytesPerRow):
            guard codec == .raw else { return fail("NV12 sample on an .hvc1 stream") }
            guard let image = RawVideoImage(
                width: width, height: height, lumaBytesPerRow: lumaBytesPerRow,
                chromaBytesPerRow: chromaBytesPerRow, data: sample.payload)
            else {
                return fail("NV12 sample \(width)x\(height) (strides \(lumaBytesPerRow)/\(chromaBytesPerRow)) does not fit its \(sample.payload.count)-byte payload")
            }
            return .success(VideoFrame(presentationTimeUs: sample.presentationTimeUs, content: .raw(image)))
        }
    }

    /// Checks that `data` is a non-empty run of 4-byte big-endian length-prefixed NAL units; returns the problem.
    static func checkLengthPrefixedNALUnits(_ data: Data) -> String? {
        guard !data.isEmpty else { return "empty HEVC sample" }
        return HEVCNALUnits.walkLengthPrefixed(data, minimumUnitLength: 2)
    }
}
