/// Where a link goes: a Unix socket path, a TCP host and port, or a Bluetooth device and RFCOMM channel.
///
/// Text forms: `unix:PATH`, `tcp:HOST:PORT` (IPv6 hosts in brackets: `tcp:[::1]:7000`),
/// `bt:AA:BB:CC:DD:EE:FF[@CHANNEL]` (channel 1–30, default 1).
public enum LinkAddress: Sendable, Hashable, CustomStringConvertible {
    /// A Unix domain stream socket at this path.
    case unix(path: String)
    /// A TCP endpoint.
    case tcp(host: String, port: UInt16)
    /// A Bluetooth device address (`AA:BB:CC:DD:EE:FF`) and RFCOMM channel.
    case bluetooth(address: String, channel: UInt8)

    /// The longest Unix socket path Linux accepts (`sun_path` holds 108 bytes with the terminating NUL).
    public static let maxUnixPathLength = 107

    /// Parses `unix:PATH`, `tcp:HOST:PORT` or `bt:AA:BB:CC:DD:EE:FF[@CHANNEL]`.
    /// - Throws: ``LinkAddressError`` naming what is wrong.
    public init(parsing text: String) throws(LinkAddressError) {
        func fail(_ reason: String) -> LinkAddressError { LinkAddressError(text: text, reason: reason) }
        if text.hasPrefix("unix:") {
            let path = String(text.dropFirst(5))
            guard !path.isEmpty else { throw fail("the socket path is empty") }
            guard path.utf8.count <= Self.maxUnixPathLength else {
                throw fail(
                    "the socket path is \(path.utf8.count) bytes; Linux allows at most \(Self.maxUnixPathLength)")
            }
            guard !path.utf8.contains(0) else { throw fail("the socket path contains a NUL byte") }
            self = .unix(path: path)
        } else if text.hasPrefix("tcp:") {
            let rest = text.dropFirst(4)
            let host: Substring
            let portText: Substring
            if rest.hasPrefix("[") {
                guard let close = rest.firstIndex(of: "]") else { throw fail("an IPv6 host needs a closing ']'") }
                host = rest[rest.index(after: rest.startIndex)..<close]
                let afterHost = rest[rest.index(after: close)...]
                guard afterHost.hasPrefix(":") else { throw fail("expected ':PORT' after the host") }
                portText = afterHost.dropFirst()
            } else {
                guard let colon = rest.lastIndex(of: ":") else { throw fail("expected tcp:HOST:PORT") }
                host = rest[..<colon]
                portText = rest[rest.index(after: colon)...]
                guard !host.contains(":") else { throw fail("put an IPv6 host in brackets: tcp:[::1]:PORT") }
            }
            guard !host.isEmpty else { throw fail("the host is empty") }
            guard let port = UInt16(portText) else {
                throw fail("'\(portText)' is not a port number (0–65535)")
            }
            self = .tcp(host: String(host), port: port)
        } else if text.hasPrefix("bt:") {
            let rest = text.dropFirst(3)
            let parts = rest.split(separator: "@", maxSplits: 1, omittingEmptySubsequences: false)
            let address = String(parts[0]).uppercased()
            guard Self.isBluetoothAddress(address) else {
                throw fail("'\(parts[0])' is not a Bluetooth address (six hex pairs: AA:BB:CC:DD:EE:FF)")
            }
            var channel: UInt8 = 1
            if parts.count == 2 {
                guard let value = UInt8(parts[1]), (1...30).contains(value) else {
                    throw fail("'\(parts[1])' is not an RFCOMM channel (1–30)")
                }
                channel = value
            }
            self = .bluetooth(address: address, channel: channel)
        } else {
            throw fail("expected unix:PATH, tcp:HOST:PORT or bt:AA:BB:CC:DD:EE:FF[@CHANNEL]")
        }
    }

    /// The text form, which ``init(parsing:)`` reads back.
    public var description: String {
        switch self {
        case .unix(let path): "unix:\(path)"
        case .tcp(let host, let port): host.contains(":") ? "tcp:[\(host)]:\(port)" : "tcp:\(host):\(port)"
        case .bluetooth(let address, let channel): "bt:\(address)@\(channel)"
        }
    }

    /// Whether the address reaches this machine only: a Unix socket, or a loopback TCP host. Anything else needs a
    /// pairing token.
    public var isLoopback: Bool {
        switch self {
        case .unix: true
        case .tcp(let host, _): Self.isLoopbackHost(host)
        case .bluetooth: false
        }
    }

    /// Whether a TCP host names this machine only (`localhost`, 127.0.0.0/8, `::1`).
    public static func isLoopbackHost(_ host: String) -> Bool {
        if host == "localhost" || host == "::1" || host == "0:0:0:0:0:0:0:1" { return true }
        let octets = host.split(separator: ".", omittingEmptySubsequences: false)
        return octets.count == 4 && octets[0] == "127" && octets.allSatisfy { UInt8($0) != nil }
    }

    /// Whether `text` has the form `AA:BB:CC:DD:EE:FF` with hexadecimal digits.
    public static func isBluetoothAddress(_ text: String) -> Bool {
        let pairs = text.split(separator: ":", omittingEmptySubsequences: false)
        return pairs.count == 6 && pairs.allSatisfy { $0.count == 2 && UInt8($0, radix: 16) != nil }
    }
}

/// A link address that could not be parsed.
public struct LinkAddressError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The text that was given.
    public var text: String
    /// What is wrong with it.
    public var reason: String

    /// Creates a parse error.
    public init(text: String, reason: String) {
        self.text = text
        self.reason = reason
    }

    /// `invalid link address 'TEXT': REASON`.
    public var description: String { "invalid link address '\(text)': \(reason)" }
}
