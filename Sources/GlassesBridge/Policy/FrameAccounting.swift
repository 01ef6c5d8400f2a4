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

    /// Records a frame's arrival.
    public mutating func recordReceived() { received += 1 }
    /// Records an accepted frame.
    public mutating func recordSubmitted() { submitted += 1 }
    /// Records a frame custom input rejected with `code`.
    public mutating func recordRejected(code: String) { rejectedByCode[code, default: 0] += 1 }
    /// Records a dropped frame.
    public mutating func recordDropped(_ reason: FrameDropReason) { droppedByReason[reason, default: 0] += 1 }
}
