import Foundation
import GlassesVideo

/// A network stream as a source (`--device rtmp://…`, `srt://…`, `udp://…`): what phone apps that stream the
/// glasses' camera publish, taken through libavformat.
///
/// Forms, and who may send:
/// - `rtmp://HOST:PORT/APP/KEY` (or `rtmp://HOST:PORT/APP` with the key from `--token`): the bridge listens for
///   one RTMP publisher on HOST:PORT (1935 when left out). A publish to any stream key other than KEY is refused
///   and the bridge listens again. Off loopback a key is required. FLV carries H.264 (FFmpeg 5.1).
/// - `srt://HOST:PORT?mode=listener` (listens) or `srt://HOST:PORT` / `?mode=caller` (dials a publisher that
///   listens), with `passphrase=P` in the URL or from `--token` (SRT's AES encryption and authentication; 10–79
///   characters). Off loopback a passphrase is required. MPEG-TS carrying HEVC or H.264.
/// - `udp://127.0.0.1:PORT`: MPEG-TS datagrams, on loopback only: UDP gives no way to check who sends.
/// - `rtsp://[USER[:PASSWORD]@]HOST:PORT/PATH` (554 when left out): the bridge pulls the stream from an RTSP
///   server (a phone app that serves its camera), RTP over the RTSP connection (`transport=tcp`, the default) or
///   over UDP (`transport=udp`); the password from the URL or `--token`. `rtsp://127.0.0.1:PORT/PATH?mode=listener`:
///   the bridge is the server a publisher records to (`ffmpeg -f rtsp`), on loopback only: libavformat's RTSP
///   server checks no credentials. H.264 or HEVC.
public struct NetworkStreamAddress: Sendable, Hashable, CustomStringConvertible {
    /// The protocol.
    public enum Scheme: String, Sendable, Hashable, CaseIterable {
        case rtmp, srt, udp, rtsp
    }

    /// The protocol.
    public let scheme: Scheme
    /// The host to listen on or dial.
    public let host: String
    /// The port.
    public let port: UInt16
    /// Whether the bridge listens (RTMP, UDP, SRT and RTSP `mode=listener`) rather than dials (SRT `mode=caller`,
    /// an RTSP pull).
    public let listens: Bool
    /// RTMP: the application name (the first part of the path).
    public let rtmpApp: String?
    /// RTMP: the stream key a publisher must use; SRT: nil.
    public private(set) var rtmpKey: String?
    /// SRT: the passphrase.
    public private(set) var passphrase: String?
    /// SRT: the receiver's latency in milliseconds, when given.
    public let srtLatencyMs: Int?
    /// RTSP: the path on the server (`cam` in `rtsp://phone:8554/cam`).
    public let rtspPath: String?
    /// RTSP pull: the user name the server asks for, when given.
    public let rtspUser: String?
    /// RTSP pull: the password (never printed).
    public private(set) var rtspPassword: String?
    /// RTSP: RTP over the RTSP connection (TCP, the default: one port, through NAT) rather than over UDP.
    public let rtspOverTCP: Bool

    /// Whether the text looks like a network stream URL (one of ``Scheme``'s, or RTMPS and RTP, which are refused).
    public static func isStreamURL(_ text: String) -> Bool {
        let lower = text.lowercased()
        return (Scheme.allCases.map(\.rawValue) + ["rtmps", "rtp"]).contains { lower.hasPrefix("\($0)://") }
    }

    /// Parses a URL. The secret may also come later from ``resolvingSecret(token:)``.
    /// - Throws: a sentence saying what is wrong and what to give instead.
    public init(parsing text: String) throws(NetworkStreamAddressError) {
        func bad(_ why: String) -> NetworkStreamAddressError { NetworkStreamAddressError(message: why) }
        guard let schemeEnd = text.range(of: "://") else { throw bad("not a stream URL") }
        let schemeText = text[..<schemeEnd.lowerBound].lowercased()
        guard let scheme = Scheme(rawValue: schemeText) else {
            throw bad("the \(schemeText):// protocol is not taken; use rtmp://, srt://, rtsp:// or udp://")
        }
        self.scheme = scheme
        var rest = String(text[schemeEnd.upperBound...])
        var query: [(String, String)] = []
        if let mark = rest.firstIndex(of: "?") {
            for pair in rest[rest.index(after: mark)...].split(separator: "&", omittingEmptySubsequences: true) {
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let key = String(parts[0]), value = parts.count > 1 ? String(parts[1]) : ""
                query.append((key, value.removingPercentEncoding ?? value))
            }
            rest = String(rest[..<mark])
        }
        var path = ""
        if let slash = rest.firstIndex(of: "/") {
            path = String(rest[rest.index(after: slash)...])
            rest = String(rest[..<slash])
        }
        // USER[:PASSWORD]@ (RTSP only), split at the last '@' (a password may hold one).
        var user: String?, password: String?
        if let at = rest.lastIndex(of: "@") {
            guard scheme == .rtsp else { throw bad("\(scheme.rawValue):// takes no USER@ part") }
            let info = rest[..<at]
            rest = String(rest[rest.index(after: at)...])
            let parts = info.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).map { String($0).removingPercentEncoding ?? String($0) }
            guard !parts[0].isEmpty else { throw bad("give the user before '@': rtsp://USER:PASSWORD@HOST:PORT/PATH") }
            user = parts[0]
            password = parts.count > 1 ? parts[1] : nil
        }
        // HOST:PORT, with [IPv6]:PORT.
        var hostText = rest, portText: String?
        if rest.hasPrefix("["), let close = rest.firstIndex(of: "]") {
            hostText = String(rest[rest.index(after: rest.startIndex)..<close])
            let after = rest[rest.index(after: close)...]
            if after.hasPrefix(":") { portText = String(after.dropFirst()) } else if !after.isEmpty { throw bad("expected :PORT after ]") }
        } else if let colon = rest.lastIndex(of: ":") {
            hostText = String(rest[..<colon])
            portText = String(rest[rest.index(after: colon)...])
        }
        guard !hostText.isEmpty, hostText.allSatisfy({ $0.isLetter || $0.isNumber || ".-:".contains($0) }) else {
            throw bad("give the host to \(scheme == .srt ? "listen on or dial" : "listen on"), e.g. \(scheme.rawValue)://0.0.0.0:\(Self.examplePort(scheme))")
        }
        host = hostText
        if let portText {
            guard let value = UInt16(portText), value > 0 else { throw bad("the port must be a number from 1 to 65535") }
            port = value
        } else if scheme == .rtmp {
            port = 1935
        } else if scheme == .rtsp {
            port = 554
        } else {
            throw bad("give the port, e.g. \(scheme.rawValue)://\(hostText):\(Self.examplePort(scheme))")
        }
        switch scheme {
        case .rtmp:
            guard query.isEmpty else { throw bad("rtmp:// takes no ?options: give rtmp://HOST:PORT/APP/KEY") }
            let parts = path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
            guard (1...2).contains(parts.count), !parts[0].isEmpty, parts.allSatisfy({ !$0.isEmpty }) else {
                throw bad("give the application and stream key: rtmp://HOST:PORT/APP/KEY (or rtmp://HOST:PORT/APP with --token KEY)")
            }
            rtmpApp = parts[0]
            rtmpKey = parts.count == 2 ? parts[1] : nil
            listens = true
            srtLatencyMs = nil
            (rtspPath, rtspUser, rtspOverTCP) = (nil, nil, false)
        case .srt:
            guard path.isEmpty else { throw bad("srt:// takes no path: srt://HOST:PORT?mode=listener&passphrase=…") }
            var mode = "caller", latency: Int?
            for (key, value) in query {
                switch key {
                case "mode":
                    guard ["listener", "caller"].contains(value) else { throw bad("mode is listener or caller (got '\(value)')") }
                    mode = value
                case "passphrase": passphrase = value
                case "latency":
                    guard let ms = Int(value), (0...10_000).contains(ms) else { throw bad("latency is milliseconds from 0 to 10000") }
                    latency = ms
                default:
                    throw bad("srt:// takes mode, passphrase and latency, not '\(key)'")
                }
            }
            listens = mode == "listener"
            srtLatencyMs = latency
            rtmpApp = nil
            (rtspPath, rtspUser, rtspOverTCP) = (nil, nil, false)
        case .udp:
            guard query.isEmpty, path.isEmpty else { throw bad("udp:// takes only HOST:PORT: udp://127.0.0.1:PORT") }
            listens = true
            rtmpApp = nil
            srtLatencyMs = nil
            (rtspPath, rtspUser, rtspOverTCP) = (nil, nil, false)
        case .rtsp:
            guard !path.isEmpty, path.utf8.count <= 200,
                  path.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-_.~/".contains($0)) }) else {
                throw bad("give the stream's path: rtsp://HOST:PORT/PATH (up to 200 letters, digits, '-', '_', '.', '~' or '/')")
            }
            var mode = "caller", overTCP = true
            for (key, value) in query {
                switch key {
                case "mode":
                    guard ["listener", "caller"].contains(value) else { throw bad("mode is listener (a publisher records to the bridge) or caller (the bridge pulls; the default), not '\(value)'") }
                    mode = value
                case "transport":
                    guard ["tcp", "udp"].contains(value) else { throw bad("transport is tcp (RTP inside the RTSP connection, the default) or udp, not '\(value)'") }
                    overTCP = value == "tcp"
                default:
                    throw bad("rtsp:// takes mode and transport, not '\(key)'")
                }
            }
            listens = mode == "listener"
            if listens, user != nil { throw bad("an RTSP listener checks no user or password (libavformat's RTSP server has none): leave out USER@") }
            rtspPath = path
            rtspUser = user
            rtspPassword = password
            rtspOverTCP = overTCP
            rtmpApp = nil
            srtLatencyMs = nil
        }
        if let passphrase { try Self.checkPassphrase(passphrase) }
        if let rtmpKey { try Self.checkKey(rtmpKey) }
    }

    private static func examplePort(_ scheme: Scheme) -> Int {
        switch scheme {
        case .rtmp: 1935
        case .srt: 7200
        case .udp: 7300
        case .rtsp: 8554
        }
    }

    private static func checkPassphrase(_ value: String) throws(NetworkStreamAddressError) {
        guard (10...79).contains(value.utf8.count) else {
            throw NetworkStreamAddressError(message: "an SRT passphrase has 10 to 79 characters (SRT's own rule); this one has \(value.utf8.count)")
        }
    }

    private static func checkKey(_ value: String) throws(NetworkStreamAddressError) {
        guard value.utf8.count <= 200, value.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-_.~".contains($0)) }) else {
            throw NetworkStreamAddressError(message: "an RTMP stream key here is up to 200 letters, digits, '-', '_', '.' or '~'")
        }
    }

    /// Whether the host is loopback (`127.x.x.x`, `::1`, `localhost`): only this machine can send.
    public var isLoopback: Bool {
        let lower = host.lowercased()
        return lower == "localhost" || lower == "::1" || lower.hasPrefix("127.")
    }

    /// The secret a publisher must present (the RTMP stream key, the SRT passphrase), or the bridge presents to an
    /// RTSP server (its password).
    public var hasSecret: Bool { rtmpKey != nil || passphrase != nil || rtspPassword != nil }

    /// The address with `token` as its secret where the URL gave none, checked against the security rules: off
    /// loopback RTMP needs a key and SRT a passphrase; UDP and an RTSP listener listen on loopback only; for an RTSP
    /// pull `token` is the password of the URL's user.
    /// - Throws: a sentence saying what to give instead.
    public func resolvingSecret(token: String?) throws(NetworkStreamAddressError) -> NetworkStreamAddress {
        var resolved = self
        switch scheme {
        case .rtmp:
            if let token {
                try Self.checkKey(token)
                if let rtmpKey, rtmpKey != token {
                    throw NetworkStreamAddressError(message: "the stream key in the URL and --token differ: give the key once (the URL's, or --token with rtmp://HOST:PORT/\(rtmpApp ?? "APP"))")
                }
                resolved.rtmpKey = token
            }
            if resolved.rtmpKey == nil {
                throw NetworkStreamAddressError(message: "give the stream key the app publishes to: rtmp://\(host):\(port)/\(rtmpApp ?? "live")/KEY, or --token KEY (or GLASSES_TOKEN)")
            }
        case .srt:
            if let token {
                try Self.checkPassphrase(token)
                if let passphrase, passphrase != token {
                    throw NetworkStreamAddressError(message: "the passphrase in the URL and --token differ: give it once")
                }
                resolved.passphrase = token
            }
            if resolved.passphrase == nil, !isLoopback {
                throw NetworkStreamAddressError(message: listens
                    ? "accepts publishers from other machines: give an SRT passphrase (--token PASSPHRASE, GLASSES_TOKEN, or passphrase= in the URL; 10 to 79 characters) so only your phone can publish"
                    : "dials another machine: give the publisher's SRT passphrase (--token PASSPHRASE, GLASSES_TOKEN, or passphrase= in the URL)")
            }
        case .udp:
            if token != nil {
                throw NetworkStreamAddressError(message: "UDP carries no secret, so --token cannot apply to it; for a secret use srt://HOST:PORT?mode=listener with --token PASSPHRASE")
            }
            guard isLoopback else {
                throw NetworkStreamAddressError(message: "listens on loopback only: UDP gives no way to check who sends. Use udp://127.0.0.1:\(port) for a publisher on this machine, or srt://\(host):\(port)?mode=listener with --token PASSPHRASE (SRT encrypts and checks a passphrase) for a phone")
            }
        case .rtsp where listens:
            if token != nil {
                throw NetworkStreamAddressError(message: "checks no secret (libavformat's RTSP server has none), so --token cannot apply to it; for a secret use srt://HOST:PORT?mode=listener with --token PASSPHRASE")
            }
            guard isLoopback else {
                throw NetworkStreamAddressError(message: "listens on loopback only: libavformat's RTSP server checks no credentials. Use rtsp://127.0.0.1:\(port)/\(rtspPath ?? "cam")?mode=listener for a publisher on this machine, pull from the phone (rtsp://PHONE:PORT/PATH), or use srt://\(host):\(port)?mode=listener with --token PASSPHRASE")
            }
        case .rtsp:
            if let token {
                guard rtspUser != nil else {
                    throw NetworkStreamAddressError(message: "takes --token as the password of the URL's user: give the user the server asks for (rtsp://USER@\(host):\(port)/\(rtspPath ?? "PATH")), or no --token for a server that asks none")
                }
                if let rtspPassword, rtspPassword != token {
                    throw NetworkStreamAddressError(message: "the password in the URL and --token differ: give it once")
                }
                resolved.rtspPassword = token
            }
        }
        return resolved
    }

    /// The URL as messages and labels show it: no stream key, no passphrase.
    public var description: String {
        let hostPart = host.contains(":") ? "[\(host)]" : host
        switch scheme {
        case .rtmp: return "rtmp://\(hostPart):\(port)/\(rtmpApp ?? "")/…"
        case .srt: return "srt://\(hostPart):\(port)?mode=\(listens ? "listener" : "caller")"
        case .udp: return "udp://\(hostPart):\(port)"
        case .rtsp: return "rtsp://\(hostPart):\(port)/\(rtspPath ?? "")\(listens ? "?mode=listener" : "")"
        }
    }

    /// What libavformat opens.
    public var request: NetworkStreamRequest {
        let hostPart = host.contains(":") ? "[\(host)]" : host
        // Bounded analysis of a new stream: 2 MB or 5 s of it.
        var options = ["probesize": "2000000", "analyzeduration": "5000000"]
        switch scheme {
        case .rtmp:
            options["listen"] = "1"
            options["protocol_whitelist"] = "rtmp,tcp"
            return NetworkStreamRequest(url: "rtmp://\(hostPart):\(port)/\(rtmpApp ?? "")/\(rtmpKey ?? "")", label: description,
                                        format: "flv", options: options, rtmpStreamKey: rtmpKey)
        case .srt:
            options["mode"] = listens ? "listener" : "caller"
            if let passphrase { options["passphrase"] = passphrase }
            if let srtLatencyMs { options["latency"] = String(srtLatencyMs * 1000) }  // libavformat takes µs
            options["protocol_whitelist"] = "srt"
            return NetworkStreamRequest(url: "srt://\(hostPart):\(port)", label: description, format: "mpegts", options: options)
        case .udp:
            // Bound to the loopback address itself (libavformat binds every address unless told), and a buffer
            // overrun (a slow host) loses datagrams instead of failing the stream.
            options["localaddr"] = host
            options["overrun_nonfatal"] = "1"
            // Without a read timeout libavformat's UDP reader waits on its buffer's condition variable and never asks
            // the interrupt callback: a silent port would hold an open, a read or a stop. With one it wakes every
            // 0.1 s to ask, and fails a read after this long without a datagram: the source's own silence limit.
            options["timeout"] = "15000000"
            options["protocol_whitelist"] = "udp"
            return NetworkStreamRequest(url: "udp://\(hostPart):\(port)", label: description, format: "mpegts", options: options)
        case .rtsp:
            options["protocol_whitelist"] = "rtsp,rtp,tcp,udp"
            if listens {
                options["rtsp_flags"] = "listen"
            } else {
                options["rtsp_transport"] = rtspOverTCP ? "tcp" : "udp"
            }
            func encoded(_ text: String) -> String {
                text.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-_.~"))) ?? text
            }
            let credentials = rtspUser.map { user in encoded(user) + (rtspPassword.map { ":" + encoded($0) } ?? "") + "@" } ?? ""
            return NetworkStreamRequest(url: "rtsp://\(credentials)\(hostPart):\(port)/\(rtspPath ?? "")", label: description,
                                        format: "rtsp", options: options)
        }
    }
}

/// Why a network stream URL was not taken, as a sentence.
public struct NetworkStreamAddressError: Error, Sendable, Hashable {
    /// What is wrong and what to give instead.
    public let message: String
}
