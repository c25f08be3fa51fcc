import SQLKit

/// A browser's push subscription (`POST /v1/me/web-push`).
struct WebPushSubscriptionRecord: Sendable, Equatable {
    var endpoint: String
    var userID: String
    /// The browser's P-256 public key, base64url.
    var p256dh: String
    /// The browser's auth secret, base64url.
    var auth: String
    var createdAt: Int64
}

/// Web Push subscriptions by user.
///
/// Over SQLKit, the same SQL on SQLite and PostgreSQL.
struct WebPushRepository: Sendable {
    let database: Database

    private static let columns = "endpoint, user_id, p256dh, auth, created_at"

    /// Browsers one account pushes to; registering another forgets the oldest.
    static let perUser = 10

    /// Registers `subscription`, taking its endpoint from any previous owner and replacing its keys.
    func register(_ subscription: WebPushSubscriptionRecord) async throws {
        try await database.transaction { db in
            try await db.raw(
                """
                INSERT INTO web_push_subscriptions (endpoint, user_id, p256dh, auth, created_at)
                VALUES (\(bind: subscription.endpoint), \(bind: subscription.userID), \(bind: subscription.p256dh),
                    \(bind: subscription.auth), \(bind: subscription.createdAt))
                ON CONFLICT (endpoint) DO UPDATE SET user_id = excluded.user_id, p256dh = excluded.p256dh,
                    auth = excluded.auth, created_at = excluded.created_at
                """
            ).run()
            try await db.raw(
                """
                DELETE FROM web_push_subscriptions
                WHERE user_id = \(bind: subscription.userID) AND endpoint NOT IN (
                    SELECT endpoint FROM web_push_subscriptions WHERE user_id = \(bind: subscription.userID)
                    ORDER BY created_at DESC, endpoint LIMIT \(literal: Self.perUser))
                """
            ).run()
        }
    }

    /// Removes the caller's subscription at `endpoint`, if there is one.
    func unregister(endpoint: String, userID: String) async throws {
        try await database.write { db in
            try await db.raw(
                "DELETE FROM web_push_subscriptions WHERE endpoint = \(bind: endpoint) AND user_id = \(bind: userID)"
            ).run()
        }
    }

    /// Forgets an endpoint its push service no longer knows, whoever has it.
    func drop(endpoint: String) async throws {
        try await database.write { db in
            try await db.raw("DELETE FROM web_push_subscriptions WHERE endpoint = \(bind: endpoint)").run()
        }
    }

    func subscriptions(of userID: String) async throws -> [WebPushSubscriptionRecord] {
        try await database.sql.raw(
            """
            SELECT \(unsafeRaw: Self.columns) FROM web_push_subscriptions
            WHERE user_id = \(bind: userID) ORDER BY created_at
            """
        ).all().map(Self.decode)
    }

    func subscription(endpoint: String) async throws -> WebPushSubscriptionRecord? {
        try await database.sql.raw(
            "SELECT \(unsafeRaw: Self.columns) FROM web_push_subscriptions WHERE endpoint = \(bind: endpoint)"
        ).first().map(Self.decode)
    }

    private static func decode(_ row: any SQLRow) throws -> WebPushSubscriptionRecord {
        WebPushSubscriptionRecord(
            endpoint: try row.decode(column: "endpoint", as: String.self),
            userID: try row.decode(column: "user_id", as: String.self),
            p256dh: try row.decode(column: "p256dh", as: String.self),
            auth: try row.decode(column: "auth", as: String.self),
            createdAt: try row.decode(column: "created_at", as: Int64.self))
    }
}
