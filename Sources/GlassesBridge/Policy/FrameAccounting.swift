/// Where every frame went: received = submitted + rejected + dropped, with reasons.
public struct FrameAccounting: Sendable, Hashable {
    /// Frames that arrived from the glasses (or the file).
    public private(set) var received: UInt64 = 0
    /// Frames custom input accepted.
    public private(set) var submitted: UInt64 = 0
    /// Frames custom input rejected, by error code name (e.g. `timestampGap`).
    public private(set) var rejectedByCode: [String: UInt64] = [:]
    /// Frames dropped before custom input, by reason.
    public private(set) var droppedByReason: [FrameDropReason: UInt64] = [:]

    /// Creates empty accounts.
    public init() {}

    /// Frames custom input rejected.
    public var rejected: UInt64 { rejectedByCode.values.reduce(0, +) }
    /// Frames dropped before custom input.
    public var dropped: UInt64 { droppedByReason.values.reduce(0, +) }
    /// Whether every received frame is settled: received = submitted + rejected + dropped.
    public var isBalanced: Bool { received == submitted + rejected + dropped }
    /// Frames received and not yet settled: on their way through the hand-off, the decoder and `sendFrame`. In
    /// real time a stats line catches a few in flight (never more than the chain holds); once a run has drained,
    /// and at every stats line in virtual time, none are. Zero, not negative, should more be settled than
    /// received (an accounting error, which ``isBalanced`` shows).
    public var inFlight: UInt64 {
        let settled = submitted + rejected + dropped
        return received > settled ? received - settled : 0
    }

    /// When the first frame arrived, in microseconds on the run's clock (nil before one did, or when arrivals were
    /// recorded without their time).
    public private(set) var firstReceivedUs: Int64?

    /// Records a frame's arrival.
    package mutating func recordReceived() { received += 1 }
    /// Records a frame's arrival at `hostUs` on the run's clock.
    package mutating func recordReceived(atUs hostUs: Int64) {
        if firstReceivedUs == nil { firstReceivedUs = hostUs }
        received += 1
    }
    /// Records an accepted frame.
    package mutating func recordSubmitted() { submitted += 1 }
    /// Records a frame custom input rejected with `code`.
    package mutating func recordRejected(code: String) { rejectedByCode[code, default: 0] += 1 }
    /// Records a dropped frame.
    package mutating func recordDropped(_ reason: FrameDropReason) { droppedByReason[reason, default: 0] += 1 }
}
