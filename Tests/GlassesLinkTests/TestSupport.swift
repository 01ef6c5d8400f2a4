import Foundation
import Synchronization
import WearablesKit

/// Collects the events a link delivers and lets a test wait for them with a bounded wait.
final class EventRecorder<Event: Sendable>: Sendable {
    private let events = Mutex<[Event]>([])
    private let signal = DispatchSemaphore(value: 0)

    /// The handler to give to `open(eventHandler:)`.
    var handler: @Sendable (Event) -> Void {
        { [self] event in
            events.withLock { $0.append(event) }
            signal.signal()
        }
    }

    /// Everything recorded so far.
    var all: [Event] { events.withLock { $0 } }

    /// Waits (bounded, in real time) until `predicate` holds for the recorded events; false on timeout.
    func wait(timeout: TimeInterval = 20, until predicate: ([Event]) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if predicate(all) { return true }
            let remaining = deadline.timeIntervalSinceNow
            if remaining <= 0 { return false }
            _ = signal.wait(timeout: .now() + remaining)
        }
    }
}

extension DeviceLinkEvent {
    /// The message, if this is one.
    var message: DeviceMessage? {
        if case .message(let message) = self { return message }
        return nil
    }

    /// The close reason, if this is the close.
    var closeError: LinkError? {
        if case .closed(let error) = self { return error }
        return nil
    }

    /// Whether this is a video sample.
    var isVideoSample: Bool {
        if case .message(.videoSample) = self { return true }
        return false
    }
}

extension HostLinkEvent {
    /// The message, if this is one.
    var message: HostMessage? {
        if case .message(let message) = self { return message }
        return nil
    }

    /// The close reason, if this is the close.
    var closeError: LinkError? {
        if case .closed(let error) = self { return error }
        return nil
    }
}

/// Sample values used across the tests.
enum Fixtures {
    static let info = DeviceInfo(
        identifier: "sim-1",
        name: "Simulated Glasses",
        uuid: UUID(uuidString: "12345678-1234-5678-9ABC-DEF012345678")!,
        firmwareVersion: "1.2.3"
    )

    /// An HEVC-format sample; a keyframe when `keyframe` says so (by default only the first).
    static func sample(_ index: Int, size: Int = 64, keyframe: Bool? = nil) -> VideoSample {
        VideoSample(
            presentationTimeUs: Int64(index) * 33_333,
            isKeyframe: keyframe ?? (index == 0),
            format: .hevc,
            payload: Data(repeating: UInt8(truncatingIfNeeded: index &* 37 &+ 1), count: size)
        )
    }
}
