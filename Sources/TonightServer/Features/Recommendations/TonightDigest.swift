import Foundation
import Logging
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
    let users: UserRepository
    let digests: DigestRepository
    let notifications: NotificationRepository
    let geo: GeoService
    let events: EventRecommender
    let sessions: SessionRecommender
    let places: PlaceRepository
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
            let rows = try await digests.candidates(after: after, limit: 500)
            for row in rows {
                after = row.id
                let settings = NotificationSettingsRules.decode(row.notificationSettings)
                guard !settings.muted.contains(.digest),
                    let city = geo.homeCity(row.homeCity),
                    let zone = TimeZone(identifier: city.timeZone),
                    let day = DigestSchedule.due(
                        now: now, timeZone: zone, hour: hour, lastSent: row.lastDigest.flatMap(CalendarDate.init)),
                    try await digests.claimDay(userID: row.id, day: day.description, now: Clock.millis(now))
                else { continue }
                if try await send(userID: row.id, center: city.location, now: now) { sent += 1 }
            }
            if rows.count < 500 { return sent }
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
        let written = try await notifications.write(
            [
                NotificationDraft(
                    userID: userID, kind: .digest, text: text, eventID: cards.first?.id ?? picked.first?.id)
            ],
            now: Clock.millis(now))
        await notifier.publish(written)
        return !written.isEmpty
    }
}
