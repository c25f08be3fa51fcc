import Foundation
import Logging
import SQLKit

/// One append-only schema step. Never edit a migration that has shipped; add a new one.
protocol Migration: Sendable {
    /// Unique, ordered name, e.g. `0001_create_users`.
    var name: String { get }
    /// The SQL statements of this step for `kind`.
    func statements(for kind: DatabaseKind) -> [String]
}

/// Every migration, in the order they run.
enum Migrations {
    static let all: [any Migration] = [
        CreateUsers(),
        CreateLogins(),
        CreateIdempotencyKeys(),
        CreateJobs(),
        CreatePlaces(),
        CreateCatalog(),
        CreateEvents(),
        PlaceGeoIndex(),
        UpcomingCountIndexes(),
        LeanImportIndexes(),
        CreateSocial(),
        CreateIdentities(),
        CreateDevices(),
        CreateInvitations(),
        CreateChat(),
        CreateLiveOutbox(),
        EventChangeAlerts(),
        MessageNumbering(),
        CreatePosts(),
        FeedVersion(),
        UserNameKey(),
        CreatePromotions(),
        CreateAnalytics(),
        CreateBans(),
        CreateSessions(),
        PlaceGeoIndexSource(),
        CreateRateBuckets(),
        FeedChangeNotify(),
        CreatePresenceLeases(),
        ImportFingerprints(),
        CreateEmailTokens(),
        CreateWebPushSubscriptions(),
        CreateUploads(),
        RecommendationVersion(),
        RecommendationVersionEvents(),
        LongEventIndex(),
        PlacesVersion(),
        ImportByteHashes(),
    ]
}

/// Applies pending migrations in order, each in its own transaction, and records them in
/// `schema_migrations`. On PostgreSQL an advisory lock makes concurrent starts wait for one another.
public struct MigrationRunner: Sendable {
    let database: Database
    let logger: Logger

    /// Creates a runner.
    public init(database: Database, logger: Logger) {
        self.database = database
        self.logger = logger
    }

    /// Applies what is pending; returns the names applied now.
    @discardableResult
    public func run() async throws -> [String] {
        let kind = database.kind
        let logger = self.logger
        return try await database.sql.withSession { connection in
            if kind == .postgres {
                try await connection.raw("SELECT pg_advisory_lock(7274448)").run()
            }
            do {
                try await connection.raw(
                    "CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at BIGINT NOT NULL)"
                ).run()
                let done = Set(
                    try await connection.raw("SELECT name FROM schema_migrations").all()
                        .map { try $0.decode(column: "name", as: String.self) })
                var applied: [String] = []
                for migration in Migrations.all where !done.contains(migration.name) {
                    try await connection.raw(kind == .sqlite ? "BEGIN IMMEDIATE" : "BEGIN").run()
                    do {
                        for statement in migration.statements(for: kind) {
                            try await connection.raw("\(unsafeRaw: statement)").run()
                        }
                        try await connection.raw(
                            "INSERT INTO schema_migrations (name, applied_at) VALUES (\(bind: migration.name), \(bind: Clock.millis()))"
                        ).run()
                        try await connection.raw("COMMIT").run()
                    } catch {
                        try? await connection.raw("ROLLBACK").run()
                        throw error
                    }
                    logger.info("applied migration", metadata: ["migration": .string(migration.name)])
                    applied.append(migration.name)
                }
                if kind == .postgres { try await connection.raw("SELECT pg_advisory_unlock(7274448)").run() }
                return applied
            } catch {
                if kind == .postgres { try? await connection.raw("SELECT pg_advisory_unlock(7274448)").run() }
                throw error
            }
        }
    }
}

/// Timestamps are stored as Unix milliseconds (BIGINT) in both databases.
enum Clock {
    /// Milliseconds since 1970 for `date`.
    static func millis(_ date: Date = Date()) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded())
    }

    /// The date of a stored millisecond value.
    static func date(_ millis: Int64) -> Date {
        Date(timeIntervalSince1970: TimeInterval(millis) / 1000)
    }
}
