import Foundation
import SQLKit
import TonightAPI
import TonightCore

/// What a notification is about, as the contract names it.
typealias NotificationKind = Components.Schemas.NotificationKind

/// A row of `notifications`: one inbox item.
struct NotificationRecord: Sendable, Equatable {
    var id: String
    var userID: String
    var kind: NotificationKind
    var text: String
    var actorID: String?
    var eventID: String?
    var matchID: String?
    var conversationID: String?
    var postID: String?
    var createdAt: Int64
    var readAt: Int64?
    /// The kind of `eventID`'s event (read with the row, not stored in it).
    var eventKind: EventKind?
}

/// A notification about to be written: who gets it, of what kind, and what it points at.
struct NotificationDraft: Sendable {
    var userID: String
    var kind: NotificationKind
    var text: String
    var actorID: String?
    var eventID: String?
    var matchID: String?
    var conversationID: String?
    var postID: String?
}

/// The notification inbox and per-user notification settings.
///
/// Over SQLKit, the same SQL on SQLite and PostgreSQL.
struct NotificationRepository: Sendable {
    let db: any SQLDatabase
    let database: Database

    /// Writes the notifications of `drafts` in a transaction of their own; the written ones come back.
    func write(_ drafts: [NotificationDraft], now: Int64) async throws -> [NotificationRecord] {
        try await database.transaction { db in try await Self.write(drafts, now: now, on: db) }
    }

    private static let columns =
        "id, user_id, kind, text, actor_id, event_id, match_id, conversation_id, post_id, created_at, read_at"
    /// The columns of `n`, with the kind of the event it points at.
    private static let selectList: String =
        columns.components(separatedBy: ", ").map { "n." + $0 }.joined(separator: ", ") + ", e.kind AS event_kind"
    private static let from = "notifications n LEFT JOIN events e ON e.id = n.event_id"

    /// The newest notifications of `userID` older than the notification `before`, newest first.
    func list(userID: String, unreadOnly: Bool, before: String?, limit: Int) async throws -> [NotificationRecord] {
        var conditions: [SQLQueryString] = ["n.user_id = \(bind: userID)"]
        if unreadOnly { conditions.append("n.read_at IS NULL") }
        if let before { conditions.append("n.id < \(bind: before)") }
        let sql: SQLQueryString =
            "SELECT \(unsafeRaw: Self.selectList) FROM \(unsafeRaw: Self.from) WHERE "
            + conditions.joined(separator: " AND ") + " ORDER BY n.id DESC LIMIT \(unsafeRaw: String(limit))"
        return try await db.raw(sql).all().map(Self.decode)
    }

    func unreadCount(userID: String) async throws -> Int {
        let row = try await db.raw(
            "SELECT COUNT(*) AS n FROM notifications WHERE user_id = \(bind: userID) AND read_at IS NULL"
        ).first()
        return try row?.decode(column: "n", as: Int.self) ?? 0
    }

    func find(id: String) async throws -> NotificationRecord? {
        try await db.raw("SELECT \(unsafeRaw: Self.selectList) FROM \(unsafeRaw: Self.from) WHERE n.id = \(bind: id)")
            .first().map(Self.decode)
    }

    /// Marks one read; `false` if the user has no such notification.
    func markRead(userID: String, id: String, now: Int64) async throws -> Bool {
        let row = try await database.write { db in
            try await db.raw(
                """
                UPDATE notifications SET read_at = COALESCE(read_at, \(bind: now))
                WHERE id = \(bind: id) AND user_id = \(bind: userID) RETURNING id
                """
            ).first()
        }
        return row != nil
    }

    func markAllRead(userID: String, now: Int64) async throws {
        try await database.write { db in
            try await db.raw(
                "UPDATE notifications SET read_at = \(bind: now) WHERE user_id = \(bind: userID) AND read_at IS NULL"
            ).run()
        }
    }

    /// The stored settings document (JSON).
    func settings(userID: String) async throws -> String? {
        try await db.raw("SELECT notification_settings FROM users WHERE id = \(bind: userID)").first()?
            .decode(column: "notification_settings", as: String.self)
    }

    func setSettings(userID: String, json: String) async throws {
        try await database.write { db in
            try await db.raw("UPDATE users SET notification_settings = \(bind: json) WHERE id = \(bind: userID)")
                .run()
        }
    }

    /// Writes `drafts` on `db` (inside the caller's transaction), leaving out kinds a recipient
    /// muted; returns what was written, for ``Notifier/publish(_:)`` after the commit.
    static func write(_ drafts: [NotificationDraft], now: Int64, on db: any SQLDatabase) async throws
        -> [NotificationRecord]
    {
        guard !drafts.isEmpty else { return [] }
        let recipients = Array(Set(drafts.map(\.userID)))
        let rows = try await db.raw(
            "SELECT id, notification_settings FROM users WHERE id IN (\(binds: recipients))"
        ).all()
        var muted: [String: Set<String>] = [:]
        var quiet: Set<String> = []
        for row in rows {
            let id = try row.decode(column: "id", as: String.self)
            let settings = NotificationSettingsRules.decode(
                try row.decode(column: "notification_settings", as: String.self))
            muted[id] = Set(settings.muted.map(\.rawValue))
            if NotificationSettingsRules.isQuiet(settings, at: Clock.date(now)) { quiet.insert(id) }
        }
        let withDevices = Set(
            try await db.raw(
                """
                SELECT user_id FROM devices WHERE user_id IN (\(binds: recipients))
                UNION SELECT user_id FROM web_push_subscriptions WHERE user_id IN (\(binds: recipients))
                """
            ).all().map { try $0.decode(column: "user_id", as: String.self) })
        let eventIDs = Array(Set(drafts.compactMap(\.eventID)))
        var eventKinds: [String: EventKind] = [:]
        if !eventIDs.isEmpty {
            for row in try await db.raw("SELECT id, kind FROM events WHERE id IN (\(binds: eventIDs))").all() {
                eventKinds[try row.decode(column: "id", as: String.self)] = try row.decode(
                    column: "kind", as: EventKind.self)
            }
        }
        var written: [NotificationRecord] = []
        var pushes: [NewJob] = []
        for draft in drafts {
            // A recipient who is gone or muted this kind gets nothing.
            guard let mutedKinds = muted[draft.userID], !mutedKinds.contains(draft.kind.rawValue) else { continue }
            let record = NotificationRecord(
                id: Identifier.make(), userID: draft.userID, kind: draft.kind, text: draft.text,
                actorID: draft.actorID, eventID: draft.eventID, matchID: draft.matchID,
                conversationID: draft.conversationID, postID: draft.postID, createdAt: now, readAt: nil,
                eventKind: draft.eventID.flatMap { eventKinds[$0] })
            written.append(record)
            // The push outbox: a job in the same transaction, unless there is nowhere to push (no
            // phone, no browser) or the recipient's quiet hours are on (the inbox and live sockets
            // still get it).
            if withDevices.contains(record.userID), !quiet.contains(record.userID) {
                let job = String(decoding: try JSONEncoder().encode(PushJob(notificationId: record.id)), as: UTF8.self)
                pushes.append(NewJob(kind: PushJob.kind, payload: job, runAt: now, maxAttempts: 1))
            }
        }
        // One multi-row insert each, however many recipients (an event change can have thousands).
        try await BulkWrite.upsert(
            "notifications", columns: columns.components(separatedBy: ", "),
            rows: written.map {
                [
                    $0.id, $0.userID, $0.kind.rawValue, $0.text, $0.actorID, $0.eventID, $0.matchID, $0.conversationID,
                    $0.postID, $0.createdAt, $0.readAt,
                ]
            }, key: ["id"], on: db)
        try await JobRepository.enqueue(pushes, now: now, on: db)
        return written
    }

    static func decode(_ row: any SQLRow) throws -> NotificationRecord {
        NotificationRecord(
            id: try row.decode(column: "id", as: String.self),
            userID: try row.decode(column: "user_id", as: String.self),
            kind: try row.decode(column: "kind", as: NotificationKind.self),
            text: try row.decode(column: "text", as: String.self),
            actorID: try row.decode(column: "actor_id", as: String?.self),
            eventID: try row.decode(column: "event_id", as: String?.self),
            matchID: try row.decode(column: "match_id", as: String?.self),
            conversationID: try row.decode(column: "conversation_id", as: String?.self),
            postID: try row.decode(column: "post_id", as: String?.self),
            createdAt: try row.decode(column: "created_at", as: Int64.self),
            readAt: try row.decode(column: "read_at", as: Int64?.self),
            eventKind: try row.decode(column: "event_kind", as: EventKind?.self))
    }
}
