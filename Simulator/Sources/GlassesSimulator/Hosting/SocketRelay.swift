import Foundation
import GlassesLink
import Synchronization
import WearablesKit

#if canImport(Glibc)
    import Glibc
#endif

/// Finds the frame boundaries in the device-to-host byte stream (header: magic 4, version 1, type 1, flags 2,
/// body length 4 big-endian, two CRCs 4 + 4; then the body), so that raw bytes can be put between frames.
struct FrameBoundaryTracker: Sendable {
    private var header: [UInt8] = []
    private var bodyRemaining = 0
    /// False once the stream stopped looking like frames (then no boundary is ever reported again).
    private(set) var inSync = true

    /// Whether the bytes so far end exactly at the end of a frame.
    var atBoundary: Bool { inSync && header.isEmpty && bodyRemaining == 0 }

    /// Consumes up to `count` bytes of `chunk` from `offset`; returns how many it took, stopping early at the end of
    /// a frame (so that the caller can write up to there and then insert bytes).
    mutating func advance(over chunk: UnsafeRawBufferPointer, from offset: Int) -> Int {
        guard inSync else { return chunk.count - offset }
        var index = offset
        while index < chunk.count {
            if bodyRemaining > 0 {
                let take = min(bodyRemaining, chunk.count - index)
                bodyRemaining -= take
                index += take
                if bodyRemaining == 0 { return index - offset }
                continue
            }
            header.append(chunk[index])
            index += 1
            if header.count == 4, !header.elementsEqual(LinkWireFormat.magic) {
                inSync = false
                return chunk.count - offset
            }
            if header.count == LinkWireFormat.headerSize {
                let length = header[8...11].reduce(0) { $0 << 8 | Int($1) }
                header.removeAll(keepingCapacity: true)
                guard length <= LinkWireFormat.maxPayloadSize else {
                    inSync = false
                    return chunk.count - offset
                }
                bodyRemaining = length
                if length == 0 { return index - offset }
            }
        }
        return index - offset
    }
}

/// Plain socket calls the relay needs (Glibc only; errors as `errno` text).
enum RelaySockets {
    /// Linux's `SOCK_STREAM` (Glibc's module leaves the `__socket_type` constants out on some toolchains).
    static let streamType: Int32 = 1

    static func errorText(_ code: Int32 = errno) -> String { String(cString: strerror(code)) }

    /// Writes all of `bytes` (without SIGPIPE); false when the peer is gone.
    static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Bool {
        var offset = 0
        while offset < bytes.count {
            guard let base = bytes.baseAddress else { return true }
            let n = send(fd, base + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            if n < 0 {
                if errno == EINTR { continue }
                return false
            }
            offset += n
        }
        return true
    }

    /// Fills a `sockaddr_un` for `path` and calls `body` with it; nil when the path is too long.
    static func withUnixAddress<T>(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> T) -> T? {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count < capacity else { return nil }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
    }

    /// A blocking connection to the Unix socket at `path`.
    static func connectUnix(_ path: String) -> Result<Int32, LinkError> {
        let fd = socket(AF_UNIX, streamType | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return .failure(LinkError(.unavailable, "cannot create a Unix socket: \(errorText())")) }
        let result = withUnixAddress(path) { address, length in connect(fd, address, length) == 0 ? 0 : errno }
        guard let result, result == 0 else {
            close(fd)
            return .failure(LinkError(.unavailable, "cannot connect to unix:\(path): \(errorText(result ?? ENAMETOOLONG))"))
        }
        return .success(fd)
    }
}

/// One host connection carried between the public socket and the glasses' own link socket, byte for byte, with
/// raw bytes (the `garbage` fault) inserted into the device-to-host direction only between frames.
final class SocketRelay: Sendable {
    private struct Output {
        var tracker = FrameBoundaryTracker()
        var pending: [UInt8] = []
        var closed = false
        /// Both descriptors are closed: their numbers may already belong to another connection.
        var descriptorsClosed = false
    }

    private let hostFD: Int32
    private let deviceFD: Int32
    private let output = Mutex(Output())
    private let pumpsRunning = Atomic<Int>(2)

    /// Bytes handed to ``write(_:)`` so far.
    let rawBytesAccepted = Atomic<UInt64>(0)

    private init(hostFD: Int32, deviceFD: Int32) {
        self.hostFD = hostFD
        self.deviceFD = deviceFD
    }

    /// Connects the accepted host socket `hostFD` to the glasses' link at `devicePath` and starts carrying bytes;
    /// nil (and `hostFD` closed) when the link socket cannot be reached.
    static func start(hostFD: Int32, devicePath: String) -> SocketRelay? {
        guard case .success(let deviceFD) = RelaySockets.connectUnix(devicePath) else {
            close(hostFD)
            return nil
        }
        let relay = SocketRelay(hostFD: hostFD, deviceFD: deviceFD)
        let up = Thread { relay.pumpHostToDevice() }
        up.name = "glasses.sim.relay.up"
        let down = Thread { relay.pumpDeviceToHost() }
        down.name = "glasses.sim.relay.down"
        up.start()
        down.start()
        return relay
    }

    /// Writes raw bytes to the host at the next frame boundary (at once when no frame is half written).
    /// - Throws: ``SimulatorError`` `faultUnavailable` when the connection has closed.
    func write(_ bytes: Data) throws(SimulatorError) {
        let ok = output.withLock { out -> Bool in
            guard !out.closed else { return false }
            if out.tracker.atBoundary && out.pending.isEmpty {
                return bytes.withUnsafeBytes { RelaySockets.writeAll(hostFD, $0) }
            }
            guard out.tracker.inSync else { return false }
            out.pending.append(contentsOf: bytes)
            return true
        }
        guard ok else {
            throw SimulatorError(.faultUnavailable, "garbage bytes could not be written: the host's connection has closed",
                                 context: ["fault": "garbage", "count": "\(bytes.count)"])
        }
        rawBytesAccepted.add(UInt64(bytes.count), ordering: .relaxed)
    }

    /// Ends the connection (both directions); the pumps finish and close the sockets.
    /// Safe after the relay ended: once its descriptors are closed their numbers may have been reused by the next
    /// connection, which a late shutdown (the registry replacing this relay) must not cut.
    func shutdownBoth() {
        output.withLock { out in
            out.closed = true
            guard !out.descriptorsClosed else { return }
            shutdown(hostFD, Int32(SHUT_RDWR))
            shutdown(deviceFD, Int32(SHUT_RDWR))
        }
    }

    private func pumpFinished() {
        shutdownBoth()
        if pumpsRunning.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 {
            output.withLock { out in
                out.descriptorsClosed = true
                close(hostFD)
                close(deviceFD)
            }
        }
    }

    private func pumpHostToDevice() {
        defer { pumpFinished() }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 << 10, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let n = read(hostFD, buffer.baseAddress, buffer.count)
            if n < 0, errno == EINTR { continue }
            guard n > 0, RelaySockets.writeAll(deviceFD, UnsafeRawBufferPointer(rebasing: buffer[0..<n])) else { return }
        }
    }

    private func pumpDeviceToHost() {
        defer { pumpFinished() }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 << 10, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let n = read(deviceFD, buffer.baseAddress, buffer.count)
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { return }
            let chunk = UnsafeRawBufferPointer(rebasing: buffer[0..<n])
            var offset = 0
            while offset < n {
                let ok = output.withLock { out -> Bool in
                    let taken = out.tracker.advance(over: chunk, from: offset)
                    guard RelaySockets.writeAll(hostFD, UnsafeRawBufferPointer(rebasing: chunk[offset..<offset + taken])) else {
                        return false
                    }
                    offset += taken
                    if out.tracker.atBoundary, !out.pending.isEmpty {
                        defer { out.pending.removeAll() }
                        return out.pending.withUnsafeBytes { RelaySockets.writeAll(hostFD, $0) }
                    }
                    return true
                }
                guard ok else { return }
            }
        }
    }
}
