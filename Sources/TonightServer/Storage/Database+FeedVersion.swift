import SQLKit

extension Database {
    /// The feed version (`feed_version`): every write that can change a public feed page moves it
    /// (triggers of migration 0020), so a page cached at one version is exact while it holds.
    func feedVersion() async throws -> Int64? {
        try await sql.raw("SELECT version FROM feed_version WHERE id = 1").first()?
            .decode(column: "version", as: Int64.self)
    }
}

extension Database {
    /// The recommendation version (`recs_version`, SQLite): every change a session recommendation
    /// or explore card reads moves it (triggers of migrations 0034 and 0035, and bulk writes).
    func recommendationVersion() async throws -> Int64? {
        try await sql.raw("SELECT version FROM recs_version WHERE id = 1").first()?
            .decode(column: "version", as: Int64.self)
    }

    /// Moves the recommendation version in the transaction of `db`, for writes that come in bulk
    /// and so have no row trigger (migration 0035): on SQLite the counter row, on PostgreSQL a
    /// `recs` notification, delivered when the transaction commits.
    func moveRecommendationVersion(on db: any SQLDatabase) async throws {
        switch kind {
        // An import's batch queues it with its rows instead of waiting for them.
        case .sqlite: try await BulkWrite.run("UPDATE recs_version SET version = version + 1 WHERE id = 1", on: db)
        case .postgres: try await db.raw("SELECT pg_notify('tonight_live', 'recs')").run()
        }
    }
}

extension Database {
    /// The places version (`places_version`, SQLite): every place added, changed or removed moves
    /// it (migration 0037).
    func placesVersion() async throws -> Int64? {
        try await sql.raw("SELECT version FROM places_version WHERE id = 1").first()?
            .decode(column: "version", as: Int64.self)
    }

    /// Moves the places version in the transaction of `db`, for inserts (which have no trigger on
    /// SQLite, migration 0037). PostgreSQL's statement trigger covers them: nothing to do there.
    func movePlacesVersion(on db: any SQLDatabase) async throws {
        guard kind == .sqlite else { return }
        try await BulkWrite.run("UPDATE places_version SET version = version + 1 WHERE id = 1", on: db)
    }
}
