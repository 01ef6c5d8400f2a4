import Foundation
import Synchronization
import Testing
import WearablesKit

@testable import GlassesLink
@testable import GlassesLinkCore

#if canImport(Glibc)
    import Glibc
#endif

/// The host side of dialled links: a device dials, opens with a `pair` frame, and is handed over or refused.
@Suite("Device listener: relays dial the host", .serialized)
struct DeviceListenerTests {
    /// A listener on a free loopback port (or a Unix socket), recording refusals.
    struct Rig {
        let listener: DeviceListener
        let refusals = EventRecorder<DeviceListener.Refusal>()

        init(_ transport: HostileTransport = .tcp, token: String? = "sesame", handshakeTimeout: Duration = .seconds(5))
            throws
        {
            let address: LinkAddress = transport == .tcp
                ? .tcp(host: "127.0.0.1", port: 0) : .unix(path: SocketTransportTests.temporarySocketPath())
            let refusals = self.refusals
            listener = try DeviceListener.listen(
                on: address, options: LinkListenerOptions(liveness: .disabled, pairingToken: token),
                handshakeTimeout: handshakeTimeout, onRefusal: refusals.handler)
        }

        /// Dials as a device with `token` and records what its end delivers.
        func dial(token: String?) throws -> (any HostLink, EventRecorder<HostLinkEvent>) {
            let link = try LinkConnector.connectDevice(
                to: listener.address, options: LinkConnectionOptions(liveness: .disabled, pairingToken: token))
            let events = EventRecorder<HostLinkEvent>()
            link.open(eventHandler: events.handler)
            return (link, events)
        }
    }

    static func closeCode(_ events: [HostLinkEvent]) -> LinkError? {
        for event in events { if case .closed(let error) = event { return error } }
        return nil
    }

    @Test("a device with the right token is handed over, and the host's hello reaches it", arguments: HostileTransport.allCases)
    func pairs(transport: HostileTransport) throws {
        let rig = try Rig(transport)
        defer { rig.listener.stop() }
        let (device, events) = try rig.dial(token: "sesame")
        defer { device.close() }
        let host = try rig.listener.waitForDevice(timeout: .seconds(20))
        let hostEvents = EventRecorder<DeviceLinkEvent>()
        host.open(eventHandler: hostEvents.handler)
        host.send(.hello(protocolVersion: linkProtocolVersion, pairingToken: nil))
        #expect(events.wait { $0.contains { if case .message(.hello) = $0 { true } else { false } } })
        device.send(.deviceState(DeviceState()))
        #expect(hostEvents.wait { $0.contains { if case .message(.deviceState) = $0 { true } else { false } } })
        #expect(rig.listener.statistics == DeviceListener.Statistics(accepted: 1))
    }

    @Test("#19: a stopped listener is freed with its accepting listener (they once held each other through the handshake)")
    func stoppedListenerIsFreed() throws {
        weak var weakListener: DeviceListener?
        weak var weakAccepting: LinkListener?
        do {
            let rig = try Rig()
            weakListener = rig.listener
            weakAccepting = rig.listener.listener
            let (device, events) = try rig.dial(token: "sesame")
            let host = try rig.listener.waitForDevice(timeout: .seconds(20))
            rig.listener.stop()
            #expect(events.wait { Self.closeCode($0) != nil }, "stop closes the link it handed over")
            device.close()
            host.close()
        }
        // The accepting thread lets go of its listener as it ends (stop waits for it, but only briefly).
        let deadline = ContinuousClock.now + .seconds(5)
        while weakListener != nil || weakAccepting != nil, ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.02)
        }
        #expect(weakListener == nil)
        #expect(weakAccepting == nil, "the accepting LinkListener outlived the stopped DeviceListener")
    }

    @Test("a wrong or missing token is refused at once with a goodbye, counted, and never handed over",
          arguments: [nil, "open sesame", "sesam", ""] as [String?])
    func refusesBadTokens(token: String?) throws {
        let rig = try Rig()
        defer { rig.listener.stop() }
        let (device, events) = try rig.dial(token: token)
        defer { device.close() }
        #expect(events.wait { Self.closeCode($0) != nil })
        let error = Self.closeCode(events.all)
        #expect(error?.code == .incompatible)
        #expect(error?.message.contains("pairing failed: the device presented") == true, "\(String(describing: error))")
        #expect(rig.refusals.wait { $0.count == 1 })
        #expect(rig.refusals.all.first?.reason.contains("pairing token") == true)
        #expect(rig.listener.statistics.refusedPairing == 1)
        #expect(rig.listener.statistics.accepted == 0)
        #expect(throws: LinkError.self) { try rig.listener.waitForDevice(timeout: .milliseconds(200)) }
    }

    @Test("a connection that does not open with a pair frame is refused; nothing after its header is read")
    func refusesOtherFirstFrames() throws {
        let rig = try Rig(token: nil)
        defer { rig.listener.stop() }
        guard case .tcp(_, let port) = rig.listener.address else { Issue.record("not TCP"); return }
        let handle = try LinkConnector.connectTCP(host: "127.0.0.1", port: port, timeout: .seconds(5))
        // A device hello, as a device that does not know it must pair would send; then a second frame.
        var bytes = try LinkFrameEncoder().encode(.device(.hello(DeviceInfo(identifier: "x", name: "x"))))
        bytes += try LinkFrameEncoder().encode(.device(.deviceState(DeviceState())))
        _ = bytes.withUnsafeBytes { SocketCalls.writeAll(handle, $0) }
        #expect(rig.refusals.wait { $0.count == 1 })
        #expect(rig.refusals.all.first?.reason.contains("must open with a pair frame") == true)
        #expect(rig.listener.statistics.refusedProtocol == 1)
        // The refusal is a goodbye frame, then the end of the stream.
        var decoder = LinkFrameDecoder()
        var frames: [LinkFrame] = []
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 1)
        defer { buffer.deallocate() }
        while case .success(let count) = SocketCalls.read(handle, into: buffer), count > 0 {
            for output in decoder.decode(UnsafeRawBufferPointer(rebasing: buffer[0..<count])) {
                if case .frame(let frame) = output { frames.append(frame) }
            }
        }
        #expect(frames.count == 1)
        if case .goodbye(let error) = frames.first { #expect(error.code == .incompatible) } else {
            Issue.record("expected a goodbye, got \(frames)")
        }
    }

    @Test("a silent connection is refused when the handshake time is up")
    func refusesSilence() throws {
        let rig = try Rig(token: nil, handshakeTimeout: .milliseconds(300))
        defer { rig.listener.stop() }
        guard case .tcp(_, let port) = rig.listener.address else { Issue.record("not TCP"); return }
        let handle = try LinkConnector.connectTCP(host: "127.0.0.1", port: port, timeout: .seconds(5))
        #expect(rig.refusals.wait { $0.count == 1 })
        #expect(rig.refusals.all.first?.reason.contains("no pair frame within") == true)
        _ = handle
    }

    @Test("a pair frame that announces a huge body is refused before any body is read")
    func refusesHugePairFrames() throws {
        let rig = try Rig(token: nil)
        defer { rig.listener.stop() }
        guard case .tcp(_, let port) = rig.listener.address else { Issue.record("not TCP"); return }
        let handle = try LinkConnector.connectTCP(host: "127.0.0.1", port: port, timeout: .seconds(5))
        var header = try LinkFrameEncoder().encode(.pair(protocolVersion: linkProtocolVersion, pairingToken: "x"))
        header = Array(header[0..<LinkWireFormat.headerSize])
        header[8] = 0x7F  // length 2 GiB, header CRC now wrong too: refused by the length check first
        _ = header.withUnsafeBytes { SocketCalls.writeAll(handle, $0) }
        #expect(rig.refusals.wait { $0.count == 1 })
        #expect(rig.refusals.all.first?.reason.contains("announces") == true, "\(rig.refusals.all)")
    }

    @Test("a second device while one is connected is refused as busy; after the first leaves, the next is served")
    func oneDeviceAtATime() throws {
        let rig = try Rig()
        defer { rig.listener.stop() }
        let (first, _) = try rig.dial(token: "sesame")
        let firstHost = try rig.listener.waitForDevice(timeout: .seconds(20))
        firstHost.open { _ in }
        let (second, secondEvents) = try rig.dial(token: "sesame")
        #expect(secondEvents.wait { Self.closeCode($0) != nil })
        // A goodbye other than incompatible or protocolViolation reaches the peer as connectionLost (PROTOCOL.md 7.4),
        // with the listener's words: a relay tries again later.
        #expect(Self.closeCode(secondEvents.all)?.code == .connectionLost)
        #expect(Self.closeCode(secondEvents.all)?.message.contains("busy") == true)
        #expect(rig.listener.statistics.refusedBusy == 1)
        second.close()
        firstHost.close()
        first.close()
        let (third, _) = try rig.dial(token: "sesame")
        defer { third.close() }
        let thirdHost = try rig.listener.waitForDevice(timeout: .seconds(20))
        thirdHost.close()
        #expect(rig.listener.statistics.accepted == 2)
    }

    @Test("waiting ends with unavailable, naming the address and the refusals, when nobody pairs in time")
    func waitTimesOut() throws {
        let rig = try Rig()
        defer { rig.listener.stop() }
        let (device, events) = try rig.dial(token: "wrong")
        defer { device.close() }
        #expect(events.wait { Self.closeCode($0) != nil })
        do {
            _ = try rig.listener.waitForDevice(timeout: .milliseconds(300))
            Issue.record("no device paired, yet one was handed over")
        } catch {
            #expect(error.code == .unavailable)
            #expect(error.message.contains("within 0.3 s") && error.message.contains("1 connection was refused"),
                    "\(error.message)")
        }
    }

    @Test("a Bluetooth address cannot be dialled as a device")
    func noBluetoothDialling() {
        #expect(throws: LinkError.self) {
            _ = try LinkConnector.connectDevice(to: .bluetooth(address: "AA:BB:CC:DD:EE:FF", channel: 1))
        }
    }

    @Test("the pair frame round-trips through the codec")
    func pairFrameCodec() throws {
        for token in [nil, "", "sesame", String(repeating: "é", count: 300)] as [String?] {
            let frame = LinkFrame.pair(protocolVersion: 1, pairingToken: token)
            let bytes = try LinkFrameEncoder().encode(frame)
            #expect(bytes[5] == LinkMessageType.pair.rawValue)
            var decoder = LinkFrameDecoder()
            #expect(bytes.withUnsafeBytes { decoder.decode($0) } == [.frame(frame)])
        }
    }
}
