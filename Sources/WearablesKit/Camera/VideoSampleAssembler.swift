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

/// A frame or parameter set from the glasses that is larger than the stream negotiated: rejected before any
/// decoder sees it (a Linux addition; DAT code sees ``StreamError/videoStreamingError``).
///
/// The glasses may lower the resolution on their own (bandwidth adaptation), so anything up to the configured
/// ``StreamConfiguration/resolution`` in each dimension passes; anything larger is refused. After
/// ``Stream/maximumConfigurationViolations`` in one streaming period the stream stops.
public struct StreamConfigurationViolation: Error, Sendable, Hashable, CustomStringConvertible {
    /// Where the size was found.
    public enum Source: String, Sendable, Hashable {
        /// A sequence parameter set in a codec configuration message.
        case parameterSet
        /// A sequence parameter set carried inside a video sample.
        case inBandParameterSet
        /// The width and height a codec configuration message declares.
        case declaredSize
        /// A raw NV12 frame.
        case rawFrame
    }

    /// Where the size was found.
    public let source: Source
    /// The width found (the coded width for a parameter set).
    public let width: Int
    /// The height found (the coded height for a parameter set).
    public let height: Int
    /// The largest size the stream accepts.
    public let allowed: VideoFrameSize
    /// The sample's presentation time (0 for a codec configuration message).
    public let presentationTimeUs: Int64

    /// `rawFrame 2x2796192 exceeds the negotiated 504x896 (pts … µs)`.
    public var description: String {
        "\(source.rawValue) \(width)x\(height) exceeds the negotiated \(allowed) (pts \(presentationTimeUs) µs)"
    }
}

/// Why a sample was refused: malformed, or larger than the stream negotiated.
enum SampleRejection: Error, Sendable, Hashable {
    case malformed(MalformedSampleError)
    case oversized(StreamConfigurationViolation)
}

/// Turns link samples into ``VideoFrame``s: pairs HEVC samples with the latest codec configuration and checks
/// every sample's layout, so a malformed sample is rejected with a reason instead of crashing a decoder later,
/// and holds every frame and parameter set to the negotiated size, so a device cannot make the decoder allocate
/// for a picture the stream never asked for.
struct VideoSampleAssembler: Sendable {
    let codec: VideoCodec
    /// The largest frame the stream accepts: the configured resolution (the glasses may only go lower).
    let sizeLimit: VideoFrameSize
    private(set) var codecConfiguration: HEVCCodecConfiguration?

    init(codec: VideoCodec, sizeLimit: VideoFrameSize) {
        self.codec = codec
        self.sizeLimit = sizeLimit
    }

    init(configuration: StreamConfiguration) {
        self.init(codec: configuration.videoCodec, sizeLimit: configuration.resolution.videoFrameSize)
    }

    /// HEVC codes pictures in whole coding blocks (8 to 64 luma samples); the conformance window crops the rest.
    /// A coded size may exceed the displayed one by less than one 64-sample block.
    static let codingBlockSlack = 64

    /// Whether a displayed size fits the limit.
    func fits(width: Int, height: Int) -> Bool {
        width >= 0 && height >= 0 && UInt(width) <= sizeLimit.width && UInt(height) <= sizeLimit.height
    }

    /// Checks one SPS against the limit: nil when it fits, otherwise the violation (an SPS whose size cannot be
    /// read counts as malformed: its size is unknown, so it must not reach a decoder).
    func check(sequenceParameterSet unit: Data, source: StreamConfigurationViolation.Source, presentationTimeUs: Int64)
        -> SampleRejection?
    {
        guard let size = HEVCPictureSize(sequenceParameterSet: unit) else {
            return .malformed(MalformedSampleError(
                reason: "HEVC sequence parameter set whose picture size cannot be read", presentationTimeUs: presentationTimeUs))
        }
        let slack = Self.codingBlockSlack
        let codedFits = UInt(size.codedWidth) < sizeLimit.width + UInt(slack)
            && UInt(size.codedHeight) < sizeLimit.height + UInt(slack)
        guard codedFits, fits(width: size.width, height: size.height) else {
            return .oversized(StreamConfigurationViolation(
                source: source, width: size.codedWidth, height: size.codedHeight, allowed: sizeLimit,
                presentationTimeUs: presentationTimeUs))
        }
        return nil
    }

    /// Forgets the codec configuration (a new streaming period sends its own).
    mutating func reset() { codecConfiguration = nil }

    /// Records the parameter sets for the samples that follow, unless they are malformed or larger than the
    /// stream negotiated (then the samples that follow are refused until a good configuration arrives).
    mutating func configure(_ configuration: HEVCCodecConfiguration) -> SampleRejection? {
        codecConfiguration = nil
        guard !configuration.sequenceParameterSets.isEmpty, !configuration.pictureParameterSets.isEmpty,
              configuration.width > 0, configuration.height > 0
        else {
            return .malformed(MalformedSampleError(reason: "HEVC codec configuration without SPS/PPS or with no size", presentationTimeUs: 0))
        }
        guard fits(width: configuration.width, height: configuration.height) else {
            return .oversized(StreamConfigurationViolation(
                source: .declaredSize, width: configuration.width, height: configuration.height, allowed: sizeLimit,
                presentationTimeUs: 0))
        }
        for unit in configuration.sequenceParameterSets {
            if let rejection = check(sequenceParameterSet: unit, source: .parameterSet, presentationTimeUs: 0) {
                return rejection
            }
        }
        codecConfiguration = configuration
        return nil
    }

    /// The frame for `sample`, or why there is none.
    func frame(from sample: VideoSample) -> Result<VideoFrame, SampleRejection> {
        func fail(_ reason: String) -> Result<VideoFrame, SampleRejection> {
            .failure(.malformed(MalformedSampleError(reason: reason, presentationTimeUs: sample.presentationTimeUs)))
        }
        switch sample.format {
        case .hevc:
            guard codec == .hvc1 else { return fail("HEVC sample on a .raw stream") }
            guard let configuration = codecConfiguration else { return fail("HEVC sample before any codec configuration") }
            if let problem = Self.checkLengthPrefixedNALUnits(sample.payload) { return fail(problem) }
            if let rejection = checkInBandParameterSets(sample) { return .failure(rejection) }
            let hevc = HEVCSample(data: sample.payload, isKeyframe: sample.isKeyframe, codecConfiguration: configuration)
            return .success(VideoFrame(
                presentationTimeUs: sample.presentationTimeUs, content: .hevc(hevc), timing: Self.hostTiming(sample)))
        case let .nv12(width, height, lumaBytesPerRow, chromaBytesPerRow):
            guard codec == .raw else { return fail("NV12 sample on an .hvc1 stream") }
            guard fits(width: width, height: height) else {
                return .failure(.oversized(StreamConfigurationViolation(
                    source: .rawFrame, width: width, height: height, allowed: sizeLimit,
                    presentationTimeUs: sample.presentationTimeUs)))
            }
            guard let image = RawVideoImage(
                width: width, height: height, lumaBytesPerRow: lumaBytesPerRow,
                chromaBytesPerRow: chromaBytesPerRow, data: sample.payload)
            else {
                return fail("NV12 sample \(width)x\(height) (strides \(lumaBytesPerRow)/\(chromaBytesPerRow)) does not fit its \(sample.payload.count)-byte payload")
            }
            return .success(VideoFrame(
                presentationTimeUs: sample.presentationTimeUs, content: .raw(image), timing: Self.hostTiming(sample)))
        }
    }

    /// The sample's timing as a frame carries it: only when the link put all of it on the host's clock.
    static func hostTiming(_ sample: VideoSample) -> FrameTiming? {
        guard let timing = sample.timing, let received = timing.receivedUs else { return nil }
        return FrameTiming(captureUs: timing.captureUs, sentUs: timing.sentUs, receivedUs: received)
    }

    /// Checks every SPS a sample carries in band (the decoder would act on it as on an out-of-band one).
    private func checkInBandParameterSets(_ sample: VideoSample) -> SampleRejection? {
        var rejection: SampleRejection?
        let data = sample.payload
        _ = HEVCNALUnits.walkLengthPrefixed(data, minimumUnitLength: 2) { range in
            guard rejection == nil, data[range.lowerBound] >> 1 & 0x3F == HEVCNALUnits.sequenceParameterSetType else {
                return
            }
            rejection = check(
                sequenceParameterSet: data.subdata(in: range), source: .inBandParameterSet,
                presentationTimeUs: sample.presentationTimeUs)
        }
        return rejection
    }

    /// Checks that `data` is a non-empty run of 4-byte big-endian length-prefixed NAL units; returns the problem.
    static func checkLengthPrefixedNALUnits(_ data: Data) -> String? {
        guard !data.isEmpty else { return "empty HEVC sample" }
        return HEVCNALUnits.walkLengthPrefixed(data, minimumUnitLength: 2)
    }
}
