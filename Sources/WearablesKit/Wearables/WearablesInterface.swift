/// What an app can do with its glasses: DAT's `WearablesInterface`, plus the Linux way to connect them.
///
/// Registration and the Meta AI app do not exist on Linux: glasses become known when a link to them is attached
/// with ``attach(link:pairingToken:)`` and they introduce themselves, and permissions are answered by the glasses
/// over that link.
public protocol WearablesInterface: Sendable {
    /// The configuration this instance was made with.
    var configuration: WearablesConfiguration { get }
    /// The identifiers of every pair of glasses that ever introduced itself, in order of first appearance.
    var devices: [DeviceIdentifier] { get }
    /// Calls `listener` with the current device list at once and after every change.
    func addDevicesListener(_ listener: @escaping @Sendable ([DeviceIdentifier]) -> Void) -> any AnyListenerToken
    /// The current device list first, then every change.
    func devicesStream() -> AsyncStream<[DeviceIdentifier]>
    /// The known device with this identifier.
    func deviceForIdentifier(_ identifier: DeviceIdentifier) -> Device?
    /// Asks the connected glasses, silently, whether `permission` is granted (granted on any glasses counts).
    func checkPermissionStatus(_ permission: Permission) async throws(PermissionError) -> PermissionStatus
    /// Asks the connected glasses to request `permission` from the wearer and returns the answer.
    func requestPermission(_ permission: Permission) async throws(PermissionError) -> PermissionStatus
    /// Creates an idle session on the glasses the selector picks.
    /// - Throws: ``DeviceSessionError/noEligibleDevice`` when it picks none,
    ///   ``DeviceSessionError/sessionAlreadyExists`` when those glasses have a session that has not stopped.
    func createSession(deviceSelector: any DeviceSelector) throws(DeviceSessionError) -> DeviceSession
    /// Takes ownership of a link to a pair of glasses: opens it, greets the glasses and tracks them.
    ///
    /// The glasses become known (and connected) when their `hello` arrives and stay connected while the link lives.
    /// A later link from glasses with the same identifier reconnects the same ``Device``.
    func attach(link: any DeviceLink, pairingToken: String?)
}

extension WearablesInterface {
    /// Attaches a link that needs no pairing token (in-process, unix socket, loopback TCP, RFCOMM).
    public func attach(link: any DeviceLink) {
        attach(link: link, pairingToken: nil)
    }
}
