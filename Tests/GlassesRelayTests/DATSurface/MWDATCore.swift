// A typecheck-only stand-in for Meta's MWDATCore: exactly the DAT 1.0 public surface that
// `../shared/reference/dat-sdk.md` §1 quotes from the shipped .swiftinterface (§1.1–1.5, §1.9), declarations
// only. DATSurfaceTests compiles it into a module named MWDATCore and typechecks the relay's DAT client against
// it, so the client provably uses nothing else. It is never linked or run: every body traps.
import Foundation

public typealias DeviceIdentifier = Swift.String

/// DAT's error protocol.
public protocol DatError: LocalizedError, Sendable {}

public enum WearablesError: Int, Error, Sendable {
    case internalError = 0, alreadyConfigured = 1, configurationError = 2, missingInfoDictionary = 3,
         missingBundleIdentifier = 4, missingAppName = 5, missingAppVersion = 6, missingBuildNumber = 7
}

public enum Wearables {
    public static func configure() throws(WearablesError) { fatalError("surface only") }
    public static var shared: any WearablesInterface { fatalError("surface only") }
}

public enum RegistrationState: Int, Sendable { case unavailable, available, registering, registered }
public enum RegistrationError: Error, Sendable {
    case alreadyRegistered, configurationInvalid, metaAINotInstalled, networkUnavailable, unknown
}
public enum UnregistrationError: Error, Sendable { case alreadyUnregistered, configurationInvalid, metaAINotInstalled, unknown }
public enum WearablesHandleURLError: Error, Sendable { case registrationError, unregistrationError }
public enum NavigationError: Error, Sendable { case metaAINotInstalled, notRegistered }
public enum RegistrationRequestError: Error, Sendable {
    case invalidRequest, alreadyHandled, configurationInvalid, networkUnavailable, metaAINotInstalled,
         registrationFailed, cancellationFailed
}
public final class RegistrationRequest: Sendable {
    public var flowID: String { fatalError("surface only") }
    public var protocolVersion: Int { fatalError("surface only") }
    public func continueRegistration() async throws(RegistrationRequestError) { fatalError("surface only") }
    public func cancelRegistration() async throws(RegistrationRequestError) { fatalError("surface only") }
}

public protocol WearablesInterface: Sendable {
    var registrationState: RegistrationState { get }
    func addRegistrationStateListener(_ listener: @escaping @Sendable (RegistrationState) -> Void) -> any AnyListenerToken
    func registrationStateStream() -> AsyncStream<RegistrationState>
    func startRegistration() async throws(RegistrationError)
    func handleUrl(_ url: URL) async throws(WearablesHandleURLError) -> Bool
    func handleUrl(_ url: URL, onRegistrationRequest callback: @escaping @Sendable (RegistrationRequest) -> Void) async throws(WearablesHandleURLError) -> Bool
    func startUnregistration() async throws(UnregistrationError)
    func openFirmwareUpdate() async throws(NavigationError)
    func openDATGlassesAppUpdate() async throws(NavigationError)
    var devices: [DeviceIdentifier] { get }
    func addDevicesListener(_ listener: @escaping @Sendable ([DeviceIdentifier]) -> Void) -> any AnyListenerToken
    func devicesStream() -> AsyncStream<[DeviceIdentifier]>
    func deviceForIdentifier(_ identifier: DeviceIdentifier) -> Device?
    func checkPermissionStatus(_ permission: Permission) async throws(PermissionError) -> PermissionStatus
    func requestPermission(_ permission: Permission) async throws(PermissionError) -> PermissionStatus
    func createSession(deviceSelector: any DeviceSelector) throws(DeviceSessionError) -> DeviceSession
}

// §1.2 Permissions
public enum Permission: Sendable, CaseIterable { case camera, microphone }
public enum PermissionStatus: Sendable { case granted, denied }
public enum PermissionError: Int, DatError {
    case noDevice, noDeviceWithConnection, connectionError, metaAINotInstalled, requestInProgress, requestTimeout,
         internalError
}

// §1.3 Device and its state. DeviceType's cases are not quoted in §1; these are the DAT 1.0 models WearablesKit
// lists (the relay reads a DeviceType only through its case name).
public enum LinkState: Sendable { case disconnected, connecting, connected }
public enum ChargingState: Sendable { case unknown, charging, notCharging }
public enum DonState: Sendable { case unknown, doffed, donned }
public enum HingeState: Sendable { case unknown, closed, open }
public enum ThermalLevel: Sendable { case unknown, none, light, moderate, severe, critical, emergency, shutdown }
public enum Compatibility: Sendable { case undefined, compatible, deviceUpdateRequired, sdkUpdateRequired }
public enum DeviceType: Sendable {
    case unknown, rayBanMeta, oakleyMetaHSTN, metaRayBanDisplay, oakleyMetaVanguard, rayBanMetaOptics, metaGlasses
}

public struct DeviceState: Sendable, Equatable {
    public let linkState: LinkState
    public let compatibility: Compatibility
    public let batteryLevel: Int?
    public let chargingState: ChargingState
    public let donState: DonState
    public let hingeState: HingeState
    public let thermalLevel: ThermalLevel
}

public final class Device: Sendable {
    public let identifier: DeviceIdentifier
    public var name: String { fatalError("surface only") }
    public var deviceUUID: UUID { fatalError("surface only") }
    public func nameOrId() -> String { fatalError("surface only") }
    public var linkState: LinkState { fatalError("surface only") }
    public var batteryLevel: Int? { fatalError("surface only") }
    public var chargingState: ChargingState { fatalError("surface only") }
    public var donState: DonState { fatalError("surface only") }
    public var hingeState: HingeState { fatalError("surface only") }
    public var thermalLevel: ThermalLevel { fatalError("surface only") }
    public func addDeviceStateListener(_ l: @escaping @Sendable (DeviceState) -> Void) -> any AnyListenerToken { fatalError("surface only") }
    public func addLinkStateListener(_ l: @escaping @Sendable (LinkState) -> Void) -> any AnyListenerToken { fatalError("surface only") }
    public func addCompatibilityListener(_ l: @escaping @Sendable (Compatibility) -> Void) -> any AnyListenerToken { fatalError("surface only") }
    public func deviceType() -> DeviceType { fatalError("surface only") }
    public func compatibility() -> Compatibility { fatalError("surface only") }
    public func supportsDisplay() -> Bool { fatalError("surface only") }
    private init() { fatalError("surface only") }
}

// §1.4 Device selectors
public struct AnyAsyncSequence<Element>: AsyncSequence {
    public struct AsyncIterator: AsyncIteratorProtocol {
        public mutating func next() async -> Element? { fatalError("surface only") }
    }
    public func makeAsyncIterator() -> AsyncIterator { fatalError("surface only") }
}
public protocol DeviceSelector: Sendable {
    var activeDevice: DeviceIdentifier? { get }
    func activeDeviceStream() -> AnyAsyncSequence<DeviceIdentifier?>
}
public final class SpecificDeviceSelector: DeviceSelector {
    public init(device: DeviceIdentifier) { fatalError("surface only") }
    public var activeDevice: DeviceIdentifier? { fatalError("surface only") }
    public func activeDeviceStream() -> AnyAsyncSequence<DeviceIdentifier?> { fatalError("surface only") }
}
public typealias DeviceFilter = @Sendable (Device) -> Bool
public final class AutoDeviceSelector: DeviceSelector {
    public init(wearables: any WearablesInterface, filter: DeviceFilter? = nil) { fatalError("surface only") }
    public var activeDevice: DeviceIdentifier? { fatalError("surface only") }
    public func activeDeviceStream() -> AnyAsyncSequence<DeviceIdentifier?> { fatalError("surface only") }
}

// §1.5 DeviceSession
@frozen public enum DeviceSessionState: Sendable { case idle, starting, started, paused, stopping, stopped }
public enum DeviceSessionError: DatError, Equatable {
    case noEligibleDevice, sessionAlreadyStopped, sessionAlreadyExists, sessionIdle, capabilityAlreadyActive,
         capabilityNotFound, unexpectedError(description: String), thermalCritical, thermalEmergency,
         peakPowerShutdown, batteryCritical, datAppOnTheGlassesUpdateRequired, dwaUnavailable,
         insufficientSDKVersion, dwaOutOfStuRange
}
@frozen public enum CapabilityState: Sendable { case active, stopped }

public final class DeviceSession: Sendable {
    public let deviceId: DeviceIdentifier
    public var statePublisher: any Announcer<DeviceSessionState> { fatalError("surface only") }
    public var errorPublisher: any Announcer<DeviceSessionError> { fatalError("surface only") }
    public var state: DeviceSessionState { fatalError("surface only") }
    public var device: Device? { fatalError("surface only") }
    public func start() throws(DeviceSessionError) { fatalError("surface only") }
    public func stop() { fatalError("surface only") }
    public func stateStream() -> AsyncStream<DeviceSessionState> { fatalError("surface only") }
    public func errorStream() -> AsyncStream<DeviceSessionError> { fatalError("surface only") }
    private init() { fatalError("surface only") }
}

// §1.9 Listener tokens
public protocol Announcer<T>: Sendable {
    associatedtype T: Sendable
    func listen(_ listener: @escaping @Sendable (T) -> Void) -> any AnyListenerToken
}
public protocol AnyListenerToken: Sendable {
    func cancel() async
}
extension AnyListenerToken {
    public func store(in bag: ListenerTokenBag) { fatalError("surface only") }
}
public actor ListenerTokenBag {
    public init() {}
    public nonisolated func insert(_ token: (any AnyListenerToken)?) { fatalError("surface only") }
    public nonisolated func clear() { fatalError("surface only") }
    public func cancelAll() async { fatalError("surface only") }
}
