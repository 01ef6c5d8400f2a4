import Foundation
import GlassesVideo
import WearablesKit

// DAT 1.0's standalone photo: after the capture delay, a JPEG of what the camera shows at the requested resolution,
// sent to the host in chunks paced like a transfer over the glasses' radio.
extension SimulatedGlasses {
    /// Bytes per photo chunk.
    static let standalonePhotoChunkBytes = 64 << 10
    /// Time between chunks: 64 KiB every 30 ms is about 2 MB a second, so a full-resolution photo takes about the
    /// second Meta's sample app says a transfer is "supposed to" take.
    static let standalonePhotoChunkInterval: Duration = .milliseconds(30)
    /// How long a refused capture takes to fail (Meta's sample app: a running stream makes a standalone photo "fail
    /// in about 100 ms").
    static let standalonePhotoRefusalDelay: Duration = .milliseconds(100)

    /// The JPEG quality (1…100) for DAT's quality classes.
    static func jpegQuality(_ quality: PhotoQuality) -> Int {
        switch quality {
        case .low: 50
        case .medium: 75
        case .high: 92
        }
    }

    func refuseStandalonePhoto(requestID: UInt32, message: String) {
        scheduler.schedule(after: Self.standalonePhotoRefusalDelay) { [weak self] in
            guard let self else { return }
            let link = state.withLock { $0.link }
            log("standalone photo \(requestID) refused: \(message)")
            link?.send(.photoCapability(.captureFailed(requestID: requestID, .captureFailure, message: message)))
        }
    }

    func takeStandalonePhoto(_ resolution: PhotoResolution, _ quality: PhotoQuality, requestID: UInt32) {
        let generation = state.withLock { $0.standalonePhotoGeneration }
        scheduler.schedule(after: options.photoCaptureDelay) { [weak self] in
            self?.captureStandalonePhoto(resolution, quality, requestID: requestID, generation: generation)
        }
    }

    private func captureStandalonePhoto(_ resolution: PhotoResolution, _ quality: PhotoQuality, requestID: UInt32,
                                        generation: UInt64) {
        let (feed, feedScene, current) = state.withLock { s in
            (s.feed, s.feedScene, s.standalonePhotoGeneration == generation)
        }
        guard current else { return }
        let time = deviceTime
        let image: RawVideoImage
        if case .videoFile(let file) = feed {
            // A file feed is photographed at its own size (the frame last read), not scaled.
            do { image = try file.currentImage() } catch {
                refuseStandalonePhoto(requestID: requestID, message: "no frame from the video feed: \(error.message)")
                apply("standalone photo failed") { $0.standalonePhotoSent(requestID: requestID) }
                return
            }
        } else {
            let size = resolution.pixelSize
            image = render(feed: feed, feedScene: feedScene, time: time, width: size.width, height: size.height)
        }
        let jpeg = JPEGEncoder.encode(image, quality: Self.jpegQuality(quality))
        let metadata = Data(
            """
            {"format":"jpeg","width":\(image.width),"height":\(image.height),"quality":"\(quality.rawValue)",\
            "deviceTime":\(String(format: "%.3f", time))}
            """.utf8)
        log("standalone photo \(requestID): \(image.width)x\(image.height) \(quality.rawValue), \(jpeg.count) bytes")
        state.withLock { $0.stats.photosDelivered += 1 }
        sendStandalonePhotoChunk(jpeg, metadata: metadata, offset: 0, requestID: requestID, generation: generation)
    }

    private func sendStandalonePhotoChunk(_ jpeg: Data, metadata: Data, offset: Int, requestID: UInt32, generation: UInt64) {
        let link = state.withLock { s -> (any HostLink)? in
            s.standalonePhotoGeneration == generation ? s.link : nil
        }
        guard let link else { return }
        let end = min(jpeg.count, offset + Self.standalonePhotoChunkBytes)
        link.send(.photoChunk(PhotoChunk(
            requestID: requestID, totalBytes: UInt64(jpeg.count), offset: UInt64(offset),
            bytes: jpeg.subdata(in: offset ..< end), metadata: offset == 0 ? metadata : nil)))
        guard end < jpeg.count else {
            apply("standalone photo \(requestID) sent") { $0.standalonePhotoSent(requestID: requestID) }
            return
        }
        scheduler.schedule(after: Self.standalonePhotoChunkInterval) { [weak self] in
            self?.sendStandalonePhotoChunk(jpeg, metadata: metadata, offset: end, requestID: requestID, generation: generation)
        }
    }
}
