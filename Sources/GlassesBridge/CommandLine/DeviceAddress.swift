/// Where the glasses are: the value of `--device`.
public enum DeviceAddress: Sendable, Hashable, CustomStringConvertible {
    /// The built-in simulator, in-process (`sim`).
    case simulator
    /// A simulator or relay serving the link protocol on a Unix-domain socket (`unix:PATH`).
    case unix(path: String)
    /// A simulator or relay serving the link protocol over TCP (`tcp:HOST:PORT`).
    case tcp(host: String, port: UInt16)
    /// Glasses over Bluetooth RFCOMM (`bt:ADDRESS[@CHANNEL]`).
    case bluetooth(address: String, channel: UInt8?)
    /// A recording made with `--record` (or any Y4M, MP4 or Matroska file), played back (`file:PATH`).
    case file(path: String)

    /// Parses the textual form used on the command line.
    /// - Throws: ``BridgeUsageError`` naming the accepted forms.
    public init(parsing text: String) throws(BridgeUsageError) {
        func bad(_ why: String) -> BridgeUsageError {
            BridgeUsageError(
                "invalid --device '\(text)': \(why). Use sim, unix:PATH, tcp:HOST:PORT, bt:ADDRESS[@CHANNEL] or file:PATH."
            )
        }
        if text == "sim" || text == "simulator" {
            self = .simulator
            return
        }
        guard let colon = text.firstIndex(of: ":") else { throw bad("no scheme") }
        let scheme = text[..<colon]
        let rest = String(text[text.index(after: colon)...])
        switch scheme {
        case "unix":
            guard !rest.isEmpty else { throw bad("the socket path is empty") }
            self = .unix(path: rest)
        case "file":
            guard !rest.isEmpty else { throw bad("the file path is empty") }
            self = .file(path: rest)
        case "tcp":
            guard let portColon = rest.lastIndex(of: ":") else { throw bad("expected HOST:PORT") }
            var host = String(rest[..<portColon])
            if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
            guard !host.isEmpty else { throw bad("the host is empty") }
            guard let port = UInt16(rest[rest.index(after: portColon)...]), port > 0 else {
                throw bad("the port must be a number from 1 to 65535")
            }
            self = .tcp(host: host, port: port)
        case "bt":
            var address = rest
            var channel: UInt8?
            if let at = rest.firstIndex(of: "@") {
                address = String(rest[..<at])
                guard let value = UInt8(rest[rest.index(after: at)...]), (1...30).contains(value) else {
                    throw bad("the RFCOMM channel must be a number from 1 to 30")
                }
                channel = value
            }
            guard Self.isBluetoothAddress(address) else {
                throw bad("'\(address)' is not a Bluetooth address like 12:34:56:78:9A:BC")
            }
            self = .bluetooth(address: address.uppercased(), channel: channel)
        default:
            throw bad("unknown scheme '\(scheme)'")
        }
    }

    /// Whether `text` has the form `XX:XX:XX:XX:XX:XX` with hexadecimal digits.
    static func isBluetoothAddress(_ text: String) -> Bool {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        return parts.count == 6 && parts.allSatisfy { $0.count == 2 && UInt8($0, radix: 16) != nil }
    }

    /// Whether this is the in-process simulator.
    public var isSimulator: Bool { self == .simulator }

    /// The command-line form, e.g. `tcp:127.0.0.1:7001`.
    public var description: String {
        switch self {
        case .simulator: "sim"
        case .unix(let path): "unix:\(path)"
        case .tcp(let host, let port): host.contains(":") ? "tcp:[\(host)]:\(port)" : "tcp:\(host):\(port)"
        case .bluetooth(let address, let channel): channel.map { "bt:\(address)@\($0)" } ?? "bt:\(address)"
        case .file(let path): "file:\(path)"
        }
    }
}
