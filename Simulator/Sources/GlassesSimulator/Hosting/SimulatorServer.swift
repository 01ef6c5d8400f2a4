import Foundation
import GlassesLink
import Synchronization
import WearablesKit

/// Serves simulated glasses on a Unix or TCP address: each host that connects is attached to the glasses (a new
/// connection replaces the previous one; connections while the glasses are powered off are closed at once).
public final class SimulatorServer: Sendable {
    /// The glasses being served.
    public let glasses: SimulatedGlasses
    /// The address actually bound (with the chosen port for `tcp:HOST:0`).
    public let address: LinkAddress
    private let listener: LinkListener

    /// Starts listening.
    /// - Throws: `LinkError` when the address cannot be bound.
    public init(glasses: SimulatedGlasses, address: LinkAddress,
                options: LinkListenerOptions = LinkListenerOptions()) throws(LinkError) {
        self.glasses = glasses
        listener = try LinkListener.listen(on: address, options: options) { [weak glasses] link in
            guard let glasses else {
                link.close()
                return
            }
            if glasses.isPoweredOn {
                glasses.attach(link)
            } else {
                link.open { _ in }
                link.close()
            }
        }
        self.address = listener.address
    }

    /// Stops listening and closes the connection.
    public func stop() {
        listener.stop()
    }
}
