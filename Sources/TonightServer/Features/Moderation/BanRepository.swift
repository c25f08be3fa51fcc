import SQLKit

/// Storage of bans (`bans`: one row per banned user, with who banned them and when).
struct BanRepository: Sendable {
    let database: Database

    /// Every banned user.
    func all() async throws -> Set<String> {
        Set(
            try await database.sql.raw("SELECT user_id FROM bans").all().map {
                try $0.decode(column: "user_id", as: String.self)
            })
    }

    /// Records a ban (a user banned already stays banned as before).
    func ban(_ userID: String, by moderatorID: String, now: Int64) async throws {
        try await database.write { db in
            try await db.raw(
                """
                INSERT INTO bans (user_id, banned_by, created_at) VALUES (\(bind: userID), \(bind: moderatorID), \(bind: now))
                ON CONFLICT (user_id) DO NOTHING
                """
            ).run()
        }
    }

    /// Lifts a ban.
    func unban(_ userID: String) async throws {
        try await database.write { db in
            try await db.raw("DELETE FROM bans WHERE user_id = \(bind: userID)").run()
        }
    }
}
