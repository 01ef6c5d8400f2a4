import Testing
import WearablesKit

@testable import GlassesLink
@testable import GlassesLinkCore

@Suite("Wire codes cover every case the messages can carry")
struct WireCodeTests {
    @Test("every DAT 1.0 device type has a wire code and reads back as itself")
    func deviceTypes() throws {
        for type in DeviceType.allCases {
            var writer = ByteWriter()
            WireCodes.deviceType.write(type, to: &writer)
            let decoded = try writer.bytes.withUnsafeBytes { raw throws(BodyDecodingError) -> DeviceType in
                var reader = ByteReader(raw)
                return try WireCodes.deviceType.read(from: &reader)
            }
            #expect(decoded == type)
        }
        // The retired `simulated` code still reads, as what simulated glasses report now.
        let legacy = try [UInt8(4)].withUnsafeBytes { raw throws(BodyDecodingError) -> DeviceType in
            var reader = ByteReader(raw)
            return try WireCodes.deviceType.read(from: &reader)
        }
        #expect(legacy == .rayBanMeta)
    }
}
