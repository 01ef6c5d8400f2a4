/// Linux stand-ins for DAT's `VideoFrame.makeUIImage()` and `VideoFrame.sampleBuffer`.
extension VideoFrame {
    /// The decoded NV12 image of a `.raw` frame (what `makeUIImage()` renders on iOS); nil for `.hvc1`.
    public var rawImage: RawVideoImage? {
        if case .raw(let image) = content { return image }
        return nil
    }

    /// The compressed sample and its codec configuration of an `.hvc1` frame (what `sampleBuffer` carries on iOS);
    /// nil for `.raw`.
    public var hevcSample: HEVCSample? {
        if case .hevc(let sample) = content { return sample }
        return nil
    }
}
