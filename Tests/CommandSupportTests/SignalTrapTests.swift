import CommandSupport
import Dispatch
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `SignalTrap` with real signals sent to this process (SIGUSR1 and SIGUSR2, which nothing else here uses).
@Suite("signal trap", .serialized)
struct SignalTrapTests {
    @Test("a signal sent the moment a trap exists is heard, every time")
    func signalRightAfterInstallIsHeard() {
        for round in 0..<50 {
            let heard = DispatchSemaphore(value: 0)
            let trap = SignalTrap(signals: [SIGUSR1]) { _ in heard.signal() }
            kill(getpid(), SIGUSR1)
            let outcome = heard.wait(timeout: .now() + 10)
            trap.cancel()
            #expect(outcome == .success, "round \(round): the signal was lost")
            if outcome != .success { return }
        }
    }

    @Test("two live traps both hear a signal; cancelling one leaves the other, the last gives the default action back")
    func overlappingTraps() throws {
        let first = DispatchSemaphore(value: 0), second = DispatchSemaphore(value: 0)
        let names = NameLog()
        let a = SignalTrap(signals: [SIGUSR2]) { name in names.add(name); first.signal() }
        let b = SignalTrap(signals: [SIGUSR2]) { _ in second.signal() }
        kill(getpid(), SIGUSR2)
        #expect(first.wait(timeout: .now() + 10) == .success)
        #expect(second.wait(timeout: .now() + 10) == .success)
        #expect(names.all == ["signal \(SIGUSR2)"])
        a.cancel()
        #expect(!isDefault(SIGUSR2), "b still catches SIGUSR2")
        kill(getpid(), SIGUSR2)
        #expect(second.wait(timeout: .now() + 10) == .success)
        #expect(first.wait(timeout: .now() + 0.2) == .timedOut, "a cancelled trap hears nothing")
        b.cancel()
        #expect(isDefault(SIGUSR2))
    }

    /// Whether `signal` has its default action (SIG_DFL is the null handler).
    private func isDefault(_ signal: Int32) -> Bool {
        var action = sigaction()
        sigaction(signal, nil, &action)
        return unsafeBitCast(action.__sigaction_handler.sa_handler, to: UnsafeRawPointer?.self) == nil
    }
}

/// Names handed to a trap's handler, in order.
private final class NameLog: Sendable {
    private let names = Mutex<[String]>([])
    func add(_ name: String) { names.withLock { $0.append(name) } }
    var all: [String] { names.withLock { $0 } }
}
