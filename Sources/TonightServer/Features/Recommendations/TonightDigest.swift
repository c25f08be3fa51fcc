import Foundation
import Logging
import SQLKit
import ServiceLifecycle
import TonightCore

/// The afternoon "Tonight" digest: events tonight near the user's home city by their favourites'
/// affinity within budget (popular ones without favourites), and recommended sessions — at most
/// one a day, in the user's time zone (``DigestSchedule``). Muting the `digest` notification kind
/// opts out; users without a home city get none.
///
/// The day is claimed in `digests` before the digest is composed (a conditional upsert), so
/// several instances never both send one; a crash between claim and write skips that day.
/// Each round walks the users with a home city in pages; fine to tens of thousands of users.
struct TonightDigest: Service {
    let database: Database
    let users: any UserRepository
    let geo: GeoService
    let events: EventRecommender
    let sessions: SessionRecommender
    let places: any PlaceRepository
    let notifier: Notifier
    /// Local hour from which digests go out (`digest.hour`, default 16).
    let hour: Int
    let interval: Duration
    let logger: Logger

    func run() async throws {
        try await runEvery(interval, logger: logger, failure: "tonight digest failed") {
            _ = try await runOnce()
        }
    }

    /// Sends the digests due at `now`; returns how many were written.
    @discardableResult
    func runOnce(now: Date = Date()) async throws -> Int {
        var after = ""
        var sent = 0
        while true {
            let rows = try await database.sql.raw(
                """
                SELECT u.id, u.home_city, u.notification_settings, d.last_date FROM users u
                LEFT JOIN digests d ON d.user_id = u.id
                WHERE u.home_city IS NOT NULL AND u.id > \(bind: after) ORDER BY u.id LIMIT 500
                """
            ).all()
            for row in rows {
                let id = try row.decode(column: "id", as: String.self)
                after = id
                let settings = NotificationSettingsRules.decode(
                    try row.decode(column: "notification_settings", as: String.self))
                guard !settings.muted.contains(.digest),
                    let city = geo.homeCity(try row.decode(column: "home_city", as: String?.self)),
                    let zone = TimeZone(identifier: city.timeZone),
                    let day = DigestSchedule.due(
                        now: now, timeZone: zone, hour: hour,
                        lastSent: try row.decode(column: "last_date", as: String?.self).flatMap(CalendarDate.init)),
                    try await claim(userID: id, day: day, now: now)
                else { continue }
                if try await send(userID: id, center: city.location, now: now) { sent += 1 }
            }
            if rows.count < 500 { return sent }
        }
    }

    /// Marks `day` as the user's digest day unless it already is (or a later one).
    private func claim(userID: String, day: CalendarDate, now: Date) async throws -> Bool {
        try await database.write { db in
            try await db.raw(
                """
                INSERT INTO digests (user_id, last_date, sent_at) VALUES (\(bind: userID), \(bind: day.description), \(bind: Clock.millis(now)))
                ON CONFLICT (user_id) DO UPDATE SET last_date = excluded.last_date, sent_at = excluded.sent_at
                WHERE digests.last_date < excluded.last_date RETURNING user_id
                """
            ).first() != nil
        }
    }

    private func send(userID: String, center: GeoPoint, now: Date) async throws -> Bool {
        guard let user = try await users.find(id: userID) else { return false }
        let preferences = PreferencesRules.decode(user.preferences)
        let cards = try await events.cards(
            userID: userID, center: center, radius: Double(preferences.radiusMeters ?? 25_000),
            budget: preferences.budget, favoriteCategories: preferences.favoriteCategories ?? [], limit: 3, now: now,
            tonightOnly: true
        ).cards.map(\.event)
        let ranked = try await sessions.recommend(
            user: user, preferences: preferences, center: center, limit: 2, now: now)
        let sessionRecords = try await events.events.find(ids: ranked.map(\.candidate.id))
        let picked = ranked.compactMap { sessionRecords[$0.candidate.id] }
        guard !cards.isEmpty || !picked.isEmpty else { return false }
        let placesByID = try await places.find(ids: (cards + picked).map(\.placeID))
        func line(_ event: EventRecord, withDay: Bool) -> (name: String, place: String, time: String) {
            let zone = TimeZone(identifier: event.timeZone) ?? .gmt
            let time = event.localTime.map { String($0.prefix(5)) } ?? "time to be announced"
            let day = withDay ? EventChangeText.when(Clock.date(event.startAt), timeZone: zone) : time
            return (event.name, placesByID[event.placeID]?.name ?? "a place nearby", day)
        }
        let text = DigestText.compose(
            events: cards.map { line($0, withDay: false) }, sessions: picked.map { line($0, withDay: true) })
        let written = try await database.transaction { db in
            try await SQLNotificationRepository.write(
                [
                    NotificationDraft(
                        userID: userID, kind: .digest, text: text, eventID: cards.first?.id ?? picked.first?.id)
                ],
                now: Clock.millis(now), on: db)
        }
        await notifier.publish(written)
        return !written.isEmpty
    }
}
