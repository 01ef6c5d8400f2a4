import Foundation
import GlassesMedia
import WearablesKit

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A listening TCP socket for a small server of the bridge's own (the metrics endpoint), over the same socket
/// calls as the link listener. It accepts on the caller's thread (a thread of its own, never the cooperative pool).
package final class TCPServerSocket: Sendable {
    /// The host it is bound to, as given.
    package let host: String
    /// The port it is bound to (the one the system chose when 0 was asked).
    package let port: UInt16
    private let handle: SocketHandle

    private init(host: String, port: UInt16, handle: SocketHandle) {
        self.host = host
        self.port = port
        self.handle = handle
    }

    /// Binds and listens on `host:port` (port 0: any free port).
    /// - Throws: ``LinkError`` `unavailable` reading "cannot listen on tcp:HOST:PORT: REASON" (an address in
    ///   use, a host that does not resolve or is not this machine's).
    package static func listen(host: String, port: UInt16, backlog: Int32 = 16) throws(LinkError) -> TCPServerSocket {
        let (handle, actualPort) = try LinkListener.bindTCP(host: host, port: port)
        if let error = SocketCalls.listen(handle, backlog: backlog) {
            throw LinkError(.unavailable, "cannot listen on \(LinkAddress.tcp(host: host, port: port)): \(error)")
        }
        return TCPServerSocket(host: host, port: actualPort, handle: handle)
    }

    /// Waits for the next connection; nil once ``shutdown()`` was called (or the socket broke).
    package func accept() -> TCPConnection? {
        guard case .success(let connection) = SocketCalls.accept(handle) else { return nil }
        return TCPConnection(handle: connection)
    }

    /// Stops accepting: a blocked ``accept()`` returns nil, on any thread.
    package func shutdown() {
        handle.shutdown()
    }
}

/// One accepted TCP connection: bounded reads and writes, closed when the last owner lets go.
package final class TCPConnection: Sendable {
    /// How a read ended.
    package enum ReadResult: Sendable, Hashable {
        /// This many bytes arrived.
        case bytes(Int)
        /// The peer closed its end.
        case closed
        /// The deadline passed first.
        case timedOut
        /// The read failed (the connection was reset or shut down).
        case failed
    }

    private let handle: SocketHandle

    init(handle: SocketHandle) {
        self.handle = handle
    }

    /// Reads what has arrived into `buffer`, waiting at most until `deadline`.
    package func read(into buffer: UnsafeMutableRawBufferPointer, deadline: ContinuousClock.Instant) -> ReadResult {
        while true {
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero else { return .timedOut }
            var descriptor = pollfd(fd: handle.descriptor, events: Int16(POLLIN), revents: 0)
            let ready = SocketCalls.poll(&descriptor) {
                Int32(clamping: max(1, ContinuousClock.now.duration(to: deadline).wholeMilliseconds))
            }
            if ready < 0 { return .failed }
            if ready == 0 { continue }
            switch SocketCalls.read(handle, into: buffer) {
            case .success(0): return .closed
            case .success(let count): return .bytes(count)
            case .failure: return .failed
            }
        }
    }

    /// Writes all of `bytes`, giving up when the peer has not taken them within `timeout`; whether all went.
    package func write(_ bytes: [UInt8], timeout: Duration) -> Bool {
        SocketCalls.setSendTimeout(handle, timeout)
        return bytes.withUnsafeBytes { SocketCalls.writeAll(handle, $0) } == nil
    }

    /// Ends the sending direction (the peer reads the end of the stream after what was written); reads go on.
    package func shutdownSending() {
        SocketCalls.shutdownSending(handle)
    }

    /// Ends both directions: a blocked read or write returns at once, on any thread.
    package func shutdown() {
        handle.shutdown()
    }
}
