import Foundation
import Testing
@testable import GlassesReport

@Suite("Error statistics")
struct StatisticsTests {
    @Test("MAE, RMSE, bias, SD, limits of agreement and shares within 3 and 5, against a hand-computed case")
    func handComputed() throws {
        // Differences 1, −2, 4, 0, 6:
        //   MAE  = (1+2+4+0+6)/5 = 2.6;  RMSE = sqrt((1+4+16+0+36)/5) = sqrt(11.4);  bias = 9/5 = 1.8
        //   SD   = sqrt(((−0.8)²+(−3.8)²+2.2²+(−1.8)²+4.2²)/4) = sqrt(40.8/4) = sqrt(10.2)
        //   within 3: 1, −2, 0 = 3 of 5;  within 5: 1, −2, 4, 0 = 4 of 5
        let pairs = zip([71.0, 68, 76, 70, 80], [70.0, 70, 72, 70, 74]).enumerated().map {
            ComparedPair(t: Double($0.offset), estimate: $0.element.0, reference: $0.element.1)
        }
        let s = try #require(ErrorStatistics(pairs))
        #expect(s.count == 5)
        #expect(abs(s.meanAbsoluteError - 2.6) < 1e-12)
        #expect(abs(s.rootMeanSquareError - 11.4.squareRoot()) < 1e-12)
        #expect(abs(s.bias - 1.8) < 1e-12)
        #expect(abs(s.standardDeviation - 10.2.squareRoot()) < 1e-12)
        #expect(abs(s.upperLimit - (1.8 + 1.96 * 10.2.squareRoot())) < 1e-12)
        #expect(abs(s.lowerLimit - (1.8 - 1.96 * 10.2.squareRoot())) < 1e-12)
        #expect(s.withinThree == 0.6 && s.withinFive == 0.8)
        #expect(pairs[4].mean == 77 && pairs[4].difference == 6)
        #expect(ErrorStatistics([]) == nil)
    }

    @Test("pairs: stable estimates with the reference interpolated at their times")
    func pairing() throws {
        var run = RunRecord()
        run.pulseRate = [VitalSample(t: 1, value: 70, confidence: 90, stable: false),
                         VitalSample(t: 2, value: 72, confidence: 90, stable: true),
                         VitalSample(t: 3.5, value: 75, confidence: 90, stable: true),
                         VitalSample(t: 30, value: 75, confidence: 90, stable: true)]
        let reference = ReferenceSeries(kind: .reference, source: "hand", samples: [
            ReferenceSample(t: 0, pulseRate: 70), ReferenceSample(t: 3, pulseRate: 73), ReferenceSample(t: 4, pulseRate: 74),
        ])
        let pairs = ErrorStatistics.pairs(.pulseRate, run: run, reference: reference)
        // t=1 is not stable; t=30 is past the reference's end.
        #expect(pairs.map(\.t) == [2, 3.5])
        #expect(pairs.map(\.reference) == [72, 73.5])
        #expect(ErrorStatistics.pairs(.pulseRate, run: run, reference: reference, stableOnly: false).count == 3)
    }
}
