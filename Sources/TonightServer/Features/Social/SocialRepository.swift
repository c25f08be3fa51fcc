import Foundation
import SQLKit
import TonightCore

/// Where two users stand after a friend request.
enum FriendOutcome: Sendable, Equatable {
    /// The request waits for the other user (it is new, or was already there).
    case pending
    /// The two are friends (the other had asked too, or they already were).
    case friends
}

/// A user in a social list and since when they are in it.
struct SocialEntry: Sendable, Equatable {
    var userID: String
    var since: Int64
}

/// Friends, friend requests and blocks.
///
/// Over SQLKit, the same SQL on SQLite and PostgreSQL. Changes between two
/// users take the pair's lock, so crossing requests make one friendship.
struct SocialRepository: Sendable {
    let db: any SQLDatabase
    let database: Database

    static func pairKey(_ a: String, _ b: String) -> String {
        let pair = WallRules.pair(a, b)
        return "pair:\(pair.first):\(pair.second)"
    }

    /// Sends (or completes) a friend request. When this call makes a new request (`.pending`) or
    /// a new friendship (`.friends`), `notices` says whom to tell, written in the same
    /// transaction. Returns the outcome and what was written.
    func sendRequest(
        from: String, to: String, now: Int64, notices: @escaping @Sendable (FriendOutcome) -> [NotificationDraft]
    ) async throws -> (FriendOutcome, [NotificationRecord]) {
        try await database.transaction { db in
            try await database.lock(Self.pairKey(from, to), on: db)
            if try await Self.areFriends(from, to, on: db) { return (.friends, []) }
            let crossing = try await db.raw(
                "DELETE FROM friend_requests WHERE from_id = \(bind: to) AND to_id = \(bind: from) RETURNING from_id"
            ).first()
            if crossing != nil {
                try await Self.befriend(from, to, now: now, on: db)
                return (.friends, try await NotificationRepository.write(notices(.friends), now: now, on: db))
            }
            let inserted = try await db.raw(
                """
                INSERT INTO friend_requests (from_id, to_id, created_at) VALUES (\(bind: from), \(bind: to), \(bind: now))
                ON CONFLICT DO NOTHING RETURNING from_id
                """
            ).first()
            guard inserted != nil else { return (.pending, []) }
            return (.pending, try await NotificationRepository.write(notices(.pending), now: now, on: db))
        }
    }

    /// Accepts `requester`'s request to `user`; nil when there is no such request.
    func acceptRequest(from requester: String, to user: String, now: Int64, notices: [NotificationDraft])
        async throws -> [NotificationRecord]?
    {
        try await database.transaction { db in
            try await database.lock(Self.pairKey(requester, user), on: db)
            let request = try await db.raw(
                "DELETE FROM friend_requests WHERE from_id = \(bind: requester) AND to_id = \(bind: user) RETURNING from_id"
            ).first()
            guard request != nil else { return nil }
            try await Self.befriend(requester, user, now: now, on: db)
            return try await NotificationRepository.write(notices, now: now, on: db)
        }
    }

    /// Deletes a pending request (deny by the recipient or cancel by the sender).
    func deleteRequest(from: String, to: String) async throws {
        try await db.raw("DELETE FROM friend_requests WHERE from_id = \(bind: from) AND to_id = \(bind: to)").run()
    }

    func removeFriend(_ user: String, _ friend: String) async throws {
        try await database.transaction { db in
            try await Self.unfriend(user, friend, on: db)
        }
    }

    func areFriends(_ a: String, _ b: String) async throws -> Bool {
        try await Self.areFriends(a, b, on: db)
    }

    /// Which of `others` are friends of `user` (one query).
    func friends(of user: String, among others: [String]) async throws -> Set<String> {
        guard !others.isEmpty else { return [] }
        let rows = try await db.raw(
            "SELECT friend_id FROM friends WHERE user_id = \(bind: user) AND friend_id IN (\(binds: others))"
        ).all()
        return Set(try rows.map { try $0.decode(column: "friend_id", as: String.self) })
    }

    /// Which of `others` are friends of `user` (one query).
    func friends(of user: String, before: (Int64, String)?, limit: Int) async throws -> [SocialEntry] {
        try await list(
            "SELECT friend_id AS other, created_at FROM friends WHERE user_id = \(bind: user)", "friend_id", before,
            limit)
    }

    /// Pending requests to (`incoming`) or from `user`, newest first.
    func requests(of user: String, incoming: Bool, before: (Int64, String)?, limit: Int) async throws -> [SocialEntry] {
        incoming
            ? try await list(
                "SELECT from_id AS other, created_at FROM friend_requests WHERE to_id = \(bind: user)", "from_id",
                before,
                limit)
            : try await list(
                "SELECT to_id AS other, created_at FROM friend_requests WHERE from_id = \(bind: user)", "to_id", before,
                limit)
    }

    /// Blocks `blocked` for `blocker`, ending any friendship, request, match and conversation
    /// between them.
    func block(_ blocker: String, _ blocked: String, now: Int64) async throws {
        try await database.transaction { db in
            try await database.lock(Self.pairKey(blocker, blocked), on: db)
            try await db.raw(
                """
                INSERT INTO blocks (blocker_id, blocked_id, created_at) VALUES (\(bind: blocker), \(bind: blocked), \(bind: now))
                ON CONFLICT DO NOTHING
                """
            ).run()
            try await Self.unfriend(blocker, blocked, on: db)
            try await db.raw(
                """
                DELETE FROM friend_requests WHERE (from_id = \(bind: blocker) AND to_id = \(bind: blocked))
                    OR (from_id = \(bind: blocked) AND to_id = \(bind: blocker))
                """
            ).run()
            let pair = WallRules.pair(blocker, blocked)
            try await db.raw(
                "DELETE FROM matches WHERE user_a = \(bind: pair.first) AND user_b = \(bind: pair.second)"
            ).run()
            try await db.raw(
                "DELETE FROM conversations WHERE user_a = \(bind: pair.first) AND user_b = \(bind: pair.second)"
            ).run()
        }
    }

    func unblock(_ blocker: String, _ blocked: String) async throws {
        try await db.raw("DELETE FROM blocks WHERE blocker_id = \(bind: blocker) AND blocked_id = \(bind: blocked)")
            .run()
    }

    /// Users `blocker` blocked, newest first.
    func blocks(of blocker: String, before: (Int64, String)?, limit: Int) async throws -> [SocialEntry] {
        try await list(
            "SELECT blocked_id AS other, created_at FROM blocks WHERE blocker_id = \(bind: blocker)", "blocked_id",
            before,
            limit)
    }

    /// Whether either user blocked the other.
    func isBlocked(_ a: String, _ b: String) async throws -> Bool {
        try await db.raw(
            """
            SELECT 1 AS one FROM blocks WHERE (blocker_id = \(bind: a) AND blocked_id = \(bind: b))
                OR (blocker_id = \(bind: b) AND blocked_id = \(bind: a))
            """
        ).first() != nil
    }

    /// `NOT EXISTS` condition: no block between `viewer` (bound) and the user in column `other`.
    static func notBlocked(_ viewer: String, other: String) -> SQLQueryString {
        """
        NOT EXISTS (SELECT 1 FROM blocks b WHERE (b.blocker_id = \(bind: viewer) AND b.blocked_id = \(unsafeRaw: other))
            OR (b.blocker_id = \(unsafeRaw: other) AND b.blocked_id = \(bind: viewer)))
        """
    }

    private func list(_ base: SQLQueryString, _ idColumn: String, _ before: (Int64, String)?, _ limit: Int)
        async throws -> [SocialEntry]
    {
        var sql = base
        if let before { sql = sql + " AND " + Keyset.before(before, "created_at", idColumn) }
        sql = sql + " ORDER BY created_at DESC, \(unsafeRaw: idColumn) DESC LIMIT \(unsafeRaw: String(limit))"
        return try await db.raw(sql).all().map {
            SocialEntry(
                userID: try $0.decode(column: "other", as: String.self),
                since: try $0.decode(column: "created_at", as: Int64.self))
        }
    }

    private static func areFriends(_ a: String, _ b: String, on db: any SQLDatabase) async throws -> Bool {
        try await db.raw("SELECT 1 AS one FROM friends WHERE user_id = \(bind: a) AND friend_id = \(bind: b)").first()
            != nil
    }

    private static func befriend(_ a: String, _ b: String, now: Int64, on db: any SQLDatabase) async throws {
        try await db.raw(
            """
            INSERT INTO friends (user_id, friend_id, created_at) VALUES (\(bind: a), \(bind: b), \(bind: now)),
                (\(bind: b), \(bind: a), \(bind: now))
            ON CONFLICT DO NOTHING
            """
        ).run()
    }

    private static func unfriend(_ a: String, _ b: String, on db: any SQLDatabase) async throws {
        try await db.raw(
            """
            DELETE FROM friends WHERE (user_id = \(bind: a) AND friend_id = \(bind: b))
                OR (user_id = \(bind: b) AND friend_id = \(bind: a))
            """
        ).run()
    }
}
