import Foundation
import GlassesVideo
import Synchronization
import WearablesKit

extension StreamRecorder {
    /// Records every codec configuration and sample the glasses send from now on.
    ///
    /// Samples are paired with the latest codec configuration, as a host would pair them, and written as frames;
    /// a sample that is not a valid frame (a simulated fault) is left out.
    /// - Parameter stampsCaptureTimes: put each HEVC sample's capture time on this machine's wall clock into it, as a
    ///   ``CaptureTimeSEI`` NAL unit (`--publish`: a stream has no link to say when a frame was captured).
    public func attach(to glasses: SimulatedGlasses, stampsCaptureTimes: Bool = false) {
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
                    var data = sample.payload
                    if stampsCaptureTimes {
                        // Captured at the glasses' clock's presentation time: as long ago as their clock has run since.
                        let sinceCaptureUs = Int64(glasses.deviceTime * 1_000_000) - sample.presentationTimeUs
                        let captured = Int64(Date().timeIntervalSince1970 * 1_000_000) - max(0, sinceCaptureUs)
                        let unit = CaptureTimeSEI.nalUnit(captureWallUs: captured, codec: .hevc)
                        var prefix = Data(count: 4)
                        prefix.withUnsafeMutableBytes { $0.storeBytes(of: UInt32(unit.count).bigEndian, as: UInt32.self) }
                        data = prefix + unit + data
                    }
                    self.record(VideoFrame(presentationTimeUs: sample.presentationTimeUs, content: .hevc(HEVCSample(
                        data: data, isKeyframe: sample.isKeyframe, codecConfiguration: current))))
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
