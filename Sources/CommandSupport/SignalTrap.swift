import Dispatch
import Foundation

/// Turns SIGINT and SIGTERM into a callback, with DispatchSource signal sources (no async-signal-unsafe work in a
/// C handler): the default handlers are ignored while the trap is alive, so the process ends only when the run
/// has torn down and written its summary.
public final class SignalTrap: @unchecked Sendable {
    // @unchecked Sendable: `sources` is immutable after init, and dispatch sources are thread-safe objects.
    private let sources: [any DispatchSourceSignal]

    /// Installs the trap; `handler` runs on a private queue with the signal's name (`SIGINT` or `SIGTERM`).
    public init(signals: [Int32] = [SIGINT, SIGTERM], handler: @escaping @Sendable (String) -> Void) {
        let queue = DispatchQueue(label: "glasses-bridge.signals")
        sources = signals.map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            let name = number == SIGINT ? "SIGINT" : number == SIGTERM ? "SIGTERM" : "signal \(number)"
            source.setEventHandler { handler(name) }
            source.resume()
            return source
        }
    }

    /// Removes the trap and restores the default handlers.
    public func cancel() {
        for source in sources {
            source.cancel()
            signal(Int32(source.handle), SIG_DFL)
        }
    }
}
