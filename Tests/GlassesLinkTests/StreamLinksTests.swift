import Foundation
import Synchronization
import Testing
import WearablesKit

@testable import GlassesLinkCore

/// One end of an in-memory byte stream pair, with the callback shape of Network.framework's `NWConnection`
/// (completions come later, on another thread).
final class MemoryStream: LinkByteStream {
    private struct State {
        var inbox: [UInt8] = []
        var ended = false
        var failure: String?
        var pendingRead: (@Sendable (LinkStreamRead) -> Void)?
        var written: [UInt8] = []
        var writeFailure: String?
        var finished = false
        var cancelled = false
    }

    private let state = Mutex(State())
    private let peerBox = Mutex<MemoryStream?>(nil)

    static func pair() -> (MemoryStream, MemoryStream) {
        let (a, b) = (MemoryStream(), MemoryStream())
        a.peerBox.withLock { $0 = b }
        b.peerBox.withLock { $0 = a }
        return (a, b)
    }

    /// Every byte written so far.
    var written: [UInt8] { state.withLock { $0.written } }
    var finished: Bool { state.withLock { $0.finished } }
    var cancelled: Bool { state.withLock { $0.cancelled } }

    /// From now on, writes fail with `reason`.
    func failWrites(_ reason: String) { state.withLock { $0.writeFailure = reason } }

    func write(_ bytes: [UInt8], completion: @escaping @Sendable (String?) -> Void) {
        let failure = state.withLock { state -> String? in
            if let failure = state.writeFailure { return failure }
            state.written += bytes
            return nil
        }
        if failure == nil { peerBox.withLock { $0 }?.arrive(.bytes(bytes)) }
        DispatchQueue.global().async { completion(failure) }
    }

    func read(_ completion: @escaping @Sendable (LinkStreamRead) -> Void) {
        let ready = state.withLock { state -> LinkStreamRead? in
            if !state.inbox.isEmpty {
                defer { state.inbox = [] }
                return .bytes(state.inbox)
            }
            if let failure = state.failure { return .failed(failure) }
            if state.ended { return .end }
            state.pendingRead = completion
            return nil
        }
        if let ready { DispatchQueue.global().async { completion(ready) } }
    }

    func finish() {
        state.withLock { $0.finished = true }
        peerBox.withLock { $0 }?.arrive(.end)
    }

    func cancel() {
        state.withLock { $0.cancelled = true }
        arrive(.failed("cancelled"))
        peerBox.withLock { $0 }?.arrive(.end)
    }

    /// Something from the peer (or this end's own cancel) reaches the reader.
    private func arrive(_ event: LinkStreamRead) {
        let pending = state.withLock { state -> (@Sendable (LinkStreamRead) -> Void, LinkStreamRead)? in
            switch event {
            case .bytes(let bytes): state.inbox += bytes
            case .end: state.ended = true
            case .failed(let reason): state.failure = state.failure ?? reason
            }
            guard let pending = state.pendingRead else { return nil }
            state.pendingRead = nil
            let result: LinkStreamRead
            if !state.inbox.isEmpty {
                result = .bytes(state.inbox)
                state.inbox = []
            } else if let failure = state.failure {
                result = .failed(failure)
            } else {
                result = .end
            }
            return (pending, result)
        }
        if let (completion, result) = pending { DispatchQueue.global().async { completion(result) } }
    }
}

@Suite("Stream links: the core's link ends over a callback byte stream (what a Network.framework transport uses)")
struct StreamLinksTests {
    /// Heartbeats as usual, but a liveness timeout no loaded machine reaches: these tests are about the exchange, the
    /// handshake and closing, and the in-memory stream completes on Dispatch's global queue, which a busy parallel
    /// test run can starve for seconds (a 5 s timeout then closed the links as heartbeatTimeout before the exchange).
    static let liveness = LinkLiveness(heartbeatInterval: .seconds(1), timeout: .seconds(300))
    static let options = LinkConnectionOptions(liveness: liveness)

    /// Polls `condition` for up to 10 s.
    static func eventually(_ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(10)
        while !condition() {
            guard Date() < deadline else { return false }
            Thread.sleep(forTimeInterval: 0.01)
        }
        return true
    }

    @Test("an accepted device end and a host end talk over an in-memory stream; the host's close reaches the device")
    func acceptedExchange() throws {
        let (hostSide, deviceSide) = MemoryStream.pair()
        let device = ScriptedDevice()
        let acceptor = StreamAcceptor(options: LinkListenerOptions(liveness: Self.liveness), onConnection: device.accept)
        acceptor.accept(deviceSide)
        let host = StreamLinks.dialedDevice(hostSide, options: Self.options)
        let hostEvents = EventRecorder<DeviceLinkEvent>()
        host.open(eventHandler: hostEvents.handler)
        host.send(.hello(protocolVersion: linkProtocolVersion, pairingToken: nil))
        #expect(hostEvents.wait { $0.filter(\.isVideoSample).count == device.sampleCount })
        let samples = hostEvents.all.compactMap(\.message).filter { if case .videoSample = $0 { true } else { false } }
        #expect(samples == (0..<device.sampleCount).map { .videoSample(Fixtures.sample($0)) })
        host.close()
        #expect(device.events.wait { $0.last?.closeError != nil })
        #expect(device.events.all.compactMap(\.closeError).map(\.code) == [.connectionLost])
        // The closing end sent its goodbye, then finished its sending side.
        #expect(Self.eventually { hostSide.finished })
        acceptor.stop(closingConnections: true)
    }

    @Test("a dialing device end sends the pair frame first, with the token; the host's refusal closes it")
    func dialedHostPairsFirst() throws {
        let (deviceSide, hostSide) = MemoryStream.pair()
        var options = Self.options
        options.pairingToken = "secret"
        let link = try StreamLinks.dialedHost(deviceSide, options: options)
        let events = EventRecorder<HostLinkEvent>()
        link.open(eventHandler: events.handler)
        var decoder = LinkFrameDecoder()
        let first = decoder.decode(deviceSide.written).first
        #expect(first == .frame(.pair(protocolVersion: linkProtocolVersion, pairingToken: "secret")))
        // The host answers with a goodbye: the device end closes with the host's reason.
        let goodbye = try LinkFrameEncoder().encode(.goodbye(LinkError(.incompatible, "wrong token")))
        hostSide.write(goodbye) { _ in }
        #expect(events.wait { $0.last?.closeError != nil })
        #expect(events.all.compactMap(\.closeError).map(\.code) == [.incompatible])
    }

    @Test("an accepted end that requires a token closes a host presenting the wrong one as incompatible")
    func acceptorChecksToken() throws {
        let (hostSide, deviceSide) = MemoryStream.pair()
        let device = ScriptedDevice()
        let acceptor = StreamAcceptor(options: LinkListenerOptions(liveness: Self.liveness, pairingToken: "right"), onConnection: device.accept)
        acceptor.accept(deviceSide)
        var options = Self.options
        options.pairingToken = "wrong"
        let host = StreamLinks.dialedDevice(hostSide, options: options)
        let hostEvents = EventRecorder<DeviceLinkEvent>()
        host.open(eventHandler: hostEvents.handler)
        host.send(.hello(protocolVersion: linkProtocolVersion, pairingToken: nil))
        #expect(hostEvents.wait { $0.last?.closeError != nil })
        #expect(hostEvents.all.compactMap(\.closeError).map(\.code) == [.incompatible])
        #expect(!hostEvents.all.contains { $0.isVideoSample })
        acceptor.stop(closingConnections: true)
    }

    @Test("a failed write closes the link as connectionLost with the transport's words; a stopped acceptor cuts newcomers")
    func writeFailureAndStoppedAcceptor() throws {
        let (hostSide, deviceSide) = MemoryStream.pair()
        let link = try StreamLinks.dialedHost(deviceSide, options: Self.options)
        let events = EventRecorder<HostLinkEvent>()
        link.open(eventHandler: events.handler)
        deviceSide.failWrites("POSIXErrorCode(rawValue: 32): Broken pipe")
        link.send(.deviceState(DeviceState(batteryLevel: 5)))
        #expect(events.wait { $0.last?.closeError != nil })
        let error = events.all.compactMap(\.closeError).first
        #expect(error?.code == .connectionLost)
        #expect(error?.message == "writing to the host failed: POSIXErrorCode(rawValue: 32): Broken pipe")
        _ = hostSide

        let acceptor = StreamAcceptor(options: LinkListenerOptions(), onConnection: { _ in Issue.record("handed over") })
        acceptor.stop(closingConnections: true)
        let (_, late) = MemoryStream.pair()
        acceptor.accept(late)
        #expect(late.cancelled)
    }

    @Test("a dial attempt: ready returns, refused is notListening, a wait past the timeout says why it waited")
    func dialOutcomes() throws {
        let address = LinkAddress.tcp(host: "192.0.2.1", port: 7100)
        try StreamDialing.awaitReady(to: address, timeout: .seconds(5), start: { report in
            DispatchQueue.global().async { report(.waiting("no path")); report(.ready); report(.failed("later")) }
        }, cancel: { Issue.record("cancelled a ready connection") })

        let cancels = Mutex(0)
        #expect(throws: LinkError(.notListening, "cannot connect to tcp:192.0.2.1:7100: Connection refused")) {
            try StreamDialing.awaitReady(to: address, timeout: .seconds(5), start: { report in
                DispatchQueue.global().async { report(.refused("Connection refused")) }
            }, cancel: { cancels.withLock { $0 += 1 } })
        }
        #expect(throws: LinkError(.unavailable, "cannot connect to tcp:192.0.2.1:7100: timed out after 0.2 s (no path)")) {
            try StreamDialing.awaitReady(to: address, timeout: .milliseconds(200), start: { report in
                report(.waiting("no path"))
            }, cancel: { cancels.withLock { $0 += 1 } })
        }
        #expect(cancels.withLock { $0 } == 2)
    }

    @Test("waitsForListener dials again while refused, until it connects or the connect timeout has passed")
    func listenerRetry() throws {
        var options = Self.options
        options.waitsForListener = true
        options.connectTimeout = .seconds(5)
        let attempts = Mutex(0)
        let value = try StreamDialing.withListenerRetry(options: options, pollInterval: .milliseconds(10)) {
            _ throws(LinkError) -> Int in
            let attempt = attempts.withLock { $0 += 1; return $0 }
            guard attempt >= 3 else { throw LinkError(.notListening, "refused") }
            return attempt
        }
        #expect(value == 3)
        options.connectTimeout = .milliseconds(100)
        #expect(throws: LinkError(.notListening, "refused (nothing listened there within the 0.1 s connect timeout)")) {
            try StreamDialing.withListenerRetry(options: options, pollInterval: .milliseconds(10)) {
                _ throws(LinkError) -> Int in throw LinkError(.notListening, "refused")
            }
        }
        options.waitsForListener = false
        attempts.withLock { $0 = 0 }
        #expect(throws: LinkError.self) {
            try StreamDialing.withListenerRetry(options: options, pollInterval: .milliseconds(10)) {
                _ throws(LinkError) -> Int in
                attempts.withLock { $0 += 1 }
                throw LinkError(.notListening, "refused")
            }
        }
        #expect(attempts.withLock { $0 } == 1)
    }

    @Test("listening rules: remote TCP needs allowRemote and a token; Bluetooth never")
    func listeningRules() throws {
        let remote = LinkAddress.tcp(host: "0.0.0.0", port: 7100)
        try StreamLinks.checkListening(on: .tcp(host: "127.0.0.1", port: 0), options: LinkListenerOptions())
        #expect(throws: LinkError.self) { try StreamLinks.checkListening(on: remote, options: LinkListenerOptions()) }
        #expect(throws: LinkError.self) {
            try StreamLinks.checkListening(on: remote, options: LinkListenerOptions(allowRemote: true, pairingToken: ""))
        }
        try StreamLinks.checkListening(on: remote, options: LinkListenerOptions(allowRemote: true, pairingToken: "t"))
        #expect(throws: LinkError.self) {
            try StreamLinks.checkListening(on: .bluetooth(address: "AA:BB:CC:DD:EE:FF", channel: 1), options: .init())
        }
    }
}
