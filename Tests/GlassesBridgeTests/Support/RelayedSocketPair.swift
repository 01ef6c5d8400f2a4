#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// The two sockets of one connection a test relay passes bytes through, closed once every thread using them is done.
///
/// A descriptor's number is reused as soon as it is closed, and the whole package's tests share one process: a relay
/// thread that shut down or read a number another thread had already closed could end another test's socket (a
/// listener shut down this way refuses connections, as `DeviceListenerTests` once saw). So the threads only shut
/// the sockets down, and the last of them closes both.
final class RelayedSocketPair: Sendable {
    /// The client's and the upstream server's sockets.
    let fds: (Int32, Int32)
    /// Threads still using the sockets, and whether they are closed (then their numbers may belong to others).
    private let state: Mutex<(threads: Int, closed: Bool)>

    init(_ client: Int32, _ server: Int32, threads: Int) {
        fds = (client, server)
        state = Mutex((threads, false))
    }

    /// One thread is done with the sockets; the last one closes them.
    func threadDone() {
        state.withLock { state in
            state.threads -= 1
            guard state.threads == 0 else { return }
            close(fds.0)
            close(fds.1)
            state.closed = true
        }
    }

    /// Ends both directions of both sockets, unless they are already closed.
    func shutdownBoth() {
        state.withLock { state in
            guard !state.closed else { return }
            shutdown(fds.0, Int32(SHUT_RDWR))
            shutdown(fds.1, Int32(SHUT_RDWR))
        }
    }
}

/// A test relay's listening socket: shut down by whoever stops the relay, closed only by its accept loop once that
/// loop is done with it, so an `accept` never runs on a number that has been closed and handed to another socket,
/// and a `stop()` after the loop ended on its own shuts nothing down.
final class RelayListener: Sendable {
    /// The listening descriptor.
    let fd: Int32
    /// Whether ``stop()`` was called, and whether the accept loop has closed the descriptor.
    private let state = Mutex<(stopped: Bool, closed: Bool)>((false, false))

    init(_ fd: Int32) {
        self.fd = fd
    }

    /// Whether ``stop()`` has been called.
    var isStopped: Bool { state.withLock { $0.stopped } }

    /// Wakes the accept loop (a blocked `accept` fails) and keeps it from accepting again. Safe to call twice.
    func stop() {
        state.withLock { state in
            guard !state.stopped else { return }
            state.stopped = true
            if !state.closed { shutdown(fd, Int32(SHUT_RDWR)) }
        }
    }

    /// Accepts connections until stopped, handing each to `body`, then closes the listening socket.
    func acceptLoop(_ body: (Int32) -> Void) {
        defer {
            state.withLock { state in
                close(fd)
                state.closed = true
            }
        }
        while !isStopped {
            let client = accept(fd, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
                return
            }
            body(client)
        }
    }
}
