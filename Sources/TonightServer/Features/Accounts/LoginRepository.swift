import SQLKit
import TonightCore

/// A refresh token joined with its login.
struct RefreshTokenRecord: Codable, Sendable {
    var tokenHash: String
    var loginId: String
    var userId: String
    var expiresAt: Int64
    var usedAt: Int64?
    var revokedAt: Int64?
}

/// Storage of logins and their refresh tokens.
///
/// Over SQLKit.
struct LoginRepository: Sendable {
    let database: Database

    /// Creates a login with its first refresh token; returns the login id.
    func create(userID: String, userAgent: String?, tokenHash: String, expiresAt: Int64, now: Int64) async throws
        -> String
    {
        let loginID = Identifier.make()
        try await database.transaction { db in
            try await db.raw(
                """
                INSERT INTO logins (id, user_id, created_at, last_used_at, user_agent)
                VALUES (\(bind: loginID), \(bind: userID), \(bind: now), \(bind: now), \(bind: userAgent))
                """
            ).run()
            try await db.raw(
                """
                INSERT INTO refresh_tokens (token_hash, login_id, created_at, expires_at)
                VALUES (\(bind: tokenHash), \(bind: loginID), \(bind: now), \(bind: expiresAt))
                """
            ).run()
        }
        return loginID
    }

    func findToken(hash: String) async throws -> RefreshTokenRecord? {
        try await database.sql.raw(
            """
            SELECT t.token_hash, t.login_id, l.user_id, t.expires_at, t.used_at, l.revoked_at
            FROM refresh_tokens t JOIN logins l ON l.id = t.login_id
            WHERE t.token_hash = \(bind: hash)
            """
        ).first()?.decode(model: RefreshTokenRecord.self, keyDecodingStrategy: .convertFromSnakeCase)
    }

    /// Marks the token used and adds its successor, atomically; `false` if it was already used.
    func rotate(oldHash: String, newHash: String, loginID: String, expiresAt: Int64, now: Int64) async throws -> Bool {
        try await database.transaction { db in
            let marked = try await db.raw(
                """
                UPDATE refresh_tokens SET used_at = \(bind: now)
                WHERE token_hash = \(bind: oldHash) AND used_at IS NULL
                RETURNING token_hash
                """
            ).first()
            guard marked != nil else { return false }
            try await db.raw(
                """
                INSERT INTO refresh_tokens (token_hash, login_id, created_at, expires_at)
                VALUES (\(bind: newHash), \(bind: loginID), \(bind: now), \(bind: expiresAt))
                """
            ).run()
            try await db.raw("UPDATE logins SET last_used_at = \(bind: now) WHERE id = \(bind: loginID)").run()
            return true
        }
    }

    func revoke(loginID: String, now: Int64) async throws {
        try await database.write { db in
            try await db.raw(
                "UPDATE logins SET revoked_at = \(bind: now) WHERE id = \(bind: loginID) AND revoked_at IS NULL"
            ).run()
        }
    }

    /// Revokes every login of the user except `except`.
    func revokeAll(userID: String, except: String?, now: Int64) async throws {
        try await database.write { db in
            try await db.raw(
                """
                UPDATE logins SET revoked_at = \(bind: now)
                WHERE user_id = \(bind: userID) AND revoked_at IS NULL AND id <> \(bind: except ?? "")
                """
            ).run()
        }
    }
}
