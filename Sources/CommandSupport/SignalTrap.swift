import CSignalPipe
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Turns SIGINT and SIGTERM into a callback: while a trap is alive the signals' default actions are off, so the
/// process ends only when the run has torn down and written its summary.
///
/// The C handler (`CSignalPipe`) only writes the signal's number into a pipe; one reader thread per process turns
/// the bytes into calls of the live traps' handlers. The handler is in place when `init` returns, so a signal sent
/// at once after it is never lost. (Dispatch signal sources on Linux are armed later, on dispatch's own thread,
/// and a signal in between was dropped: `glasses-sim` then ignored a SIGINT sent as it said it was listening.)
public final class SignalTrap: Sendable {
    private let id: Int

    /// Installs the trap; `handler` runs on the trap's reader thread with the signal's name (`SIGINT`, `SIGTERM`
    /// or `SIGHUP`). It must return soon: the next signal waits for it.
    ///
    /// SIGHUP (the terminal or SSH session closed) stops a run like SIGTERM: a recording that was never finished
    /// would be an MP4 without its index, which no player opens.
    public init(signals: [Int32] = [SIGINT, SIGTERM, SIGHUP], handler: @escaping @Sendable (String) -> Void) {
        id = SignalDispatcher.shared.add(signals: signals, handler: handler)
    }

    /// Removes the trap; a signal no other live trap catches gets its default action back.
    public func cancel() {
        SignalDispatcher.shared.remove(id)
    }

    /// The name a trap's handler is given for `signal`.
    static func name(of signal: Int32) -> String {
        switch signal {
        case SIGINT: "SIGINT"
        case SIGTERM: "SIGTERM"
        case SIGHUP: "SIGHUP"
        default: "signal \(signal)"
        }
    }
}

/// The process's one reader of the signal pipe and its table of live traps.
private final class SignalDispatcher: Sendable {
    static let shared = SignalDispatcher()

    private struct Entry {
        let signals: [Int32]
        let handler: @Sendable (String) -> Void
    }

    private struct Table {
        var entries: [Int: Entry] = [:]
        var nextID = 0
        var readerStarted = false
    }

    private let table = Mutex(Table())

    /// Registers a trap, catches its signals and starts the reader the first time; returns the trap's key.
    func add(signals: [Int32], handler: @escaping @Sendable (String) -> Void) -> Int {
        let readFD = glasses_signal_pipe_open()
        let (id, startReader) = table.withLock { table -> (Int, Bool) in
            let id = table.nextID
            table.nextID += 1
            table.entries[id] = Entry(signals: signals, handler: handler)
            let start = !table.readerStarted && readFD >= 0
            if start { table.readerStarted = true }
            return (id, start)
        }
        if readFD < 0 {
            // No pipe (out of descriptors at start-up): the signals keep their default actions, which end the
            // process without a summary; nothing better is possible without a pipe.
            ConsoleText.standardError("warning: cannot trap signals (\(String(cString: strerror(errno)))); Ctrl-C ends at once\n")
            return id
        }
        if startReader {
            let thread = Thread { [self] in
                // The reader takes the signals too (a thread that blocks none of them is always there to).
                for signal in signals { _ = glasses_signal_pipe_catch(signal) }
                read(from: readFD)
            }
            thread.name = "glasses.signals"
            thread.start()
        }
        for signal in signals { _ = glasses_signal_pipe_catch(signal) }
        return id
    }

    /// Forgets a trap; a signal no live trap catches any more gets its default action back.
    func remove(_ id: Int) {
        let released = table.withLock { table -> [Int32] in
            guard let entry = table.entries.removeValue(forKey: id) else { return [] }
            let stillCaught = Set(table.entries.values.flatMap(\.signals))
            return entry.signals.filter { !stillCaught.contains($0) }
        }
        for signal in released { _ = glasses_signal_pipe_release(signal) }
    }

    /// The reader thread: one byte a signal; each live trap that catches it hears it, outside the lock.
    private func read(from fd: Int32) {
        var byte: UInt8 = 0
        while true {
            let n = Glibc.read(fd, &byte, 1)
            if n < 0 && errno == EINTR { continue }
            guard n == 1 else { return }
            let signal = Int32(byte)
            let handlers = table.withLock { table in
                table.entries.keys.sorted().compactMap { key -> (@Sendable (String) -> Void)? in
                    let entry = table.entries[key]!
                    return entry.signals.contains(signal) ? entry.handler : nil
                }
            }
            for handler in handlers { handler(SignalTrap.name(of: signal)) }
        }
    }
}
