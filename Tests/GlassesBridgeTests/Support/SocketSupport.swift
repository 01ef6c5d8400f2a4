#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization
import WearablesKit

/// Counts messages through a link end, so a virtual-time test can wait until a socket has delivered them.
final class MessageCounter: Sendable {
    let sent = Atomic<UInt64>(0)
    let received = Atomic<UInt64>(0)
}

/// The host end of a link, counted.
final class CountingDeviceLink: DeviceLink {
    let inner: any DeviceLink
    let counter = MessageCounter()

    init(_ inner: any DeviceLink) { self.inner = inner }

    func open(eventHandler: @escaping @Sendable (DeviceLinkEvent) -> Void) {
        let counter = self.counter
        inner.open { event in
            // Counted after handling, so whatever the handler sends in reaction is counted first. Heartbeats are
            // left out: the link ends send them themselves, never through a counted `send`, so counting them here
            // made the balance drift by one a second and the settler let time run ahead of the sockets.
            eventHandler(event)
            if case .message(let message) = event, !message.isHeartbeat { counter.received.add(1, ordering: .relaxed) }
        }
    }

    func send(_ message: HostMessage) {
        counter.sent.add(1, ordering: .relaxed)
        inner.send(message)
    }

    func close() { inner.close() }
}

/// The device end of a link, counted.
final class CountingHostLink: HostLink, LinkClockReading {
    let inner: any HostLink
    let counter = MessageCounter()

    init(_ inner: any HostLink) { self.inner = inner }

    func open(eventHandler: @escaping @Sendable (HostLinkEvent) -> Void) {
        let counter = self.counter
        inner.open { event in
            // Counted after handling, so whatever the handler sends in reaction is counted first; heartbeats left
            // out, as on the host side.
            eventHandler(event)
            if case .message(let message) = event, !message.isHeartbeat { counter.received.add(1, ordering: .relaxed) }
        }
    }

    func send(_ message: DeviceMessage) {
        counter.sent.add(1, ordering: .relaxed)
        inner.send(message)
    }

    var droppedVideoSamples: UInt64 { inner.droppedVideoSamples }

    func close() { inner.close() }

    /// The wrapped end's clock (always a GlassesLink end here), so the glasses stamp sample timing through it.
    var linkClockUs: Int64 { (inner as? any LinkClockReading)?.linkClockUs ?? 0 }
}

/// Waits, in real time and briefly, until the current host and device ends have exchanged everything sent.
///
/// Messages a corrupted stretch of bytes destroyed never arrive: when the count stops matching for the whole
/// wait, the shortfall becomes the new baseline, so later steps wait only for new messages.
final class LinkSettler: Sendable {
    private struct Ends {
        var host: CountingDeviceLink?
        var device: CountingHostLink?
        var hostGeneration = 0
        var deviceGeneration = 0
        var downBaseline: Int64 = 0
        var upBaseline: Int64 = 0
    }

    private let ends = Mutex(Ends())
    /// Something else that must be idle before time moves on (a relay's permission query in flight).
    private let alsoIdle: @Sendable () -> Bool

    init(alsoIdle: @escaping @Sendable () -> Bool = { true }) {
        self.alsoIdle = alsoIdle
    }

    func setHost(_ link: CountingDeviceLink) {
        ends.withLock { $0.host = link; $0.hostGeneration += 1; $0.downBaseline = 0; $0.upBaseline = 0 }
    }

    func setDevice(_ link: CountingHostLink) {
        ends.withLock { $0.device = link; $0.deviceGeneration += 1; $0.downBaseline = 0; $0.upBaseline = 0 }
    }

    func settle(maximumWait: Double = 2) {
        // A new host connection waits (longer) for the listener to hand the device its end.
        let acceptDeadline = Date().addingTimeInterval(5)
        while ends.withLock({ $0.host != nil && $0.deviceGeneration < $0.hostGeneration }), Date() < acceptDeadline {
            usleep(100)
        }
        let deadline = Date().addingTimeInterval(maximumWait)
        while true {
            let (down, up, downBase, upBase) = ends.withLock { ends -> (Int64, Int64, Int64, Int64) in
                guard let host = ends.host, let device = ends.device else { return (0, 0, 0, 0) }
                let deviceSent = Int64(device.counter.sent.load(ordering: .relaxed)) - Int64(device.droppedVideoSamples)
                let down = deviceSent - Int64(host.counter.received.load(ordering: .relaxed))
                let up = Int64(host.counter.sent.load(ordering: .relaxed)) - Int64(device.counter.received.load(ordering: .relaxed))
                return (down, up, ends.downBaseline, ends.upBaseline)
            }
            if down <= downBase && up <= upBase && alsoIdle() { return }
            if Date() > deadline {
                ends.withLock { $0.downBaseline = max($0.downBaseline, down); $0.upBaseline = max($0.upBaseline, up) }
                return
            }
            usleep(100)
        }
    }
}

/// A Unix-socket relay between the bridge and a listening simulator that can splice garbage bytes into the
/// device-to-host byte stream, below the message layer.
final class GarbageRelay: Sendable {
    private let listener: RelayListener
    private let upstream: String
    private let pending = Mutex<Int>(0)
    let path: String

    init(path: String, upstream: String) throws {
        self.path = path
        self.upstream = upstream
        unlink(path)
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EMFILE) }
        guard Self.withAddress(path, { bind(fd, $0, $1) }) == 0, listen(fd, 4) == 0 else {
            close(fd)
            throw POSIXError(.EADDRINUSE)
        }
        listener = RelayListener(fd)
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    /// The next chunk from the device is preceded by `count` random bytes.
    func injectGarbage(count: Int) { pending.withLock { $0 += count } }

    /// Stops accepting (the accept loop closes the listener) and removes the socket's path. Relayed connections end
    /// when the bridge or the simulator closes its side.
    func stop() {
        listener.stop()
        unlink(path)
    }

    private func acceptLoop() {
        listener.acceptLoop { client in
            let server = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            guard server >= 0, Self.withAddress(upstream, { connect(server, $0, $1) }) == 0 else {
                close(client)
                if server >= 0 { close(server) }
                return
            }
            let pair = RelayedSocketPair(client, server, threads: 2)
            Thread.detachNewThread { [self] in pump(from: client, to: server, garbage: false, pair: pair) }
            Thread.detachNewThread { [self] in pump(from: server, to: client, garbage: true, pair: pair) }
        }
    }

    /// Passes bytes from `source` to `destination` until either ends; then shuts both down (the pair's last thread
    /// closes them).
    private func pump(from source: Int32, to destination: Int32, garbage: Bool, pair: RelayedSocketPair) {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var random = SplitMix(seed: 99)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(source, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            if garbage {
                let extra = pending.withLock { value -> Int in defer { value = 0 }; return value }
                if extra > 0 {
                    let junk = (0..<extra).map { _ in UInt8(truncatingIfNeeded: random.next()) }
                    guard writeAll(destination, junk[...]) else { break }
                }
            }
            guard writeAll(destination, buffer[..<count]) else { break }
        }
        pair.shutdownBoth()
        pair.threadDone()
    }

    private func writeAll(_ fd: Int32, _ bytes: ArraySlice<UInt8>) -> Bool {
        var offset = bytes.startIndex
        while offset < bytes.endIndex {
            let written = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard written > 0 else { return false }
            offset += written
        }
        return true
    }

    private static func withAddress(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Int32) -> Int32 {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8.prefix(107)) + [0]
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in bytes.enumerated() { raw[index] = byte }
        }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
    }
}

extension DeviceMessage {
    /// A heartbeat, which a link end sends by itself.
    var isHeartbeat: Bool { if case .heartbeat = self { true } else { false } }
}

extension HostMessage {
    /// A heartbeat, which a link end sends by itself.
    var isHeartbeat: Bool { if case .heartbeat = self { true } else { false } }
}

