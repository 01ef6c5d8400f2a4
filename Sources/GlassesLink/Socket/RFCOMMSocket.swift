// RFCOMM client sockets: BlueZ's addresses and constants come from GlassesBluetooth (the only user of libbluetooth,
// linked only on Linux); the socket calls are this module's.
import Foundation
import WearablesKit

#if canImport(GlassesBluetooth)
    import GlassesBluetooth
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// RFCOMM client sockets through BlueZ's libbluetooth.
enum RFCOMMSocket {
    /// The one line reported when the kernel has no Bluetooth socket family.
    static let unavailableMessage =
        "Bluetooth is not available in this kernel (socket(AF_BLUETOOTH, RFCOMM) failed: EAFNOSUPPORT); use a unix: or tcp: link"

    static func connect(
        device: String,
        channel: UInt8,
        adapter: String?,
        timeout: Duration
    ) throws(LinkError) -> SocketHandle {
        #if canImport(GlassesBluetooth)
            let handle: SocketHandle
            switch SocketCalls.socket(
                domain: RFCOMMAddressing.family, type: Int32(SOCK_STREAM.rawValue),
                protocol: RFCOMMAddressing.rfcommProtocol)
            {
            case .success(let created):
                handle = created
            case .failure(let error) where error.code == EAFNOSUPPORT:
                throw LinkError(.unavailable, unavailableMessage)
            case .failure(let error):
                throw LinkError(.unavailable, "cannot create a Bluetooth RFCOMM socket: \(error)")
            }
            if let adapter {
                let outcome = RFCOMMAddressing.withSocketAddress(device: adapter, channel: 0) {
                    SocketCalls.bind(handle, address: $0, length: $1)
                }
                guard let outcome else {
                    throw LinkError(.unavailable, "'\(adapter)' is not a Bluetooth adapter address")
                }
                if let failure = outcome {
                    throw LinkError(.unavailable, "cannot use Bluetooth adapter \(adapter): \(failure)")
                }
            }
            let outcome = RFCOMMAddressing.withSocketAddress(device: device, channel: channel) {
                SocketCalls.connect(handle, address: $0, length: $1, timeout: timeout)
            }
            guard let outcome else {
                throw LinkError(.unavailable, "'\(device)' is not a Bluetooth device address")
            }
            if let failure = outcome {
                throw LinkError(
                    .unavailable,
                    "cannot connect to bt:\(device)@\(channel): \(SocketCalls.describe(failure))")
            }
            return handle
        #else
            throw LinkError(.unavailable, "Bluetooth RFCOMM links are available only on Linux; use a unix: or tcp: link")
        #endif
    }
}
