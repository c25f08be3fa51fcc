import Foundation
import SQLKit

/// A resumable upload (`/v1/uploads`): its bytes are a file on the instance that took it, and its
/// offset is that file's size, so only what is fixed at creation (and the post it made) is here.
struct UploadRecord: Sendable, Equatable {
    var id: String
    var userID: String
    /// The size of the whole file, in bytes.
    var length: Int64
    /// The post's fields as sent in `Upload-Metadata` (already checked once, at creation).
    var fields: [String: String]
    /// The client's own key for this upload (`uploadKey` in `Upload-Metadata`): a creation repeated
    /// with it finds this upload.
    var key: String? = nil
    /// The post the finished upload made.
    var postID: String?
    var createdAt: Int64
    var expiresAt: Int64
}

/// Resumable uploads by id, with the limits that hold across a cluster (open uploads per member,
/// unfinished bytes in all).
///
/// Over SQLKit, the same SQL on SQLite and PostgreSQL.
struct UploadRepository: Sendable {
    let database: Database

    private static let columns = "id, user_id, length, fields, upload_key, post_id, created_at, expires_at"

    /// Creates `upload` unless its member already has `perUser` unfinished, unexpired uploads (then
    /// `.tooMany`) or all unfinished ones already add up to `totalBytes` (`.full`); checked and
    /// written in one transaction, under a lock that makes racing creations (on any instance) take
    /// turns.
    func create(_ upload: UploadRecord, perUser: Int, totalBytes: Int64, now: Int64) async throws -> Creation {
        let fields = String(decoding: try JSONEncoder().encode(upload.fields), as: UTF8.self)
        return try await database.transaction { db in
            // One creation at a time across the cluster, so both counts stay exact under a race.
            try await database.lock("uploads.create", on: db)
            let mine =
                try await db.raw(
                    """
                    SELECT COUNT(*) AS n FROM uploads
                    WHERE user_id = \(bind: upload.userID) AND post_id IS NULL AND expires_at > \(bind: now)
                    """
                ).first()?.decode(column: "n", as: Int.self) ?? 0
            guard mine < perUser else { return .tooMany }
            let held =
                try await db.raw(
                    """
                    SELECT CAST(COALESCE(SUM(length), 0) AS BIGINT) AS n FROM uploads
                    WHERE post_id IS NULL AND expires_at > \(bind: now)
                    """
                ).first()?.decode(column: "n", as: Int64.self) ?? 0
            guard held + upload.length <= totalBytes else { return .full }
            try await db.raw(
                """
                INSERT INTO uploads (\(unsafeRaw: Self.columns))
                VALUES (\(bind: upload.id), \(bind: upload.userID), \(bind: upload.length), \(bind: fields),
                    \(bind: upload.key), NULL, \(bind: upload.createdAt), \(bind: upload.expiresAt))
                """
            ).run()
            return .created
        }
    }

    /// What ``create(_:perUser:totalBytes:now:)`` did.
    enum Creation: Sendable {
        case created, tooMany, full
    }

    /// The member's unfinished, unexpired uploads created with `key`, newest first.
    func open(userID: String, key: String, now: Int64) async throws -> [UploadRecord] {
        try await database.sql.raw(
            """
            SELECT \(unsafeRaw: Self.columns) FROM uploads
            WHERE user_id = \(bind: userID) AND upload_key = \(bind: key) AND post_id IS NULL
                AND expires_at > \(bind: now)
            ORDER BY created_at DESC
            """
        ).all().map(Self.decode)
    }

    func find(id: String) async throws -> UploadRecord? {
        try await database.sql.raw("SELECT \(unsafeRaw: Self.columns) FROM uploads WHERE id = \(bind: id)")
            .first().map(Self.decode)
    }

    /// Moves an unfinished upload's expiry (each `PATCH` extends it).
    func extend(id: String, until expiresAt: Int64) async throws {
        try await database.write { db in
            try await db.raw(
                "UPDATE uploads SET expires_at = \(bind: expiresAt) WHERE id = \(bind: id) AND post_id IS NULL"
            ).run()
        }
    }

    /// Records the post a finished upload made.
    func finish(id: String, postID: String) async throws {
        try await database.write { db in
            try await db.raw("UPDATE uploads SET post_id = \(bind: postID) WHERE id = \(bind: id)").run()
        }
    }

    func delete(id: String) async throws {
        try await database.write { db in
            try await db.raw("DELETE FROM uploads WHERE id = \(bind: id)").run()
        }
    }

    /// Deletes uploads expired before `now` (finished ones too: their post stays), but those in
    /// `except` (being written); returns their ids.
    func deleteExpired(now: Int64, limit: Int, except: Set<String> = []) async throws -> [String] {
        try await database.write { db in
            let ids = try await db.raw(
                "SELECT id FROM uploads WHERE expires_at <= \(bind: now) ORDER BY expires_at LIMIT \(literal: limit)"
            ).all().map { try $0.decode(column: "id", as: String.self) }.filter { !except.contains($0) }
            if !ids.isEmpty { try await db.raw("DELETE FROM uploads WHERE id IN (\(binds: ids))").run() }
            return ids
        }
    }

    /// Which of `ids` are unfinished, unexpired uploads (the rest of a folder's files are leftovers).
    func open(ids: [String], now: Int64) async throws -> Set<String> {
        guard !ids.isEmpty else { return [] }
        return Set(
            try await database.sql.raw(
                "SELECT id FROM uploads WHERE post_id IS NULL AND expires_at > \(bind: now) AND id IN (\(binds: ids))"
            ).all().map { try $0.decode(column: "id", as: String.self) })
    }

    private static func decode(_ row: any SQLRow) throws -> UploadRecord {
        let fields = try row.decode(column: "fields", as: String.self)
        return UploadRecord(
            id: try row.decode(column: "id", as: String.self),
            userID: try row.decode(column: "user_id", as: String.self),
            length: try row.decode(column: "length", as: Int64.self),
            fields: (try? JSONDecoder().decode([String: String].self, from: Data(fields.utf8))) ?? [:],
            key: try row.decode(column: "upload_key", as: String?.self),
            postID: try row.decode(column: "post_id", as: String?.self),
            createdAt: try row.decode(column: "created_at", as: Int64.self),
            expiresAt: try row.decode(column: "expires_at", as: Int64.self))
    }
}
