import SQLKit

/// A user who may get the afternoon digest (one with a home city).
struct DigestCandidate: Sendable {
    var id: String
    var homeCity: String?
    /// The notification settings JSON.
    var notificationSettings: String
    /// The local date of the last digest sent (`YYYY-MM-DD`).
    var lastDigest: String?
}

/// The digest's storage: who may get one, and the day each last got one (`digests`).
struct DigestRepository: Sendable {
    let database: Database

    /// Users with a home city after `after` (by id), with their settings and last digest day.
    func candidates(after: String, limit: Int) async throws -> [DigestCandidate] {
        try await database.sql.raw(
            """
            SELECT u.id, u.home_city, u.notification_settings, d.last_date FROM users u
            LEFT JOIN digests d ON d.user_id = u.id
            WHERE u.home_city IS NOT NULL AND u.id > \(bind: after) ORDER BY u.id LIMIT \(bind: limit)
            """
        ).all().map {
            DigestCandidate(
                id: try $0.decode(column: "id", as: String.self),
                homeCity: try $0.decode(column: "home_city", as: String?.self),
                notificationSettings: try $0.decode(column: "notification_settings", as: String.self),
                lastDigest: try $0.decode(column: "last_date", as: String?.self))
        }
    }

    /// Marks `day` as the user's digest day unless it already is (or a later one): a conditional
    /// upsert, so several instances never both send a digest.
    func claimDay(userID: String, day: String, now: Int64) async throws -> Bool {
        try await database.write { db in
            try await db.raw(
                """
                INSERT INTO digests (user_id, last_date, sent_at) VALUES (\(bind: userID), \(bind: day), \(bind: now))
                ON CONFLICT (user_id) DO UPDATE SET last_date = excluded.last_date, sent_at = excluded.sent_at
                WHERE digests.last_date < excluded.last_date RETURNING user_id
                """
            ).first() != nil
        }
    }
}
