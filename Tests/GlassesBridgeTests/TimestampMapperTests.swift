import Testing
@testable import GlassesBridge

@Suite("Timestamp mapping")
struct TimestampMapperTests {
    @Test func firstFrameStartsAtZeroAndSpacingIsKept() {
        var mapper = TimestampMapper(frameRate: 24)
        #expect(mapper.map(deviceUs: 5_000_000) == .submit(timestampUs: 0, restartInputFirst: false))
        #expect(mapper.map(deviceUs: 5_041_666) == .submit(timestampUs: 41_666, restartInputFirst: false))
        #expect(mapper.map(deviceUs: 5_083_333) == .submit(timestampUs: 83_333, restartInputFirst: false))
    }

    @Test("with the run's start, the timeline is the run's clock: the first frame at its arrival, then the device's spacing")
    func theTimelineStartsWhereTheRunDid() {
        var mapper = TimestampMapper(frameRate: 24, originHostUs: 100_000_000)
        #expect(mapper.map(deviceUs: 9_000_000, hostUs: 105_250_000) == .submit(timestampUs: 5_250_000, restartInputFirst: false))
        #expect(mapper.map(deviceUs: 9_041_666, hostUs: 105_400_000) == .submit(timestampUs: 5_291_666, restartInputFirst: false))
        // A host time before the start, an absurd one, or none: the timeline starts at 0.
        for host: Int64? in [99_000_000, 100_000_000 + 86_400_000_001, nil, Int64.min] {
            var other = TimestampMapper(frameRate: 24, originHostUs: 100_000_000)
            #expect(other.map(deviceUs: 1, hostUs: host) == .submit(timestampUs: 0, restartInputFirst: false), "host \(String(describing: host))")
        }
    }

    @Test("a first frame whose capture time the link knows is placed at its capture, not its late arrival")
    func theFirstFrameIsPlacedAtItsCapture() {
        var mapper = TimestampMapper(frameRate: 15, originHostUs: 100_000_000)
        // Captured at 5.0 s into the run, arrived 0.3 s later (a link still settling).
        #expect(mapper.map(deviceUs: 7_000_000, hostUs: 105_300_000, capturedUs: 105_000_000)
            == .submit(timestampUs: 5_000_000, restartInputFirst: false))
        #expect(mapper.map(deviceUs: 7_066_666, hostUs: 105_310_000, capturedUs: 105_066_666)
            == .submit(timestampUs: 5_066_666, restartInputFirst: false))
        // A capture estimate after the arrival, or more than 10 s before it, is not believed: the arrival places it.
        for captured: Int64 in [105_400_000, 95_299_999, Int64.min, Int64.max] {
            var other = TimestampMapper(frameRate: 15, originHostUs: 100_000_000)
            #expect(other.map(deviceUs: 7_000_000, hostUs: 105_300_000, capturedUs: captured)
                == .submit(timestampUs: 5_300_000, restartInputFirst: false), "captured \(captured)")
        }
    }

    @Test func negativeDeviceTimesAreShiftedOntoANonnegativeTimeline() {
        var mapper = TimestampMapper(frameRate: 30)
        #expect(mapper.map(deviceUs: -1_000) == .submit(timestampUs: 0, restartInputFirst: false))
        #expect(mapper.map(deviceUs: 32_333) == .submit(timestampUs: 33_333, restartInputFirst: false))
    }

    @Test func duplicatesAndBackwardFramesAreDropped() {
        var mapper = TimestampMapper(frameRate: 30)
        _ = mapper.map(deviceUs: 100_000)
        _ = mapper.map(deviceUs: 133_333)
        #expect(mapper.map(deviceUs: 133_333) == .drop(.duplicateTimestamp))
        #expect(mapper.map(deviceUs: 120_000) == .drop(.backwardTimestamp))
        // A stray backward frame does not poison the timeline.
        #expect(mapper.map(deviceUs: 166_666) == .submit(timestampUs: 66_666, restartInputFirst: false))
        #expect(mapper.lastTimestampUs == 66_666)
    }

    @Test func aPauseOverTwoSecondsAsksForAFreshTimeline() {
        var mapper = TimestampMapper(frameRate: 24)
        _ = mapper.map(deviceUs: 0)
        // Exactly 2 s is still accepted by custom input.
        #expect(mapper.map(deviceUs: 2_000_000) == .submit(timestampUs: 2_000_000, restartInputFirst: false))
        // 2 s + 1 µs would be a timestampGap: restart first, keep the true elapsed time.
        #expect(mapper.map(deviceUs: 4_000_001) == .submit(timestampUs: 4_000_001, restartInputFirst: true))
        #expect(mapper.map(deviceUs: 4_041_667) == .submit(timestampUs: 4_041_667, restartInputFirst: false))
    }

    @Test func aDeviceClockRestartRebasesOnHostTime() {
        var mapper = TimestampMapper(frameRate: 24)
        _ = mapper.map(deviceUs: 50_000_000, hostUs: 10_000_000)
        _ = mapper.map(deviceUs: 50_041_666, hostUs: 10_041_666)
        // New session: the device clock starts again near zero, 3 s of host time later.
        let decision = mapper.map(deviceUs: 1_000, hostUs: 13_041_666)
        #expect(decision == .submit(timestampUs: 3_041_666, restartInputFirst: true))
        #expect(mapper.map(deviceUs: 42_666, hostUs: 13_083_333) == .submit(timestampUs: 3_083_332, restartInputFirst: false))
    }

    @Test func aMarkedDiscontinuityRebasesEvenForASmallStepBack() {
        var mapper = TimestampMapper(frameRate: 24)
        _ = mapper.map(deviceUs: 1_500_000, hostUs: 0)
        mapper.markDiscontinuity()
        // Without the mark this would be a backward drop; with it, the timeline moves on by the host time.
        #expect(mapper.map(deviceUs: 0, hostUs: 500_000) == .submit(timestampUs: 500_000, restartInputFirst: false))
        #expect(mapper.map(deviceUs: 41_666, hostUs: 541_666) == .submit(timestampUs: 541_666, restartInputFirst: false))
    }

    @Test func outputIsAlwaysStrictlyIncreasingWithNoGapWithoutARestart() {
        var mapper = TimestampMapper(frameRate: 30)
        var generator = SplitMix(seed: 42)
        var last: Int64 = -1
        var device: Int64 = 0
        for step in 0..<5_000 {
            switch generator.next() % 10 {
            case 0: device -= Int64(generator.next() % 3_000_000)
            case 1: device += Int64(generator.next() % 5_000_000)
            case 2: break
            default: device += 33_333
            }
            if step % 700 == 0 { mapper.markDiscontinuity() }
            if case .submit(let timestamp, let restart) = mapper.map(deviceUs: device, hostUs: Int64(step) * 33_333) {
                #expect(timestamp >= 0)
                if !restart {
                    #expect(timestamp > last)
                    #expect(timestamp - last <= TimestampMapper.maximumGapUs)
                }
                last = timestamp
            }
        }
    }
}

/// A tiny deterministic generator for property-style tests.
struct SplitMix {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
