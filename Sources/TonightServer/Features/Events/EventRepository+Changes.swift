import Foundation
import SQLKit
import TonightCore

/// Change records of events (place, start, status), and the alerts they become.
extension EventRepository {
    /// The columns of `event_changes`, in the order ``changeRow(_:)`` gives their values.
    private static let changeColumns = ["id", "event_id", "field", "old_value", "new_value", "origin", "changed_at"]

    private static func changeRow(_ change: EventChangeRecord) -> [SQLValue] {
        [
            .init(change.id), .init(change.eventID), .init(change.field), .init(change.oldValue),
            .init(change.newValue), .init(change.origin), .init(change.changedAt),
        ]
    }

    /// Change records in one statement (an edit's, or an import's batch: one round trip each cost a
    /// feed refresh seconds on SQLite's bulk connection).
    static func insert(_ changes: [EventChangeRecord], on db: any SQLDatabase) async throws {
        try await BulkWrite.upsert(
            "event_changes", columns: changeColumns, rows: changes.map(changeRow), key: ["id"], on: db)
    }

    /// The change records of an event, oldest first.
    func changes(of eventID: String) async throws -> [EventChangeRecord] {
        try await db.raw(
            """
            SELECT \(unsafeRaw: Self.changeColumns.joined(separator: ", ")) FROM event_changes
            WHERE event_id = \(bind: eventID) ORDER BY changed_at, id
            """
        ).all().map { row in
            EventChangeRecord(
                id: try row.decode(column: "id", as: String.self),
                eventID: try row.decode(column: "event_id", as: String.self),
                field: try row.decode(column: "field", as: String.self),
                oldValue: try row.decode(column: "old_value", as: String?.self),
                newValue: try row.decode(column: "new_value", as: String?.self),
                origin: try row.decode(column: "origin", as: String.self),
                changedAt: try row.decode(column: "changed_at", as: Int64.self))
        }
    }

    /// Claims up to `limit` change records not yet told (their `notified_at`) and writes the
    /// notifications for everyone attending or following, in one transaction, so two instances
    /// never both send one; the organiser is not told about their own edits. Returns how many
    /// records it looked at and the notifications written.
    func notifyChanges(now: Int64, limit: Int) async throws -> (seen: Int, written: [NotificationRecord]) {
        try await database.transaction { db in
            let rows = try await db.raw(
                """
                SELECT c.id, c.event_id, c.field, c.new_value, c.origin, e.name, e.time_zone, e.organizer_id,
                    p.name AS place_name
                FROM event_changes c JOIN events e ON e.id = c.event_id
                LEFT JOIN places p ON c.field = 'place' AND p.id = c.new_value
                WHERE c.notified_at IS NULL ORDER BY c.changed_at, c.id LIMIT \(unsafeRaw: String(limit))
                """
            ).all()
            var drafts: [NotificationDraft] = []
            for row in rows {
                let id = try row.decode(column: "id", as: String.self)
                let claimed = try await db.raw(
                    "UPDATE event_changes SET notified_at = \(bind: now) WHERE id = \(bind: id) AND notified_at IS NULL RETURNING id"
                ).first()
                guard claimed != nil else { continue }
                let eventID = try row.decode(column: "event_id", as: String.self)
                let field = try row.decode(column: "field", as: String.self)
                let newValue =
                    field == "place"
                    ? try row.decode(column: "place_name", as: String?.self)
                    : try row.decode(column: "new_value", as: String?.self)
                let zone = TimeZone(identifier: try row.decode(column: "time_zone", as: String.self)) ?? .gmt
                let text = EventChangeText.describe(
                    event: try row.decode(column: "name", as: String.self), field: field, newValue: newValue,
                    timeZone: zone)
                let skip =
                    try row.decode(column: "origin", as: String.self) == "edit"
                    ? try row.decode(column: "organizer_id", as: String?.self) : nil
                let people = try await db.raw("SELECT user_id FROM attendance WHERE event_id = \(bind: eventID)").all()
                for person in people {
                    let user = try person.decode(column: "user_id", as: String.self)
                    if user == skip { continue }
                    drafts.append(.init(userID: user, kind: .eventChanged, text: text, eventID: eventID))
                }
            }
            return (rows.count, try await NotificationRepository.write(drafts, now: now, on: db))
        }
    }
}
