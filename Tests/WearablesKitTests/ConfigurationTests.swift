import Foundation
import Testing
@testable import WearablesKit

@Suite("Configuration")
struct ConfigurationTests {
    @Test("defaults: real-time scheduler, 31 s device wait")
    func defaults() throws {
        let configuration = try WearablesConfiguration()
        #expect(configuration.deviceWaitTimeout == .seconds(31))
        #expect(configuration.scheduler is DispatchEventScheduler)
        #expect(configuration.batteryLowThreshold == 5)
    }

    @Test("out-of-range durations are rejected, naming the setting", arguments: [
        ("deviceWaitTimeout", Duration.zero), ("deviceWaitTimeout", .seconds(-1)), ("startTimeout", .zero),
        ("stopGracePeriod", .milliseconds(-5)), ("photoCaptureTimeout", .seconds(100_000)), ("permissionTimeout", .zero),
    ])
    func rejectsDurations(setting: String, value: Duration) {
        let scheduler = ManualScheduler()
        do {
            switch setting {
            case "deviceWaitTimeout": _ = try WearablesConfiguration(scheduler: scheduler, deviceWaitTimeout: value)
            case "startTimeout": _ = try WearablesConfiguration(scheduler: scheduler, startTimeout: value)
            case "stopGracePeriod": _ = try WearablesConfiguration(scheduler: scheduler, stopGracePeriod: value)
            case "photoCaptureTimeout": _ = try WearablesConfiguration(scheduler: scheduler, photoCaptureTimeout: value)
            default: _ = try WearablesConfiguration(scheduler: scheduler, permissionTimeout: value)
            }
            Issue.record("\(setting) = \(value) was accepted")
        } catch {
            #expect(error.setting == setting)
            #expect(error.localizedDescription.contains(setting))
        }
    }

    @Test("battery threshold must be a percentage", arguments: [-1, 101, 1000])
    func rejectsBatteryThreshold(value: Int) {
        #expect(throws: WearablesConfigurationError.self) {
            try WearablesConfiguration(scheduler: ManualScheduler(), batteryLowThreshold: value)
        }
    }

    @Test("configure once: a second call is alreadyConfigured")
    func configureOnce() throws {
        let slot = ConfigurationSlot()
        try slot.configure(try WearablesConfiguration(scheduler: ManualScheduler()))
        #expect(throws: WearablesError.alreadyConfigured) {
            try slot.configure(try WearablesConfiguration(scheduler: ManualScheduler()))
        }
    }

    @Test("using the shared instance first counts as configuring it")
    func sharedThenConfigure() throws {
        let slot = ConfigurationSlot()
        let first = slot.instance
        #expect(slot.instance === first)
        #expect(throws: WearablesError.alreadyConfigured) { try slot.configure(.standard()) }
    }

    @Test("the process-wide Wearables.configure refuses a second call")
    func processWideConfigure() {
        // The only test that touches the process-wide slot.
        _ = try? Wearables.configure()
        #expect(throws: WearablesError.alreadyConfigured) { try Wearables.configure() }
        #expect(Wearables.shared.configuration.deviceWaitTimeout == .seconds(31))
        #expect(WearablesError.alreadyConfigured.rawValue == 1)
    }

    @Test("instances share nothing")
    func independentInstances() throws {
        let rig = try Rig()
        let other = Wearables.makeInstance(configuration: try WearablesConfiguration(scheduler: rig.scheduler))
        rig.connect()
        #expect(rig.wearables.devices == ["glasses-1"])
        #expect(other.devices.isEmpty)
        #expect(other.deviceForIdentifier("glasses-1") == nil)
    }

    @Test("stream configuration: supported frame rates accepted", arguments: [UInt(2), 7, 15, 24, 30])
    func supportedFrameRates(rate: UInt) throws {
        let configuration = StreamConfiguration(videoCodec: .hvc1, resolution: .low, frameRate: rate)
        #expect(configuration.frameRate == rate)
        #expect(configuration.isSupported)
        try configuration.validate()
        #expect(try StreamConfiguration.validated(videoCodec: .hvc1, resolution: .low, frameRate: rate) == configuration)
        let (_, camera) = try Rig().camera(configuration)
        #expect(camera.stream.streamConfiguration.frameRate == rate)
    }

    @Test("stream configuration: other frame rates kept as given, then refused (never rounded)", arguments: [UInt(0), 1, 10, 25, 29, 60])
    func unsupportedFrameRates(rate: UInt) throws {
        let configuration = StreamConfiguration(videoCodec: .raw, resolution: .medium, frameRate: rate)
        #expect(configuration.frameRate == rate, "kept as given, not rounded")
        #expect(!configuration.isSupported)
        let expected = StreamConfigurationError(frameRate: rate)
        #expect(throws: expected) { try configuration.validate() }
        #expect(throws: expected) { try StreamConfiguration.validated(frameRate: rate) }
        #expect(expected.description.contains("2, 7, 15, 24 or 30"))
        #expect(expected.localizedDescription == expected.message)
    }

    @Test("an unsupported frame rate is refused where DAT code expects errors: addCamera(config:)")
    func addCameraRefusesUnsupportedRate() throws {
        let rig = try Rig()
        let session = try rig.startedSession()
        let configuration = StreamConfiguration(videoCodec: .hvc1, resolution: .low, frameRate: 25)
        do {
            _ = try session.addCamera(config: configuration)
            Issue.record("addCamera accepted 25 fps")
        } catch {
            #expect(error == .unsupportedStreamConfiguration(StreamConfigurationError(frameRate: 25)))
            #expect(error == .unexpectedError(description: StreamConfigurationError(frameRate: 25).message))
            #expect(error.localizedDescription.contains("Unsupported frame rate 25 fps"))
        }
        // Nothing was attached: a supported configuration works straight away.
        let camera = try #require(try session.addCamera(config: StreamConfiguration(videoCodec: .hvc1, resolution: .low, frameRate: 24)))
        #expect(camera.stream.streamConfiguration.frameRate == 24)
    }

    @Test("stream configuration defaults and sizes")
    func streamDefaults() {
        let configuration = StreamConfiguration()
        #expect(configuration.videoCodec == .raw)
        #expect(configuration.resolution == .medium)
        #expect(configuration.frameRate == 30)
        #expect(StreamingResolution.high.videoFrameSize == VideoFrameSize(width: 720, height: 1280))
        #expect(StreamingResolution.medium.videoFrameSize == VideoFrameSize(width: 504, height: 896))
        #expect(StreamingResolution.low.videoFrameSize == VideoFrameSize(width: 360, height: 640))
    }
}
