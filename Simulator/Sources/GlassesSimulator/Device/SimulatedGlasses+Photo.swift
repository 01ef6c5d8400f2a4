import Foundation
import GlassesVideo
import WearablesKit

// Photos: a capture request is answered after the capture delay with a JPEG of what the camera shows then.
extension SimulatedGlasses {
    /// Schedules the delivery of the photo the host asked for with `requestID`.
    func schedulePhoto(requestID: UInt32) {
        let time = deviceTime
        scheduler.schedule(after: options.photoCaptureDelay) { [weak self] in
            self?.deliverPhoto(requestID: requestID, at: time)
        }
    }

    private func deliverPhoto(requestID: UInt32, at time: Double) {
        let (feed, feedScene, stillWanted) = state.withLock { s in
            (s.feed, s.feedScene, s.core.currentConfiguration != nil)
        }
        guard stillWanted else { return }
        let dropped = state.withLock { s -> Bool in
            defer { s.faults.dropNextPhoto = false }
            return s.faults.dropNextPhoto
        }
        if dropped {
            // Video resumes as after a delivered photo; only the photo itself is never sent.
            log("photo withheld (dropPhoto fault)")
            let actions = state.withLock { s in
                Array(s.core.photoDelivered(PhotoData(data: Data(), format: .jpeg), requestID: requestID).dropFirst())
            }
            perform(actions)
            return
        }
        let w = Int(options.photoSize.width), h = Int(options.photoSize.height)
        let image: RawVideoImage
        if case .videoFile(let file) = feed {
            // A file feed is photographed at its own size (the frame last streamed), not scaled.
            do { image = try file.currentImage() } catch {
                log("photo from the video feed failed: \(error.message)")
                let actions = state.withLock { $0.core.photoFailed(message: "no frame from the video feed: \(error.message)") }
                perform(actions)
                return
            }
        } else {
            image = render(feed: feed, feedScene: feedScene, time: time, width: w, height: h)
        }
        var jpeg = JPEGEncoder.encode(image, quality: options.photoQuality)
        let (corrupt, stall) = state.withLock { s in
            defer {
                s.faults.corruptNextPhoto = false
                s.faults.stallAfterNextPhoto = false
            }
            return (s.faults.corruptNextPhoto, s.faults.stallAfterNextPhoto)
        }
        if corrupt { Self.damage(&jpeg) }
        let actions = state.withLock { s in
            s.stats.photosDelivered += 1
            // A stalled camera keeps claiming to stream: the zombie fault holds the samples back from here on.
            if stall { s.faults.zombie = true }
            return s.core.photoDelivered(PhotoData(data: jpeg, format: .jpeg), requestID: requestID)
        }
        log("photo delivered (\(jpeg.count) bytes\(corrupt ? ", damaged: corruptPhoto fault" : "")\(stall ? ", video stalls: stallAfterPhoto fault" : ""))")
        perform(actions)
    }

    /// Damages a JPEG so no decoder accepts it: the start-of-image marker stays (it still looks like a JPEG) and
    /// everything after it becomes a run of bytes that is no marker segment.
    static func damage(_ jpeg: inout Data) {
        guard jpeg.count > 2 else { return }
        jpeg.replaceSubrange(2..<jpeg.count, with: Data(repeating: 0x5A, count: jpeg.count - 2))
    }
}
