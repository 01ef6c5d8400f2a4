// A typecheck-only stand-in for Meta's MWDATCamera: the DAT 1.0 camera surface of `../shared/reference/dat-sdk.md`
// §1.6–1.8, declarations only (see MWDATCore.swift). Left out, because this machine has no CoreMedia, UIKit or
// AVFoundation: `VideoFrame.sampleBuffer: CMSampleBuffer`, `VideoFrame.makeUIImage()` and `AudioFrame`'s members;
// only the relay's iOS adapter file (not part of this check) reads them.
import Foundation
import MWDATCore

extension DeviceSession {
    public func addCamera(config: StreamConfiguration = StreamConfiguration()) throws(DeviceSessionError) -> Camera? {
        fatalError("surface only")
    }
}

@frozen public enum CameraState: Sendable { case starting, started, stopping, stopped }

public final class Camera: Sendable {
    public let stream: Stream
    public let photo: Photo
    public var state: CameraState { fatalError("surface only") }
    public var statePublisher: any Announcer<CameraState> { fatalError("surface only") }
    public func stop() { fatalError("surface only") }
    private init() { fatalError("surface only") }
}

public final class Stream: Sendable {
    public let streamConfiguration: StreamConfiguration
    public var state: StreamState { fatalError("surface only") }
    public var statePublisher: any Announcer<StreamState> { fatalError("surface only") }
    public var videoFramePublisher: any Announcer<VideoFrame> { fatalError("surface only") }
    public var audioFramePublisher: any Announcer<AudioFrame> { fatalError("surface only") }
    public var photoDataPublisher: any Announcer<PhotoData> { fatalError("surface only") }
    public var errorPublisher: any Announcer<StreamError> { fatalError("surface only") }
    public func start() { fatalError("surface only") }
    public func stop() { fatalError("surface only") }
    @discardableResult public func capturePhoto(format: PhotoCaptureFormat) -> Bool { fatalError("surface only") }
    private init() { fatalError("surface only") }
}

public enum VideoCodec: Sendable { case raw, hvc1 }
@frozen public enum AudioSampleRate: UInt, Sendable, CaseIterable { case rate16000, rate44100, rate48000 }
public enum AudioCodec: Sendable { case pcm(sampleRate: AudioSampleRate, numberOfChannels: UInt32) }
public struct VideoFrameSize: Sendable {
    public let width: UInt
    public let height: UInt
}
public enum StreamingResolution: Sendable, CaseIterable {
    case high, medium, low
    public var videoFrameSize: VideoFrameSize { fatalError("surface only") }
}
public struct StreamConfiguration: Sendable {
    public let videoCodec: VideoCodec
    public let audioCodec: AudioCodec?
    public let resolution: StreamingResolution
    public let frameRate: UInt
    public init(videoCodec: VideoCodec, audioCodec: AudioCodec?, resolution: StreamingResolution, frameRate: UInt) {
        fatalError("surface only")
    }
    public init(videoCodec: VideoCodec, resolution: StreamingResolution, frameRate: UInt) { fatalError("surface only") }
    public init() { fatalError("surface only") }
}
@frozen public enum StreamState: Sendable { case stopping, stopped, waitingForDevice, starting, streaming, paused }
public enum StreamError: DatError, Equatable {
    case internalError, deviceNotFound(DeviceIdentifier), deviceNotConnected(DeviceIdentifier), timeout,
         videoStreamingError, audioStreamingError, permissionDenied, hingesClosed, thermalHot, batteryLow,
         peakPowerLimit, photoCaptureFailed
}
public struct VideoFrame: Sendable {}
public struct AudioFrame: Sendable {}
public enum PhotoCaptureFormat: Sendable { case heic, jpeg }
public struct PhotoData: Sendable {
    public let data: Data
    public let format: PhotoCaptureFormat
}

// §1.7 (experimental) standalone photo, reachable as `camera.photo`.
public enum PhotoState: Sendable { case stopped, starting, started, stopping }
public enum PhotoResolution: Sendable { case small, medium, large, full }
public enum PhotoQuality: Sendable { case low, medium, high }
public final class Photo: Sendable {
    public func start() { fatalError("surface only") }
    public func stop() { fatalError("surface only") }
    public func capturePhoto(resolution: PhotoResolution = .medium, quality: PhotoQuality = .medium) {
        fatalError("surface only")
    }
    private init() { fatalError("surface only") }
}
