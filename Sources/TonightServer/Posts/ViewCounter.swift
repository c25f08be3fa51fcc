import Logging
import ServiceLifecycle

/// Counts post views in memory and writes them in one transaction every few seconds, so showing
/// a clip costs no database write of its own. Views counted in the last interval before a crash
/// are lost; that is the price of cheap counting (votes, by contrast, are never lost).
actor ViewCounter: Service {
    private var pending: [String: Int64] = [:]
    private let repository: any PostRepository
    private let interval: Duration
    private let logger: Logger

    init(repository: any PostRepository, interval: Duration = .seconds(5), logger: Logger) {
        self.repository = repository
        self.interval = interval
        self.logger = logger
    }

    /// Counts one view of each post.
    func count(_ postIDs: [String]) {
        for id in postIDs { pending[id, default: 0] += 1 }
    }

    /// Writes what was counted.
    func flush() async {
        let batch = pending
        pending = [:]
        do { try await repository.addViews(batch) } catch {
            // Dropped, not retried: a batch that fails once would likely fail again.
            logger.warning("view counts not written", metadata: ["error": "\(error)"])
        }
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
