import Foundation
@testable import GlassesBridge
import Testing

/// The frame rates the stats lines give.
@Suite("Frame rates in the stats lines (in-process simulator, virtual time)", .serialized)
struct StatsRateTests {
    @Test("every stats line reads the stream's rate in and out, the first one too", arguments: [UInt(24), 15])
    func ratesFromTheFirstLine(frameRate: UInt) async throws {
        let run = try SimulatedRun(frameRate: frameRate, seconds: 4.5)
        _ = await run.run()
        let rates = run.events.all.compactMap { entry -> (Double, Double)? in
            if case .stats(let stats, _, _, _) = entry.event { (stats.framesPerSecondIn, stats.framesPerSecondOut) } else { nil }
        }
        #expect(rates.count == 4)
        // The first line counted the frames at 0 s and at 1 s as one second's: 25 at 24 fps.
        for (rateIn, rateOut) in rates {
            #expect(abs(rateIn - Double(frameRate)) < 0.01 && abs(rateOut - Double(frameRate)) < 0.01, "\(rates)")
        }
    }
}
