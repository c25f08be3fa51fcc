import Logging
import ServiceLifecycle
import Synchronization

/// The banned users, held in memory so every request can be checked without a query: loaded at
/// start, changed at once by this instance's bans, and reloaded every ``interval`` so bans made
/// through another instance (PostgreSQL) take effect here within that time.
final class BanList: Service, Sendable {
    private let banned = Mutex<Set<String>>([])
    private let repository: BanRepository
    private let interval: Duration
    private let logger: Logger

    init(repository: BanRepository, interval: Duration = .seconds(30), logger: Logger) {
        self.repository = repository
        self.interval = interval
        self.logger = logger
    }

    /// Whether `userID` is banned.
    func contains(_ userID: String) -> Bool { banned.withLock { $0.contains(userID) } }

    /// Bans a user: stored, and in force on this instance at once.
    func ban(_ userID: String, by moderatorID: String, now: Int64) async throws {
        try await repository.ban(userID, by: moderatorID, now: now)
        set(userID, banned: true)
    }

    /// Lifts a user's ban: stored, and lifted on this instance at once.
    func unban(_ userID: String) async throws {
        try await repository.unban(userID)
        set(userID, banned: false)
    }

    /// Marks a user banned or not, here, at once (nothing is stored).
    func set(_ userID: String, banned isBanned: Bool) {
        banned.withLock { set in
            if isBanned { set.insert(userID) } else { set.remove(userID) }
        }
    }

    /// Reads the bans from the database.
    func reload() async throws {
        let ids = try await repository.all()
        banned.withLock { $0 = ids }
    }

    func run() async throws {
        try await runUntilShutdown {
            while !Task.isCancelled {
                try await Task.sleep(for: self.interval)
                do { try await self.reload() } catch {
                    self.logger.warning("ban list reload failed", metadata: LoggedError.metadata(error))
                }
            }
        }
    }
}
