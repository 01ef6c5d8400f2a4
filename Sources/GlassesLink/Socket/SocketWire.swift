import Foundation
import GlassesMedia
import Synchronization
import WearablesKit

/// Moves frames over a connected stream socket: a reader thread decodes, a serial writer queue encodes and writes.
///
/// Blocking calls run on the reader's own thread and on the writer's dispatch queue, never on the cooperative pool.
final class SocketWire: RawByteWire {
    private let handle: SocketHandle
    private let encoder: LinkFrameEncoder
    private let maxPayloadSize: Int
    private let writer: DispatchQueue
    private let endpoint: Mutex<LinkEndpoint?>
    private let closing = Atomic<Bool>(false)
    private let peerName: String
    private let statistics = Mutex(LinkFrameDecoder.Statistics())
    let drain: WireDrain? = WireDrain()

    var decoderStatistics: LinkFrameDecoder.Statistics? { statistics.withLock { $0 } }

    /// How long a shutdown waits for queued frames (the goodbye) before cutting the socket anyway; the writer then
    /// finishes, so a wait on ``drain`` a second longer always ends.
    static let shutdownGrace: DispatchTimeInterval = .seconds(2)

    init(handle: SocketHandle, endpoint: LinkEndpoint, peerName: String, maxPayloadSize: Int) {
        self.handle = handle
        self.encoder = LinkFrameEncoder(maxPayloadSize: maxPayloadSize)
        self.maxPayloadSize = maxPayloadSize
        self.writer = DispatchQueue(label: "glasses.link.writer")
        self.endpoint = Mutex(endpoint)
        self.peerName = peerName
    }

    /// Starts the reader thread.
    func start() {
        let thread = Thread { [self] in readLoop() }
        thread.name = "glasses.link.reader"
        thread.start()
    }

    func transmit(_ frame: LinkFrame) {
        guard !closing.load(ordering: .acquiring) else { return }
        writer.async { [self] in
            let bytes: [UInt8]
            do throws(LinkError) {
                bytes = try encoder.encode(frame)
            } catch {
                currentEndpoint?.fail(error, notifyPeer: false)
                return
            }
            let failure = bytes.withUnsafeBytes { SocketCalls.writeAll(handle, $0) }
            if let failure, !closing.load(ordering: .acquiring) {
                currentEndpoint?.wireFailed(
                    LinkError(.connectionLost, "writing to the \(peerName) failed: \(SocketCalls.describe(failure))"))
            }
        }
    }

    func transmitRaw(_ bytes: [UInt8]) -> Bool {
        guard !closing.load(ordering: .acquiring) else { return false }
        // On the writer queue, after the frames queued so far: the bytes land between two frames.
        writer.async { [self] in
            let failure = bytes.withUnsafeBytes { SocketCalls.writeAll(handle, $0) }
            if let failure, !closing.load(ordering: .acquiring) {
                currentEndpoint?.wireFailed(
                    LinkError(.connectionLost, "writing to the \(peerName) failed: \(SocketCalls.describe(failure))"))
            }
        }
        return true
    }

    func shutdown() {
        guard !closing.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let handle = handle
        let drain = drain
        writer.async {
            handle.shutdown()
            drain?.finish()
        }
        // A peer that stopped reading must not keep the socket open forever.
        DispatchQueue.global().asyncAfter(deadline: .now() + Self.shutdownGrace) { handle.shutdown() }
    }

    private var currentEndpoint: LinkEndpoint? { endpoint.withLock { $0 } }

    private func readLoop() {
        var decoder = LinkFrameDecoder(maxPayloadSize: maxPayloadSize)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 << 10, alignment: 16)
        defer {
            buffer.deallocate()
            endpoint.withLock { $0 = nil }
        }
        while true {
            switch SocketCalls.read(handle, into: buffer) {
            case .success(0):
                currentEndpoint?.wireFailed(LinkError(.connectionLost, "the \(peerName) closed the connection"))
                return
            case .success(let count):
                FrameCopyCounter.record(.socketRead, bytes: count)
                let outputs = decoder.decode(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
                statistics.withLock { [decoder] in $0 = decoder.statistics }
                for output in outputs {
                    switch output {
                    case .frame(let frame): currentEndpoint?.wireReceived(frame)
                    case .lost(let type): currentEndpoint?.wireLost(type)
                    case .failure(let error): currentEndpoint?.wireFailed(error)
                    }
                }
            case .failure(let error):
                currentEndpoint?.wireFailed(
                    LinkError(.connectionLost, "reading from the \(peerName) failed: \(error)"))
                return
            }
        }
    }
}

/// Builds a link end over a connected socket.
enum SocketLinks {
    static func makeEndpoint(
        handle: SocketHandle,
        configuration: EndpointConfiguration,
        scheduler: any EventScheduler,
        maxPayloadSize: Int
    ) -> LinkEndpoint {
        let delivery = DispatchQueue(label: "glasses.link.\(configuration.role.name).events")
        let endpoint = LinkEndpoint(configuration: configuration, scheduler: scheduler) { work in
            delivery.async(execute: work)
        }
        let wire = SocketWire(
            handle: handle, endpoint: endpoint, peerName: configuration.role.peerName, maxPayloadSize: maxPayloadSize)
        endpoint.attach(wire)
        wire.start()
        return endpoint
    }
}
