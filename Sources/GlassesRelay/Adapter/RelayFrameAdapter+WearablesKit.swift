// The relay's platform adapter where DAT is WearablesKit (Linux): a `VideoFrame` already holds the link protocol's
// layouts. The iOS counterpart, RelayFrameAdapter+CoreMedia.swift, reads a CMSampleBuffer instead; exactly one of
// the two compiles on any platform.
#if !canImport(CoreMedia)
    import WearablesKit

    /// Reads DAT video frames into the relay's layouts.
    public enum RelayFrameAdapter {
        /// An HEVC sample with its parameter sets, or a raw NV12 image, as the link protocol carries them; the
        /// bytes are not copied (`Data` shares its storage).
        @Sendable
        public static func read(_ frame: VideoFrame) -> RelayVideoFrame? {
            var read = content(of: frame)
            // WearablesKit's frame timing is on the clock of the relay's own link to the glasses: the relay's clock.
            read?.captureUs = frame.timing?.captureUs
            return read
        }

        /// DAT's audio as the relay carries it: the samples per channel, the rate, the presentation time (already
        /// in microseconds on the video's clock).
        @Sendable
        public static func readAudio(_ frame: AudioFrame) -> RelayAudioFrame? {
            let buffer = frame.pcmBuffer
            let channels = (0 ..< Int(buffer.format.channelCount)).map { buffer.samples(channel: $0) }
            guard !channels.isEmpty, buffer.format.sampleRate.isFinite, buffer.format.sampleRate >= 1,
                  buffer.format.sampleRate <= 1_000_000 else { return nil }
            return RelayAudioFrame(presentationTimeUs: frame.presentationTimeUs, sampleRate: UInt(buffer.format.sampleRate),
                                   channels: channels)
        }

        private static func content(of frame: VideoFrame) -> RelayVideoFrame? {
            switch frame.content {
            case .hevc(let sample):
                let configuration = sample.codecConfiguration
                let sets = RelayParameterSets(
                    vps: configuration.videoParameterSets, sps: configuration.sequenceParameterSets,
                    pps: configuration.pictureParameterSets, width: configuration.width, height: configuration.height)
                return RelayVideoFrame(
                    presentationTimeUs: frame.presentationTimeUs,
                    content: .hevc(accessUnit: sample.data, isKeyframe: sample.isKeyframe, parameterSets: sets))
            case .raw(let image):
                return RelayVideoFrame(
                    presentationTimeUs: frame.presentationTimeUs,
                    content: .nv12(width: image.width, height: image.height, lumaBytesPerRow: image.lumaBytesPerRow,
                                   chromaBytesPerRow: image.chromaBytesPerRow, data: image.data))
            }
        }
    }
#endif
