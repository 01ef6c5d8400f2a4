import Foundation

/// The identifier of a pair of glasses.
public typealias DeviceIdentifier = String

/// Whether the host has a link to the glasses.
public enum LinkState: String, Sendable, Hashable, Codable, CaseIterable { case disconnected, connecting, connected }
/// Whether the glasses are charging.
public enum ChargingState: String, Sendable, Hashable, Codable, CaseIterable { case unknown, charging, notCharging }
/// Whether the glasses are worn.
public enum DonState: String, Sendable, Hashable, Codable, CaseIterable { case unknown, doffed, donned }
/// Whether the glasses' hinges are open (unfolded) or closed (folded).
public enum HingeState: String, Sendable, Hashable, Codable, CaseIterable { case unknown, closed, open }
/// The thermal level of the glasses, in increasing severity.
public enum ThermalLevel: String, Sendable, Hashable, Codable, CaseIterable, Comparable {
    case unknown, none, light, moderate, severe, critical, emergency, shutdown

    /// Orders levels by severity (`unknown` lowest).
    public static func < (lhs: ThermalLevel, rhs: ThermalLevel) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}
/// Whether this SDK and the glasses' software can work together.
public enum Compatibility: String, Sendable, Hashable, Codable, CaseIterable {
    case undefined, compatible, deviceUpdateRequired, sdkUpdateRequired
}
/// The kind of glasses: every model DAT 1.0 lists, in its order, and nothing else.
///
/// DAT has no simulated device type (Meta's MockDeviceKit pairs a real model), so neither has WearablesKit:
/// simulated glasses report a real model, ``simulated`` by default, and a `switch` over the seven cases below
/// is exhaustive exactly as DAT code writes it.
public enum DeviceType: String, Sendable, Hashable, Codable, CaseIterable {
    /// The model is not known to this SDK.
    case unknown
    /// Ray-Ban Meta.
    case rayBanMeta
    /// Oakley Meta HSTN.
    case oakleyMetaHSTN
    /// Oakley Meta Vanguard.
    case oakleyMetaVanguard
    /// Meta Ray-Ban Display (the model with a display).
    case metaRayBanDisplay
    /// Ray-Ban Meta Optics.
    case rayBanMetaOptics
    /// Meta Glasses.
    case metaGlasses

    /// The model simulated glasses report by default: ``rayBanMeta``, as MockDeviceKit's usual
    /// `pairGlasses(model: .rayBanMeta)`. Not a case of its own: DAT has none, and an extra case would break
    /// exhaustive `switch` statements. It does not tell simulated glasses from real ones.
    public static let simulated: DeviceType = .rayBanMeta
}

/// A snapshot of everything the glasses report about themselves.
public struct DeviceState: Sendable, Hashable, Codable {
    /// The link between host and glasses.
    public var linkState: LinkState
    /// Software compatibility.
    public var compatibility: Compatibility
    /// Battery level in percent, if known.
    public var batteryLevel: Int?
    /// Charging state.
    public var chargingState: ChargingState
    /// Worn or not.
    public var donState: DonState
    /// Folded or not.
    public var hingeState: HingeState
    /// Thermal level.
    public var thermalLevel: ThermalLevel

    /// Creates a device state; defaults describe glasses that are connected, worn, open, cool and at 100 %.
    public init(
        linkState: LinkState = .connected,
        compatibility: Compatibility = .compatible,
        batteryLevel: Int? = 100,
        chargingState: ChargingState = .notCharging,
        donState: DonState = .donned,
        hingeState: HingeState = .open,
        thermalLevel: ThermalLevel = .none
    ) {
        self.linkState = linkState
        self.compatibility = compatibility
        self.batteryLevel = batteryLevel
        self.chargingState = chargingState
        self.donState = donState
        self.hingeState = hingeState
        self.thermalLevel = thermalLevel
    }
}

/// A permission the glasses grant to the host app.
public enum Permission: String, Sendable, Hashable, Codable, CaseIterable { case camera, microphone }
/// The answer to a permission query or request.
public enum PermissionStatus: String, Sendable, Hashable, Codable { case granted, denied }

/// The format of a still photo.
public enum PhotoCaptureFormat: String, Sendable, Hashable, Codable, CaseIterable { case heic, jpeg }

/// A still photo captured from the glasses during a stream.
public struct PhotoData: Sendable, Hashable {
    /// The encoded image.
    public let data: Data
    /// Its format.
    public let format: PhotoCaptureFormat

    /// Creates photo data.
    public init(data: Data, format: PhotoCaptureFormat) {
        self.data = data
        self.format = format
    }
}
