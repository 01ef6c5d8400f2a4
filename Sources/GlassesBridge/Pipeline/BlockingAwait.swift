import Dispatch
import Synchronization

/// Runs async work from a thread that is not part of the cooperative pool, blocking that thread until it is done.
///
/// Only for the pipeline's own threads (the frame worker, the virtual-time driver), which must await SDK lifecycle
/// calls (`start()`, `stop()`) in order with the frames they submit. Never call it from a task.
func blockingAwait<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let result = Mutex<Result<T, any Error>?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task {
        do {
            let value = try await body()
            result.withLock { $0 = .success(value) }
        } catch {
            result.withLock { $0 = .failure(error) }
        }
        done.signal()
    }
    done.wait()
    // The task stored a result before signalling.
    guard let outcome = result.withLock({ $0 }) else { preconditionFailure("blockingAwait: no result") }
    return try outcome.get()
}
