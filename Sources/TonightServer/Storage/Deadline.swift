import Synchronization

/// A call that did not finish within its deadline (answered 503 `database_unavailable`).
struct DeadlineExceeded: Error, CustomStringConvertible {
    let limit: Duration
    var description: String { "no answer within \(limit)" }
}

/// Runs `operation`, but stops waiting for it after `limit` and throws ``DeadlineExceeded``: for
/// calls that can hang on a connection that died without a reset (a database behind a dropped
/// network path). The operation is cancelled and left to end in the background; a caller that
/// gives up this way must be fine with the operation having taken effect after all.
func withDeadline<T: Sendable>(_ limit: Duration, _ operation: @escaping @Sendable () async throws -> T)
    async throws -> T
{
    let slot = Mutex<CheckedContinuation<T, any Error>?>(nil)
    let resume: @Sendable (Result<T, any Error>) -> Void = { result in
        slot.withLock { $0.take() }?.resume(with: result)
    }
    // The timer stops as soon as the work ends, so a busy caller leaves no sleeping tasks behind.
    let timer = TimerBox()
    // A caller that is cancelled stops waiting at once too (and cancels the operation).
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { continuation in
            slot.withLock { $0 = continuation }
            let work = Task {
                defer { timer.task.withLock { $0?.cancel() } }
                do { resume(.success(try await operation())) } catch { resume(.failure(error)) }
            }
            timer.work.withLock { $0 = work }
            timer.task.withLock {
                $0 = Task {
                    guard (try? await Task.sleep(for: limit)) != nil else { return }
                    work.cancel()
                    resume(.failure(DeadlineExceeded(limit: limit)))
                }
            }
            if Task.isCancelled { timer.cancel(resume) }
        }
    } onCancel: {
        timer.cancel(resume)
    }
}

/// The timer and the work of one ``withDeadline(_:_:)`` call.
private final class TimerBox: Sendable {
    let task = Mutex<Task<Void, Never>?>(nil)
    let work = Mutex<Task<Void, Never>?>(nil)

    /// The caller was cancelled: stop both and answer `CancellationError`.
    func cancel<T: Sendable>(_ resume: @Sendable (Result<T, any Error>) -> Void) {
        task.withLock { $0?.cancel() }
        work.withLock { $0?.cancel() }
        resume(.failure(CancellationError()))
    }
}
