import Foundation
import GlassesBridge
import GlassesLink
import Synchronization

/// `--serve-metrics tcp:HOST:PORT`: the run's counters, latency, stream state and vitals on `GET /metrics`, for a
/// Prometheus server to scrape (``BridgeMetricsRegistry`` says what is shown, ``MetricsHTTP`` how requests are
/// answered).
///
/// The sink only updates the registry under its lock and returns; the server accepts on a thread of its own and
/// answers each connection on another (at most ``maximumConnections`` at once, each given
/// ``requestTimeout`` to send its head of at most 8 KiB), rendering a copy of the registry outside the lock. So a
/// slow or hostile client never holds up the pipeline, and costs at most a few threads for a few seconds.
final class MetricsEndpoint: EventSink {
    /// Connections answered at once; more are told 503 and closed.
    static let maximumConnections = 8
    /// How long a client has to send its request head, and to take the response.
    static let requestTimeout: Duration = .seconds(5)

    private struct Connections {
        var active: [ObjectIdentifier: TCPConnection] = [:]
        var stopped = false
    }

    private let registry: Mutex<BridgeMetricsRegistry>
    private let server: TCPServerSocket
    private let token: String?
    private let connections = Mutex(Connections())
    private let serving = DispatchGroup()

    /// Where the metrics are served: `http://HOST:PORT/metrics`, with the port actually bound.
    let url: String

    /// Opens the endpoint the options ask for (nil without `--serve-metrics`), starts serving, and says where on
    /// standard error (`glasses-bridge: serving metrics on http://127.0.0.1:9464/metrics`): with port 0 that is
    /// how the port the system chose is learned.
    /// - Throws: ``BridgeFailure`` (exit 69) when the address cannot be listened on (in use, not this machine's):
    ///   before the run starts.
    static func open(_ options: BridgeOptions) throws(BridgeFailure) -> MetricsEndpoint? {
        guard case .tcp(let host, let port)? = options.serveMetrics else { return nil }
        let server: TCPServerSocket
        do {
            server = try TCPServerSocket.listen(host: host, port: port)
        } catch {
            throw BridgeFailure(.deviceUnavailable, "--serve-metrics: \(error.message).")
        }
        let endpoint = MetricsEndpoint(server: server, token: options.token, deviceLabels: options.deviceLabels)
        BridgeCommandLine.printError("glasses-bridge: serving metrics on \(endpoint.url)")
        return endpoint
    }

    init(server: TCPServerSocket, token: String?, deviceLabels: [String]) {
        self.server = server
        self.token = token
        registry = Mutex(BridgeMetricsRegistry(deviceLabels: deviceLabels))
        let host = server.host.contains(":") ? "[\(server.host)]" : server.host
        url = "http://\(host):\(server.port)/metrics"
        serving.enter()
        let thread = Thread { [self] in
            acceptLoop()
            serving.leave()
        }
        thread.name = "glasses.metrics.accept"
        thread.start()
    }

    func receive(_ event: BridgeEvent, device: Int, at seconds: Double) {
        registry.withLock { $0.take(event, device: device) }
    }

    /// Stops serving (see ``stop()``); the endpoint never fails a run once it is open.
    func finish() -> BridgeFailure? {
        stop()
        return nil
    }

    /// The run will not start: stops serving.
    func discard() { stop() }

    /// Stops accepting, cuts the open connections short and waits (briefly) for their threads. Safe to call more
    /// than once.
    func stop() {
        let open = connections.withLock { state -> [TCPConnection]? in
            guard !state.stopped else { return nil }
            state.stopped = true
            return Array(state.active.values)
        }
        guard let open else { return }
        server.shutdown()
        for connection in open { connection.shutdown() }
        _ = serving.wait(timeout: .now() + 5)
    }

    private func acceptLoop() {
        while let connection = server.accept() {
            let id = ObjectIdentifier(connection)
            let admitted = connections.withLock { state -> Bool? in
                guard !state.stopped else { return nil }
                guard state.active.count < Self.maximumConnections else { return false }
                state.active[id] = connection
                return true
            }
            switch admitted {
            case nil:
                connection.shutdown()
                return
            case false?:
                let busy = MetricsHTTP.Response.error(503, "too many connections", headers: [("Retry-After", "1")])
                if connection.write(busy.bytes, timeout: .milliseconds(200)) {
                    // Read the request that came with it (briefly: this is the accepting thread), so that closing
                    // does not reset the connection before the client reads the answer.
                    connection.shutdownSending()
                    var scratch = [UInt8](repeating: 0, count: 2048)
                    _ = scratch.withUnsafeMutableBytes {
                        connection.read(into: $0, deadline: .now + .milliseconds(50))
                    }
                }
                connection.shutdown()
            case true?:
                serving.enter()
                let thread = Thread { [self] in
                    serve(connection)
                    connections.withLock { _ = $0.active.removeValue(forKey: id) }
                    serving.leave()
                }
                thread.name = "glasses.metrics.connection"
                thread.start()
            }
        }
    }

    /// Reads one request head (bounded in size and time), answers it and closes.
    private func serve(_ connection: TCPConnection) {
        let deadline = ContinuousClock.now + Self.requestTimeout
        var head: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 2048)
        var response: MetricsHTTP.Response?
        reading: while true {
            let room = min(buffer.count, MetricsHTTP.maximumHeadBytes - head.count)
            let result = buffer.withUnsafeMutableBytes {
                connection.read(into: UnsafeMutableRawBufferPointer(rebasing: $0[..<room]), deadline: deadline)
            }
            switch result {
            case .bytes(let count):
                head += buffer[..<count]
                if let end = MetricsHTTP.headEnd(in: head) {
                    response = MetricsHTTP.respond(toHead: Array(head[..<end]), token: token) { format in
                        let snapshot = registry.withLock { $0 }
                        return snapshot.render(format)
                    }
                    break reading
                }
                if head.count >= MetricsHTTP.maximumHeadBytes {
                    response = .error(431, "the request head is over \(MetricsHTTP.maximumHeadBytes) bytes")
                    break reading
                }
            case .timedOut:
                response = .error(408, "the request head did not arrive within \(Self.requestTimeout)")
                break reading
            case .closed, .failed:
                break reading
            }
        }
        if let response, connection.write(response.bytes, timeout: Self.requestTimeout) {
            // Closing with unread bytes (the rest of an oversized head) would reset the connection and could
            // discard the response before the client reads it: end the sending side, then read what is left
            // (bounded) until the client closes.
            connection.shutdownSending()
            let drainDeadline = ContinuousClock.now + .seconds(1)
            var drained = 0
            while drained < 64 * 1024,
                  case .bytes(let count) = buffer.withUnsafeMutableBytes({ connection.read(into: $0, deadline: drainDeadline) }) {
                drained += count
            }
        }
        connection.shutdown()
    }
}
