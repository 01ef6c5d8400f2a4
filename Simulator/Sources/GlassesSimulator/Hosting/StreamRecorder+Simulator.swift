import GlassesVideo
import Synchronization
import WearablesKit

extension StreamRecorder {
    /// Records every codec configuration and sample the glasses send from now on.
    ///
    /// Samples are paired with the latest codec configuration, as a host would pair them, and written as frames;
    /// a sample that is not a valid frame (a simulated fault) is left out.
    public func attach(to glasses: SimulatedGlasses) {
        let configuration = Mutex<HEVCCodecConfiguration?>(nil)
        glasses.setSampleObserver { [weak self] message in
            guard let self else { return }
            switch message {
            case .codecConfiguration(let latest):
                configuration.withLock { $0 = latest }
            case .videoSample(let sample):
                switch sample.format {
                case .hevc:
                    guard let current = configuration.withLock({ $0 }) else { return }
                    self.record(VideoFrame(presentationTimeUs: sample.presentationTimeUs, content: .hevc(HEVCSample(
                        data: sample.payload, isKeyframe: sample.isKeyframe, codecConfiguration: current))))
                case let .nv12(width, height, lumaBytesPerRow, chromaBytesPerRow):
                    guard let image = RawVideoImage(
                        width: width, height: height, lumaBytesPerRow: lumaBytesPerRow,
                        chromaBytesPerRow: chromaBytesPerRow, data: sample.payload)
                    else { return }
                    self.record(VideoFrame(presentationTimeUs: sample.presentationTimeUs, content: .raw(image)))
                }
            default:
                return
            }
        }
    }
}
