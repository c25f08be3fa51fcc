import Foundation
import Logging
import SQLKit
import ServiceLifecycle
import TonightCore

/// Reminds every player of a session shortly before it starts (`sessions.reminder.minutes`).
///
/// The reminder is claimed by setting the session's `reminded_at` in the same transaction that
/// writes the notifications, so it goes out once even with several instances, and a restart
/// picks up whatever is due. Moving the start clears `reminded_at`, so a rescheduled session is
/// reminded again for its new time.
struct SessionReminder: Service {
    let database: Database
    let notifier: Notifier
    let lead: Duration
    let interval: Duration
    let logger: Logger
    static let batch = 200

    func run() async throws {
        try await runEvery(interval, logger: logger, failure: "session reminders failed") {
            while try await runOnce() == Self.batch {}
        }
    }

    /// Sends the reminders due at `now`; returns how many sessions it looked at.
    @discardableResult
    func runOnce(now: Int64 = Clock.millis()) async throws -> Int {
        let horizon = now + Int64(lead.components.seconds) * 1000
        let (seen, written) = try await database.transaction { db in
            let rows = try await db.raw(
                """
                SELECT e.id, e.name, e.start_at, e.time_zone, p.name AS place_name FROM events e
                JOIN places p ON p.id = e.place_id
                WHERE e.kind = 'session' AND e.start_at > \(bind: now) AND e.start_at <= \(bind: horizon)
                    AND e.reminded_at IS NULL AND e.status <> 'cancelled'
                ORDER BY e.start_at, e.id LIMIT \(unsafeRaw: String(Self.batch))
                """
            ).all()
            var drafts: [NotificationDraft] = []
            for row in rows {
                let id = try row.decode(column: "id", as: String.self)
                guard
                    try await db.raw(
                        "UPDATE events SET reminded_at = \(bind: now) WHERE id = \(bind: id) AND reminded_at IS NULL RETURNING id"
                    ).first() != nil
                else { continue }
                let start = try row.decode(column: "start_at", as: Int64.self)
                let zone = TimeZone(identifier: try row.decode(column: "time_zone", as: String.self)) ?? .gmt
                let text = SessionReminderText.text(
                    session: try row.decode(column: "name", as: String.self),
                    place: try row.decode(column: "place_name", as: String.self), start: Clock.date(start),
                    now: Clock.date(now), timeZone: zone)
                let players = try await db.raw(
                    "SELECT user_id FROM attendance WHERE event_id = \(bind: id) AND status = 'going'"
                ).all()
                for player in players {
                    drafts.append(
                        .init(
                            userID: try player.decode(column: "user_id", as: String.self), kind: .sessionReminder,
                            text: text, eventID: id))
                }
            }
            return (rows.count, try await SQLNotificationRepository.write(drafts, now: now, on: db))
        }
        await notifier.publish(written)
        return seen
    }
}
