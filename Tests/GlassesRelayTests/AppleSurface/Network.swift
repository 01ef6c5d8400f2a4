// Stand-in `Network` module: exactly the Network.framework API that Sources/GlassesLinkNetwork/
// NetworkFrameworkTransport.swift uses, each declaration copied from Apple's documentation
// (https://developer.apple.com/documentation/network/…, the page named beside it). Bodies only trap: this module is
// for type-checking on Linux, never for running. Built by AppleSurfaceTests; a call outside it fails that suite.
import Foundation

/// developer.apple.com/documentation/network/nwendpoint: "enum NWEndpoint".
public enum NWEndpoint: Sendable {
    /// …/nwendpoint/hostport(host:port:): "case hostPort(host: NWEndpoint.Host, port: NWEndpoint.Port)".
    case hostPort(host: NWEndpoint.Host, port: NWEndpoint.Port)

    /// …/nwendpoint/host: "enum Host".
    public enum Host: Sendable {
        /// …/nwendpoint/host/init(_:): "init(_ string: String)" ("Initializes a host with a string.").
        public init(_ string: String) { fatalError("surface only") }
    }

    /// …/nwendpoint/port: "struct Port".
    public struct Port: Sendable {
        /// …/nwendpoint/port/init(rawvalue:): "init?(rawValue: UInt16)".
        public init?(rawValue: UInt16) { fatalError("surface only") }
        /// …/nwendpoint/port/rawvalue: "var rawValue: UInt16".
        public var rawValue: UInt16 { fatalError("surface only") }
        /// …/nwendpoint/port/any: "static let any: NWEndpoint.Port".
        public static var any: NWEndpoint.Port { fatalError("surface only") }
    }
}

/// …/nwerror: "enum NWError" ("The errors returned by objects in the Network framework"; conforms to Error,
/// Sendable, CustomDebugStringConvertible). The transport uses only the POSIX case; the real enum also has
/// `dns(DNSServiceErrorType)` and `tls(OSStatus)`, which it never names (it describes errors with "\(error)").
public enum NWError: Error, Sendable, CustomDebugStringConvertible {
    /// …/nwerror/posix(_:): "case posix(POSIXErrorCode)" ("A POSIX error, which is used for most network protocol
    /// and routing errors.").
    case posix(POSIXErrorCode)
    public var debugDescription: String { fatalError("surface only") }
}

/// …/nwparameters: "final class NWParameters".
public final class NWParameters: @unchecked Sendable {
    /// …/nwparameters/tcp: "class var tcp: NWParameters { get }" (default TCP parameters).
    public class var tcp: NWParameters { fatalError("surface only") }
    /// …/nwparameters/requiredlocalendpoint: "final var requiredLocalEndpoint: NWEndpoint? { get set }"
    /// ("A specific local IP address and port to use for connections and listeners.").
    public final var requiredLocalEndpoint: NWEndpoint? {
        get { fatalError("surface only") }
        set { fatalError("surface only") }
    }
    private init() {}
}

/// …/nwconnection: "final class NWConnection" ("A bidirectional data connection between a local endpoint and a
/// remote endpoint."). Sendable: its handlers are declared `@Sendable` (below), and the Swift 6 SDK marks the class
/// Sendable; that conformance is the one declaration here not quoted from a documentation page.
public final class NWConnection: @unchecked Sendable {
    /// …/nwconnection/init(host:port:using:): "convenience init(host: NWEndpoint.Host, port: NWEndpoint.Port,
    /// using: NWParameters)".
    public convenience init(host: NWEndpoint.Host, port: NWEndpoint.Port, using: NWParameters) {
        fatalError("surface only")
    }

    /// …/nwconnection/state-swift.enum: "enum State" ("States indicating whether a connection can be used to send
    /// and receive data."), cases setup, waiting(_:), preparing, ready, failed(_:), cancelled.
    public enum State: Sendable {
        case setup
        /// "case waiting(NWError)": "Connections that are waiting will indicate the reason … These errors are not
        /// fatal."
        case waiting(NWError)
        case preparing
        case ready
        /// "case failed(NWError)": "The connection has disconnected or encountered an error."
        case failed(NWError)
        case cancelled
    }

    /// …/nwconnection/stateupdatehandler: "@preconcurrency final var stateUpdateHandler:
    /// (@Sendable (NWConnection.State) -> Void)? { get set }".
    public final var stateUpdateHandler: (@Sendable (NWConnection.State) -> Void)? {
        get { fatalError("surface only") }
        set { fatalError("surface only") }
    }

    /// …/nwconnection/start(queue:): "final func start(queue: DispatchQueue)" ("Starts establishing a connection,
    /// and sets the queue on which to deliver all connection events.").
    public final func start(queue: DispatchQueue) { fatalError("surface only") }

    /// …/nwconnection/cancel(): "final func cancel()" (cancels, gracefully disconnecting).
    public final func cancel() { fatalError("surface only") }

    /// …/nwconnection/forcecancel(): "final func forceCancel()" ("A variant of cancel that performs non-graceful
    /// closure of the transport.").
    public final func forceCancel() { fatalError("surface only") }

    /// …/nwconnection/contentcontext: "class ContentContext".
    public final class ContentContext: @unchecked Sendable {
        /// "static let defaultMessage: NWConnection.ContentContext".
        public static var defaultMessage: NWConnection.ContentContext { fatalError("surface only") }
        /// "static let finalMessage: NWConnection.ContentContext" ("Once this context is used for sending, and the
        /// send is marked as complete, no more data can be sent on the connection.").
        public static var finalMessage: NWConnection.ContentContext { fatalError("surface only") }
        private init() {}
    }

    /// …/nwconnection/sendcompletion: "enum SendCompletion".
    public enum SendCompletion {
        /// …/sendcompletion/contentprocessed(_:): "@preconcurrency case contentProcessed(@Sendable (NWError?) ->
        /// Void)" ("invoked when the sent data is processed by the stack").
        case contentProcessed(@Sendable (NWError?) -> Void)
    }

    /// …/nwconnection/send(content:contentcontext:iscomplete:completion:)-5ecuz: "@preconcurrency final func
    /// send(content: Data?, contentContext: NWConnection.ContentContext = .defaultMessage, isComplete: Bool = true,
    /// completion: NWConnection.SendCompletion)".
    public final func send(
        content: Data?, contentContext: NWConnection.ContentContext = .defaultMessage, isComplete: Bool = true,
        completion: NWConnection.SendCompletion
    ) { fatalError("surface only") }

    /// …/nwconnection/receive(minimumincompletelength:maximumlength:completion:): "@preconcurrency final func
    /// receive(minimumIncompleteLength: Int, maximumLength: Int, completion: @escaping @Sendable (Data?,
    /// NWConnection.ContentContext?, Bool, NWError?) -> Void)".
    public final func receive(
        minimumIncompleteLength: Int, maximumLength: Int,
        completion: @escaping @Sendable (Data?, NWConnection.ContentContext?, Bool, NWError?) -> Void
    ) { fatalError("surface only") }

    private init() {}
}

/// …/nwlistener: "final class NWListener" ("An object you use to listen for incoming network connections.").
/// Sendable as NWConnection is (its handlers are `@Sendable`).
public final class NWListener: @unchecked Sendable {
    /// …/nwlistener/init(using:on:): "init(using: NWParameters, on: NWEndpoint.Port = .any) throws".
    public init(using: NWParameters, on: NWEndpoint.Port = .any) throws { fatalError("surface only") }

    /// …/nwlistener/state-swift.enum: "enum State", cases setup, waiting(_:), ready, failed(_:), cancelled.
    public enum State: Sendable {
        case setup
        case waiting(NWError)
        case ready
        case failed(NWError)
        case cancelled
    }

    /// …/nwlistener/stateupdatehandler: "@preconcurrency final var stateUpdateHandler:
    /// (@Sendable (NWListener.State) -> Void)? { get set }".
    public final var stateUpdateHandler: (@Sendable (NWListener.State) -> Void)? {
        get { fatalError("surface only") }
        set { fatalError("surface only") }
    }

    /// …/nwlistener/newconnectionhandler: "@preconcurrency final var newConnectionHandler:
    /// (@Sendable (NWConnection) -> Void)? { get set }" ("accept it by setting … and starting the connection;
    /// reject it by cancelling").
    public final var newConnectionHandler: (@Sendable (NWConnection) -> Void)? {
        get { fatalError("surface only") }
        set { fatalError("surface only") }
    }

    /// …/nwlistener/port: "final var port: NWEndpoint.Port? { get }" ("The port on which the listener can accept
    /// connections.").
    public final var port: NWEndpoint.Port? { fatalError("surface only") }

    /// …/nwlistener/start(queue:): "final func start(queue: DispatchQueue)".
    public final func start(queue: DispatchQueue) { fatalError("surface only") }

    /// …/nwlistener/cancel(): "final func cancel()" ("Stops listening for inbound connections.").
    public final func cancel() { fatalError("surface only") }
}
