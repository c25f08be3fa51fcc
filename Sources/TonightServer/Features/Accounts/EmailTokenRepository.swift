import Foundation
import SQLKit
import TonightCore

/// What a mailed link does.
enum EmailTokenPurpose: String, Codable, Sendable {
    /// Verifies the account's current address.
    case verify
    /// Makes `email` the account's address.
    case change
    /// Sets a new password.
    case reset
}

/// A row of `email_tokens`: one mailed link, single-use, stored as the hash of its token.
struct EmailTokenRecord: Sendable, Equatable {
    var id: String
    var userID: String
    var purpose: EmailTokenPurpose
    /// The address the link was mailed to (for a change, the new one).
    var email: String
    var tokenHash: String
    var createdAt: Int64
    var expiresAt: Int64
    var usedAt: Int64?
}

/// How redeeming a token ended.
enum EmailTokenRedemption: Sendable, Equatable {
    /// Done; `previous` is the account as it was before.
    case done(previous: UserRecord)
    /// Already used (or the race for it lost), or no longer about the account's address.
    case stale
}

/// Storage of mailed links and what redeeming one changes, each in one transaction with the
/// mail it causes (the outbox).
struct EmailTokenRepository: Sendable {
    let database: Database

    private static let columns = "id, user_id, purpose, email, token_hash, created_at, expires_at, used_at"

    /// Stores `token`, replacing the account's unused tokens of the same purpose (a newer link
    /// wins), and queues `mail`.
    func issue(_ token: EmailTokenRecord, mail: NewJob, now: Int64) async throws {
        try await database.transaction { db in
            try await db.raw(
                """
                DELETE FROM email_tokens
                WHERE user_id = \(bind: token.userID) AND purpose = \(bind: token.purpose.rawValue) AND used_at IS NULL
                """
            ).run()
            try await db.raw(
                """
                INSERT INTO email_tokens (\(unsafeRaw: Self.columns))
                VALUES (\(bind: token.id), \(bind: token.userID), \(bind: token.purpose.rawValue), \(bind: token.email),
                    \(bind: token.tokenHash), \(bind: token.createdAt), \(bind: token.expiresAt), \(bind: token.usedAt))
                """
            ).run()
            try await JobRepository.enqueue([mail], now: now, on: db)
        }
    }

    /// The account's unused, unexpired token of `purpose`, if any.
    func live(_ purpose: EmailTokenPurpose, userID: String, now: Int64) async throws -> EmailTokenRecord? {
        guard
            let row = try await database.sql.raw(
                """
                SELECT \(unsafeRaw: Self.columns) FROM email_tokens
                WHERE user_id = \(bind: userID) AND purpose = \(bind: purpose.rawValue) AND used_at IS NULL
                    AND expires_at > \(bind: now)
                ORDER BY created_at DESC LIMIT 1
                """
            ).first()
        else { return nil }
        return try Self.decode(row)
    }

    /// Queues `mail` (the link of a token already stored) on its own.
    func resend(_ mail: NewJob, now: Int64) async throws {
        try await JobRepository.enqueue([mail], now: now, on: database.sql)
    }

    /// The token whose hash is `hash`.
    func find(hash: String) async throws -> EmailTokenRecord? {
        guard
            let row = try await database.sql.raw(
                "SELECT \(unsafeRaw: Self.columns) FROM email_tokens WHERE token_hash = \(bind: hash)"
            ).first()
        else { return nil }
        return try Self.decode(row)
    }

    /// Uses `token` once and makes its change, atomically:
    ///
    /// - `verify`: the account's address, if it is still the one mailed, is verified;
    /// - `reset`: the password becomes `passwordHash`; every login ends, and the account's other
    ///   unused links, push devices and browser subscriptions go (the address counts as verified:
    ///   the link reached it); the address must still be the one mailed;
    /// - `change`: the account takes the new address, verified, and `notice(previous)` is queued;
    ///   the account's other unused links (sent to the old address) are dropped. Throws the
    ///   database's unique violation when another account took the address meanwhile (nothing
    ///   is changed then and the token stays usable).
    func redeem(
        _ token: EmailTokenRecord, emailKey: String, passwordHash: String? = nil,
        notice: @escaping @Sendable (UserRecord) throws -> NewJob? = { _ in nil }, now: Int64
    ) async throws -> EmailTokenRedemption {
        try await database.transaction { db in
            let used = try await db.raw(
                "UPDATE email_tokens SET used_at = \(bind: now) WHERE id = \(bind: token.id) AND used_at IS NULL RETURNING id"
            ).first()
            guard used != nil,
                let row = try await db.raw(
                    "SELECT \(unsafeRaw: UserRepository.columns) FROM users WHERE id = \(bind: token.userID)"
                ).first()
            else { return .stale }
            let user = try UserRepository.decode(row)
            switch token.purpose {
            case .verify, .reset:
                guard user.emailKey == emailKey else { return .stale }
                try await db.raw(
                    """
                    UPDATE users SET email_verified_at = COALESCE(email_verified_at, \(bind: now)),
                        password_hash = COALESCE(\(bind: passwordHash), password_hash), updated_at = \(bind: now)
                    WHERE id = \(bind: user.id)
                    """
                ).run()
                if passwordHash != nil {
                    // Whoever had the password loses everything it gave: logins, a change of
                    // address waiting for its link, and the phones and browsers notices go to.
                    try await db.raw(
                        """
                        UPDATE logins SET revoked_at = \(bind: now)
                        WHERE user_id = \(bind: user.id) AND revoked_at IS NULL
                        """
                    ).run()
                    for table in ["email_tokens", "web_push_subscriptions", "devices"] {
                        let unused: SQLQueryString = table == "email_tokens" ? "AND used_at IS NULL" : ""
                        try await db.raw("DELETE FROM \(ident: table) WHERE user_id = \(bind: user.id) \(unused)").run()
                    }
                }
            case .change:
                try await db.raw(
                    """
                    UPDATE users SET email = \(bind: token.email), email_key = \(bind: emailKey),
                        email_verified_at = \(bind: now), updated_at = \(bind: now)
                    WHERE id = \(bind: user.id)
                    """
                ).run()
                try await db.raw(
                    "DELETE FROM email_tokens WHERE user_id = \(bind: user.id) AND used_at IS NULL"
                ).run()
                if let job = try notice(user) { try await JobRepository.enqueue([job], now: now, on: db) }
            }
            return .done(previous: user)
        }
    }

    private static func decode(_ row: any SQLRow) throws -> EmailTokenRecord {
        EmailTokenRecord(
            id: try row.decode(column: "id", as: String.self),
            userID: try row.decode(column: "user_id", as: String.self),
            purpose: try row.decode(column: "purpose", as: EmailTokenPurpose.self),
            email: try row.decode(column: "email", as: String.self),
            tokenHash: try row.decode(column: "token_hash", as: String.self),
            createdAt: try row.decode(column: "created_at", as: Int64.self),
            expiresAt: try row.decode(column: "expires_at", as: Int64.self),
            usedAt: try row.decode(column: "used_at", as: Int64?.self))
    }
}
