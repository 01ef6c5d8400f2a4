import Foundation
import GlassesMedia

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// An open socket descriptor, closed when the last owner lets go.
///
/// Readers, the writer and the closer share it, so the descriptor is never closed (and its number never reused)
/// while another thread may still use it; ``shutdown()`` is how they are told to stop.
final class SocketHandle: Sendable {
    /// The descriptor.
    let descriptor: Int32

    init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    deinit {
        _ = Glibc.close(descriptor)
    }

    /// Ends both directions: blocked reads return 0 and blocked accepts fail, on every thread.
    func shutdown() {
        _ = Glibc.shutdown(descriptor, Int32(SHUT_RDWR))
    }
}

/// A failed system call: the errno (or resolver status) and its text.
struct SystemError: Error, CustomStringConvertible {
    let code: Int32
    let description: String

    init(_ code: Int32, description: String? = nil) {
        self.code = code
        self.description = description ?? SocketCalls.describe(code)
    }
}

/// Thin wrappers over the socket calls: one place to retry `EINTR` and turn `errno` into a ``LinkError``.
enum SocketCalls {
    /// `strerror` of an errno value.
    static func describe(_ code: Int32) -> String {
        String(cString: strerror(code))
    }

    /// Makes a system call again while a signal interrupts it: the one place `EINTR` is retried. Returns what the
    /// last call returned, with `errno` as that call left it.
    static func retryingInterrupts<T: BinaryInteger>(_ call: () -> T) -> T {
        while true {
            let result = call()
            if result >= 0 || errno != EINTR { return result }
        }
    }

    /// Binds a socket to an address; nil on success.
    static func bind(_ handle: SocketHandle, address: UnsafePointer<sockaddr>, length: socklen_t) -> SystemError? {
        Glibc.bind(handle.descriptor, address, length) == 0 ? nil : SystemError(errno)
    }

    /// Marks a bound socket as listening; nil on success.
    static func listen(_ handle: SocketHandle, backlog: Int32) -> SystemError? {
        Glibc.listen(handle.descriptor, backlog) == 0 ? nil : SystemError(errno)
    }

    /// Waits for the next connection and returns it with close-on-exec set. A connection aborted before it was
    /// accepted is skipped; a failure means the listening socket was shut down or broke.
    static func accept(_ handle: SocketHandle) -> Result<SocketHandle, SystemError> {
        while true {
            let fd = retryingInterrupts { Glibc.accept(handle.descriptor, nil, nil) }
            if fd >= 0 {
                _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
                return .success(SocketHandle(descriptor: fd))
            }
            let code = errno
            if code == ECONNABORTED { continue }
            return .failure(SystemError(code))
        }
    }

    /// Waits until `descriptor` is ready or the timeout passes: the ready count, 0 on timeout, or -1 with `errno`
    /// set. A signal does not end the wait: the call is made again with the timeout `milliseconds` gives then (the
    /// callers count it down to a deadline).
    static func poll(_ descriptor: inout pollfd, milliseconds: () -> Int32) -> Int32 {
        retryingInterrupts { Glibc.poll(&descriptor, 1, milliseconds()) }
    }

    /// Limits how long a blocking send waits for the peer (`SO_SNDTIMEO`).
    static func setSendTimeout(_ handle: SocketHandle, _ timeout: Duration) {
        var limit = timeval(
            tv_sec: Int(timeout.components.seconds), tv_usec: Int(timeout.components.attoseconds / 1_000_000_000_000))
        _ = setsockopt(handle.descriptor, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Ends the sending direction only: the peer reads the end of the stream; reads go on.
    static func shutdownSending(_ handle: SocketHandle) {
        _ = Glibc.shutdown(handle.descriptor, Int32(SHUT_WR))
    }

    /// Whether a Unix socket file is at `path`: nil when nothing is there, false for another kind of file.
    static func isSocketFile(_ path: String) -> Bool? {
        var status = stat()
        guard lstat(path, &status) == 0 else { return nil }
        return (status.st_mode & S_IFMT) == S_IFSOCK
    }

    /// Removes a Unix socket file (a listener's, or a stale one); a missing file is not an error.
    static func removeSocketFile(_ path: String) {
        _ = unlink(path)
    }

    /// Creates a socket with close-on-exec set.
    static func socket(domain: Int32, type: Int32, protocol proto: Int32 = 0) -> Result<SocketHandle, SystemError> {
        let fd = Glibc.socket(domain, type | Int32(SOCK_CLOEXEC.rawValue), proto)
        return fd < 0 ? .failure(SystemError(errno)) : .success(SocketHandle(descriptor: fd))
    }

    /// Connects, giving up after `timeout` (non-blocking connect and `poll`); the socket is blocking afterwards.
    static func connect(
        _ handle: SocketHandle,
        address: UnsafePointer<sockaddr>,
        length: socklen_t,
        timeout: Duration
    ) -> Int32? {
        let fd = handle.descriptor
        let flags = fcntl(fd, F_GETFL)
        _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
        defer { _ = fcntl(fd, F_SETFL, flags) }
        if Glibc.connect(fd, address, length) == 0 { return nil }
        let code = errno
        guard code == EINPROGRESS || code == EINTR else { return code }
        let deadline = ContinuousClock.now + timeout
        while true {
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero else { return ETIMEDOUT }
            var descriptor = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            let ready = poll(&descriptor) { Int32(clamping: (deadline - ContinuousClock.now).wholeMilliseconds &+ 1) }
            if ready < 0 { return errno }
            if ready == 0 { continue }
            var error: Int32 = 0
            var size = socklen_t(MemoryLayout<Int32>.size)
            guard getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &size) == 0 else { return errno }
            return error == 0 ? nil : error
        }
    }

    /// Reads up to `buffer.count` bytes: the count, 0 at end of stream, or an errno.
    static func read(_ handle: SocketHandle, into buffer: UnsafeMutableRawBufferPointer) -> Result<Int, SystemError> {
        let count = retryingInterrupts { Glibc.read(handle.descriptor, buffer.baseAddress, buffer.count) }
        return count >= 0 ? .success(count) : .failure(SystemError(errno))
    }

    /// Writes all of `bytes` (no SIGPIPE); nil on success or an errno.
    static func writeAll(_ handle: SocketHandle, _ bytes: UnsafeRawBufferPointer) -> Int32? {
        var offset = 0
        while offset < bytes.count {
            let written = retryingInterrupts {
                Glibc.send(handle.descriptor, bytes.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            }
            if written < 0 { return errno }
            offset += written
        }
        return nil
    }

    /// Fills a `sockaddr_un` for `path` and passes it to `body`.
    static func withUnixAddress<T>(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> T) -> T {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8.prefix(LinkAddress.maxUnixPathLength))
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + 1)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, length) }
        }
    }

    /// Resolves a TCP host and port (numeric or by name).
    static func resolve(host: String, port: UInt16, passive: Bool) -> Result<
        [(family: Int32, address: [UInt8])], SystemError
    > {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = passive ? AI_PASSIVE : 0
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            return .failure(SystemError(status, description: String(cString: gai_strerror(status))))
        }
        defer { freeaddrinfo(first) }
        var results: [(family: Int32, address: [UInt8])] = []
        var cursor: UnsafeMutablePointer<addrinfo>? = first
        while let entry = cursor {
            if let address = entry.pointee.ai_addr {
                let bytes = UnsafeRawBufferPointer(start: address, count: Int(entry.pointee.ai_addrlen))
                results.append((entry.pointee.ai_family, Array(bytes)))
            }
            cursor = entry.pointee.ai_next
        }
        return .success(results)
    }

    /// Sets an integer socket option.
    static func setOption(_ handle: SocketHandle, level: Int32, name: Int32, value: Int32) {
        var value = value
        _ = setsockopt(handle.descriptor, level, name, &value, socklen_t(MemoryLayout<Int32>.size))
    }

    /// The port a TCP socket is bound to.
    static func boundPort(_ handle: SocketHandle) -> UInt16? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let status = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(handle.descriptor, $0, &length) }
        }
        guard status == 0 else { return nil }
        switch Int32(storage.ss_family) {
        case AF_INET:
            return withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin_port) }
            }
        case AF_INET6:
            return withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin6_port) }
            }
        default:
            return nil
        }
    }
}

extension SocketCalls {
    /// Why an exact read ended early.
    enum ExactReadFailure: Error {
        /// The peer closed the connection after this many bytes.
        case closed(after: Int)
        /// The deadline passed.
        case timedOut
        /// A read failed.
        case failed(SystemError)
    }

    /// Reads exactly `count` bytes, waiting at most until `deadline` in all (for short handshakes, never for a
    /// stream's body: the socket's reader thread does that).
    static func readExactly(
        _ handle: SocketHandle, count: Int, deadline: ContinuousClock.Instant
    ) -> Result<[UInt8], ExactReadFailure> {
        var bytes = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero else { return .failure(.timedOut) }
            var descriptor = pollfd(fd: handle.descriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor) {
                Int32(clamping: max(1, ContinuousClock.now.duration(to: deadline).wholeMilliseconds))
            }
            if ready < 0 { return .failure(.failed(SystemError(errno))) }
            if ready == 0 { continue }
            let result = bytes.withUnsafeMutableBytes { buffer in
                read(handle, into: UnsafeMutableRawBufferPointer(rebasing: buffer[filled...]))
            }
            switch result {
            case .success(0): return .failure(.closed(after: filled))
            case .success(let n): filled += n
            case .failure(let error): return .failure(.failed(error))
            }
        }
        return .success(bytes)
    }

    /// The peer's address as `HOST:PORT` (TCP) or `unix socket` (Unix), for messages.
    static func peerDescription(_ handle: SocketHandle) -> String {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let status = withUnsafeMutablePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(handle.descriptor, $0, &length) }
        }
        guard status == 0 else { return "an unknown peer" }
        var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        var service = [CChar](repeating: 0, count: Int(NI_MAXSERV))
        switch Int32(storage.ss_family) {
        case AF_INET, AF_INET6:
            let resolved = withUnsafePointer(to: &storage) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    getnameinfo($0, length, &host, socklen_t(host.count), &service, socklen_t(service.count),
                                NI_NUMERICHOST | NI_NUMERICSERV)
                }
            }
            guard resolved == 0 else { return "an unknown TCP peer" }
            let hostText = String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            let portText = String(decoding: service.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            return hostText.contains(":") ? "[\(hostText)]:\(portText)" : "\(hostText):\(portText)"
        default:
            return "a Unix-socket peer"
        }
    }
}
