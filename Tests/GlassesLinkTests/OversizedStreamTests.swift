import Foundation
import Synchronization
import Testing
import WearablesKit

@testable import GlassesLink
@testable import GlassesLinkCore

/// Glasses at the far end of an in-process link that stream whatever they are told to, whatever was negotiated.
private final class OversizingGlasses: Sendable {
    enum Payload: Sendable {
        /// An 8192x4320 SPS in the codec configuration, then HEVC samples that would need it.
        case hugeParameterSet
        /// Raw NV12 frames of 2 x 2 796 192.
        case giantRawFrames
    }

    let link: any HostLink
    let payload: Payload

    init(link: any HostLink, payload: Payload) {
        self.link = link
        self.payload = payload
    }

    func open() {
        // Weakly: the link end holds this handler, and the glasses hold the link end.
        link.open { [weak self] event in
            guard let self, case .message(let message) = event else { return }
            self.respond(to: message)
        }
    }

    private func respond(to message: HostMessage) {
        switch message {
        case .hello:
            link.send(.hello(Fixtures.info))
            link.send(.deviceState(DeviceState()))
        case .startSession:
            link.send(.session(.started))
        case .startStream(let configuration, _):
            link.send(.stream(.starting(configuration)))
            if payload == .hugeParameterSet {
                link.send(.codecConfiguration(HEVCCodecConfiguration(
                    videoParameterSets: [Data([0x40, 0x01, 0x0C])],
                    sequenceParameterSets: [SyntheticSPS.make(width: 8192, height: 4320)],
                    pictureParameterSets: [Data([0x44, 0x01, 0xC0])], width: 504, height: 896)))
            }
            link.send(.stream(.streaming(configuration)))
            for index in 0 ..< 5 { link.send(.videoSample(sample(index))) }
        case .stopStream:
            link.send(.stream(.stopped))
        default:
            break
        }
    }

    private func sample(_ index: Int) -> VideoSample {
        let pts = Int64(index) * 33_333
        switch payload {
        case .hugeParameterSet:
            return VideoSample(
                presentationTimeUs: pts, isKeyframe: index == 0, format: .hevc,
                payload: Data([0, 0, 0, 3, 0x26, 0x01, 0xAF]))
        case .giantRawFrames:
            let (width, height) = (2, 2_796_192)
            return VideoSample(
                presentationTimeUs: pts, isKeyframe: true,
                format: .nv12(width: width, height: height, lumaBytesPerRow: width, chromaBytesPerRow: width),
                payload: Data(count: width * height * 3 / 2))
        }
    }
}

@Suite("Oversized streams over the in-process link")
struct OversizedStreamTests {
    @Test("nothing larger than 504x896 reaches the consumer (the decoder); the counter and the error show it",
          arguments: [(VideoCodec.hvc1, true), (VideoCodec.raw, false)])
    func oversized(codec: VideoCodec, parameterSet: Bool) throws {
        let scheduler = ManualScheduler()
        let wearables = Wearables.makeInstance(configuration: try WearablesConfiguration(scheduler: scheduler))
        let link = InProcessLink(scheduler: scheduler, initialCredit: 16, liveness: .disabled)
        let glasses = OversizingGlasses(link: link.device, payload: parameterSet ? .hugeParameterSet : .giantRawFrames)
        glasses.open()
        wearables.attach(link: link.host, pairingToken: nil)
        scheduler.runUntilIdle()
        let session = try wearables.createSession(deviceSelector: SpecificDeviceSelector(device: Fixtures.info.identifier))
        try session.start()
        scheduler.runUntilIdle()
        let camera = try #require(try session.addCamera(config: StreamConfiguration(videoCodec: codec, resolution: .medium, frameRate: 30)))
        let decoderInput = Mutex<[VideoFrame]>([])
        let errors = Mutex<[StreamError]>([])
        let frameToken = camera.stream.videoFramePublisher.listen { frame in decoderInput.withLock { $0.append(frame) } }
        let errorToken = camera.stream.errorPublisher.listen { error in errors.withLock { $0.append(error) } }
        camera.stream.start()
        scheduler.runUntilIdle()

        #expect(decoderInput.withLock { $0.isEmpty }, "no frame may reach the decoder")
        let counters = camera.stream.sampleCounters
        #expect(counters.delivered == 0)
        if parameterSet {
            // The configuration is refused (one violation); the samples that depend on it are malformed.
            #expect(counters.oversized == 1)
            #expect(counters.malformed >= 1)
            #expect(camera.stream.lastConfigurationViolation?.source == .parameterSet)
            #expect(camera.stream.lastConfigurationViolation?.width == 8192)
        } else {
            #expect(counters.oversized == UInt64(Stream.maximumConfigurationViolations), "counted until the stream stops")
            #expect(camera.stream.lastConfigurationViolation?.source == .rawFrame)
            #expect(camera.stream.state == .stopped, "repeated violations end the stream")
        }
        // Reported once per period: the configuration (while starting) and the samples (once streaming) may be two.
        #expect(!errors.withLock { $0 }.isEmpty && errors.withLock { $0 }.allSatisfy { $0 == .videoStreamingError })
        withExtendedLifetime((frameToken, errorToken, glasses, link)) {}
    }
}
