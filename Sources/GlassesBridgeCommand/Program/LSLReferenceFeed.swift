import Foundation
import GlassesBridge
import GlassesLSL
import Synchronization

/// `check --reference lsl:NAME_OR_TYPE`: a live heart-rate stream (bpm in its first channel) pulled on a thread of
/// its own while the check runs, each reading put on the wall clock with LSL's clock offset applied, and handed to
/// the comparison as a ``ReferenceRecording`` like a chest strap's file.
final class LSLReferenceFeed: Sendable {
    /// Heart rates outside this are not readings (a strap that lost contact sends 0).
    static let plausibleBpm = 20.0...300.0

    private struct State {
        var samples: [ReferenceRecording.Sample] = []
        var ignored = 0
        var stop = false
        var stopped = false
    }

    /// The state the pulling thread and the check share.
    private final class Shared: Sendable {
        let state = Mutex(State())
        /// nil: not yet; `.some(nil)`: the inlet is open; `.some(error)`: it could not be.
        let opened = Mutex<LSLError??>(nil)
    }

    private let query: String
    private let shared = Shared()

    /// Resolves the stream (by name, then by type) and starts pulling it.
    /// - Throws: ``LSLError`` when liblsl cannot be loaded or no stream answers within `timeout` seconds.
    init(query: String, timeout: Double = 10, environment: [String: String] = ProcessInfo.processInfo.environment) throws(LSLError) {
        self.query = query
        let library = try LSLLibrary.shared(locator: LSLLibraryLocator(environment: environment))
        let ready = DispatchSemaphore(value: 0)
        let shared = shared
        let thread = Thread {
            // The inlet lives and dies on this thread (liblsl handles are confined to their owner).
            let inlet: LSLInlet
            do throws(LSLError) {
                inlet = try Self.resolve(query, timeout: timeout, library: library)
            } catch {
                shared.opened.withLock { $0 = .some(error) }
                ready.signal()
                return
            }
            shared.opened.withLock { $0 = .some(nil) }
            ready.signal()
            Self.pull(inlet, library: library, into: shared)
        }
        thread.name = "glasses-bridge.lsl-reference"
        thread.start()
        ready.wait()
        if case .some(.some(let error)) = shared.opened.withLock({ $0 }) { throw error }
    }

    /// The first stream with this name, else the first of this type, split over the wait.
    private static func resolve(_ query: String, timeout: Double, library: LSLLibrary) throws(LSLError) -> LSLInlet {
        do {
            return try LSLInlet(property: "name", value: query, timeout: timeout / 2, library: library)
        } catch where error.code == .streamNotFound {
            do {
                return try LSLInlet(property: "type", value: query, timeout: timeout / 2, library: library)
            } catch where error.code == .streamNotFound {
                throw LSLError(.streamNotFound, "no LSL stream named or of type '\(query)' answered within \(Int(timeout)) s")
            }
        }
    }

    /// Pulls until ``stop()``: each reading at `timestamp + time correction` on this machine's liblsl clock, put on the
    /// wall clock by the two clocks read together.
    private static func pull(_ inlet: LSLInlet, library: LSLLibrary, into shared: Shared) {
        var correction = inlet.timeCorrection(timeout: 2) ?? 0
        var lastCorrection = library.localClock()
        defer { shared.state.withLock { $0.stopped = true } }
        while !shared.state.withLock({ $0.stop }) {
            let pulled: (values: [Double], timestamp: Double)?
            do {
                pulled = try inlet.pull(timeout: 0.2)
            } catch {
                return  // the stream is gone: what it gave is kept
            }
            let now = library.localClock()
            if now - lastCorrection > 5, let fresh = inlet.timeCorrection(timeout: 0.1) {
                correction = fresh
                lastCorrection = now
            }
            guard let pulled, let bpm = pulled.values.first else { continue }
            let wall = Date().addingTimeInterval(pulled.timestamp + correction - now)
            shared.state.withLock { state in
                if bpm.isFinite, plausibleBpm.contains(bpm) {
                    state.samples.append(ReferenceRecording.Sample(time: wall, heartRate: bpm))
                } else {
                    state.ignored += 1
                }
            }
        }
    }

    /// What was pulled so far, as a recording; nil before the first reading.
    func recording() -> ReferenceRecording? {
        let (samples, ignored) = shared.state.withLock { ($0.samples, $0.ignored) }
        guard !samples.isEmpty else { return nil }
        let columns = "LSL channel 1 = heart rate (bpm)" + (ignored > 0 ? "; \(ignored) readings outside 20-300 bpm ignored" : "")
        return ReferenceRecording(samples: samples, columnsUsed: columns, source: "lsl:\(query)")
    }

    /// Stops pulling and waits (at most a second) for the thread to let the inlet go.
    func stop() {
        shared.state.withLock { $0.stop = true }
        let deadline = Date().addingTimeInterval(1)
        while !shared.state.withLock({ $0.stopped }), Date() < deadline { usleep(10_000) }
    }
}
