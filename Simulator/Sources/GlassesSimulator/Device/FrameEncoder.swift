import Foundation
import GlassesVideo
import WearablesKit
import Synchronization

/// The glasses' HEVC encoder: one libx265 encoder, rebuilt when the picture size, frame rate or bit rate changes.
///
/// A new encoder, or a stream (re)start, makes the next picture a keyframe and hands out the codec configuration
/// with it, so the host always gets parameter sets before the samples that need them.
final class FrameEncoder: Sendable {
    private struct Slot {
        // The encoder is not Sendable; the mutex is what makes sharing it safe (it is only touched under the lock).
        var encoder: HEVCEncoder?
        var key: String = ""
        var pendingConfiguration = false
        /// The link's drop count when the last picture was encoded (see `encode(…linkDrops:)`).
        var linkDropsSeen: UInt64 = 0

        /// What the host needs of the next picture, taken once: the stream (re)started (a keyframe with the codec
        /// configuration), or credit drops since the last picture lost it a reference (a keyframe).
        mutating func takeHostNeeds(linkDrops: UInt64) -> (restarted: Bool, lostReference: Bool) {
            let needs = (restarted: pendingConfiguration, lostReference: linkDrops != linkDropsSeen)
            pendingConfiguration = false
            linkDropsSeen = linkDrops
            return needs
        }
    }

    private let slot = Mutex(Slot())
    /// x265's worker threads per picture (1: none).
    private let threads: Int
    /// x265's psycho-visual tuning on or off.
    private let psychovisual: Bool

    /// Creates an encoder slot; `threads` is x265's worker-thread count (1 encodes on the frame clock's thread),
    /// `psychovisual` its psycho-visual tuning (see ``HEVCEncoder``).
    init(threads: Int = 1, psychovisual: Bool = true) {
        self.threads = max(1, min(threads, 16))
        self.psychovisual = psychovisual
    }

    /// A stream (re)started: the next picture is a keyframe and carries the codec configuration.
    func configurationPending() {
        slot.withLock { $0.pendingConfiguration = true }
    }

    /// For a sample that bypasses the encoder (a passthrough file feed): whether the host needs a keyframe with its
    /// configuration next, by the encoder's own rule (a stream (re)start, or credit drops since the last picture);
    /// takes that state as ``encode(_:presentationTimeUs:frameRate:bitrate:linkDrops:)`` does.
    func takeResync(linkDrops: UInt64) -> Bool {
        slot.withLock { slot in
            let needs = slot.takeHostNeeds(linkDrops: linkDrops)
            return needs.restarted || needs.lostReference
        }
    }

    /// Encodes one picture; returns the sample and, when the host needs it, the codec configuration to send first.
    /// After a failure the encoder is dropped (the next picture builds a new one).
    ///
    /// `linkDrops` is the link's count of video samples dropped for lack of credit: when it rose since the last
    /// picture, the host lost a reference, so this picture is a keyframe (as a real encoder answers packet loss) and
    /// the stream resumes as soon as credit allows instead of at the next scheduled keyframe.
    func encode(_ image: RawVideoImage, presentationTimeUs: Int64, frameRate: Int, bitrate: Int, linkDrops: UInt64)
        -> Result<(EncodedHEVCSample, HEVCCodecConfiguration?), VideoCodecError>
    {
        slot.withLock { slot in
            let needs = slot.takeHostNeeds(linkDrops: linkDrops)
            let key = "\(image.width)x\(image.height)@\(frameRate)/\(bitrate)"
            do throws(VideoCodecError) {
                var newConfig = false
                let encoder: HEVCEncoder
                if let current = slot.encoder, slot.key == key {
                    encoder = current
                } else {
                    encoder = try HEVCEncoder(width: image.width, height: image.height, frameRate: frameRate,
                                              bitrate: max(bitrate, 10_000), keyframeInterval: frameRate, threads: threads,
                                              psychovisual: psychovisual)
                    slot.encoder = encoder
                    slot.key = key
                    newConfig = true
                }
                let force = needs.restarted || newConfig || needs.lostReference
                if needs.restarted { newConfig = true }
                let out = try encoder.encode(image, presentationTimeUs: presentationTimeUs, forceKeyframe: force)
                guard let first = out.first else {
                    throw VideoCodecError(code: .encodeFailed, message: "the encoder returned no sample")
                }
                return .success((first, newConfig ? encoder.codecConfiguration : nil))
            } catch {
                slot.encoder = nil
                return .failure(error)
            }
        }
    }
}
