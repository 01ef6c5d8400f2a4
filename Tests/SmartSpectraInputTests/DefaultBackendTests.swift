import SmartSpectraInput
import Testing

@Suite("SmartSpectraInput: the contract with its default engine")
struct DefaultBackendTests {
    @Test("the shared SDK and a plain instance use the embedded engine out of the box")
    func sharedUsesTheEmbeddedEngine() {
        #expect(SmartSpectraSDK.shared.backend.name == "embedded")
        #expect(SmartSpectraSDK(config: SmartSpectraConfig(logLevel: .none)).backend.name == "embedded")
        #expect(SmartSpectraSDK.shared.backend.producedMetrics.contains(.pulseRate))
        #expect(!SmartSpectraSDK.shared.backend.producedMetrics.contains(.edaTrace))
    }
}
