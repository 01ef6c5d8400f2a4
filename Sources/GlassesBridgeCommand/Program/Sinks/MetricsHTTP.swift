import Foundation
import GlassesBridge

/// The HTTP rules of the metrics endpoint, with no I/O: where a request's head ends, what the head asks for, and
/// the response it gets. The server (``MetricsEndpoint``) reads bytes and writes what this decides.
///
/// Only `GET` (and `HEAD`) of `/metrics` is served; every response closes the connection. With a token, every
/// request must carry `Authorization: Bearer TOKEN` (compared in constant time) before anything else is answered.
enum MetricsHTTP {
    /// The longest request head read (request line and headers): 8 KiB. A longer one gets 431.
    static let maximumHeadBytes = 8 * 1024

    /// A response: status, headers and body.
    struct Response: Sendable {
        /// The status code.
        var status: Int
        /// Extra headers (Content-Type, Allow, WWW-Authenticate), in order.
        var headers: [(name: String, value: String)] = []
        /// The body.
        var body: String = ""
        /// Whether the body is left out (a `HEAD` request); Content-Length still gives its length.
        var omitsBody = false

        /// The value of the header `name` (as written here), if set.
        func header(_ name: String) -> String? { headers.first { $0.name == name }?.value }

        /// The reason phrase of ``status``.
        var reason: String {
            switch status {
            case 200: "OK"
            case 400: "Bad Request"
            case 401: "Unauthorized"
            case 404: "Not Found"
            case 405: "Method Not Allowed"
            case 408: "Request Timeout"
            case 431: "Request Header Fields Too Large"
            case 503: "Service Unavailable"
            default: "Error"
            }
        }

        /// The response as bytes on the wire (HTTP/1.1, `Connection: close`).
        var bytes: [UInt8] {
            var head = "HTTP/1.1 \(status) \(reason)\r\n"
            for header in headers { head += "\(header.name): \(header.value)\r\n" }
            head += "Content-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n"
            return Array(head.utf8) + (omitsBody ? [] : Array(body.utf8))
        }

        /// A plain-text error response.
        static func error(_ status: Int, _ message: String, headers: [(name: String, value: String)] = []) -> Response {
            Response(
                status: status, headers: [("Content-Type", "text/plain; charset=utf-8")] + headers, body: message + "\n")
        }
    }

    /// The end of the head in `bytes` (the index just past the blank line), or nil when it has not arrived.
    static func headEnd(in bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 3..<bytes.count
        where bytes[index] == 0x0A && bytes[index - 1] == 0x0D && bytes[index - 2] == 0x0A && bytes[index - 3] == 0x0D {
            return index + 1
        }
        return nil
    }

    /// The response to a complete request head.
    /// - Parameters:
    ///   - head: the request line and headers, up to and including the blank line.
    ///   - token: the bearer token every request must carry, or nil when none is needed.
    ///   - exposition: renders the metrics in a format (called only for an authorised `GET` or `HEAD` of
    ///     `/metrics`).
    static func respond(
        toHead head: [UInt8], token: String?, exposition: (ExpositionFormat) -> String
    ) -> Response {
        guard let request = Request(head: head) else {
            return .error(400, "malformed request: expected METHOD /metrics HTTP/1.1 and Name: value headers")
        }
        if let token {
            let presented = request.header("authorization").flatMap(bearerToken(in:))
            guard let presented, constantTimeEqual(Array(presented.utf8), Array(token.utf8)) else {
                return .error(401, "a bearer token is required", headers: [("WWW-Authenticate", "Bearer realm=\"metrics\"")])
            }
        }
        let path = request.target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)[0]
        guard path == "/metrics" else { return .error(404, "not found: the metrics are at /metrics") }
        guard request.method == "GET" || request.method == "HEAD" else {
            return .error(405, "method not allowed: use GET", headers: [("Allow", "GET, HEAD")])
        }
        let format = preferredFormat(accept: request.header("accept"))
        return Response(
            status: 200, headers: [("Content-Type", format.contentType)], body: exposition(format),
            omitsBody: request.method == "HEAD")
    }

    /// OpenMetrics unless the client names only the older text format (`text/plain`) in `Accept`: Prometheus
    /// asks for OpenMetrics first; `curl -H 'Accept: text/plain'` gets what `promtool check metrics` reads.
    static func preferredFormat(accept: String?) -> ExpositionFormat {
        guard let accept = accept?.lowercased() else { return .openMetrics }
        if accept.contains("application/openmetrics-text") { return .openMetrics }
        return accept.contains("text/plain") ? .prometheusText : .openMetrics
    }

    /// The token in an `Authorization: Bearer TOKEN` value (the scheme in any case).
    static func bearerToken(in value: String) -> String? {
        let parts = value.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        return parts[1].trimmingSpaces
    }

    /// Whether `a` equals `b`, taking the same time whatever the contents (and however much of them matches):
    /// every byte of `b` is compared, whatever the length of `a`.
    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        var difference: UInt8 = a.count == b.count ? 0 : 1
        for index in b.indices {
            let left = index < a.count ? a[index] : 0
            difference |= left ^ b[index]
        }
        return difference == 0
    }

    /// A parsed request head: method, target and headers (names lower-cased).
    struct Request: Sendable, Hashable {
        var method: String
        var target: String
        var headers: [String: String]

        /// Parses `head` (lines ended by CRLF); nil when it is not an HTTP/1.x request head.
        init?(head: [UInt8]) {
            guard let text = String(validating: head, as: UTF8.self) else { return nil }
            var lines = text.components(separatedBy: "\r\n")
            while lines.last == "" { lines.removeLast() }
            guard let requestLine = lines.first else { return nil }
            let parts = requestLine.split(separator: " ", omittingEmptySubsequences: false)
            guard parts.count == 3, !parts[0].isEmpty, parts[0].allSatisfy({ $0.isASCII && $0.isUppercase }),
                  parts[1].hasPrefix("/"), parts[2] == "HTTP/1.1" || parts[2] == "HTTP/1.0"
            else { return nil }
            method = String(parts[0])
            target = String(parts[1])
            headers = [:]
            for line in lines.dropFirst() {
                guard let colon = line.firstIndex(of: ":") else { return nil }
                let name = line[..<colon]
                guard !name.isEmpty, !name.contains(" "), !name.contains("\t") else { return nil }
                headers[name.lowercased()] = line[line.index(after: colon)...].trimmingSpaces
            }
        }

        /// A header's value by its lower-case name.
        func header(_ name: String) -> String? { headers[name] }
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces and tabs.
    fileprivate var trimmingSpaces: String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return String(self[first...last])
    }
}
