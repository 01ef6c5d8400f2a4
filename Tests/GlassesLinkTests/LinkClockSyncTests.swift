import Testing
import WearablesKit

@testable import GlassesLink
@testable import GlassesLinkCore

/// The heartbeat clock exchange's arithmetic (PROTOCOL.md 7.5), with offsets computed by hand.
@Suite("Link clock sync")
struct LinkClockSyncTests {
    /// One exchange: the host sends at `t0` (its clock); the device's clock reads `t0 + out + offset` on receipt,
    /// holds `hold`, and the host receives the echo `in` later.
    static func exchange(
        _ sync: inout LinkClockSync, t0: Int64, offset: Int64, out: Int64, hold: Int64, back: Int64
    ) -> LinkClockSync.Rejection? {
        sync.noteSent(hostClockUs: t0)
        let t1 = t0 + out + offset
        let t2 = t1 + hold
        let t3 = t0 + out + hold + back
        return sync.receive(ClockEcho(echoHostClockUs: t0, receivedUs: t1, sentUs: t2), atUs: t3)
    }

    @Test("symmetric delays: the offset is exact and the round trip excludes the device's hold")
    func symmetric() {
        var sync = LinkClockSync()
        #expect(sync.offsetUs == nil)
        sync.noteSent(hostClockUs: 1_000_000)
        // t1 = 1.26 s and t2 = 1.56 s on the device (250 ms ahead, 10 ms each way, held 300 ms); t3 = 1.32 s.
        let used = sync.receive(ClockEcho(echoHostClockUs: 1_000_000, receivedUs: 1_260_000, sentUs: 1_560_000), atUs: 1_320_000)
        #expect(used == nil)
        #expect(sync.offsetUs == 250_000)  // ((1.26 − 1.0) + (1.56 − 1.32)) / 2
        #expect(sync.best?.roundTripUs == 20_000)  // (1.32 − 1.0) − (1.56 − 1.26)
        #expect(sync.statistics == LinkClockStatistics(offsetUs: 250_000, roundTripUs: 20_000, exchangesAccepted: 1))
    }

    @Test("asymmetric delays: the error is half the difference of the two ways, within half the round trip")
    func asymmetric() {
        var sync = LinkClockSync()
        // Device 4 s behind; 30 ms out, 2 ms back, held 0.5 s.
        #expect(Self.exchange(&sync, t0: 10_000_000, offset: -4_000_000, out: 30_000, hold: 500_000, back: 2_000) == nil)
        // ((6.03 − 10.0) + (6.53 − 10.532)) / 2 = (−3.970 − 4.002) / 2 = −3.986 s: 14 ms = (30 − 2) / 2 off.
        #expect(sync.offsetUs == -3_986_000)
        #expect(sync.best?.roundTripUs == 32_000)
        #expect(abs(sync.offsetUs! - -4_000_000) <= sync.best!.roundTripUs / 2)
    }

    @Test("the offset comes from the exchange with the smallest round trip among the last eight")
    func minimumRoundTripWins() {
        var sync = LinkClockSync()
        var t0: Int64 = 1_000_000
        func step(_ out: Int64, _ back: Int64) {
            #expect(Self.exchange(&sync, t0: t0, offset: 7_000_000, out: out, hold: 100_000, back: back) == nil)
            t0 += 1_000_000
        }
        step(40_000, 10_000)  // δ 50 ms, θ off by +15 ms
        step(4_000, 1_000)  // δ 5 ms, θ off by +1.5 ms
        step(5_000, 15_000)  // δ 20 ms, θ off by −5 ms
        #expect(sync.offsetUs == 7_001_500)
        #expect(sync.best?.roundTripUs == 5_000)
        // Exchanges with δ 30 ms (θ off by −10 ms): six keep the 5 ms one in the window of eight, the seventh not.
        for _ in 0..<6 { step(10_000, 20_000) }
        #expect(sync.offsetUs == 7_001_500)
        step(10_000, 20_000)
        #expect(sync.offsetUs == 6_995_000)  // the 20 ms exchange is now the best
        #expect(sync.best?.roundTripUs == 20_000)
        #expect(sync.accepted == 10)
    }

    @Test("absurd echoes are ignored and counted, and never move the offset")
    func absurdInputs() {
        var sync = LinkClockSync()
        #expect(Self.exchange(&sync, t0: 1_000_000, offset: 500, out: 1_000, hold: 1_000, back: 1_000) == nil)
        #expect(sync.offsetUs == 500)
        func echo(_ t0: Int64, _ t1: Int64, _ t2: Int64, at t3: Int64, send: Bool = true) -> LinkClockSync.Rejection? {
            if send { sync.noteSent(hostClockUs: t0) }
            return sync.receive(ClockEcho(echoHostClockUs: t0, receivedUs: t1, sentUs: t2), atUs: t3)
        }
        // A clock the host never sent, and one it already used (a replay).
        #expect(echo(123, 200, 300, at: 400, send: false) == .unknownEcho)
        #expect(echo(1_000_000, 1_001_500, 1_002_500, at: 1_003_000, send: false) == .unknownEcho)
        // The device "sent before it received", or held the heartbeat for a minute.
        #expect(echo(2_000_000, 2_000_500, 2_000_400, at: 2_001_000) == .badHold)
        #expect(echo(3_000_000, 3_000_500, 63_000_500, at: 63_001_000) == .badHold)
        // A hold longer than the whole round trip, and a round trip of a minute.
        #expect(echo(4_000_000, 4_000_000, 4_900_000, at: 4_100_000) == .badRoundTrip)
        #expect(echo(5_000_000, 5_000_000, 5_000_000, at: 65_000_000) == .badRoundTrip)
        // 64-bit extremes: differences that overflow.
        #expect(echo(.min, .max, .max, at: 0) == .overflow)
        #expect(echo(-5, .min, .max, at: 0) == .overflow)
        #expect(echo(.max - 10, .min + 5, .min + 5, at: .max) == .overflow)
        #expect(sync.rejected == 9)
        #expect(sync.accepted == 1)
        #expect(sync.offsetUs == 500)
    }

    @Test("sample times map onto the host clock only once the clocks are related, and only when sane")
    func mapping() {
        var sync = LinkClockSync()
        let timing = SampleTiming(captureUs: 9_000_000, sentUs: 9_040_000)
        // No exchange yet: left on the device's clock and marked so (receivedUs nil).
        #expect(sync.map(timing, receivedUs: 1_000) == timing)
        #expect(sync.unmappedSamples == 1)
        #expect(Self.exchange(&sync, t0: 1_000_000, offset: 8_000_000, out: 2_000, hold: 10_000, back: 2_000) == nil)
        #expect(sync.map(timing, receivedUs: 1_045_000) == SampleTiming(captureUs: 1_000_000, sentUs: 1_040_000, receivedUs: 1_045_000))
        // Captured after it was sent, or a time that cannot be shifted by the offset: unmapped, counted.
        #expect(sync.map(SampleTiming(captureUs: 5, sentUs: 4), receivedUs: 9).receivedUs == nil)
        #expect(sync.map(SampleTiming(captureUs: .min, sentUs: 0), receivedUs: 9).receivedUs == nil)
        #expect(sync.unmappedSamples == 3)
        #expect(sync.statistics.unmappedSamples == 3)
    }

    @Test("one clock for both ends (in-process): mapped from the first sample, no exchange needed")
    func sharedClock() {
        var sync = LinkClockSync(sharedClock: true)
        #expect(sync.offsetUs == 0)
        #expect(sync.map(SampleTiming(captureUs: 10, sentUs: 20), receivedUs: 30) == SampleTiming(captureUs: 10, sentUs: 20, receivedUs: 30))
        #expect(sync.statistics.sharedClock)
    }
}
