import Foundation
import Synchronization
import WearablesKit

/// Writes raw bytes below the message layer, between frames (see ``SimulatedGlasses/setGarbageWriter(_:)``).
public typealias GarbageWriter = @Sendable (Data) throws(SimulatorError) -> Void

// Fault injection: faults change ``FaultState`` (or act at once), and the frame path applies them to each sample
// on its way out.
extension SimulatedGlasses {
    /// Injects a fault. A fault that cannot be injected on this link is not ignored: it is reported as a failure
    /// (counted in ``GlassesStatistics/failedEvents``, handed to the failure handler, see ``setFailureHandler(_:)``);
    /// use ``tryInject(_:)`` to get the error instead.
    public func inject(_ fault: SimulatedFault) {
        do { try tryInject(fault) } catch { reportFailure(error) }
    }

    /// Injects a fault, or throws when it cannot be injected on this link.
    /// - Throws: ``SimulatorError`` `faultUnavailable` for garbage bytes without a raw-byte writer, or when the
    ///   writer could not write (no host connected); nothing was injected then.
    public func tryInject(_ fault: SimulatedFault) throws(SimulatorError) {
        log("fault: \(fault)")
        switch fault {
        case .linkLoss:
            let (link, action) = state.withLock { ($0.link, $0.linkLossAction) }
            if let action { action() } else { link?.close() }
        case .zombieStream(let on):
            state.withLock { $0.faults.zombie = on }
        case .dropFrames(let count):
            state.withLock { $0.faults.dropRemaining += max(0, count) }
        case .dropKeyframe:
            state.withLock { $0.faults.dropNextKeyframe = true }
        case .corruptSamples(let count):
            state.withLock { $0.faults.corruptRemaining += max(0, count) }
        case .truncateSamples(let count):
            state.withLock { $0.faults.truncateRemaining += max(0, count) }
        case .latency(let latency, let jitter):
            state.withLock { s in
                s.faults.latencyMs = max(0, latency)
                s.faults.jitterMs = max(0, jitter)
            }
        case .duplicateTimestamp:
            state.withLock { $0.faults.duplicateNext = true }
        case .timestampJump(let ms):
            state.withLock { s in
                let (sum, overflow) = s.faults.timestampOffsetUs.addingReportingOverflow(Self.microseconds(milliseconds: ms))
                s.faults.timestampOffsetUs = overflow ? (ms > 0 ? .max / 2 : .min / 2) : sum
            }
        case .frameGap(let ms):
            let until = scheduler.now + .microseconds(Self.microseconds(milliseconds: max(0, ms)))
            state.withLock { $0.faults.skipUntil = until }
        case .deviceFault(let fault, let message):
            let link = state.withLock { $0.link }
            link?.send(.fault(fault, message: message))
        case .burst(let count):
            state.withLock { $0.faults.burst = max(1, count) }
        case .frameRate(let fps):
            // Checked by the parser; clamped here for direct callers, so the frame clock never divides by zero.
            state.withLock { $0.faults.frameRateOverride = fps.map { min(max($0, 0.5), 240) } }
        case .dropPhoto:
            state.withLock { $0.faults.dropNextPhoto = true }
        case .corruptPhoto:
            state.withLock { $0.faults.corruptNextPhoto = true }
        case .stallAfterPhoto:
            state.withLock { $0.faults.stallAfterNextPhoto = true }
        case .garbageBytes(let count):
            let (writer, bytes): (GarbageWriter?, Data) = state.withLock { s in
                (s.garbageWriter, Self.garbage(count: count, random: &s.random))
            }
            guard let writer else {
                throw SimulatorError(
                    .faultUnavailable,
                    "garbage bytes cannot be injected: they are written onto a socket between frames, and these glasses are not served on one (glasses-sim --listen serves them so)",
                    context: ["fault": "garbage", "count": "\(count)"])
            }
            try writer(bytes)
            state.withLock { $0.stats.garbageBytesWritten += UInt64(bytes.count) }
        }
    }

    /// Applies the pending faults to an outgoing sample (drop, duplicate or shifted time, corruption, truncation,
    /// latency) and counts it; returns whether to send it, how long to hold it back, the sample observer and the link.
    func applyOutgoingFaults(to sample: inout VideoSample, now: Duration)
        -> (send: Bool, delay: Duration, observer: (@Sendable (DeviceMessage) -> Void)?, link: (any HostLink)?)
    {
        state.withLock { s in
            var f = s.faults
            var send = true
            if f.dropRemaining > 0 {
                f.dropRemaining -= 1
                send = false
            } else if f.dropNextKeyframe, sample.isKeyframe {
                f.dropNextKeyframe = false
                send = false
            }
            if send {
                var pts = sample.presentationTimeUs + f.timestampOffsetUs
                if f.duplicateNext, let last = s.lastPts {
                    pts = last
                    f.duplicateNext = false
                }
                sample.presentationTimeUs = pts
                s.lastPts = pts
                if f.corruptRemaining > 0 {
                    f.corruptRemaining -= 1
                    var bytes = [UInt8](sample.payload)
                    let n = max(1, bytes.count / 50)
                    for _ in 0..<n where !bytes.isEmpty {
                        bytes[Int(s.random.next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: s.random.next())
                    }
                    if !bytes.isEmpty { bytes[Int(s.random.next() % UInt64(min(bytes.count, 8)))] ^= 0xFF }
                    sample.payload = Data(bytes)
                    s.stats.samplesDamaged += 1
                } else if f.truncateRemaining > 0 {
                    f.truncateRemaining -= 1
                    let keep = sample.payload.count / 4 + Int(s.random.next() % UInt64(max(1, sample.payload.count / 2)))
                    sample.payload = Data(sample.payload.prefix(keep))
                    s.stats.samplesDamaged += 1
                }
                s.stats.samplesSent += 1
                if sample.isKeyframe { s.stats.keyframesSent += 1 }
                s.stats.bytesSent += UInt64(sample.payload.count)
            } else {
                s.stats.samplesWithheld += 1
            }
            s.faults = f
            var delay = Duration.zero
            if f.latencyMs > 0 || f.jitterMs > 0 {
                let ms = f.latencyMs + f.jitterMs * s.random.unit()
                var at = now + .microseconds(Self.microseconds(milliseconds: ms))
                if at < s.lastSendAt { at = s.lastSendAt }
                s.lastSendAt = at
                delay = at - now
            }
            return (send, delay, s.sampleObserver, s.link)
        }
    }

    /// Milliseconds as whole microseconds, clamped to ±1 year (checked before converting: no input traps).
    static func microseconds(milliseconds ms: Double) -> Int64 {
        let limit = 31_536_000_000.0  // a year in milliseconds
        guard ms.isFinite else { return ms > 0 ? Int64(limit * 1000) : ms < 0 ? -Int64(limit * 1000) : 0 }
        return Int64((min(max(ms, -limit), limit) * 1000).rounded())
    }

    /// `count` random bytes that never contain the first byte of the link's frame magic (`G`), so that a host's
    /// decoder skips every one of them as garbage.
    static func garbage(count: Int, random: inout SeededRandom) -> Data {
        var bytes = Data(count: max(0, count))
        for index in bytes.indices {
            let byte = UInt8(truncatingIfNeeded: random.next())
            bytes[index] = byte == 0x47 ? 0xC7 : byte
        }
        return bytes
    }
}
