import GlassesMedia
import Testing
@testable import GlassesBridge

/// A network stream's frame timing from the capture time its publisher stamped (`CaptureTimeSEI`): placed on the
/// host clock by the two wall clocks, and refused when they disagree beyond belief.
@Suite("Stream capture timing")
struct StreamCaptureTimingTests {
    @Test("captured 250 ms before it arrived: capture and send 250 ms before the arrival on the host clock")
    func placedByTheWallClocks() throws {
        let timing = try #require(NetworkStreamSource.timing(captureWallUs: 1_000_000_000, receivedAt: .seconds(100), wallNowUs: 1_000_250_000))
        #expect(timing == FrameTiming(captureUs: 99_750_000, sentUs: 99_750_000, receivedUs: 100_000_000))
    }

    @Test("a capture time in the future, more than a minute old, or at the ends of the range gives no timing")
    func implausibleTimesAreRefused() {
        #expect(NetworkStreamSource.timing(captureWallUs: 1_000_001, receivedAt: .seconds(100), wallNowUs: 1_000_000) == nil)
        #expect(NetworkStreamSource.timing(captureWallUs: 0, receivedAt: .seconds(100), wallNowUs: 61_000_000) == nil)
        #expect(NetworkStreamSource.timing(captureWallUs: Int64.min, receivedAt: .seconds(100), wallNowUs: Int64.max) == nil)
        #expect(NetworkStreamSource.timing(captureWallUs: Int64.max, receivedAt: .seconds(100), wallNowUs: Int64.min) == nil)
    }
}
