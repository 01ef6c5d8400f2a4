import GlassesBridge
import Testing

/// `--device rtmp://…`, `srt://…`, `rtsp://…`, `udp://…`: the forms, the secret rules, what libavformat is asked to open, and
/// labels that never hold a secret.
@Suite("Network stream addresses")
struct NetworkStreamAddressTests {
    @Test("RTMP: the key from the path or from the token; the label hides it; libavformat listens for FLV on TCP")
    func rtmpForms() throws {
        let address = try NetworkStreamAddress(parsing: "rtmp://0.0.0.0:1935/live/key42").resolvingSecret(token: nil)
        #expect(address.scheme == .rtmp && address.listens && address.rtmpApp == "live" && address.rtmpKey == "key42")
        #expect(address.description == "rtmp://0.0.0.0:1935/live/…")
        let request = address.request
        #expect(request.url == "rtmp://0.0.0.0:1935/live/key42" && request.format == "flv" && request.rtmpStreamKey == "key42")
        #expect(request.options["listen"] == "1" && request.options["protocol_whitelist"] == "rtmp,tcp")
        #expect(!request.label.contains("key42"))
        let fromToken = try NetworkStreamAddress(parsing: "rtmp://0.0.0.0/live").resolvingSecret(token: "tok99")
        #expect(fromToken.port == 1935 && fromToken.rtmpKey == "tok99")
        #expect(throws: NetworkStreamAddressError.self) { try NetworkStreamAddress(parsing: "rtmp://0.0.0.0/live").resolvingSecret(token: nil) }
        #expect(throws: NetworkStreamAddressError.self) { try NetworkStreamAddress(parsing: "rtmp://0.0.0.0/live/a").resolvingSecret(token: "b") }
        #expect(throws: NetworkStreamAddressError.self) { try NetworkStreamAddress(parsing: "rtmp://0.0.0.0/live/a/b") }
        #expect(throws: NetworkStreamAddressError.self) { try NetworkStreamAddress(parsing: "rtmp://0.0.0.0/live/a?x=1") }
        #expect(throws: NetworkStreamAddressError.self) { try NetworkStreamAddress(parsing: "rtmp://0.0.0.0/live/k%20ey") }
    }

    @Test("SRT: listener or caller; the passphrase from the URL or the token, 10-79 characters, required off loopback")
    func srtForms() throws {
        let listener = try NetworkStreamAddress(parsing: "srt://0.0.0.0:7200?mode=listener").resolvingSecret(token: "passphrase-1")
        #expect(listener.listens && listener.passphrase == "passphrase-1")
        #expect(listener.description == "srt://0.0.0.0:7200?mode=listener")
        #expect(listener.request.options["passphrase"] == "passphrase-1" && listener.request.options["mode"] == "listener")
        #expect(listener.request.format == "mpegts" && listener.request.url == "srt://0.0.0.0:7200")
        let caller = try NetworkStreamAddress(parsing: "srt://127.0.0.1:7201").resolvingSecret(token: nil)
        #expect(!caller.listens && caller.passphrase == nil && caller.request.options["mode"] == "caller")
        let inURL = try NetworkStreamAddress(parsing: "srt://10.0.0.2:7201?passphrase=abcdefghijk&latency=200").resolvingSecret(token: nil)
        #expect(inURL.passphrase == "abcdefghijk" && inURL.request.options["latency"] == "200000" && !inURL.description.contains("abcdefghijk"))
        #expect(throws: NetworkStreamAddressError.self) { try NetworkStreamAddress(parsing: "srt://0.0.0.0:7200?mode=listener").resolvingSecret(token: nil) }
        #expect(throws: NetworkStreamAddressError.self) { try NetworkStreamAddress(parsing: "srt://10.0.0.2:7200").resolvingSecret(token: nil) }
        #expect(throws: NetworkStreamAddressError.self) { try NetworkStreamAddress(parsing: "srt://0.0.0.0:7200?passphrase=short") }
        #expect(throws: NetworkStreamAddressError.self) { try NetworkStreamAddress(parsing: "srt://0.0.0.0:7200?mode=rendezvous") }
        #expect(throws: NetworkStreamAddressError.self) { try NetworkStreamAddress(parsing: "srt://0.0.0.0:7200?streamid=x") }
        #expect(throws: NetworkStreamAddressError.self) { try NetworkStreamAddress(parsing: "srt://0.0.0.0") }
    }

    @Test("UDP: loopback only, bound to that address, a read timeout so the interrupt callback is asked; no token")
    func udpForms() throws {
        let address = try NetworkStreamAddress(parsing: "udp://127.0.0.1:7300").resolvingSecret(token: nil)
        #expect(address.isLoopback && address.listens)
        let options = address.request.options
        #expect(options["localaddr"] == "127.0.0.1" && options["timeout"] != nil && options["protocol_whitelist"] == "udp")
        #expect(throws: NetworkStreamAddressError.self) { try NetworkStreamAddress(parsing: "udp://0.0.0.0:7300").resolvingSecret(token: nil) }
        #expect(throws: NetworkStreamAddressError.self) { try NetworkStreamAddress(parsing: "udp://127.0.0.1:7300").resolvingSecret(token: "x") }
        #expect(throws: NetworkStreamAddressError.self) { try NetworkStreamAddress(parsing: "udp://127.0.0.1:0") }
        #expect(throws: NetworkStreamAddressError.self) { try NetworkStreamAddress(parsing: "udp://127.0.0.1:70000") }
    }

    @Test("RTSP: a pull (TCP by default), credentials from the URL or the token and never in the label; a listener on loopback only, with no credentials")
    func rtspForms() throws {
        let pull = try NetworkStreamAddress(parsing: "rtsp://phone.local:8554/live/cam").resolvingSecret(token: nil)
        #expect(pull.scheme == .rtsp && !pull.listens && pull.rtspPath == "live/cam" && pull.rtspOverTCP)
        #expect(pull.description == "rtsp://phone.local:8554/live/cam")
        #expect(pull.request.url == "rtsp://phone.local:8554/live/cam" && pull.request.format == "rtsp")
        #expect(pull.request.options["rtsp_transport"] == "tcp" && pull.request.options["rtsp_flags"] == nil)
        #expect(try NetworkStreamAddress(parsing: "rtsp://10.0.0.5/cam").port == 554)
        let udp = try NetworkStreamAddress(parsing: "rtsp://10.0.0.5:8554/cam?transport=udp")
        #expect(udp.request.options["rtsp_transport"] == "udp")
        let withUser = try NetworkStreamAddress(parsing: "rtsp://admin@10.0.0.5:8554/cam").resolvingSecret(token: "s3cret:@x")
        #expect(withUser.request.url == "rtsp://admin:s3cret%3A%40x@10.0.0.5:8554/cam")
        #expect(!withUser.description.contains("s3cret") && !withUser.description.contains("admin") && withUser.hasSecret)
        let inURL = try NetworkStreamAddress(parsing: "rtsp://admin:pw1@10.0.0.5:8554/cam").resolvingSecret(token: nil)
        #expect(inURL.rtspPassword == "pw1" && !inURL.description.contains("pw1"))
        #expect(throws: NetworkStreamAddressError.self) { try NetworkStreamAddress(parsing: "rtsp://10.0.0.5:8554/cam").resolvingSecret(token: "pw") }
        #expect(throws: NetworkStreamAddressError.self) { try NetworkStreamAddress(parsing: "rtsp://a:pw1@10.0.0.5:8554/cam").resolvingSecret(token: "pw2") }
        #expect(throws: NetworkStreamAddressError.self) { try NetworkStreamAddress(parsing: "rtsp://10.0.0.5:8554") }
        #expect(throws: NetworkStreamAddressError.self) { try NetworkStreamAddress(parsing: "rtsp://10.0.0.5:8554/cam?transport=quic") }
        #expect(throws: NetworkStreamAddressError.self) { try NetworkStreamAddress(parsing: "rtsp://10.0.0.5:8554/c%20am") }

        let listener = try NetworkStreamAddress(parsing: "rtsp://127.0.0.1:8554/cam?mode=listener").resolvingSecret(token: nil)
        #expect(listener.listens && listener.request.options["rtsp_flags"] == "listen")
        #expect(listener.description == "rtsp://127.0.0.1:8554/cam?mode=listener")
        #expect(throws: NetworkStreamAddressError.self) { try NetworkStreamAddress(parsing: "rtsp://0.0.0.0:8554/cam?mode=listener").resolvingSecret(token: nil) }
        #expect(throws: NetworkStreamAddressError.self) { try NetworkStreamAddress(parsing: "rtsp://127.0.0.1:8554/cam?mode=listener").resolvingSecret(token: "x") }
        #expect(throws: NetworkStreamAddressError.self) { try NetworkStreamAddress(parsing: "rtsp://u:p@127.0.0.1:8554/cam?mode=listener") }
    }

    @Test("other schemes are refused with what to use instead; USER@ only for RTSP")
    func otherSchemes() {
        #expect(NetworkStreamAddress.isStreamURL("rtsp://phone:8554/cam") && NetworkStreamAddress.isStreamURL("rtmps://x/live"))
        do {
            _ = try NetworkStreamAddress(parsing: "rtmps://phone:443/live/k")
            Issue.record("RTMPS was taken")
        } catch {
            #expect(error.message.contains("srt://") && error.message.contains("rtsp://"))
        }
        #expect(throws: NetworkStreamAddressError.self) { try NetworkStreamAddress(parsing: "srt://u:p@127.0.0.1:7200") }
        #expect(!NetworkStreamAddress.isStreamURL("tcp:127.0.0.1:7000"))
    }
}
