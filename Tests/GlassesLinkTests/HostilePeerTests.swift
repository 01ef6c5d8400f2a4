import Foundation
import Synchronization
import Testing
import WearablesKit

@testable import GlassesLink
@testable import GlassesLinkCore

#if canImport(Glibc)
    import Glibc
#endif

/// The two stream transports every hostile peer is tried on.
enum HostileTransport: String, CaseIterable, Sendable, CustomStringConvertible {
    case unix, tcp
    var description: String { rawValue }
}

/// A bare listening socket: the hostile device's side, which speaks raw bytes instead of a ``LinkListener``.
final class RawListener: Sendable {
    let address: LinkAddress
    private let handle: SocketHandle

    init(_ transport: HostileTransport) throws {
        switch transport {
        case .unix:
            let path = SocketTransportTests.temporarySocketPath()
            guard case .success(let created) = SocketCalls.socket(domain: AF_UNIX, type: Int32(SOCK_STREAM.rawValue))
            else { throw LinkError(.unavailable, "no Unix socket") }
            let failed = SocketCalls.withUnixAddress(path) { bind(created.descriptor, $0, $1) != 0 }
            if failed { throw LinkError(.unavailable, "cannot bind \(path)") }
            handle = created
            address = .unix(path: path)
        case .tcp:
            let (created, port) = try SocketCalls.firstTCPSocket(
                host: "127.0.0.1", port: 0, passive: true, verb: "listen on"
            ) { handle, address, length -> Result<UInt16, SystemError> in
                guard bind(handle.descriptor, address, length) == 0 else { return .failure(SystemError(errno)) }
                guard let port = SocketCalls.boundPort(handle) else { return .failure(SystemError(errno)) }
                return .success(port)
            }
            handle = created
            address = .tcp(host: "127.0.0.1", port: port)
        }
        guard listen(handle.descriptor, 4) == 0 else { throw LinkError(.unavailable, "cannot listen") }
    }

    /// The next connection, or nil when none came within `timeout` seconds (a failure guard, not timing).
    func accept(timeout: Int32 = 20) -> SocketHandle? {
        var descriptor = pollfd(fd: handle.descriptor, events: Int16(POLLIN), revents: 0)
        guard poll(&descriptor, 1, timeout * 1000) == 1 else { return nil }
        let fd = Glibc.accept(handle.descriptor, nil, nil)
        return fd < 0 ? nil : SocketHandle(descriptor: fd)
    }

    func stop() {
        handle.shutdown()
        if case .unix(let path) = address { _ = unlink(path) }
    }
}

/// A device that writes whatever the test tells it to and records what the host sends back.
final class HostilePeer: Sendable {
    let handle: SocketHandle
    /// Frames from the host, decoded.
    let received = EventRecorder<LinkFrame>()
    /// Fires once when the host closed the connection.
    let ended = EventRecorder<Bool>()

    init(handle: SocketHandle) {
        self.handle = handle
        let thread = Thread { [handle, received, ended] in
            var decoder = LinkFrameDecoder()
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 1)
            defer { buffer.deallocate() }
            while case .success(let count) = SocketCalls.read(handle, into: buffer), count > 0 {
                for output in decoder.decode(UnsafeRawBufferPointer(rebasing: buffer[0..<count])) {
                    if case .frame(let frame) = output { received.handler(frame) }
                }
            }
            ended.handler(true)
        }
        thread.start()
    }

    func send(_ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { SocketCalls.writeAll(handle, $0) }
    }

    func send(_ messages: DeviceMessage...) {
        send(messages.flatMap { Self.encode($0) })
    }

    static func encode(_ message: DeviceMessage) -> [UInt8] {
        (try? LinkFrameEncoder().encode(.device(message))) ?? []
    }

    /// Closes the connection from the device's side.
    func hangUp() { handle.shutdown() }

    /// Whether the host said goodbye with `code`.
    func sawGoodbye(_ code: LinkError.Code) -> Bool {
        received.wait { $0.contains { if case .goodbye(let error) = $0 { error.code == code } else { false } } }
    }
}

/// The real host end (``LinkConnector``) in virtual time, connected to a ``HostilePeer``.
struct HostileHarness {
    let scheduler = ManualScheduler()
    let host: any DeviceLink
    let events = EventRecorder<DeviceLinkEvent>()
    let peer: HostilePeer
    let listener: RawListener

    /// Connects; the host is not open yet (see ``open(holdingFirstSampleUntil:)``).
    init(_ transport: HostileTransport, initialCredit: Int = 8) throws {
        listener = try RawListener(transport)
        host = try LinkConnector.connect(
            to: listener.address,
            options: LinkConnectionOptions(scheduler: scheduler, initialCredit: initialCredit))
        guard let accepted = listener.accept() else { throw LinkError(.unavailable, "the host never connected") }
        peer = HostilePeer(handle: accepted)
    }

    /// Opens the host end; with a gate, the handler holds the first video sample until the gate is signalled.
    func open(holdingFirstSampleUntil gate: DispatchSemaphore? = nil) {
        let held = Atomic<Bool>(false)
        host.open { [events] event in
            events.handler(event)
            if let gate, event.isVideoSample, !held.exchange(true, ordering: .relaxed) {
                _ = gate.wait(timeout: .now() + 20)
            }
        }
    }

    var diagnostics: LinkDiagnostics? { (host as? any LinkDiagnosticsReporting)?.diagnostics }
    var decoder: LinkFrameDecoder.Statistics? { diagnostics?.decoder }

    /// Waits for the host's close event and returns its code.
    func closeCode() -> LinkError.Code? {
        _ = events.wait { $0.contains { $0.closeError != nil } }
        return events.all.compactMap(\.closeError).first?.code
    }

    func sawMessage(_ message: DeviceMessage) -> Bool {
        events.wait { $0.contains { $0.message == message } }
    }

    var isClosed: Bool { events.all.contains { $0.closeError != nil } }

    /// The host never buffered more than `limit` bytes (the decoder's own bound by default).
    func expectBounded(_ limit: Int = LinkWireFormat.headerSize + LinkWireFormat.maxPayloadSize) {
        let peak = decoder?.peakBufferedBytes ?? .max
        #expect(peak <= limit, "the host buffered \(peak) bytes, limit \(limit)")
    }

    func tearDown() {
        host.close()
        peer.hangUp()
        listener.stop()
    }

    /// Polls `condition` until it holds (bounded: a failure guard for state that has no event of its own).
    static func eventually(_ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(20)
        let idle = DispatchSemaphore(value: 0)
        while !condition() {
            if Date() > deadline { return false }
            _ = idle.wait(timeout: .now() + .milliseconds(2))
        }
        return true
    }
}

@Suite("Hostile peers over real sockets", .serialized)
struct HostilePeerTests {
    static let hello = DeviceMessage.hello(Fixtures.info)
    static let marker = DeviceMessage.deviceState(DeviceState(batteryLevel: 42))

    @Test("random bytes: the host closes with protocolViolation after the garbage limit, buffering one header", arguments: HostileTransport.allCases)
    func randomBytes(transport: HostileTransport) throws {
        let harness = try HostileHarness(transport)
        defer { harness.tearDown() }
        harness.open()
        var generator = SplitMix(seed: 19)
        harness.peer.send((0..<(LinkWireFormat.maxConsecutiveGarbage + 4096)).map { _ in UInt8(truncatingIfNeeded: generator.next()) })
        #expect(harness.closeCode() == .protocolViolation)
        #expect(harness.peer.sawGoodbye(.protocolViolation))
        #expect((harness.decoder?.garbageBytesSkipped ?? 0) > UInt64(LinkWireFormat.maxConsecutiveGarbage))
        harness.expectBounded(LinkWireFormat.headerSize)
    }

    @Test("garbage below the limit between frames: the stream recovers", arguments: HostileTransport.allCases)
    func garbageThenRecovery(transport: HostileTransport) throws {
        let harness = try HostileHarness(transport)
        defer { harness.tearDown() }
        harness.open()
        var generator = SplitMix(seed: 7)
        let garbage = (0..<100_000).map { _ in UInt8(truncatingIfNeeded: generator.next() | 1) }
        harness.peer.send(HostilePeer.encode(Self.hello) + garbage + HostilePeer.encode(Self.marker))
        #expect(harness.sawMessage(Self.marker))
        #expect(harness.events.all.compactMap(\.message) == [Self.hello, Self.marker])
        #expect(harness.decoder?.garbageBytesSkipped == 100_000)
        #expect(!harness.isClosed)
        harness.expectBounded(256)
    }

    @Test("absurd lengths: rejected at the header, before any body is buffered", arguments: HostileTransport.allCases)
    func absurdLengths(transport: HostileTransport) throws {
        for (type, length) in [(LinkMessageType.videoSample, UInt32(0xFFFF_FFF0)), (.deviceHeartbeat, 1 << 20)] {
            let harness = try HostileHarness(transport)
            defer { harness.tearDown() }
            harness.open()
            harness.peer.send(HostilePeer.encode(Self.hello) + DecoderBoundsTests.header(type: type.rawValue, length: length))
            harness.peer.send([UInt8](repeating: 0, count: 4096))
            #expect(harness.closeCode() == .protocolViolation, "\(type)")
            #expect(harness.events.all.compactMap(\.message) == [Self.hello])
            #expect(harness.peer.sawGoodbye(.protocolViolation))
            harness.expectBounded(4096)
        }
    }

    @Test("a truncated frame swallows what follows up to its announced length; then the stream recovers", arguments: HostileTransport.allCases)
    func truncatedFrame(transport: HostileTransport) throws {
        let harness = try HostileHarness(transport)
        defer { harness.tearDown() }
        harness.open()
        let sample = HostilePeer.encode(.videoSample(Fixtures.sample(1, size: 10_000)))
        let filler = (0..<400).flatMap { HostilePeer.encode(.heartbeat(sequence: UInt32($0), droppedFrames: 0)) }
        harness.peer.send(HostilePeer.encode(Self.hello) + Array(sample.prefix(5_000)) + filler + HostilePeer.encode(Self.marker))
        #expect(harness.sawMessage(Self.marker))
        #expect(harness.decoder?.corruptFramesSkipped == 1)
        #expect(!harness.events.contains(where: \.isVideoSample))
        #expect(!harness.isClosed)
        // Truncated at the end of the connection: the host reports the loss, typed.
        harness.peer.send(Array(sample.prefix(3_000)))
        harness.peer.hangUp()
        #expect(harness.closeCode() == .connectionLost)
        harness.expectBounded(sample.count)
    }

    @Test("bad CRCs: a corrupt video frame is lost alone; too many in a row close the link", arguments: HostileTransport.allCases)
    func badCRCs(transport: HostileTransport) throws {
        let harness = try HostileHarness(transport)
        defer { harness.tearDown() }
        harness.open()
        var corrupt = HostilePeer.encode(.videoSample(Fixtures.sample(1, size: 500_000)))
        corrupt[corrupt.count - 10] ^= 0x20
        let good = DeviceMessage.videoSample(Fixtures.sample(2, size: 1000))
        var badHeader = HostilePeer.encode(Self.marker)
        badHeader[13] ^= 1  // header CRC: garbage, resynchronised
        harness.peer.send(
            HostilePeer.encode(Self.hello) + corrupt + badHeader + HostilePeer.encode(good) + HostilePeer.encode(Self.marker))
        #expect(harness.sawMessage(Self.marker))
        #expect(harness.events.all.compactMap(\.message) == [Self.hello, good, Self.marker])
        #expect(harness.decoder?.corruptFramesSkipped == 1)
        #expect((harness.decoder?.checksumFailures ?? 0) >= 2)
        #expect(!harness.isClosed)
        var beat = HostilePeer.encode(.heartbeat(sequence: 1, droppedFrames: 0))
        beat[beat.count - 1] ^= 1
        harness.peer.send(Array([[UInt8]](repeating: beat, count: LinkWireFormat.maxConsecutiveCorruptFrames + 1).joined()))
        #expect(harness.closeCode() == .protocolViolation)
        harness.expectBounded(corrupt.count)
    }

    @Test("lost video samples (a bad CRC, an unreadable body) give their credit back, so bit errors never stall the stream",
          arguments: HostileTransport.allCases)
    func lostSamplesReturnCredit(transport: HostileTransport) throws {
        let harness = try HostileHarness(transport, initialCredit: 3)
        defer { harness.tearDown() }
        harness.open()
        var corrupt = HostilePeer.encode(.videoSample(Fixtures.sample(1, size: 2000)))
        corrupt[corrupt.count - 10] ^= 0x20
        let unreadable = HostilePeer.encode(.videoSample(VideoSample(
            presentationTimeUs: 0, isKeyframe: true,
            format: .nv12(width: 360, height: 640, lumaBytesPerRow: 360, chromaBytesPerRow: 360), payload: Data(count: 100))))
        // The device spends all three credits on samples the host cannot use.
        harness.peer.send(HostilePeer.encode(Self.hello) + corrupt + corrupt + unreadable)
        func granted() -> UInt32 {
            harness.peer.received.all.reduce(0) { sum, frame in
                if case .host(.frameCredit(let n)) = frame { sum + n } else { sum }
            }
        }
        #expect(HostileHarness.eventually { granted() == 6 }, "granted \(granted()): 3 at the start and 3 given back")
        let good = DeviceMessage.videoSample(Fixtures.sample(2, size: 1000))
        harness.peer.send(good, Self.marker)
        #expect(harness.sawMessage(Self.marker))
        #expect(harness.events.all.compactMap(\.message) == [Self.hello, good, Self.marker])
        #expect(harness.diagnostics?.uncreditedVideoSamples == 0)
        #expect(!harness.isClosed)
    }

    @Test("a flood of control messages while the handler is busy closes the link at the inbox's limit, with a goodbye",
          arguments: HostileTransport.allCases)
    func controlFloodIsBounded(transport: HostileTransport) throws {
        let harness = try HostileHarness(transport)
        defer { harness.tearDown() }
        let gate = DispatchSemaphore(value: 0)
        harness.open(holdingFirstSampleUntil: gate)
        // The handler holds the first sample; the messages behind it wait in the inbox, which must not grow forever.
        let flood = (0..<(EndpointStateMachine.inboxLimit + 10)).flatMap { _ in HostilePeer.encode(Self.marker) }
        harness.peer.send(HostilePeer.encode(Self.hello) + HostilePeer.encode(.videoSample(Fixtures.sample(1, size: 1000))) + flood)
        #expect(harness.peer.sawGoodbye(.protocolViolation))
        gate.signal()
        #expect(harness.closeCode() == .protocolViolation)
        let delivered = harness.events.all.compactMap(\.message).filter { $0 == Self.marker }.count
        #expect(delivered <= EndpointStateMachine.inboxLimit, "\(delivered) markers delivered")
    }

    @Test("absurd NV12 strides: the sample is skipped at the link and counted; the stream goes on", arguments: HostileTransport.allCases)
    func absurdStrides(transport: HostileTransport) throws {
        let harness = try HostileHarness(transport)
        defer { harness.tearDown() }
        harness.open()
        let absurd = DeviceMessage.videoSample(
            VideoSample(
                presentationTimeUs: 0, isKeyframe: true,
                format: .nv12(width: 2, height: 0xFFFF_FFFE, lumaBytesPerRow: 0xFFFF_FFFF, chromaBytesPerRow: 0xFFFF_FFFF),
                payload: Data(count: 6)))
        harness.peer.send(Self.hello, absurd, Self.marker)
        #expect(harness.sawMessage(Self.marker))
        #expect(harness.events.all.compactMap(\.message) == [Self.hello, Self.marker])
        #expect(harness.decoder?.malformedFramesSkipped == 1)
        #expect(!harness.isClosed)
    }

    @Test("a flood beyond credit: samples past the credit are discarded and counted, and the stream goes on", arguments: HostileTransport.allCases)
    func floodBeyondCredit(transport: HostileTransport) throws {
        let harness = try HostileHarness(transport, initialCredit: 2)
        defer { harness.tearDown() }
        let gate = DispatchSemaphore(value: 0)
        harness.open(holdingFirstSampleUntil: gate)
        // The host holds the first sample, so no credit goes back while the flood arrives.
        let flood = (0..<100).flatMap { HostilePeer.encode(.videoSample(Fixtures.sample($0, size: 2000))) }
        harness.peer.send(HostilePeer.encode(Self.hello) + flood + HostilePeer.encode(Self.marker))
        #expect(HostileHarness.eventually { harness.diagnostics?.uncreditedVideoSamples == 98 })
        gate.signal()
        #expect(harness.sawMessage(Self.marker))
        #expect(harness.events.all.filter(\.isVideoSample).count == 2)
        #expect(harness.diagnostics?.uncreditedVideoSamples == 98)
        #expect(!harness.isClosed)
        harness.expectBounded(4096)
    }

    @Test("silence before the hello: the host times out in virtual time, with a goodbye", arguments: HostileTransport.allCases)
    func silenceBeforeHello(transport: HostileTransport) throws {
        let harness = try HostileHarness(transport)
        defer { harness.tearDown() }
        harness.open()
        harness.scheduler.advance(by: .seconds(4))
        #expect(!harness.isClosed)
        harness.scheduler.advance(by: .seconds(2))
        #expect(harness.closeCode() == .heartbeatTimeout)
        #expect(harness.peer.sawGoodbye(.heartbeatTimeout))
        #expect(harness.peer.ended.wait { !$0.isEmpty })
    }

    @Test("silence after the hello: the host times out five seconds after the last byte", arguments: HostileTransport.allCases)
    func silenceAfterHello(transport: HostileTransport) throws {
        let harness = try HostileHarness(transport)
        defer { harness.tearDown() }
        harness.open()
        harness.scheduler.advance(by: .seconds(3))
        harness.peer.send(Self.hello)
        #expect(harness.sawMessage(Self.hello))
        harness.scheduler.advance(by: .seconds(4))  // 7 s since open, 4 s since the hello
        #expect(!harness.isClosed)
        harness.scheduler.advance(by: .seconds(2))
        #expect(harness.closeCode() == .heartbeatTimeout)
        #expect(harness.peer.sawGoodbye(.heartbeatTimeout))
    }

    @Test("heartbeats without video keep the link alive for as long as they come; then silence ends it", arguments: HostileTransport.allCases)
    func heartbeatsWithoutVideo(transport: HostileTransport) throws {
        let harness = try HostileHarness(transport)
        defer { harness.tearDown() }
        harness.open()
        harness.peer.send(Self.hello)
        for sequence in UInt32(1)...12 {
            harness.peer.send(.heartbeat(sequence: sequence, droppedFrames: 0))
            #expect(harness.sawMessage(.heartbeat(sequence: sequence, droppedFrames: 0)))
            harness.scheduler.advance(by: .seconds(1))
        }
        #expect(!harness.isClosed)
        #expect(!harness.events.contains(where: \.isVideoSample))
        // The host's own heartbeats went out all along.
        #expect(harness.peer.received.wait { $0.filter { if case .host(.heartbeat) = $0 { true } else { false } }.count >= 12 })
        harness.scheduler.advance(by: .seconds(6))
        #expect(harness.closeCode() == .heartbeatTimeout)
        harness.expectBounded(256)
    }

    @Test("a second connection to a device's listener that sends garbage ends alone; the first link keeps working", arguments: HostileTransport.allCases)
    func secondConnection(transport: HostileTransport) throws {
        let address: LinkAddress =
            transport == .unix ? .unix(path: SocketTransportTests.temporarySocketPath()) : .tcp(host: "127.0.0.1", port: 0)
        let links = Mutex<[(any HostLink, EventRecorder<HostLinkEvent>)]>([])
        let accepted = EventRecorder<Int>()
        let listener = try LinkListener.listen(on: address) { link in
            let events = EventRecorder<HostLinkEvent>()
            links.withLock { $0.append((link, events)) }
            link.open { event in
                events.handler(event)
                if case .message(.checkPermission(let permission, let id)) = event {
                    link.send(.permission(permission, .granted, requestID: id))
                }
            }
            accepted.handler(1)
        }
        defer { listener.stop() }
        let host = try LinkConnector.connect(to: listener.address)
        defer { host.close() }
        let hostEvents = EventRecorder<DeviceLinkEvent>()
        host.open(eventHandler: hostEvents.handler)
        host.send(.checkPermission(.camera, requestID: 1))
        #expect(hostEvents.wait { $0.contains { $0.message == .permission(.camera, .granted, requestID: 1) } })

        // The intruder: a raw connection that sends garbage past the limit.
        let intruder: SocketHandle
        switch listener.address {
        case .unix(let path): intruder = try LinkConnector.connectUnix(path: path, timeout: .seconds(5))
        case .tcp(let host, let port): intruder = try LinkConnector.connectTCP(host: host, port: port, timeout: .seconds(5))
        case .bluetooth: throw LinkError(.unavailable, "not a socket test")
        }
        let peer = HostilePeer(handle: intruder)
        defer { peer.hangUp() }
        #expect(accepted.wait { $0.count == 2 })
        peer.send([UInt8](repeating: 0x47, count: LinkWireFormat.maxConsecutiveGarbage + 100))
        #expect(peer.sawGoodbye(.protocolViolation))
        let second = links.withLock { $0.count > 1 ? $0[1].1 : nil }
        #expect(second?.wait { $0.contains { $0.closeError?.code == .protocolViolation } } == true)

        // The first link is untouched, and the listener still accepts.
        host.send(.checkPermission(.microphone, requestID: 2))
        #expect(hostEvents.wait { $0.contains { $0.message == .permission(.microphone, .granted, requestID: 2) } })
        #expect(!hostEvents.all.contains { $0.closeError != nil })
        let third = try LinkConnector.connect(to: listener.address)
        defer { third.close() }
        let thirdEvents = EventRecorder<DeviceLinkEvent>()
        third.open(eventHandler: thirdEvents.handler)
        third.send(.checkPermission(.camera, requestID: 3))
        #expect(thirdEvents.wait { $0.contains { $0.message == .permission(.camera, .granted, requestID: 3) } })
        let statistics = (links.withLock { $0.count > 1 ? $0[1].0 : nil } as? any LinkDiagnosticsReporting)?.diagnostics.decoder
        #expect((statistics?.peakBufferedBytes ?? .max) <= LinkWireFormat.headerSize)
    }
}

extension EventRecorder {
    /// Whether any recorded event satisfies `predicate` (now, without waiting).
    func contains(where predicate: (Event) -> Bool) -> Bool { all.contains(where: predicate) }
}
