import Logging
import ServiceLifecycle

/// Counts post views in memory and writes them in one transaction every few seconds, so showing
/// a clip costs no database write of its own. Views counted in the last interval before a crash
/// are lost; that is the price of cheap counting (votes, by contrast, are never lost).
actor ViewCounter: Service {
    private var pending: [String: Int64] = [:]
    private let repository: PostRepository
    private let interval: Duration
    private let logger: Logger

    init(repository: PostRepository, interval: Duration = .seconds(5), logger: Logger) {
        self.repository = repository
        self.interval = interval
        self.logger = logger
    }

    /// Counts one view of each post.
    func count(_ postIDs: [String]) {
        for id in postIDs { pending[id, default: 0] += 1 }
    }

    /// The last write started; each write waits for the one before it.
    private var writing: Task<Void, Never>?

    /// Writes what was counted, and returns only when every view counted before the call is stored
    /// — also when a periodic flush took them a moment earlier and is still writing (the actor is
    /// reentrant at the write's `await`, so writes are chained one after another).
    func flush() async {
        let batch = pending
        pending = [:]
        let previous = writing
        let repository = repository
        let logger = logger
        let task = Task {
            await previous?.value
            guard !batch.isEmpty else { return }
            do { try await repository.addViews(batch) } catch {
                // Dropped, not retried: a batch that fails once would likely fail again.
                logger.warning("view counts not written", metadata: LoggedError.metadata(error))
            }
        }
        writing = task
        await task.value
        if writing == task { writing = nil }
    }

    func run() async throws {
        try await runUntilShutdown {
            while !Task.isCancelled {
                try await Task.sleep(for: self.interval)
                await self.flush()
            }
        }
        await flush()
    }
}
