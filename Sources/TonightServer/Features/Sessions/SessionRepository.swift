import Foundation
import SQLKit
import TonightCore

/// What the recommendation query needs besides the candidates' place: whom to count.
struct CandidateFilter: Sendable {
    var userID: String
    var center: GeoPoint
    var radius: Double
    var from: Int64
    var until: Int64
    var notWanted: [String]
    var preferredGenders: [String]
    /// Birth-date brackets `(after, through)` of the preferred age groups (`YYYY-MM-DD`).
    var birthDates: [(after: String?, through: String?)]
    /// Players to count as "avoided" (they were in sessions dismissed for people).
    var avoided: [String]
}

/// A user's sessions played, per sport and skill.
struct PlayedRow: Sendable, Equatable {
    var sport: String
    var skill: String
    var sessions: Int
    var minutes: Int64
}

/// A stored dismissal.
struct DismissalRecord: Sendable {
    var eventID: String
    var dismissal: SessionDismissal
}

/// Storage for sessions beyond plain events: added sports, players, history, recommendation
/// candidates, dismissals and calendar feed tokens.
///
/// Over SQLKit, the same SQL on SQLite and PostgreSQL.
struct SessionRepository: Sendable {
    let db: any SQLDatabase
    let database: Database

    func addedSports() async throws -> [Sport] {
        try await db.raw("SELECT slug, name, icon FROM sports ORDER BY name, slug").all().map { row in
            Sport(
                slug: try row.decode(column: "slug", as: String.self),
                name: try row.decode(column: "name", as: String.self),
                icon: try row.decode(column: "icon", as: String.self))
        }
    }

    /// Adds a sport; false if the slug is taken.
    func insertSport(_ sport: Sport, now: Int64) async throws -> Bool {
        try await database.write { db in
            try await db.raw(
                """
                INSERT INTO sports (slug, name, icon, created_at)
                VALUES (\(bind: sport.slug), \(bind: sport.name), \(bind: sport.icon), \(bind: now))
                ON CONFLICT (slug) DO NOTHING RETURNING slug
                """
            ).first() != nil
        }
    }

    /// Players (going) of a session in the order they joined, without anyone blocked either way by `viewer`.
    func players(of eventID: String, viewer: String) async throws -> [String] {
        try await db.raw(
            """
            SELECT user_id FROM attendance WHERE event_id = \(bind: eventID) AND status = 'going'
                AND \(SocialRepository.notBlocked(viewer, other: "user_id"))
            ORDER BY created_at, user_id
            """
        ).all().map { try $0.decode(column: "user_id", as: String.self) }
    }

    /// Sessions the user has played (going, started before `before`), per sport and skill.
    func played(by userID: String, before: Int64) async throws -> [PlayedRow] {
        try await db.raw(
            """
            SELECT e.sport, e.skill, COUNT(*) AS sessions,
                CAST(SUM(COALESCE(e.end_at, e.start_at) - e.start_at) AS BIGINT) AS millis
            FROM attendance a JOIN events e ON e.id = a.event_id
            WHERE a.user_id = \(bind: userID) AND a.status = 'going' AND e.kind = 'session'
                AND e.status <> 'cancelled' AND e.start_at < \(bind: before)
            GROUP BY e.sport, e.skill ORDER BY e.sport, e.skill
            """
        ).all().map { row in
            PlayedRow(
                sport: try row.decode(column: "sport", as: String?.self) ?? "",
                skill: try row.decode(column: "skill", as: String?.self) ?? "any",
                sessions: try row.decode(column: "sessions", as: Int.self),
                minutes: (try row.decode(column: "millis", as: Int64?.self) ?? 0) / 60_000)
        }
    }

    /// How many sessions the user played by their local start hour (0–23).
    func playedHours(by userID: String, before: Int64) async throws -> [(hour: Int, count: Int)] {
        try await db.raw(
            """
            SELECT SUBSTR(e.local_time, 1, 2) AS hour, COUNT(*) AS sessions
            FROM attendance a JOIN events e ON e.id = a.event_id
            WHERE a.user_id = \(bind: userID) AND a.status = 'going' AND e.kind = 'session'
                AND e.status <> 'cancelled' AND e.start_at < \(bind: before) AND e.local_time IS NOT NULL
            GROUP BY SUBSTR(e.local_time, 1, 2)
            """
        ).all().compactMap { row in
            guard let hour = Int(try row.decode(column: "hour", as: String.self)) else { return nil }
            return (hour, try row.decode(column: "sessions", as: Int.self))
        }
    }

    /// Other players who were going to the same started sessions as the user.
    func distinctPlaymates(of userID: String, before: Int64) async throws -> Int {
        try await db.raw(
            """
            SELECT COUNT(DISTINCT other.user_id) AS n
            FROM attendance mine JOIN events e ON e.id = mine.event_id
            JOIN attendance other ON other.event_id = mine.event_id AND other.status = 'going'
                AND other.user_id <> mine.user_id
            WHERE mine.user_id = \(bind: userID) AND mine.status = 'going' AND e.kind = 'session'
                AND e.status <> 'cancelled' AND e.start_at < \(bind: before)
            """
        ).first()?.decode(column: "n", as: Int.self) ?? 0
    }

    func friendCount(of userID: String) async throws -> Int {
        try await db.raw("SELECT COUNT(*) AS n FROM friends WHERE user_id = \(bind: userID)").first()?
            .decode(column: "n", as: Int.self) ?? 0
    }

    /// Sessions passing the recommendation filters, with their counts for the formula.
    func candidates(_ f: CandidateFilter) async throws -> [SessionCandidate] {
        // Places first (the grid index), then their sessions: the planner cannot know that a few
        // hundred places beat a time range of every session, so SQLite is told which index to use.
        let hits = try await PlaceRepository(db: db).nearby(
            PlaceQuery(near: f.center, radius: f.radius, includeSpots: true))
        var locations: [String: GeoPoint] = [:]
        for hit in hits where hit.location.distance(to: f.center) <= f.radius { locations[hit.id] = hit.location }
        guard !locations.isEmpty else { return [] }
        let friends = Set(
            try await db.raw("SELECT friend_id FROM friends WHERE user_id = \(bind: f.userID)").all()
                .map { try $0.decode(column: "friend_id", as: String.self) })
        let dismissed = Set(
            try await db.raw("SELECT event_id FROM dismissals WHERE user_id = \(bind: f.userID)").all()
                .map { try $0.decode(column: "event_id", as: String.self) })
        let blocked = Set(
            try await db.raw(
                """
                SELECT blocked_id AS other FROM blocks WHERE blocker_id = \(bind: f.userID)
                UNION SELECT blocker_id AS other FROM blocks WHERE blocked_id = \(bind: f.userID)
                """
            ).all().map { try $0.decode(column: "other", as: String.self) })
        let criteria = SessionPlayers.Criteria(
            userID: f.userID, friends: friends, genders: Set(f.preferredGenders), birthDates: f.birthDates,
            avoided: Set(f.avoided))
        let hint = database.kind == .sqlite ? " INDEXED BY events_place_kind" : ""
        var result: [SessionCandidate] = []
        let placeIDs = Array(locations.keys)
        for start in stride(from: 0, to: placeIDs.count, by: 2000) {
            let chunk = Array(placeIDs[start..<min(placeIDs.count, start + 2000)])
            var conditions: [SQLQueryString] = [
                "e.place_id IN (\(binds: chunk))", "e.kind = 'session'", "e.start_at >= \(bind: f.from)",
                "e.start_at < \(bind: f.until)", "e.status <> 'cancelled'", "e.going_count < e.capacity",
            ]
            if !f.notWanted.isEmpty { conditions.append("e.sport NOT IN (\(binds: f.notWanted))") }
            // One text column a row: decoding columns through SQLKit costs more than finding them.
            let sql: SQLQueryString =
                """
                SELECT e.start_at || '|' || COALESCE(e.local_time, '') || '|' || COALESCE(e.sport, '') || '|'
                    || COALESCE(e.skill, 'any') || '|' || e.id || '|' || COALESCE(e.organizer_id, '') || '|'
                    || COALESCE(e.players, '') || '|' || e.place_id AS row
                FROM events e\(unsafeRaw: hint) WHERE
                """ + " " + conditions.joined(separator: " AND ")
            for row in try await db.raw(sql).all() {
                let text = try row.decode(column: "row", as: String.self)
                let parts = Self.fields(text, count: 8)
                guard parts.count == 8, let startAt = Int64(parts[0]), let location = locations[String(parts[7])]
                else { continue }
                let id = String(parts[4])
                if dismissed.contains(id) || blocked.contains(String(parts[5])) { continue }
                let counts = SessionPlayers.count(parts[6], criteria)
                if counts.includesUser { continue }
                result.append(
                    SessionCandidate(
                        id: id, sport: String(parts[2]), skill: String(parts[3]), startAt: startAt,
                        localHour: Int(parts[1].prefix(2)) ?? 0, location: location,
                        distance: location.distance(to: f.center), friends: counts.friends,
                        playersInPreferredGenders: counts.preferredGenders,
                        playersInPreferredAgeGroups: counts.preferredAgeGroups, avoidedPlayers: counts.avoided))
            }
        }
        return result
    }

    /// The first `count - 1` `|`-separated fields of `text` and the rest, found on bytes (the rows
    /// are mostly player lists; generic splitting showed in profiles).
    static func fields(_ text: String, count: Int) -> [Substring] {
        var cuts: [String.Index] = []
        var index = text.utf8.startIndex
        let end = text.utf8.endIndex
        while index < end && cuts.count < count - 1 {
            if text.utf8[index] == 124 { cuts.append(index) }
            index = text.utf8.index(after: index)
        }
        var result: [Substring] = []
        result.reserveCapacity(count)
        var start = text.startIndex
        for cut in cuts {
            result.append(text[start..<cut])
            start = text.utf8.index(after: cut)
        }
        result.append(text[start...])
        return result
    }

    /// Rewrites the player lists of the upcoming sessions `userID` plays in (after a change of
    /// their gender or birth date).
    func refreshPlayers(ofUser userID: String, from: Int64) async throws {
        try await database.transaction { db in
            let ids = try await db.raw(
                """
                SELECT a.event_id FROM attendance a JOIN events e ON e.id = a.event_id
                WHERE a.user_id = \(bind: userID) AND a.status = 'going' AND e.kind = 'session'
                    AND e.start_at >= \(bind: from)
                """
            ).all().map { try $0.decode(column: "event_id", as: String.self) }
            try await EventRepository.refreshPlayers(of: ids, on: db, kind: database.kind)
        }
    }

    /// Rewrites the player lists of these sessions (after an account is deleted).
    func refreshPlayers(of eventIDs: [String]) async throws {
        try await database.transaction { db in
            try await EventRepository.refreshPlayers(of: eventIDs, on: db, kind: database.kind)
        }
    }

    /// Upcoming sessions `userID` plays in.
    func upcomingSessions(of userID: String, from: Int64) async throws -> [String] {
        try await db.raw(
            """
            SELECT a.event_id FROM attendance a JOIN events e ON e.id = a.event_id
            WHERE a.user_id = \(bind: userID) AND a.status = 'going' AND e.kind = 'session' AND e.start_at >= \(bind: from)
            """
        ).all().map { try $0.decode(column: "event_id", as: String.self) }
    }

    /// Friends of the user going to each of these sessions, in the order they joined.
    func friendsGoing(of userID: String, in eventIDs: [String]) async throws -> [String: [String]] {
        guard !eventIDs.isEmpty else { return [:] }
        let rows = try await db.raw(
            """
            SELECT a.event_id, a.user_id FROM attendance a JOIN friends f ON f.friend_id = a.user_id
            WHERE f.user_id = \(bind: userID) AND a.status = 'going' AND a.event_id IN (\(binds: eventIDs))
            ORDER BY a.created_at, a.user_id
            """
        ).all()
        var result: [String: [String]] = [:]
        for row in rows {
            result[try row.decode(column: "event_id", as: String.self), default: []]
                .append(try row.decode(column: "user_id", as: String.self))
        }
        return result
    }

    /// Remembers a dismissal (a second one of the same event replaces the first).
    func dismiss(userID: String, eventID: String, dismissal: SessionDismissal, now: Int64) async throws {
        try await database.write { db in
            try await db.raw(
                """
                INSERT INTO dismissals (user_id, event_id, reason, sport, local_hour, latitude, longitude, created_at)
                VALUES (\(bind: userID), \(bind: eventID), \(bind: dismissal.reason?.rawValue), \(bind: dismissal.sport),
                    \(bind: dismissal.localHour), \(bind: dismissal.location?.latitude),
                    \(bind: dismissal.location?.longitude), \(bind: now))
                ON CONFLICT (user_id, event_id) DO UPDATE SET reason = excluded.reason, created_at = excluded.created_at
                """
            ).run()
        }
    }

    func dismissals(of userID: String) async throws -> [DismissalRecord] {
        try await db.raw(
            """
            SELECT event_id, reason, sport, local_hour, latitude, longitude FROM dismissals
            WHERE user_id = \(bind: userID) ORDER BY created_at
            """
        ).all().map { row in
            let latitude = try row.decode(column: "latitude", as: Double?.self)
            let longitude = try row.decode(column: "longitude", as: Double?.self)
            return DismissalRecord(
                eventID: try row.decode(column: "event_id", as: String.self),
                dismissal: SessionDismissal(
                    reason: try row.decode(column: "reason", as: String?.self).flatMap(DismissalReason.init),
                    sport: try row.decode(column: "sport", as: String?.self),
                    localHour: try row.decode(column: "local_hour", as: Int?.self),
                    location: latitude.flatMap { lat in longitude.map { GeoPoint(latitude: lat, longitude: $0) } }))
        }
    }

    /// Forgets the user's dismissals of these events (refresh brings them back).
    func forgetDismissals(of userID: String, eventIDs: [String]) async throws {
        guard !eventIDs.isEmpty else { return }
        try await database.write { db in
            try await db.raw(
                "DELETE FROM dismissals WHERE user_id = \(bind: userID) AND event_id IN (\(binds: eventIDs))"
            ).run()
        }
    }

    /// Players of sessions the user dismissed for "people".
    func avoidedPlayers(of userID: String) async throws -> [String] {
        try await db.raw(
            """
            SELECT DISTINCT a.user_id FROM dismissals d JOIN attendance a ON a.event_id = d.event_id
            WHERE d.user_id = \(bind: userID) AND d.reason = 'people' AND a.status = 'going'
                AND a.user_id <> \(bind: userID)
            """
        ).all().map { try $0.decode(column: "user_id", as: String.self) }
    }

    /// Replaces the user's calendar feed token (stored hashed).
    func setCalendarToken(userID: String, tokenHash: String, now: Int64) async throws {
        try await database.transaction { db in
            try await db.raw("DELETE FROM calendar_feeds WHERE user_id = \(bind: userID)").run()
            try await db.raw(
                """
                INSERT INTO calendar_feeds (token_hash, user_id, created_at)
                VALUES (\(bind: tokenHash), \(bind: userID), \(bind: now))
                """
            ).run()
        }
    }

    func calendarUser(tokenHash: String) async throws -> String? {
        try await db.raw("SELECT user_id FROM calendar_feeds WHERE token_hash = \(bind: tokenHash)").first()?
            .decode(column: "user_id", as: String.self)
    }

    /// Deletes a session and, in the same transaction, sends `notice` to everyone who attended or
    /// followed it but its actor (blocks do not matter: the session is gone for them too); returns
    /// the notifications written.
    func delete(eventID: String, telling notice: NotificationDraft, now: Int64) async throws -> [NotificationRecord] {
        try await database.transaction { db in
            // Read under the write so someone joining at this moment is told too.
            let people = try await db.raw(
                "SELECT user_id FROM attendance WHERE event_id = \(bind: eventID) ORDER BY created_at, user_id"
            ).all().map { try $0.decode(column: "user_id", as: String.self) }
            try await db.raw("DELETE FROM events WHERE id = \(bind: eventID)").run()
            let drafts = people.filter { $0 != notice.actorID }.map { user -> NotificationDraft in
                var draft = notice
                draft.userID = user
                return draft
            }
            return try await NotificationRepository.write(drafts, now: now, on: db)
        }
    }
}

extension SessionRepository {
    /// Claims the sessions starting in `(now, horizon]` not yet reminded (their `reminded_at`, at
    /// most `limit`) and writes a reminder for each player, in one transaction, so a reminder goes
    /// out once whatever the number of instances. Returns how many sessions it looked at and the
    /// notifications written.
    func remindDue(now: Int64, horizon: Int64, limit: Int) async throws -> (seen: Int, written: [NotificationRecord]) {
        try await database.transaction { db in
            let rows = try await db.raw(
                """
                SELECT e.id, e.name, e.start_at, e.time_zone, p.name AS place_name FROM events e
                JOIN places p ON p.id = e.place_id
                WHERE e.kind = 'session' AND e.start_at > \(bind: now) AND e.start_at <= \(bind: horizon)
                    AND e.reminded_at IS NULL AND e.status <> 'cancelled'
                ORDER BY e.start_at, e.id LIMIT \(unsafeRaw: String(limit))
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
            return (rows.count, try await NotificationRepository.write(drafts, now: now, on: db))
        }
    }
}
