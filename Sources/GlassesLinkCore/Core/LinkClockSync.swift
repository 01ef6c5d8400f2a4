import WearablesKit

/// The host end's estimate of how the device's link clock relates to its own, from heartbeat exchanges
/// (`docs/PROTOCOL.md`, 7.5), and the mapping of a sample's times onto the host clock.
///
/// A plain value with no I/O: the host notes each heartbeat clock it sends (``noteSent(hostClockUs:)``), and feeds
/// each echo the device returns (``receive(_:atUs:)``). For an exchange `t0` (host sends), `t1` (device receives),
/// `t2` (device sends), `t3` (host receives) the offset is θ = ((t1 − t0) + (t2 − t3)) / 2 (device clock minus host
/// clock) and the round trip δ = (t3 − t0) − (t2 − t1); the estimate is the θ of the exchange with the smallest δ
/// among the last ``window``, whose error is at most δ / 2. Every figure comes from the peer, so every one is
/// checked and computed with overflow-reporting arithmetic: an echo of a clock this end never sent (or already
/// used), a negative hold or round trip, or one beyond the limits, is ignored and counted, never a trap.
struct LinkClockSync: Sendable, Hashable {
    /// One accepted exchange.
    struct Exchange: Sendable, Hashable {
        /// θ: device clock minus host clock, µs.
        var offsetUs: Int64
        /// δ: time on the wire both ways, µs.
        var roundTripUs: Int64
    }

    /// Why an echo was ignored.
    enum Rejection: Error, Sendable, Hashable {
        /// The echoed host clock is not one this end sent recently (forged, replayed or very late).
        case unknownEcho
        /// `t2 < t1`, or the device held the heartbeat longer than ``maximumHoldUs``.
        case badHold
        /// δ is negative or longer than ``maximumRoundTripUs``.
        case badRoundTrip
        /// A difference overflowed 64 bits.
        case overflow
    }

    /// Exchanges the estimate is chosen from (the newest).
    static let window = 8
    /// Host clocks remembered for matching echoes.
    static let sentMemory = 8
    /// The longest a device may hold a host heartbeat before echoing it (heartbeats are 1 s apart).
    static let maximumHoldUs: Int64 = 30_000_000
    /// The longest round trip worth using (the link times out after 5 s of silence anyway).
    static let maximumRoundTripUs: Int64 = 10_000_000

    /// Whether both ends read one clock (the in-process transport): the offset is 0 from the start.
    let sharedClock: Bool
    private(set) var exchanges: [Exchange] = []
    private var sentClocks: [Int64] = []
    /// Echoes used.
    private(set) var accepted: UInt64 = 0
    /// Echoes ignored as absurd (see ``Rejection``).
    private(set) var rejected: UInt64 = 0
    /// Sample timings that could not be mapped (no offset yet, or absurd times).
    private(set) var unmappedSamples: UInt64 = 0

    init(sharedClock: Bool = false) {
        self.sharedClock = sharedClock
    }

    /// The host put `hostClockUs` into a heartbeat.
    mutating func noteSent(hostClockUs: Int64) {
        if sentClocks.count == Self.sentMemory { sentClocks.removeFirst() }
        sentClocks.append(hostClockUs)
    }

    /// A device heartbeat with `echo` arrived at host time `t3`; returns why it was ignored, or nil if used.
    @discardableResult
    mutating func receive(_ echo: ClockEcho, atUs t3: Int64) -> Rejection? {
        switch Self.check(echo, atUs: t3, knownClocks: sentClocks) {
        case .success(let exchange):
            sentClocks.removeAll { $0 == echo.echoHostClockUs }
            if exchanges.count == Self.window { exchanges.removeFirst() }
            exchanges.append(exchange)
            accepted &+= 1
            return nil
        case .failure(let why):
            rejected &+= 1
            return why
        }
    }

    /// The exchange `echo` at `t3` describes, or why it is unusable.
    static func check(_ echo: ClockEcho, atUs t3: Int64, knownClocks: [Int64]) -> Result<Exchange, Rejection> {
        let (t0, t1, t2) = (echo.echoHostClockUs, echo.receivedUs, echo.sentUs)
        guard knownClocks.contains(t0) else { return .failure(.unknownEcho) }
        let hold = t2.subtractingReportingOverflow(t1)
        guard !hold.overflow else { return .failure(.overflow) }
        guard hold.partialValue >= 0, hold.partialValue <= maximumHoldUs else { return .failure(.badHold) }
        let span = t3.subtractingReportingOverflow(t0)
        guard !span.overflow else { return .failure(.overflow) }
        let roundTrip = span.partialValue.subtractingReportingOverflow(hold.partialValue)
        guard !roundTrip.overflow else { return .failure(.overflow) }
        guard roundTrip.partialValue >= 0, roundTrip.partialValue <= maximumRoundTripUs else {
            return .failure(.badRoundTrip)
        }
        let outbound = t1.subtractingReportingOverflow(t0)
        let inbound = t2.subtractingReportingOverflow(t3)
        guard !outbound.overflow, !inbound.overflow else { return .failure(.overflow) }
        let sum = outbound.partialValue.addingReportingOverflow(inbound.partialValue)
        guard !sum.overflow else { return .failure(.overflow) }
        return .success(Exchange(offsetUs: sum.partialValue / 2, roundTripUs: roundTrip.partialValue))
    }

    /// The exchange the estimate rests on: the smallest round trip of the window (the newest among equals).
    var best: Exchange? {
        exchanges.reversed().min { $0.roundTripUs < $1.roundTripUs }
    }

    /// θ, device clock minus host clock (µs), or nil while no exchange has completed.
    var offsetUs: Int64? { sharedClock ? 0 : best?.offsetUs }

    /// Whether device times can be mapped onto the host clock.
    var isSynchronised: Bool { offsetUs != nil }

    /// A device clock value on the host clock, or nil (no offset yet, or out of range).
    func hostTime(ofDeviceUs deviceUs: Int64) -> Int64? {
        guard let offset = offsetUs else { return nil }
        let mapped = deviceUs.subtractingReportingOverflow(offset)
        return mapped.overflow ? nil : mapped.partialValue
    }

    /// `timing` as the host end delivers it: received at host time `receivedUs`, with capture and send times on the
    /// host clock. Without an offset (or for absurd times: captured after sent, or out of range) the times stay on
    /// the sender's clock and `receivedUs` stays nil, so nothing above the link compares unrelated clocks.
    mutating func map(_ timing: SampleTiming, receivedUs: Int64) -> SampleTiming {
        var unmapped = timing
        unmapped.receivedUs = nil
        guard timing.captureUs <= timing.sentUs,
              let capture = hostTime(ofDeviceUs: timing.captureUs),
              let sent = hostTime(ofDeviceUs: timing.sentUs)
        else {
            unmappedSamples &+= 1
            return unmapped
        }
        return SampleTiming(captureUs: capture, sentUs: sent, receivedUs: receivedUs)
    }

    /// What diagnostics report.
    var statistics: LinkClockStatistics {
        LinkClockStatistics(
            offsetUs: offsetUs, roundTripUs: sharedClock ? 0 : best?.roundTripUs, sharedClock: sharedClock,
            exchangesAccepted: accepted, exchangesRejected: rejected, unmappedSamples: unmappedSamples)
    }
}

/// How a host end relates the device's link clock to its own (``LinkDiagnostics/clock``).
public struct LinkClockStatistics: Sendable, Hashable {
    /// Device clock minus host clock in µs (nil until a heartbeat exchange completed).
    public var offsetUs: Int64?
    /// The round trip of the exchange the offset rests on, µs; the offset is good to half of it.
    public var roundTripUs: Int64?
    /// Whether both ends read one clock (in-process), so no exchange is needed.
    public var sharedClock: Bool
    /// Heartbeat clock echoes used.
    public var exchangesAccepted: UInt64
    /// Heartbeat clock echoes ignored as absurd (unknown echo, negative or huge hold or round trip, overflow).
    public var exchangesRejected: UInt64
    /// Video samples whose timing could not be mapped onto the host clock (delivered with `receivedUs` nil).
    public var unmappedSamples: UInt64

    /// Creates statistics (all zero and unknown by default).
    public init(
        offsetUs: Int64? = nil, roundTripUs: Int64? = nil, sharedClock: Bool = false, exchangesAccepted: UInt64 = 0,
        exchangesRejected: UInt64 = 0, unmappedSamples: UInt64 = 0
    ) {
        self.offsetUs = offsetUs
        self.roundTripUs = roundTripUs
        self.sharedClock = sharedClock
        self.exchangesAccepted = exchangesAccepted
        self.exchangesRejected = exchangesRejected
        self.unmappedSamples = unmappedSamples
    }
}
