import WearablesKit

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

extension SocketCalls {
    /// Resolves `host:port` and tries each address it gives in turn: a fresh stream socket of the address's family,
    /// then `step` (connect or bind) on it. Returns the first socket whose step succeeded, with the step's result;
    /// sockets that failed are closed. Throws `LinkError(.unavailable)` that reads "cannot `verb` tcp:host:port: …"
    /// with the resolver's or the last step's reason.
    static func firstTCPSocket<T>(
        host: String, port: UInt16, passive: Bool, verb: String,
        step: (SocketHandle, UnsafePointer<sockaddr>, socklen_t) -> Result<T, SystemError>
    ) throws(LinkError) -> (handle: SocketHandle, result: T) {
        let target = LinkAddress.tcp(host: host, port: port)
        let candidates: [(family: Int32, address: [UInt8])]
        switch resolve(host: host, port: port, passive: passive) {
        case .success(let found): candidates = found
        case .failure(let reason): throw LinkError(.unavailable, "cannot resolve \(target): \(reason)")
        }
        var lastFailure = "no addresses"
        // Whether every address refused the connection: nothing listens there (yet).
        var refusedEverywhere = !candidates.isEmpty
        for candidate in candidates {
            let handle: SocketHandle
            switch socket(domain: candidate.family, type: Int32(SOCK_STREAM.rawValue)) {
            case .success(let created): handle = created
            case .failure(let error):
                lastFailure = error.description
                refusedEverywhere = false
                continue
            }
            let outcome = candidate.address.withUnsafeBytes { raw in
                step(handle, raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(raw.count))
            }
            switch outcome {
            case .success(let result): return (handle, result)
            case .failure(let error):
                lastFailure = error.description
                if error.code != ECONNREFUSED { refusedEverywhere = false }
            }
        }
        throw LinkError(refusedEverywhere ? .notListening : .unavailable, "cannot \(verb) \(target): \(lastFailure)")
    }
}
