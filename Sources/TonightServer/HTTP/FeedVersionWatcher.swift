import Logging
import SQLKit
import ServiceLifecycle

/// Reads the feed version every ``interval`` so ``CachedPageHandler`` can trust cached pages
/// between requests, and notices writes this server did not answer itself (another process, a
/// background job) within one interval.
struct FeedVersionWatcher: Service {
    static let interval = Duration.milliseconds(50)
    let database: Database
    let cache: FeedPageCache
    let logger: Logger

    func run() async throws {
        try await runEvery(Self.interval, logger: logger, failure: "feed version check failed") {
            let writes = cache.writeCount()
            if let version = try await Self.read(database) { cache.confirm(version: version, writesBefore: writes) }
        }
    }

    /// The feed version in the database now.
    static func read(_ database: Database) async throws -> Int64? {
        try await database.sql.raw("SELECT version FROM feed_version WHERE id = 1").first()?
            .decode(column: "version", as: Int64.self)
    }
}
