import Testing
@testable import GlassesReport

@Suite struct PlotTests {
    @Test func niceTicks() {
        let scale = NiceScale(low: 0.3, high: 9.6, ticks: 5)
        #expect(scale.lower == 0 && scale.upper == 10 && scale.step == 2.5)
    }
}
