import Foundation
import GlassesBridge
import GlassesLink
import WearablesKit

/// `--listen`: a socket the phone relay dials, and the frame source that waits for each of its dials. The one place
/// both `glasses-bridge` and `glasses-bridge check` open a listener, so the two cannot drift apart.
struct ListeningSource {
    /// The listener (its address, with the port picked for `:0`, and its refusal counts).
    let listener: DeviceListener
    /// A source whose every connect waits (up to the connect timeout) for the relay's next dial.
    let source: BridgeSource

    /// Listens on `address` (any address other than loopback needs `token`, which the listener then asks of every
    /// relay); `onRefusal` hears each refused connection (wrong token, busy, another protocol).
    /// - Throws: ``BridgeFailure`` `.deviceUnavailable` when the address cannot be listened on.
    static func open(
        on address: LinkAddress, token: String?, scheduler: DispatchEventScheduler, connectTimeout: Duration,
        onRefusal: @escaping @Sendable (DeviceListener.Refusal) -> Void
    ) throws(BridgeFailure) -> ListeningSource {
        let listener: DeviceListener
        do {
            listener = try DeviceListener.listen(
                on: address,
                options: LinkListenerOptions(scheduler: scheduler, allowRemote: !address.isLoopback, pairingToken: token),
                onRefusal: onRefusal)
        } catch {
            // The listener's messages name the address already ("cannot listen on tcp:…: Address already in use").
            let message = error.message.hasPrefix("cannot listen on ")
                ? "C" + error.message.dropFirst() : "Cannot listen on \(address): \(error.message)"
            throw BridgeFailure(.deviceUnavailable, message)
        }
        let source = BridgeSource.dialledGlasses("listening on \(listener.address)") {
            do throws(LinkError) {
                return try listener.waitForDevice(timeout: connectTimeout)
            } catch {
                throw BridgeFailure(
                    .deviceUnavailable,
                    "\(error.message). Check that the relay runs, dials \(listener.address) (glasses-relay --connect \(listener.address)), and presents the same token.")
            }
        }
        return ListeningSource(listener: listener, source: source)
    }
}
