// The only module that uses libbluetooth (through CBlueZ): what BlueZ's headers define for RFCOMM client sockets.
// Only Linux builds link it; GlassesLink's RFCOMMSocket opens and connects the socket through its own SocketCalls.
import CBlueZ
import Glibc

/// BlueZ's RFCOMM constants and socket addresses.
package enum RFCOMMAddressing {
    /// The address family of Bluetooth sockets (`AF_BLUETOOTH`).
    package static var family: Int32 { cbluez_af_bluetooth() }
    /// The RFCOMM protocol number (`BTPROTO_RFCOMM`).
    package static var rfcommProtocol: Int32 { cbluez_btproto_rfcomm() }

    /// Calls `body` with the `sockaddr_rc` of `device` (`AA:BB:CC:DD:EE:FF`) and `channel` (0: any, for binding a
    /// local adapter), or returns nil when `device` is not a Bluetooth address.
    package static func withSocketAddress<T>(
        device: String, channel: UInt8, _ body: (UnsafePointer<sockaddr>, socklen_t) -> T
    ) -> T? {
        var address = sockaddr_rc()
        address.rc_family = sa_family_t(family)
        address.rc_channel = channel
        guard str2ba(device, &address.rc_bdaddr) == 0 else { return nil }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_rc>.size)) }
        }
    }
}
