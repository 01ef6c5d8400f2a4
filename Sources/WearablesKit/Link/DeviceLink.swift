import Foundation

/// Why a link closed.
public struct LinkError: Error, Sendable, Hashable, CustomStringConvertible, LocalizedError {
    /// The kind of failure.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }
        /// The peer closed the link or the connection dropped.
        public static let connectionLost = Code("connectionLost")
        /// No heartbeat or message arrived within the liveness window.
        public static let heartbeatTimeout = Code("heartbeatTimeout")
        /// The peer sent bytes that violate the protocol beyond recovery.
        public static let protocolViolation = Code("protocolViolation")
        /// The transport could not be opened (no Bluetooth, an unknown host, no route).
        public static let unavailable = Code("unavailable")
        /// Nothing accepts connections at the address yet (the connection was refused, or the socket file does not
        /// exist): the other end may still be starting.
        public static let notListening = Code("notListening")
        /// The peer speaks an incompatible protocol version or failed pairing.
        public static let incompatible = Code("incompatible")
        /// The link was closed locally.
        public static let closedLocally = Code("closedLocally")
        /// The code's name.
        public var description: String { name }
    }

    /// The kind of failure.
    public var code: Code
    /// A message a person can act on.
    public var message: String

    /// Creates a link error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// `code: message`.
    public var description: String { "\(code): \(message)" }

    /// The message, so `localizedDescription` reads as the message.
    public var errorDescription: String? { message }
}

/// What a link delivers to its owner.
public enum DeviceLinkEvent: Sendable {
    /// A message from the device.
    case message(DeviceMessage)
    /// The link closed; no event follows.
    case closed(LinkError)
}

/// A connection to one pair of glasses: the seam where the simulator and the transports plug into WearablesKit.
///
/// WearablesKit does no I/O itself; it sends ``HostMessage``s through a link and reacts to the
/// ``DeviceLinkEvent``s the link delivers. Implementations deliver events serially (never two at once), never
/// call the handler from inside ``send(_:)`` or ``close()`` (they deliver from their own queue, or from a later turn
/// of the scheduler driving them), and deliver exactly one `.closed` as the last event.
public protocol DeviceLink: AnyObject, Sendable {
    /// Starts delivering events to `handler`. Called once.
    func open(eventHandler: @escaping @Sendable (DeviceLinkEvent) -> Void)
    /// Sends a message to the device. Messages sent after the link closed are discarded.
    func send(_ message: HostMessage)
    /// Closes the link; a `.closed(.closedLocally)` event follows if the link was open.
    func close()
}

/// A host link whose video credit follows the consumer's free room instead of the delivery of each sample.
///
/// By default a host end grants the device one more video sample whenever it has delivered one, so a slow consumer
/// only finds out downstream. Gated, the link grants credit only while `room()` (the places the consumer has free
/// now) allows, and owes the rest until the consumer calls ``videoRoomChanged()`` after taking a sample. A slow
/// consumer then makes the *device* drop late samples at the source, counted there — what DAT's
/// `alwaysDiscardsLateVideoFrames` does on a phone.
public protocol VideoCreditGating: AnyObject, Sendable {
    /// Gates credit by `room`, which must be cheap, thread-safe, and never call back into the link. Call before
    /// the link is opened, so the first grant already respects it.
    func gateVideoCredit(room: @escaping @Sendable () -> Int)
    /// The consumer took a sample or otherwise made room: the link pays what it owes, as far as the room allows.
    func videoRoomChanged()
}

/// A host end that knows how many video samples the device dropped for lack of credit (the count its heartbeats
/// carry), so a host can tell frames its own slowness cost from frames the device never sent.
public protocol DeviceDropReporting: AnyObject, Sendable {
    /// The device's count from its latest heartbeat (0 before the first); it starts again at 0 on a new link.
    var deviceReportedDrops: UInt64 { get }
}

/// What a device-side link delivers to the device (the simulator, or firmware on real glasses).
public enum HostLinkEvent: Sendable {
    /// A message from the host.
    case message(HostMessage)
    /// The link closed; no event follows.
    case closed(LinkError)
}

/// The device's end of a link: how simulated glasses talk to a host.
///
/// The mirror image of ``DeviceLink``, with the same delivery rules. Flow control is the link's business:
/// a link implementation drops video samples the host has no credit for (and counts them) rather than queueing
/// them without bound, so a device simply sends.
public protocol HostLink: AnyObject, Sendable {
    /// Starts delivering events to `handler`. Called once.
    func open(eventHandler: @escaping @Sendable (HostLinkEvent) -> Void)
    /// Sends a message to the host. Video samples may be dropped for lack of credit; other messages never are.
    func send(_ message: DeviceMessage)
    /// Video samples dropped so far because the host had not granted credit (after an HEVC drop, also the samples
    /// up to the next keyframe, which could not be decoded without it).
    var droppedVideoSamples: UInt64 { get }
    /// Closes the link; a `.closed(.closedLocally)` event follows if the link was open.
    func close()
}

/// A link end that can read its link clock: the clock ``SampleTiming`` and heartbeat clock exchanges are measured
/// on (its ``EventScheduler``'s `now`). Every link end GlassesLink creates conforms; a device or relay reads it to
/// stamp ``SampleTiming/captureUs`` and ``SampleTiming/sentUs`` (`(link as? any LinkClockReading)?.linkClockUs`).
public protocol LinkClockReading: AnyObject, Sendable {
    /// Now on this end's link clock, in whole microseconds.
    var linkClockUs: Int64 { get }
}
