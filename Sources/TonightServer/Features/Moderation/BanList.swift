import Logging
import SQLKit
import ServiceLifecycle
import Synchronization

/// The banned users, held in memory so every request can be checked without a query: loaded at
/// start, changed at once by this instance's bans, and reloaded every ``interval`` so bans made
/// through another instance (PostgreSQL) take effect here within that time.
final class BanList: Service, Sendable {
    private let banned = Mutex<Set<String>>([])
    private let db: any SQLDatabase
    private let interval: Duration
    private let logger: Logger

    init(db: any SQLDatabase, interval: Duration = .seconds(30), logger: Logger) {
        self.db = db
        self.interval = interval
        self.logger = logger
    }

    /// Whether `userID` is banned.
    func contains(_ userID: String) -> Bool { banned.withLock { $0.contains(userID) } }

    /// Marks a user banned or not, here, at once (the row is written by the caller).
    func set(_ userID: String, banned isBanned: Bool) {
        banned.withLock { set in
            if isBanned { set.insert(userID) } else { set.remove(userID) }
        }
    }

    /// Reads the bans from the database.
    func reload() async throws {
        let ids = try await db.raw("SELECT user_id FROM bans").all().map {
            try $0.decode(column: "user_id", as: String.self)
        }
        banned.withLock { $0 = Set(ids) }
    }

    func run() async throws {
        try await runUntilShutdown {
            while !Task.isCancelled {
                try await Task.sleep(for: self.interval)
                do { try await self.reload() } catch {
                    self.logger.warning("ban list reload failed", metadata: ["error": "\(error)"])
                }
            }
        }
    }
}
