// The only file that uses libbluetooth: RFCOMM client sockets through BlueZ.
import CBlueZ
import Foundation
import WearablesKit

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
        let family = cbluez_af_bluetooth()
        let handle: SocketHandle
        switch SocketCalls.socket(domain: family, type: Int32(SOCK_STREAM.rawValue), protocol: cbluez_btproto_rfcomm())
        {
        case .success(let created):
            handle = created
        case .failure(let error) where error.code == EAFNOSUPPORT:
            throw LinkError(.unavailable, unavailableMessage)
        case .failure(let error):
            throw LinkError(.unavailable, "cannot create a Bluetooth RFCOMM socket: \(error)")
        }
        if let adapter {
            var local = sockaddr_rc()
            local.rc_family = sa_family_t(family)
            local.rc_channel = 0
            guard str2ba(adapter, &local.rc_bdaddr) == 0 else {
                throw LinkError(.unavailable, "'\(adapter)' is not a Bluetooth adapter address")
            }
            let status = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(handle.descriptor, $0, socklen_t(MemoryLayout<sockaddr_rc>.size))
                }
            }
            if status != 0 {
                throw LinkError(
                    .unavailable, "cannot use Bluetooth adapter \(adapter): \(SocketCalls.describe(errno))")
            }
        }
        var remote = sockaddr_rc()
        remote.rc_family = sa_family_t(family)
        remote.rc_channel = channel
        guard str2ba(device, &remote.rc_bdaddr) == 0 else {
            throw LinkError(.unavailable, "'\(device)' is not a Bluetooth device address")
        }
        let failure = withUnsafePointer(to: &remote) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                SocketCalls.connect(
                    handle, address: $0, length: socklen_t(MemoryLayout<sockaddr_rc>.size), timeout: timeout)
            }
        }
        if let failure {
            throw LinkError(
                .unavailable,
                "cannot connect to bt:\(device)@\(channel): \(SocketCalls.describe(failure))")
        }
        return handle
    }
}
