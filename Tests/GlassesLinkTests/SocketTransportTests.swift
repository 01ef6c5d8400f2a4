import Foundation
import Synchronization
import Testing
import WearablesKit

@testable import GlassesLink
@testable import GlassesLinkCore

#if canImport(Glibc)
    import Glibc
#endif

/// The device side of a socket test: answers the host's hello with its identity, state and some video.
final class ScriptedDevice: Sendable {
    private let link = Mutex<(any HostLink)?>(nil)
    private let recorder = Mutex(EventRecorder<HostLinkEvent>())

    /// One entry per accepted connection.
    let connections = EventRecorder<Int>()

    /// The events of the most recent connection.
    var events: EventRecorder<HostLinkEvent> { recorder.withLock { $0 } }
    let sampleCount: Int
    let sampleSize: Int
    /// Records the drop count once the device has sent everything after the hello.
    let finishedSending = EventRecorder<UInt64>()

    init(sampleCount: Int = 5, sampleSize: Int = 64) {
        self.sampleCount = sampleCount
        self.sampleSize = sampleSize
    }

    var current: (any HostLink)? { link.withLock { $0 } }

    /// The listener callback.
    func accept(_ accepted: any HostLink) {
        link.withLock { $0 = accepted }
        let events = EventRecorder<HostLinkEvent>()
        recorder.withLock { $0 = events }
        connections.handler(1)
        accepted.open { [self] event in
            events.handler(event)
            if case .message(.hello) = event {
                accepted.send(.hello(Fixtures.info))
                accepted.send(.deviceState(DeviceState(batteryLevel: 77)))
                for index in 0..<sampleCount { accepted.send(.videoSample(Fixtures.sample(index, size: sampleSize))) }
                accepted.send(.deviceState(DeviceState(batteryLevel: 1)))
                finishedSending.handler(accepted.droppedVideoSamples)
            }
        }
    }
}

@Suite("Socket transports", .serialized)
struct SocketTransportTests {
    /// A loopback TCP port nothing listens on: one that was just listened on and closed again.
    static func closedTCPPort() throws -> UInt16 {
        let probe = try LinkListener.listen(on: .tcp(host: "127.0.0.1", port: 0), onConnection: { _ in })
        defer { probe.stop() }
        guard case .tcp(_, let port) = probe.address else { throw LinkError(.unavailable, "the probe listener is not on TCP") }
        return port
    }

    static func temporarySocketPath() -> String {
        let name = "glink-\(UInt32.random(in: 0...UInt32.max)).sock"
        return (NSTemporaryDirectory() as NSString).appendingPathComponent(name)
    }

    /// Opens a host end, says hello, and waits for the scripted device's answer and samples.
    func exchange(with address: LinkAddress, device: ScriptedDevice, options: LinkConnectionOptions = .init()) throws {
        let host = try LinkConnector.connect(to: address, options: options)
        let hostEvents = EventRecorder<DeviceLinkEvent>()
        host.open(eventHandler: hostEvents.handler)
        host.send(.hello(protocolVersion: linkProtocolVersion, pairingToken: nil))
        let complete = hostEvents.wait { $0.filter(\.isVideoSample).count == device.sampleCount }
        #expect(complete, "host saw \(hostEvents.all.count) events")
        var messages = hostEvents.all.compactMap(\.message).filter {
            if case .heartbeat = $0 { false } else { true }
        }
        #expect(messages.prefix(2) == [.hello(Fixtures.info), .deviceState(DeviceState(batteryLevel: 77))])
        #expect(hostEvents.wait { $0.contains { $0.message == .deviceState(DeviceState(batteryLevel: 1)) } })
        messages.removeAll { $0 == .deviceState(DeviceState(batteryLevel: 1)) }
        let expectedSamples: [DeviceMessage] = (0..<device.sampleCount).map {
            .videoSample(Fixtures.sample($0, size: device.sampleSize))
        }
        #expect(Array(messages.dropFirst(2)) == expectedSamples)
        #expect(device.current?.droppedVideoSamples == 0)
        host.close()
        #expect(hostEvents.wait { $0.last?.closeError != nil })
        #expect(hostEvents.all.compactMap(\.closeError).map(\.code) == [.closedLocally])
        #expect(device.events.wait { $0.last?.closeError != nil })
        #expect(device.events.all.compactMap(\.closeError).map(\.code) == [.connectionLost])
        #expect(
            device.events.all.first?.message
                == .hello(
                    protocolVersion: linkProtocolVersion, pairingToken: options.pairingToken))
    }

    @Test("host and device talk over a real Unix socket")
    func unixSocket() throws {
        let path = Self.temporarySocketPath()
        let device = ScriptedDevice()
        let listener = try LinkListener.listen(on: .unix(path: path), onConnection: device.accept)
        defer { listener.stop() }
        #expect(listener.address == .unix(path: path))
        try exchange(with: .unix(path: path), device: device)
        listener.stop()
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test("host and device talk over real TCP loopback, with full-size raw frames")
    func tcpLoopback() throws {
        let device = ScriptedDevice(sampleCount: 4, sampleSize: 504 * 896 * 3 / 2)
        let listener = try LinkListener.listen(on: .tcp(host: "127.0.0.1", port: 0), onConnection: device.accept)
        defer { listener.stop() }
        guard case .tcp(_, let port) = listener.address else {
            Issue.record("not tcp")
            return
        }
        #expect(port != 0)
        try exchange(with: .tcp(host: "127.0.0.1", port: port), device: device)
    }

    @Test("a slow host makes the device drop video over a real socket; the drops show up in heartbeats")
    func slowHostOverSocket() throws {
        let path = Self.temporarySocketPath()
        let device = ScriptedDevice(sampleCount: 20)
        let listener = try LinkListener.listen(
            on: .unix(path: path),
            options: LinkListenerOptions(liveness: LinkLiveness(heartbeatInterval: .milliseconds(50))),
            onConnection: device.accept)
        defer { listener.stop() }
        let host = try LinkConnector.connect(
            to: .unix(path: path),
            options: LinkConnectionOptions(
                liveness: LinkLiveness(heartbeatInterval: .milliseconds(50)), initialCredit: 2))
        let hostEvents = EventRecorder<DeviceLinkEvent>()
        let release = DispatchSemaphore(value: 0)
        host.open { event in
            // The first sample takes "forever": no credit goes back until the device has sent everything.
            if event.isVideoSample, !hostEvents.all.contains(where: \.isVideoSample) {
                _ = release.wait(timeout: .now() + 20)
            }
            hostEvents.handler(event)
        }
        host.send(.hello(protocolVersion: linkProtocolVersion, pairingToken: nil))
        #expect(device.finishedSending.wait { !$0.isEmpty })
        #expect(device.finishedSending.all == [18])
        release.signal()
        #expect(hostEvents.wait { $0.contains { $0.message == .deviceState(DeviceState(batteryLevel: 1)) } })
        #expect(hostEvents.all.filter(\.isVideoSample).count == 2)
        #expect(device.current?.droppedVideoSamples == 18)
        // Heartbeats come from the device's own timer, in real time; it reports the drops.
        #expect(
            hostEvents.wait { events in
                events.contains { if case .message(.heartbeat(_, 18, _)) = $0 { true } else { false } }
            })
        host.close()
    }

    @Test("stopping a listener returns once its links have written what they had queued (a fault, the goodbye): a process may exit right after")
    func listenerStopDrainsWriters() throws {
        let path = Self.temporarySocketPath()
        let device = ScriptedDevice(sampleCount: 0)
        let listener = try LinkListener.listen(on: .unix(path: path), onConnection: device.accept)
        defer { listener.stop() }
        // A raw client that reads to the end: it counts bytes, and never answers.
        guard case .success(let client) = SocketCalls.socket(domain: AF_UNIX, type: Int32(SOCK_STREAM.rawValue)) else {
            Issue.record("no Unix socket")
            return
        }
        #expect(SocketCalls.withUnixAddress(path) { Glibc.connect(client.descriptor, $0, $1) == 0 })
        let received = Atomic<Int>(0)
        let ended = DispatchSemaphore(value: 0)
        let reader = Thread {
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 16)
            defer { buffer.deallocate() }
            while case .success(let count) = SocketCalls.read(client, into: buffer), count > 0 {
                received.add(count, ordering: .relaxed)
            }
            ended.signal()
        }
        reader.start()
        #expect(device.connections.wait { !$0.isEmpty })
        let end = try #require(device.current as? DeviceEndLink)
        // Far more than a socket buffer holds: the writer is still at it when stop() is called.
        let queued = 16 << 20
        #expect(end.transmitRaw([UInt8](repeating: 0x47, count: queued)))
        listener.stop()
        #expect(end.endpoint.waitForWireDrain(until: .now()), "stop() returned while the writer still held bytes")
        #expect(ended.wait(timeout: .now() + 20) == .success)
        #expect(received.load(ordering: .relaxed) > queued, "the bytes and the goodbye after them all arrived")
    }

    @Test("stopping a listener closes the links it accepted and frees the address")
    func listenerStop() throws {
        let path = Self.temporarySocketPath()
        let device = ScriptedDevice(sampleCount: 0)
        let listener = try LinkListener.listen(on: .unix(path: path), onConnection: device.accept)
        let host = try LinkConnector.connect(to: .unix(path: path))
        let hostEvents = EventRecorder<DeviceLinkEvent>()
        host.open(eventHandler: hostEvents.handler)
        host.send(.hello(protocolVersion: linkProtocolVersion, pairingToken: nil))
        #expect(hostEvents.wait { $0.contains { $0.message == .hello(Fixtures.info) } })
        listener.stop()
        #expect(hostEvents.wait { $0.last?.closeError != nil })
        #expect(hostEvents.all.compactMap(\.closeError).map(\.code) == [.connectionLost])
        #expect(device.events.wait { $0.last?.closeError != nil })
        #expect(device.events.all.compactMap(\.closeError).map(\.code) == [.closedLocally])
        #expect(throws: LinkError.self) { try LinkConnector.connect(to: .unix(path: path)) }
        let again = try LinkListener.listen(on: .unix(path: path), onConnection: { _ in })
        again.stop()
    }

    @Test("a listener can be stopped from inside its connection callback")
    func stopFromCallback() throws {
        let path = Self.temporarySocketPath()
        let box = Mutex<LinkListener?>(nil)
        let stopped = EventRecorder<Bool>()
        let listener = try LinkListener.listen(on: .unix(path: path)) { link in
            // Taken out of the box: the listener holds this closure, so a box still holding it would be a cycle.
            box.withLock { $0.take() }?.stop()
            stopped.handler(true)
            link.open { _ in }
        }
        box.withLock { $0 = listener }
        let host = try LinkConnector.connect(to: .unix(path: path))
        let hostEvents = EventRecorder<DeviceLinkEvent>()
        host.open(eventHandler: hostEvents.handler)
        #expect(stopped.wait(timeout: 4) { !$0.isEmpty })
        #expect(hostEvents.wait { $0.last?.closeError != nil })
    }

    @Test("the device closing reaches the host as connectionLost")
    func deviceCloses() throws {
        let path = Self.temporarySocketPath()
        let device = ScriptedDevice(sampleCount: 0)
        let listener = try LinkListener.listen(on: .unix(path: path), onConnection: device.accept)
        defer { listener.stop() }
        let host = try LinkConnector.connect(to: .unix(path: path))
        let hostEvents = EventRecorder<DeviceLinkEvent>()
        host.open(eventHandler: hostEvents.handler)
        host.send(.hello(protocolVersion: linkProtocolVersion, pairingToken: nil))
        #expect(hostEvents.wait { $0.contains { $0.message == .hello(Fixtures.info) } })
        device.current?.close()
        #expect(hostEvents.wait { $0.last?.closeError != nil })
        #expect(hostEvents.all.compactMap(\.closeError).map(\.code) == [.connectionLost])
    }

    @Test("a remote TCP listener needs allowRemote and a token, and rejects a host without the right token")
    func pairing() throws {
        #expect(throws: LinkError.self) {
            try LinkListener.listen(on: .tcp(host: "0.0.0.0", port: 0), onConnection: { _ in })
        }
        #expect(throws: LinkError.self) {
            try LinkListener.listen(
                on: .tcp(host: "0.0.0.0", port: 0), options: LinkListenerOptions(allowRemote: true),
                onConnection: { _ in })
        }
        let device = ScriptedDevice(sampleCount: 2)
        let listener = try LinkListener.listen(
            on: .tcp(host: "0.0.0.0", port: 0),
            options: LinkListenerOptions(allowRemote: true, pairingToken: "correct horse"),
            onConnection: device.accept)
        defer { listener.stop() }
        guard case .tcp(_, let port) = listener.address else {
            Issue.record("not tcp")
            return
        }
        for token in [nil, "wrong"] as [String?] {
            let host = try LinkConnector.connect(
                to: .tcp(host: "127.0.0.1", port: port), options: LinkConnectionOptions(pairingToken: token))
            let hostEvents = EventRecorder<DeviceLinkEvent>()
            host.open(eventHandler: hostEvents.handler)
            host.send(.hello(protocolVersion: linkProtocolVersion, pairingToken: nil))
            #expect(hostEvents.wait { $0.last?.closeError != nil })
            let error = hostEvents.all.compactMap(\.closeError).first
            #expect(error?.code == .incompatible)
            #expect(error?.message.contains("pairing") == true)
            #expect(hostEvents.all.compactMap(\.message).isEmpty)
        }
        try exchange(
            with: .tcp(host: "127.0.0.1", port: port), device: device,
            options: LinkConnectionOptions(pairingToken: "correct horse"))
    }

    @Test("a dialler that waits for its listener connects once the listener starts, and says how long it waited if none does")
    func waitsForListener() throws {
        // A port nothing listens on (listened on and closed again), and a socket path with no file yet.
        let port = try Self.closedTCPPort()
        let path = Self.temporarySocketPath()
        for address in [LinkAddress.tcp(host: "127.0.0.1", port: port), .unix(path: path)] {
            // Without waiting: refused at once, as not listening.
            let refused = #expect(throws: LinkError.self) { try LinkConnector.connect(to: address) }
            #expect(refused?.code == .notListening, "\(address): \(String(describing: refused))")
            // Waiting: the listener starts while the dialler is already trying (its first attempt was refused).
            let started = Mutex<LinkListener?>(nil)
            let listenerThread = Thread {
                Thread.sleep(forTimeInterval: 0.6)
                started.withLock { $0 = try? LinkListener.listen(on: address, onConnection: { _ in }) }
            }
            listenerThread.start()
            let options = LinkConnectionOptions(connectTimeout: .seconds(20), waitsForListener: true)
            let host = try LinkConnector.connect(to: address, options: options)
            #expect(started.withLock { $0 != nil })
            host.close()
            started.withLock { $0?.stop() }
            // Waiting for a listener that never comes: notListening after the timeout, saying so.
            let began = ContinuousClock.now
            let never = #expect(throws: LinkError.self) {
                try LinkConnector.connect(to: address, options: LinkConnectionOptions(connectTimeout: .milliseconds(600),
                                                                                      waitsForListener: true))
            }
            #expect(never?.code == .notListening && never?.message.contains("(nothing listened there within the 0.6 s connect timeout)") == true,
                    "\(String(describing: never))")
            // It tried until the timeout, not one poll interval short of it.
            #expect(ContinuousClock.now - began >= .milliseconds(600))
        }
    }

    @Test("TCP failures name the address and the reason: refused, port in use, unknown host")
    func tcpFailures() throws {
        // A port that was just listened on and is closed again: nothing accepts there.
        let port = try Self.closedTCPPort()
        let refused = #expect(throws: LinkError.self) { try LinkConnector.connect(to: .tcp(host: "127.0.0.1", port: port)) }
        #expect(refused?.code == .notListening)
        #expect(refused?.message.hasPrefix("cannot connect to tcp:127.0.0.1:\(port): ") == true, "\(refused?.message ?? "")")
        #expect(refused?.message.lowercased().contains("refused") == true, "\(refused?.message ?? "")")

        let taken = try LinkListener.listen(on: .tcp(host: "127.0.0.1", port: 0), onConnection: { _ in })
        defer { taken.stop() }
        guard case .tcp(_, let takenPort) = taken.address else {
            Issue.record("not tcp")
            return
        }
        let inUse = #expect(throws: LinkError.self) {
            try LinkListener.listen(on: .tcp(host: "127.0.0.1", port: takenPort), onConnection: { _ in })
        }
        #expect(inUse?.message.hasPrefix("cannot listen on tcp:127.0.0.1:\(takenPort): ") == true, "\(inUse?.message ?? "")")
        #expect(inUse?.message.lowercased().contains("in use") == true, "\(inUse?.message ?? "")")

        let unknown = #expect(throws: LinkError.self) { try LinkConnector.connect(to: .tcp(host: "no-such-host.invalid", port: 9)) }
        #expect(unknown?.message.hasPrefix("cannot resolve tcp:no-such-host.invalid:9: ") == true, "\(unknown?.message ?? "")")
    }

    @Test("Bluetooth on a kernel without it fails with one clear line")
    func rfcommUnavailable() {
        let bluetoothInKernel =
            (try? String(contentsOfFile: "/proc/net/protocols", encoding: .utf8))?
            .contains("RFCOMM") ?? false
        do {
            _ = try LinkConnector.connect(
                to: try LinkAddress(parsing: "bt:00:11:22:33:44:55@3"),
                options: LinkConnectionOptions(connectTimeout: .seconds(2)))
            Issue.record("connecting to a made-up Bluetooth device succeeded")
        } catch let error as LinkError {
            #expect(error.code == .unavailable)
            #expect(!error.description.contains("\n"))
            if !bluetoothInKernel {
                #expect(error.message.hasPrefix("Bluetooth is not available in this kernel"))
            }
        } catch {
            Issue.record("unexpected error \(error)")
        }
    }

    @Test("connecting to nothing is not listening, in one line")
    func nothingThere() {
        for address: LinkAddress in [.unix(path: Self.temporarySocketPath()), .tcp(host: "127.0.0.1", port: 1)] {
            #expect {
                try LinkConnector.connect(to: address)
            } throws: { error in
                guard let error = error as? LinkError else { return false }
                return error.code == .notListening && error.message.contains("\(address)") && !error.description.contains("\n")
            }
        }
    }

    @Test("a listener refuses a Unix path where a live listener already is")
    func unixInUse() throws {
        let path = Self.temporarySocketPath()
        let listener = try LinkListener.listen(on: .unix(path: path), onConnection: { _ in })
        defer { listener.stop() }
        #expect(throws: LinkError.self) { try LinkListener.listen(on: .unix(path: path), onConnection: { _ in }) }
    }

    @Test("garbage from a peer closes the device end with protocolViolation and a goodbye")
    func garbagePeer() throws {
        let path = Self.temporarySocketPath()
        let device = ScriptedDevice()
        let listener = try LinkListener.listen(
            on: .unix(path: path), options: LinkListenerOptions(maxPayloadSize: 1024), onConnection: device.accept)
        defer { listener.stop() }
        let raw = try LinkConnector.connectUnix(path: path, timeout: .seconds(5))
        // 100 bytes of garbage, then a valid hello: skipped, counted, and the hello still arrives.
        let hello = try LinkFrameEncoder().encode(
            .host(.hello(protocolVersion: linkProtocolVersion, pairingToken: nil)))
        let garbage = [UInt8](repeating: 0x47, count: 100)
        _ = (garbage + hello).withUnsafeBytes { SocketCalls.writeAll(raw, $0) }
        #expect(device.connections.wait { $0.count == 1 })
        #expect(
            device.events.wait {
                $0.contains { $0.message == .hello(protocolVersion: linkProtocolVersion, pairingToken: nil) }
            })
        let statistics = (device.current as? any LinkDiagnosticsReporting)?.diagnostics.decoder
        #expect(statistics?.garbageBytesSkipped == 100)
        #expect(statistics?.resynchronisations == 1)
        #expect(statistics?.framesDecoded == 1)
        // Then a header that announces 256 MiB: a protocol violation, not an allocation.
        var frame = try LinkFrameEncoder().encode(.host(.stopStream()))
        frame[8] = 0x10
        LinkCodecTests.refreshCRCs(&frame, headerOnly: true)
        _ = frame.withUnsafeBytes { SocketCalls.writeAll(raw, $0) }
        #expect(device.events.wait { $0.last?.closeError != nil })
        #expect(device.events.all.compactMap(\.closeError).map(\.code) == [.protocolViolation])
        var decoder = LinkFrameDecoder()
        var received: [LinkFrame] = []
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 1)
        defer { buffer.deallocate() }
        while case .success(let count) = SocketCalls.read(raw, into: buffer), count > 0 {
            received += decoder.decode(UnsafeRawBufferPointer(rebasing: buffer[0..<count])).compactMap {
                if case .frame(let frame) = $0 { frame } else { nil }
            }
        }
        #expect(
            received.contains { if case .goodbye(let error) = $0 { error.code == .protocolViolation } else { false } })
    }
}

@Suite("Link addresses")
struct LinkAddressTests {
    @Test(
        "valid addresses parse and print back",
        arguments: [
            ("unix:/tmp/glasses.sock", LinkAddress.unix(path: "/tmp/glasses.sock")),
            ("tcp:127.0.0.1:7000", .tcp(host: "127.0.0.1", port: 7000)),
            ("tcp:localhost:0", .tcp(host: "localhost", port: 0)),
            ("tcp:[::1]:65535", .tcp(host: "::1", port: 65535)),
            ("bt:aa:bb:cc:dd:ee:ff", .bluetooth(address: "AA:BB:CC:DD:EE:FF", channel: 1)),
            ("bt:01:23:45:67:89:AB@30", .bluetooth(address: "01:23:45:67:89:AB", channel: 30)),
        ])
    func valid(text: String, expected: LinkAddress) throws {
        let address = try LinkAddress(parsing: text)
        #expect(address == expected)
        #expect(try LinkAddress(parsing: address.description) == expected)
    }

    @Test(
        "invalid addresses give a clear error",
        arguments: [
            ("", "expected unix:PATH"),
            ("http://x", "expected unix:PATH"),
            ("unix:", "empty"),
            ("unix:/" + String(repeating: "a", count: 200), "at most 107"),
            ("tcp:host", "tcp:HOST:PORT"),
            ("tcp::80", "host is empty"),
            ("tcp:h:70000", "not a port"),
            ("tcp:::1:80", "brackets"),
            ("tcp:[::1:80", "closing"),
            ("bt:AA:BB:CC:DD:EE", "not a Bluetooth address"),
            ("bt:AA:BB:CC:DD:EE:GG", "not a Bluetooth address"),
            ("bt:AA:BB:CC:DD:EE:FF@0", "RFCOMM channel"),
            ("bt:AA:BB:CC:DD:EE:FF@31", "RFCOMM channel"),
        ])
    func invalid(text: String, fragment: String) {
        #expect {
            try LinkAddress(parsing: text)
        } throws: { error in
            guard let error = error as? LinkAddressError else { return false }
            return error.description.contains(fragment) && error.description.contains("invalid link address")
        }
    }

    @Test(
        "loopback hosts are recognised",
        arguments: [
            ("127.0.0.1", true), ("127.1.2.3", true), ("localhost", true), ("::1", true),
            ("0.0.0.0", false), ("192.168.1.2", false), ("example.com", false), ("127.0.0", false),
        ])
    func loopback(host: String, expected: Bool) {
        #expect(LinkAddress.isLoopbackHost(host) == expected)
    }
}
