import SQLKit

/// Outside identities (OpenID Connect `provider` + `subject`) linked to accounts.
///
/// Over SQLKit, the same SQL on SQLite and PostgreSQL.
struct IdentityRepository: Sendable {
    let db: any SQLDatabase
    /// Writes queue at its write gate (nil: `db` is an open transaction).
    var database: Database? = nil

    /// The account an identity is linked to.
    func userID(provider: String, subject: String) async throws -> String? {
        try await db.raw(
            "SELECT user_id FROM identities WHERE provider = \(bind: provider) AND subject = \(bind: subject)"
        ).first()?.decode(column: "user_id", as: String.self)
    }

    /// Links an identity; throws a unique violation if it is linked already.
    func link(provider: String, subject: String, userID: String, email: String?, now: Int64) async throws {
        try await Database.write(database, db) { db in
            try await db.raw(
                """
                INSERT INTO identities (provider, subject, user_id, email, created_at)
                VALUES (\(bind: provider), \(bind: subject), \(bind: userID), \(bind: email), \(bind: now))
                """
            ).run()
        }
    }
}
