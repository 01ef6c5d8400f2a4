import GlassesBridge
import GlassesLink

/// Where the frames come from, the value of `--device`: the built-in simulator, a recording, or a device that
/// speaks the link protocol at a ``LinkAddress``. The one address type of the command; link addresses are parsed
/// by ``LinkAddress`` alone.
package enum DeviceAddress: Sendable, Hashable, CustomStringConvertible {
    /// The built-in simulator, in-process (`sim`).
    case simulator
    /// A recording made with `--record` (or any Y4M, MP4 or Matroska file), played back (`file:PATH`).
    case file(path: String)
    /// A simulator, relay or board serving the link protocol (`unix:PATH`, `tcp:HOST:PORT`, `bt:ADDRESS[@CHANNEL]`).
    case link(LinkAddress)
    /// A relay that dials in: the bridge listens here (`--listen tcp:HOST:PORT|unix:PATH`).
    case listening(LinkAddress)
    /// A network stream a phone app publishes (`rtmp://…`, `srt://…`, `udp://…`), taken through libavformat.
    case stream(NetworkStreamAddress)

    /// A link-protocol device on a Unix-domain socket.
    package static func unix(path: String) -> DeviceAddress { .link(.unix(path: path)) }
    /// A link-protocol device over TCP.
    package static func tcp(host: String, port: UInt16) -> DeviceAddress { .link(.tcp(host: host, port: port)) }
    /// A link-protocol device over Bluetooth RFCOMM (channel 1 when not given).
    package static func bluetooth(address: String, channel: UInt8?) -> DeviceAddress {
        .link(.bluetooth(address: address, channel: channel ?? 1))
    }

    /// Parses the textual form used on the command line.
    /// - Throws: ``BridgeUsageError`` naming the accepted forms.
    package init(parsing text: String) throws(BridgeUsageError) {
        func bad(_ why: String) -> BridgeUsageError {
            BridgeUsageError(
                "invalid --device '\(text)': \(why). Use sim, unix:PATH, tcp:HOST:PORT, bt:ADDRESS[@CHANNEL], file:PATH, "
                    + "rtmp://HOST:PORT/APP/KEY, srt://HOST:PORT?mode=listener or udp://127.0.0.1:PORT."
            )
        }
        if NetworkStreamAddress.isStreamURL(text) {
            do {
                self = .stream(try NetworkStreamAddress(parsing: text))
            } catch {
                // The URL may hold a secret: it is named by its redacted form where it parsed, else not repeated.
                throw BridgeUsageError("invalid --device: \(error.message).")
            }
            return
        }
        if text == "sim" || text == "simulator" {
            self = .simulator
            return
        }
        guard let colon = text.firstIndex(of: ":") else { throw bad("no scheme") }
        let scheme = text[..<colon]
        switch scheme {
        case "file":
            let path = String(text[text.index(after: colon)...])
            guard !path.isEmpty else { throw bad("the file path is empty") }
            self = .file(path: path)
        case "unix", "tcp", "bt":
            let address: LinkAddress
            do {
                address = try LinkAddress(parsing: text)
            } catch {
                throw bad(error.reason)
            }
            if case .tcp(_, 0) = address { throw bad("the port must be a number from 1 to 65535") }
            self = .link(address)
        default:
            throw bad("unknown scheme '\(scheme)'")
        }
    }

    /// Whether this is the in-process simulator.
    package var isSimulator: Bool { self == .simulator }

    /// Whether this is a recording (`file:PATH`).
    package var isFile: Bool {
        if case .file = self { true } else { false }
    }

    /// The link address, for glasses (or a relay) reached over a socket or Bluetooth, dialled or listened on.
    package var linkAddress: LinkAddress? {
        switch self {
        case .link(let address), .listening(let address): address
        case .simulator, .file, .stream: nil
        }
    }

    /// The network stream, for `rtmp://`, `srt://` and `udp://` devices.
    package var streamAddress: NetworkStreamAddress? {
        if case .stream(let address) = self { return address }
        return nil
    }

    /// The command-line form, e.g. `tcp:127.0.0.1:7001`.
    package var description: String {
        switch self {
        case .simulator: "sim"
        case .file(let path): "file:\(path)"
        case .link(let address): address.description
        case .listening(let address): "listen:\(address)"
        case .stream(let address): address.description
        }
    }
}

extension LinkAddress {
    /// The usage error for dialling this address, which is not on loopback, without a pairing token.
    var missingTokenError: BridgeUsageError {
        if case .bluetooth = self {
            return BridgeUsageError("--device \(self) needs --token TOKEN (or set GLASSES_TOKEN): the pairing token the relay or board over Bluetooth was set up with.")
        }
        return BridgeUsageError("--device \(self) is another machine: give --token TOKEN (or set GLASSES_TOKEN), the token the relay or glasses-sim was started with.")
    }
}
