import Foundation
import GlassesBridge
@testable import GlassesBridgeCommand
import GlassesLink
import Synchronization
import Testing
import WearablesKit

/// How the command dials glasses over a socket: patient for the first link, one attempt per reconnect.
@Suite("Dialling the glasses")
struct DiallerTests {
    @Test("the first link waits for a listener that starts late; a reconnect is one attempt, so a dead relay never holds the run")
    func firstLinkWaitsReconnectsDoNot() throws {
        let path = NSTemporaryDirectory() + "gb-dial-\(UInt32.random(in: 0 ... .max)).sock"
        defer { unlink(path) }
        let dial = BridgeCommandLine.dialler(.unix(path: path), options: LinkConnectionOptions(connectTimeout: .seconds(20)),
                                             named: "unix:\(path)")
        // The relay starts while the bridge is already dialling (its first attempt finds no socket file).
        let listener = Mutex<LinkListener?>(nil)
        let starter = Thread {
            Thread.sleep(forTimeInterval: 0.6)
            listener.withLock { $0 = try? LinkListener.listen(on: .unix(path: path), onConnection: { _ in }) }
        }
        starter.start()
        let link = try dial()
        #expect(listener.withLock { $0 != nil })
        link.close()
        listener.withLock { $0?.stop() }
        // The relay is gone: a reconnect fails at once, as the device being unavailable, well inside the 20 s
        // timeout that the first link would have waited.
        let started = ContinuousClock.now
        #expect {
            _ = try dial()
        } throws: { error in
            guard let failure = error as? BridgeFailure else { return false }
            return failure.kind == .deviceUnavailable && failure.message.hasPrefix("Cannot reach the glasses at unix:\(path): ")
        }
        #expect(ContinuousClock.now - started < .seconds(5))
    }
}
