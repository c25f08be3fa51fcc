import Foundation
import Logging
import SQLKit
import ServiceLifecycle
import TonightCore

/// Tells everyone who attends or follows an event about each change of its place, start or
/// status (from edits and re-imports), once per change: a change record is claimed by setting
/// its `notified_at` in the same transaction that writes the notifications, so two instances
/// never both send it. The organiser is not told about edits (they made them).
struct EventChangeNotifier: Service {
    let database: Database
    let notifier: Notifier
    let interval: Duration
    let logger: Logger
    /// Change records handled per round.
    static let batch = 200

    func run() async throws {
        try await runEvery(interval, logger: logger, failure: "event change alerts failed") {
            while try await runOnce() == Self.batch {}
        }
    }

    /// Handles one batch of pending change records; returns how many it looked at.
    @discardableResult
    func runOnce(now: Int64 = Clock.millis()) async throws -> Int {
        let (seen, written) = try await database.transaction { db in
            let rows = try await db.raw(
                """
                SELECT c.id, c.event_id, c.field, c.new_value, c.origin, e.name, e.time_zone, e.organizer_id,
                    p.name AS place_name
                FROM event_changes c JOIN events e ON e.id = c.event_id
                LEFT JOIN places p ON c.field = 'place' AND p.id = c.new_value
                WHERE c.notified_at IS NULL ORDER BY c.changed_at, c.id LIMIT \(unsafeRaw: String(Self.batch))
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
            return (rows.count, try await SQLNotificationRepository.write(drafts, now: now, on: db))
        }
        await notifier.publish(written)
        return seen
    }
}
