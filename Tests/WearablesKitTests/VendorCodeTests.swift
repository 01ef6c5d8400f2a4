// Written the way a DAT 1.0 app writes it: no `try` on StreamConfiguration, exhaustive switches without `default`
// over the sets DAT documents as closed, `@unknown default` over DAT's open error enums, and error text read
// through `localizedDescription`. This file compiling (with -warnings-as-errors) is most of the test.
import Foundation
import Testing
import WearablesKit

/// A label per model, as an app's settings screen would show it.
private func modelName(_ type: DeviceType) -> String {
    switch type {
    case .unknown: "Unknown glasses"
    case .rayBanMeta: "Ray-Ban Meta"
    case .oakleyMetaHSTN: "Oakley Meta HSTN"
    case .oakleyMetaVanguard: "Oakley Meta Vanguard"
    case .metaRayBanDisplay: "Meta Ray-Ban Display"
    case .rayBanMetaOptics: "Ray-Ban Meta Optics"
    case .metaGlasses: "Meta Glasses"
    }
}

/// What an app shows for a stream state (`StreamState` is `@frozen` in DAT).
private func streamLabel(_ state: StreamState) -> String {
    switch state {
    case .stopping: "stopping"
    case .stopped: "stopped"
    case .waitingForDevice: "waiting for glasses"
    case .starting: "starting"
    case .streaming: "live"
    case .paused: "paused"
    }
}

/// What an app does with a configuration failure (`WearablesError` is not frozen: `@unknown default`).
private func configureAdvice(_ error: WearablesError) -> String {
    switch error {
    case .internalError: "retry"
    case .alreadyConfigured: "ignore"
    case .configurationError: "fix the configuration"
    case .missingInfoDictionary, .missingBundleIdentifier, .missingAppName, .missingAppVersion, .missingBuildNumber:
        "fix the Info.plist"
    @unknown default: "unknown"
    }
}

/// Error text through DAT's common protocol.
private func message(of error: some DatError) -> String { error.localizedDescription }

@Suite("DAT 1.0 code compiles and behaves unchanged")
struct VendorCodeTests {
    @Test("DeviceType has exactly DAT 1.0's models, in DAT's order")
    func deviceTypes() {
        #expect(DeviceType.allCases == [
            .unknown, .rayBanMeta, .oakleyMetaHSTN, .oakleyMetaVanguard, .metaRayBanDisplay, .rayBanMetaOptics, .metaGlasses,
        ])
        #expect(DeviceType.allCases.map(modelName).count == 7)
        #expect(DeviceType.simulated == .rayBanMeta, "simulated glasses report a real model, as MockDeviceKit's do")
    }

    @Test("StreamConfiguration is built without try, as in DAT 1.0")
    func configurationWithoutTry() {
        let config = StreamConfiguration(videoCodec: .hvc1, resolution: .low, frameRate: 24)
        #expect(config.videoCodec == .hvc1 && config.resolution == .low && config.frameRate == 24)
        #expect(StreamConfiguration().frameRate == 30)
        #expect(streamLabel(.streaming) == "live")
    }

    @Test("WearablesError has DAT's cases and numbers; those about the bundle are never raised on Linux")
    func wearablesErrorCases() {
        let numbers: [(WearablesError, Int)] = [
            (.internalError, 0), (.alreadyConfigured, 1), (.configurationError, 2), (.missingInfoDictionary, 3),
            (.missingBundleIdentifier, 4), (.missingAppName, 5), (.missingAppVersion, 6), (.missingBuildNumber, 7),
        ]
        for (error, number) in numbers {
            #expect(error.rawValue == number)
            #expect(WearablesError(rawValue: number) == error)
        }
        #expect(configureAdvice(.missingAppName) == "fix the Info.plist")
    }

    @Test("every DAT error is a DatError whose localizedDescription is its own message")
    func datErrorsReadAsTheirMessage() {
        let errors: [any DatError] = [
            WearablesError.alreadyConfigured, PermissionError.requestTimeout, DeviceSessionError.noEligibleDevice,
            DeviceSessionError.unexpectedError(description: "Session ended by device"), StreamError.hingesClosed,
            StreamError.deviceNotConnected("glasses-1"),
        ]
        for error in errors {
            let text = error.localizedDescription
            #expect(text == error.errorDescription, "\(error)")
            #expect(!text.contains("The operation couldn’t be completed") && !text.contains("error 0"), "\(error)")
        }
        #expect(message(of: StreamError.thermalHot).contains("too hot"))
    }

    @Test("the other public WearablesKit errors read as their message through Foundation")
    func otherErrorsReadAsTheirMessage() throws {
        let link: any Error = LinkError(.connectionLost, "the glasses went away")
        #expect(link.localizedDescription == "the glasses went away")
        let configuration: any Error = StreamConfigurationError(frameRate: 25)
        #expect(configuration.localizedDescription.hasPrefix("Unsupported frame rate 25 fps"))
        let settings: any Error = WearablesConfigurationError(setting: "startTimeout", message: "must be more than 0 s")
        #expect(settings.localizedDescription == "startTimeout: must be more than 0 s")
    }
}
