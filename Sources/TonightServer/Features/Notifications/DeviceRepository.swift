import SQLKit

/// A registered push token.
struct DeviceRecord: Sendable, Equatable {
    var token: String
    var platform: String
    var userID: String
    var createdAt: Int64
}

/// Push tokens by user.
///
/// Over SQLKit, the same SQL on SQLite and PostgreSQL.
struct DeviceRepository: Sendable {
    let db: any SQLDatabase
    /// Writes queue at its write gate (nil: `db` is an open transaction).
    var database: Database? = nil

    /// Registers `token` for `userID`, taking it from any previous owner.
    func register(token: String, platform: String, userID: String, now: Int64) async throws -> DeviceRecord {
        let row = try await Database.write(database, db) { db in
            try await db.raw(
                """
                INSERT INTO devices (token, platform, user_id, created_at, updated_at)
                VALUES (\(bind: token), \(bind: platform), \(bind: userID), \(bind: now), \(bind: now))
                ON CONFLICT (token) DO UPDATE SET platform = excluded.platform, user_id = excluded.user_id,
                    updated_at = excluded.updated_at
                RETURNING token, platform, user_id, created_at
                """
            ).first()
        }
        guard let row else { return DeviceRecord(token: token, platform: platform, userID: userID, createdAt: now) }
        return try Self.decode(row)
    }

    func unregister(token: String, userID: String) async throws {
        try await Database.write(database, db) { db in
            try await db.raw("DELETE FROM devices WHERE token = \(bind: token) AND user_id = \(bind: userID)").run()
        }
    }

    /// Forgets a token APNs no longer accepts, whoever has it.
    func drop(token: String) async throws {
        try await Database.write(database, db) { db in
            try await db.raw("DELETE FROM devices WHERE token = \(bind: token)").run()
        }
    }

    func devices(of userID: String) async throws -> [DeviceRecord] {
        try await db.raw(
            "SELECT token, platform, user_id, created_at FROM devices WHERE user_id = \(bind: userID) ORDER BY created_at"
        ).all().map(Self.decode)
    }

    static func decode(_ row: any SQLRow) throws -> DeviceRecord {
        DeviceRecord(
            token: try row.decode(column: "token", as: String.self),
            platform: try row.decode(column: "platform", as: String.self),
            userID: try row.decode(column: "user_id", as: String.self),
            createdAt: try row.decode(column: "created_at", as: Int64.self))
    }
}
