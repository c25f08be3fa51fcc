import SQLKit
import TonightAPI
import TonightCore

/// An invitation's state, as the contract names it.
typealias InvitationStatus = Components.Schemas.InvitationStatus

/// A row of `invitations`.
struct InvitationRecord: Sendable, Equatable {
    var id: String
    var eventID: String
    var fromID: String
    var toID: String
    var status: InvitationStatus
    var createdAt: Int64
}

/// Invitations to events and sessions.
///
/// Over SQLKit, the same SQL on SQLite and PostgreSQL.
struct InvitationRepository: Sendable {
    let db: any SQLDatabase
    let database: Database

    private static let columns = "id, event_id, from_id, to_id, status, created_at"

    /// Invites each of `invitees` not yet invited by `from` to `eventID`, telling each one
    /// (`notice`) in the same transaction; returns the new invitations and what was written.
    func invite(
        eventID: String, from: String, invitees: [String], now: Int64,
        notice: @escaping @Sendable (InvitationRecord) -> NotificationDraft
    ) async throws -> (created: [InvitationRecord], notifications: [NotificationRecord]) {
        try await database.transaction { db in
            var created: [InvitationRecord] = []
            for invitee in invitees {
                let record = InvitationRecord(
                    id: Identifier.make(), eventID: eventID, fromID: from, toID: invitee, status: .pending,
                    createdAt: now)
                let inserted = try await db.raw(
                    """
                    INSERT INTO invitations (id, event_id, from_id, to_id, status, created_at, updated_at)
                    VALUES (\(bind: record.id), \(bind: eventID), \(bind: from), \(bind: invitee), 'pending',
                        \(bind: now), \(bind: now))
                    ON CONFLICT DO NOTHING RETURNING id
                    """
                ).first()
                if inserted != nil { created.append(record) }
            }
            return (created, try await NotificationRepository.write(created.map(notice), now: now, on: db))
        }
    }

    /// Invitations to (`incoming`) or from `userID`, newest first.
    func list(userID: String, incoming: Bool, status: InvitationStatus?, before: (Int64, String)?, limit: Int)
        async throws
        -> [InvitationRecord]
    {
        var sql: SQLQueryString =
            "SELECT \(unsafeRaw: Self.columns) FROM invitations WHERE \(unsafeRaw: incoming ? "to_id" : "from_id") = \(bind: userID)"
        if let status { sql = sql + " AND status = \(bind: status)" }
        if let before { sql = sql + " AND " + Keyset.before(before, "created_at", "id") }
        sql = sql + " ORDER BY created_at DESC, id DESC LIMIT \(unsafeRaw: String(limit))"
        return try await db.raw(sql).all().map(Self.decode)
    }

    func find(id: String) async throws -> InvitationRecord? {
        try await db.raw("SELECT \(unsafeRaw: Self.columns) FROM invitations WHERE id = \(bind: id)").first()
            .map(Self.decode)
    }

    func setStatus(id: String, status: InvitationStatus, now: Int64) async throws {
        try await db.raw(
            "UPDATE invitations SET status = \(bind: status), updated_at = \(bind: now) WHERE id = \(bind: id)"
        ).run()
    }

    static func decode(_ row: any SQLRow) throws -> InvitationRecord {
        InvitationRecord(
            id: try row.decode(column: "id", as: String.self),
            eventID: try row.decode(column: "event_id", as: String.self),
            fromID: try row.decode(column: "from_id", as: String.self),
            toID: try row.decode(column: "to_id", as: String.self),
            status: try row.decode(column: "status", as: InvitationStatus.self),
            createdAt: try row.decode(column: "created_at", as: Int64.self))
    }
}
