#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization

/// A slow network between the bridge and the glasses: a loopback TCP relay that holds every byte back by `delay`
/// in each direction before passing it on. The test double for a long or congested route, where a real one is
/// missing; the sockets, the link and both processes on either side are real.
final class DelayingTCPProxy: Sendable {
    /// The loopback port the proxy listens on (`tcp:127.0.0.1:PORT`).
    let port: UInt16
    private let listener: RelayListener
    private let connections = Mutex<[RelayedSocketPair]>([])

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Listens on a free loopback port and relays each connection to `127.0.0.1:targetPort`, `delay` seconds late.
    init(targetPort: UInt16, delay: Double) throws {
        let fd = socket(AF_INET, 1 /* SOCK_STREAM */, 0)
        guard fd >= 0 else { throw Failure(description: "socket: \(String(cString: strerror(errno)))") }
        var address = Self.loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 4) == 0 else {
            close(fd)
            throw Failure(description: "bind/listen: \(String(cString: strerror(errno)))")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        listener = RelayListener(fd)
        port = UInt16(bigEndian: address.sin_port)
        Thread.detachNewThread { [self] in acceptLoop(targetPort: targetPort, delay: delay) }
    }

    /// Closes the listener and every relayed connection.
    func stop() {
        guard !listener.isStopped else { return }
        // Shut down only: the relay's own threads close the sockets when they are done with them.
        listener.stop()
        for connection in connections.withLock({ $0 }) { connection.shutdownBoth() }
    }

    deinit { stop() }

    private static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return address
    }

    private func acceptLoop(targetPort: UInt16, delay: Double) {
        listener.acceptLoop { client in
            let server = socket(AF_INET, 1 /* SOCK_STREAM */, 0)
            var address = Self.loopback(port: targetPort)
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(server, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard server >= 0, connected == 0 else {
                close(client)
                if server >= 0 { close(server) }
                return
            }
            let closer = RelayedSocketPair(client, server, threads: 4)
            connections.withLock { $0.append(closer) }
            Self.pump(from: client, to: server, delay: delay, closer: closer)
            Self.pump(from: server, to: client, delay: delay, closer: closer)
        }
    }

    /// Reads `from` on one thread and writes each chunk to `to` on another once `delay` has passed since it was read;
    /// order is kept. When either side ends, both directions are shut down.
    private static func pump(from source: Int32, to destination: Int32, delay: Double, closer: RelayedSocketPair) {
        let queue = Mutex<(chunks: [(due: Date, bytes: [UInt8])], ended: Bool)>(([], false))
        Thread.detachNewThread {
            var buffer = [UInt8](repeating: 0, count: 64 * 1024)
            while true {
                let n = buffer.withUnsafeMutableBytes { recv(source, $0.baseAddress, $0.count, 0) }
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { break }
                let chunk = Array(buffer[0..<n])
                queue.withLock { $0.chunks.append((Date().addingTimeInterval(delay), chunk)) }
            }
            queue.withLock { $0.ended = true }
            closer.threadDone()
        }
        Thread.detachNewThread {
            while true {
                let (next, ended) = queue.withLock { state -> ((due: Date, bytes: [UInt8])?, Bool) in
                    guard let first = state.chunks.first, first.due <= Date() else { return (nil, state.ended && state.chunks.isEmpty) }
                    state.chunks.removeFirst()
                    return (first, false)
                }
                if ended { break }
                guard let next else {
                    // A relay thread, not a test's synchronisation: the delay it imposes is the point.
                    usleep(2_000)
                    continue
                }
                var offset = 0
                var failed = false
                while offset < next.bytes.count {
                    let n = next.bytes.withUnsafeBytes { send(destination, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
                    if n < 0 && errno == EINTR { continue }
                    guard n > 0 else { failed = true; break }
                    offset += n
                }
                if failed { break }
            }
            closer.shutdownBoth()
            closer.threadDone()
        }
    }
}
