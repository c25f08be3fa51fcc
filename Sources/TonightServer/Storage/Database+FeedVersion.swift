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
    /// reads moves it (triggers of migration 0034).
    func recommendationVersion() async throws -> Int64? {
        try await sql.raw("SELECT version FROM recs_version WHERE id = 1").first()?
            .decode(column: "version", as: Int64.self)
    }
}
