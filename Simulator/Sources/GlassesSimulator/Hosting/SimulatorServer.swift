import Foundation
import GlassesLink
import Synchronization
import WearablesKit

/// Serves simulated glasses on a Unix or TCP address: each host that connects is attached to the glasses (a new
/// connection replaces the previous one, which is cut without a goodbye; connections while the glasses are powered
/// off are closed at once).
///
/// The glasses' link is GlassesLink's device end (heartbeats, credit and pairing) on the listening socket itself.
/// The server installs the glasses' garbage writer (``SimulatedGlasses/setGarbageWriter(_:)``) on the current
/// link's raw-byte hook, which queues the bytes on the socket's writer between two frames, so the `garbage` fault
/// reaches the host's frame decoder.
public final class SimulatorServer: Sendable {
    /// The glasses being served.
    public let glasses: SimulatedGlasses
    /// The address actually bound (with the chosen port for `tcp:HOST:0`).
    public let address: LinkAddress
    private let listener: LinkListener

    /// Starts listening.
    /// - Throws: `LinkError` when the address cannot be bound (`.unavailable`, also for a non-loopback TCP address
    ///   without `allowRemote` and a pairing token, and for Bluetooth).
    public init(glasses: SimulatedGlasses, address: LinkAddress,
                options: LinkListenerOptions = LinkListenerOptions()) throws(LinkError) {
        self.glasses = glasses
        let links = ServedLink()
        listener = try LinkListener.listen(on: address, options: options) { [weak glasses] link in
            guard let glasses else {
                link.close()
                return
            }
            if glasses.isPoweredOn {
                links.replace(with: link)
                glasses.attach(link)
            } else {
                link.open { _ in }
                link.close()
            }
        }
        self.address = listener.address
        glasses.setGarbageWriter { bytes throws(SimulatorError) in try links.write(bytes) }
    }

    /// Stops listening and closes the connection.
    public func stop() {
        glasses.setGarbageWriter(nil)
        listener.stop()  // closes the glasses' link with a goodbye
    }
}

/// The link being served now (the newest one: a new host replaces the previous one, as the glasses do).
private final class ServedLink: Sendable {
    private let current = Mutex<(any HostLink)?>(nil)

    /// Makes `link` the served one and cuts the previous one, as a new connection on the glasses' radio would.
    func replace(with link: any HostLink) {
        let old = current.withLock { slot -> (any HostLink)? in
            defer { slot = link }
            return slot
        }
        (old as? any RawByteTransmitting)?.abort(LinkError(.connectionLost, "another host connected to the glasses"))
    }

    func write(_ bytes: Data) throws(SimulatorError) {
        guard let link = current.withLock({ $0 }) else {
            throw SimulatorError(.faultUnavailable, "garbage bytes could not be written: no host is connected",
                                 context: ["fault": "garbage", "count": "\(bytes.count)"])
        }
        guard let raw = link as? any RawByteTransmitting, raw.transmitRaw(Array(bytes)) else {
            throw SimulatorError(.faultUnavailable, "garbage bytes could not be written: the host's connection has closed",
                                 context: ["fault": "garbage", "count": "\(bytes.count)"])
        }
    }
}
