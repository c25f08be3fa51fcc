import Foundation
import SQLKit
import TonightCore

/// A row of `matches`: two users (in ``WallRules/pair(_:_:)`` order) and the event whose wall
/// brought them together.
struct MatchRecord: Sendable, Equatable {
    var id: String
    var userA: String
    var userB: String
    var eventID: String?
    var createdAt: Int64
    /// The match's conversation (filled by reads that join it).
    var conversationID: String? = nil

    /// The other user of the match.
    func other(than user: String) -> String { user == userA ? userB : userA }
    func includes(_ user: String) -> Bool { user == userA || user == userB }
}

/// Why a swipe could not be recorded.
enum SwipeRefusal: Error, Equatable {
    /// The two are matched already; a pass would have to be an unmatch.
    case alreadyMatched
}

/// The event wall, like/pass decisions and the matches they make.
///
/// Over SQLKit, the same SQL on SQLite and PostgreSQL.
struct WallRepository: Sendable {
    let db: any SQLDatabase
    let database: Database

    /// People on `viewer`'s wall for `eventID` (see the `getWall` operation for the rules), in
    /// the order they said they are going, after a keyset position.
    func wall(eventID: String, viewer: UserRecord, today: CalendarDate, after: (Int64, String)?, limit: Int)
        async throws -> [(user: UserRecord, goingSince: Int64)]
    {
        var conditions: [SQLQueryString] = [
            "a.event_id = \(bind: eventID)", "a.status = 'going'", "a.user_id <> \(bind: viewer.id)",
            "u.is_anonymous = \(bind: false)",
            "(u.birth_date IS NULL OR u.birth_date <= \(bind: WallRules.adultBirthDateCutoff(today: today)))",
            "NOT EXISTS (SELECT 1 FROM swipes s WHERE s.user_id = \(bind: viewer.id) AND s.target_id = a.user_id)",
            SocialRepository.notBlocked(viewer.id, other: "a.user_id"),
        ]
        let wanted = viewer.wallGenders
        if !wanted.isEmpty { conditions.append("u.gender IN (\(binds: wanted))") }
        // Their preference must include the viewer: open to everyone, or naming the viewer's gender.
        if let gender = viewer.gender {
            conditions.append("(u.wall_genders = '' OR u.wall_genders LIKE \(bind: "%|\(gender)|%"))")
        } else {
            conditions.append("u.wall_genders = ''")
        }
        if let after { conditions.append(Keyset.after(after, "a.created_at", "a.user_id")) }
        let sql: SQLQueryString =
            """
            SELECT \(unsafeRaw: UserRepository.columns(as: "u")), a.created_at AS going_since
            FROM attendance a JOIN users u ON u.id = a.user_id
            """ + " WHERE " + conditions.joined(separator: " AND ")
            + " ORDER BY a.created_at, a.user_id LIMIT \(unsafeRaw: String(limit))"
        return try await db.raw(sql).all().map {
            (try UserRepository.decode($0), try $0.decode(column: "going_since", as: Int64.self))
        }
    }

    /// Records `user`'s decision about `target`. A like answered by the target's earlier like makes
    /// one match; `notices` says whom to tell about it, written in the same transaction.
    func swipe(
        user: String, target: String, eventID: String, like: Bool, now: Int64,
        notices: @escaping @Sendable (MatchRecord) -> [NotificationDraft]
    ) async throws -> (match: MatchRecord?, notifications: [NotificationRecord]) {
        try await database.transaction { db in
            // Both likes of a pair take the same lock: the second one sees the first and makes
            // the match, even when they arrive at the same instant.
            try await database.lock(SocialRepository.pairKey(user, target), on: db)
            let pair = WallRules.pair(user, target)
            if let existing = try await Self.match(pair, on: db) {
                guard like else { throw SwipeRefusal.alreadyMatched }
                return (existing, [])
            }
            let decision = like ? "like" : "pass"
            try await db.raw(
                """
                INSERT INTO swipes (user_id, target_id, event_id, decision, created_at, updated_at)
                VALUES (\(bind: user), \(bind: target), \(bind: eventID), \(bind: decision), \(bind: now), \(bind: now))
                ON CONFLICT (user_id, target_id) DO UPDATE SET decision = excluded.decision,
                    event_id = excluded.event_id, updated_at = excluded.updated_at
                """
            ).run()
            guard like else { return (nil, []) }
            let liked = try await db.raw(
                """
                SELECT 1 AS one FROM swipes
                WHERE user_id = \(bind: target) AND target_id = \(bind: user) AND decision = 'like'
                """
            ).first()
            guard liked != nil else { return (nil, []) }
            var match = MatchRecord(
                id: Identifier.make(), userA: pair.first, userB: pair.second, eventID: eventID, createdAt: now)
            try await db.raw(
                """
                INSERT INTO matches (id, user_a, user_b, event_id, created_at)
                VALUES (\(bind: match.id), \(bind: match.userA), \(bind: match.userB), \(bind: match.eventID), \(bind: now))
                """
            ).run()
            // The pair's chat opens with the match (and ends with it).
            let conversation = try await ChatRepository.open(
                user, target, kind: .match, matchID: match.id, now: now, on: db)
            match.conversationID = conversation.id
            return (match, try await NotificationRepository.write(notices(match), now: now, on: db))
        }
    }

    /// `user`'s matches, newest first, with the name of the event each came from.
    func matches(of user: String, before: (Int64, String)?, limit: Int) async throws
        -> [(match: MatchRecord, eventName: String?)]
    {
        var sql: SQLQueryString =
            """
            SELECT m.id, m.user_a, m.user_b, m.event_id, m.created_at, e.name AS event_name,
                c.id AS conversation_id
            FROM matches m LEFT JOIN events e ON e.id = m.event_id LEFT JOIN conversations c ON c.match_id = m.id
            WHERE (m.user_a = \(bind: user) OR m.user_b = \(bind: user))
            """
        if let before { sql = sql + " AND " + Keyset.before(before, "m.created_at", "m.id") }
        sql = sql + " ORDER BY m.created_at DESC, m.id DESC LIMIT \(unsafeRaw: String(limit))"
        return try await db.raw(sql).all().map {
            var match = try Self.decode($0)
            match.conversationID = try $0.decode(column: "conversation_id", as: String?.self)
            return (match, try $0.decode(column: "event_name", as: String?.self))
        }
    }

    func match(id: String) async throws -> MatchRecord? {
        try await db.raw("SELECT id, user_a, user_b, event_id, created_at FROM matches WHERE id = \(bind: id)").first()
            .map(Self.decode)
    }

    /// Whether `userID` is going to `eventID`.
    func isGoing(eventID: String, userID: String) async throws -> Bool {
        try await db.raw(
            """
            SELECT 1 AS one FROM attendance
            WHERE event_id = \(bind: eventID) AND user_id = \(bind: userID) AND status = 'going'
            """
        ).first() != nil
    }

    /// Ends a match: both users' likes become passes, so neither shows on the other's walls.
    func unmatch(_ match: MatchRecord, now: Int64) async throws {
        try await database.transaction { db in
            try await database.lock(SocialRepository.pairKey(match.userA, match.userB), on: db)
            try await db.raw("DELETE FROM matches WHERE id = \(bind: match.id)").run()
            try await db.raw(
                """
                UPDATE swipes SET decision = 'pass', updated_at = \(bind: now)
                WHERE (user_id = \(bind: match.userA) AND target_id = \(bind: match.userB))
                    OR (user_id = \(bind: match.userB) AND target_id = \(bind: match.userA))
                """
            ).run()
        }
    }

    private static func match(_ pair: (first: String, second: String), on db: any SQLDatabase) async throws
        -> MatchRecord?
    {
        try await db.raw(
            """
            SELECT id, user_a, user_b, event_id, created_at FROM matches
            WHERE user_a = \(bind: pair.first) AND user_b = \(bind: pair.second)
            """
        ).first().map(decode)
    }

    static func decode(_ row: any SQLRow) throws -> MatchRecord {
        MatchRecord(
            id: try row.decode(column: "id", as: String.self),
            userA: try row.decode(column: "user_a", as: String.self),
            userB: try row.decode(column: "user_b", as: String.self),
            eventID: try row.decode(column: "event_id", as: String?.self),
            createdAt: try row.decode(column: "created_at", as: Int64.self))
    }
}
