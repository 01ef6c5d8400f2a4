// This file builds only where CoreMedia and Meta's MWDATCamera exist (an iOS app built with Xcode, see
// Relay/iOS/README.md); on Linux the #if below removes it from the build, and RelayFrameAdapter+WearablesKit.swift is
// the adapter there. The default test suite type-checks it against stand-in CoreMedia, CoreVideo and DAT modules
// (AppleSurfaceTests); it was never compiled against Apple's SDK. It holds no logic beyond reading a CMSampleBuffer
// into the relay's layouts.
#if canImport(CoreMedia) && canImport(MWDATCamera)
    import AVFAudio
    import CoreMedia
    import CoreVideo
    import Foundation
    import MWDATCamera

    /// Reads DAT video frames (CMSampleBuffers) into the relay's layouts.
    public enum RelayFrameAdapter {
        /// An `hvc1` sample buffer as its length-prefixed access unit and parameter sets, or a `420v` pixel buffer
        /// as NV12 planes; nil for anything else. The capture time is left nil: DAT does not document the clock
        /// of its presentation times, so the relay's receive time stands in for it.
        @Sendable
        public static func read(_ frame: VideoFrame) -> RelayVideoFrame? {
            let buffer = frame.sampleBuffer
            let time = CMTimeConvertScale(
                CMSampleBufferGetPresentationTimeStamp(buffer), timescale: 1_000_000, method: .default)
            let presentationTimeUs = time.isValid ? time.value : 0
            if let image = CMSampleBufferGetImageBuffer(buffer) {
                return nv12(image).map { RelayVideoFrame(presentationTimeUs: presentationTimeUs, content: $0) }
            }
            guard let block = CMSampleBufferGetDataBuffer(buffer),
                  let description = CMSampleBufferGetFormatDescription(buffer),
                  let sets = parameterSets(description) else { return nil }
            let length = CMBlockBufferGetDataLength(block)
            var data = Data(count: length)
            let status = data.withUnsafeMutableBytes { bytes in
                CMBlockBufferCopyDataBytes(block, atOffset: 0, dataLength: length, destination: bytes.baseAddress!)
            }
            guard status == kCMBlockBufferNoErr else { return nil }
            return RelayVideoFrame(
                presentationTimeUs: presentationTimeUs,
                content: .hevc(accessUnit: data, isKeyframe: isKeyframe(buffer), parameterSets: sets))
        }

        /// DAT's audio (an `AVAudioPCMBuffer` of Float32, "the buffer says what it actually is": interleaved or not)
        /// as samples per channel, with its presentation time in microseconds; nil for a buffer that is not Float32.
        @Sendable
        public static func readAudio(_ frame: AudioFrame) -> RelayAudioFrame? {
            let buffer = frame.pcmBuffer
            guard let data = buffer.floatChannelData else { return nil }
            let frames = Int(buffer.frameLength), count = Int(buffer.format.channelCount)
            let rate = buffer.format.sampleRate
            guard count >= 1, rate.isFinite, rate >= 1, rate <= 1_000_000 else { return nil }
            let channels: [[Float]]
            if buffer.format.isInterleaved {
                // One pointer to frames × channels samples, `stride` apart per frame.
                let stride = buffer.stride
                channels = (0 ..< count).map { c in (0 ..< frames).map { data[0][$0 * stride + c] } }
            } else {
                channels = (0 ..< count).map { c in Array(UnsafeBufferPointer(start: data[c], count: frames)) }
            }
            let time = CMTimeConvertScale(frame.presentationTimeStamp, timescale: 1_000_000, method: .default)
            return RelayAudioFrame(presentationTimeUs: time.isValid ? time.value : 0, sampleRate: UInt(rate), channels: channels)
        }

        private static func isKeyframe(_ buffer: CMSampleBuffer) -> Bool {
            guard let attachments = CMSampleBufferGetSampleAttachmentsArray(buffer, createIfNecessary: false)
                    as? [[CFString: Any]], let first = attachments.first else { return true }
            return (first[kCMSampleAttachmentKey_NotSync] as? Bool) != true
        }

        private static func parameterSets(_ description: CMFormatDescription) -> RelayParameterSets? {
            var count = 0
            guard CMVideoFormatDescriptionGetHEVCParameterSetAtIndex(
                description, parameterSetIndex: 0, parameterSetPointerOut: nil, parameterSetSizeOut: nil,
                parameterSetCountOut: &count, nalUnitHeaderLengthOut: nil) == noErr else { return nil }
            var vps: [Data] = [], sps: [Data] = [], pps: [Data] = []
            for index in 0..<count {
                var pointer: UnsafePointer<UInt8>?
                var size = 0
                guard CMVideoFormatDescriptionGetHEVCParameterSetAtIndex(
                    description, parameterSetIndex: index, parameterSetPointerOut: &pointer,
                    parameterSetSizeOut: &size, parameterSetCountOut: nil, nalUnitHeaderLengthOut: nil) == noErr,
                    let pointer, size > 0 else { return nil }
                let unit = Data(bytes: pointer, count: size)
                switch (unit[unit.startIndex] >> 1) & 0x3F {
                case 32: vps.append(unit)
                case 33: sps.append(unit)
                case 34: pps.append(unit)
                default: break
                }
            }
            let dimensions = CMVideoFormatDescriptionGetDimensions(description)
            return RelayParameterSets(vps: vps, sps: sps, pps: pps, width: Int(dimensions.width),
                                      height: Int(dimensions.height))
        }

        private static func nv12(_ image: CVPixelBuffer) -> RelayVideoFrame.Content? {
            guard CVPixelBufferGetPlaneCount(image) == 2 else { return nil }
            CVPixelBufferLockBaseAddress(image, .readOnly)
            defer { CVPixelBufferUnlockBaseAddress(image, .readOnly) }
            let width = CVPixelBufferGetWidth(image)
            let height = CVPixelBufferGetHeight(image)
            var data = Data()
            var strides: [Int] = []
            for plane in 0..<2 {
                guard let base = CVPixelBufferGetBaseAddressOfPlane(image, plane) else { return nil }
                let stride = CVPixelBufferGetBytesPerRowOfPlane(image, plane)
                let rows = CVPixelBufferGetHeightOfPlane(image, plane)
                strides.append(stride)
                data.append(base.assumingMemoryBound(to: UInt8.self), count: stride * rows)
            }
            return .nv12(width: width, height: height, lumaBytesPerRow: strides[0], chromaBytesPerRow: strides[1],
                         data: data)
        }
    }
#endif
