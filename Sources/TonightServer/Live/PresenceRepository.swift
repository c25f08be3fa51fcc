import SQLKit

/// The presence leases of migration 0029 and `users.online_until`, which follows them.
struct PresenceRepository: Sendable {
    let database: Database

    /// `instance` holds sockets for `users` until `until` (inserted or renewed); each of them is
    /// online at least that long and was last seen `now`.
    ///
    /// Both this and ``release(_:instance:now:)`` change the users' rows before their leases: an
    /// account deletion locks the user and then (cascading) the leases, so taking them the other way
    /// round deadlocked with it.
    func renew(_ users: [String], instance: String, until: Int64, now: Int64) async throws {
        guard !users.isEmpty else { return }
        let users = users.sorted()
        try await database.transaction { db in
            try await db.raw(
                """
                UPDATE users SET online_until = CASE WHEN online_until > \(bind: until) THEN online_until
                    ELSE \(bind: until) END, last_seen_at = \(bind: now)
                WHERE id IN (\(binds: users))
                """
            ).run()
            var leases = db.insert(into: "presence_leases").columns("user_id", "instance", "until")
            for user in users { leases = leases.values(SQLBind(user), SQLBind(instance), SQLBind(until)) }
            try await leases.onConflict(with: ["user_id", "instance"]) { try $0.set(excludedValueOf: "until") }.run()
        }
    }

    /// `instance` has no socket for `user` any more: its lease goes, and the user stays online
    /// only as long as another instance's lease says.
    func release(_ user: String, instance: String, now: Int64) async throws {
        try await database.transaction { db in
            try await db.raw(
                """
                UPDATE users SET last_seen_at = \(bind: now), online_until = COALESCE(
                    (SELECT MAX(until) FROM presence_leases
                        WHERE user_id = \(bind: user) AND instance <> \(bind: instance) AND until > \(bind: now)),
                    \(bind: now))
                WHERE id = \(bind: user)
                """
            ).run()
            try await db.raw(
                "DELETE FROM presence_leases WHERE user_id = \(bind: user) AND instance = \(bind: instance)"
            ).run()
        }
    }

    /// `instance` is stopping: all its leases go, and each of their users stays online only as
    /// long as another instance's lease says.
    func releaseAll(instance: String, now: Int64) async throws {
        try await database.transaction { db in
            try await db.raw(
                """
                UPDATE users SET last_seen_at = \(bind: now), online_until = COALESCE(
                    (SELECT MAX(l.until) FROM presence_leases l
                        WHERE l.user_id = users.id AND l.instance <> \(bind: instance) AND l.until > \(bind: now)),
                    \(bind: now))
                WHERE id IN (SELECT user_id FROM presence_leases WHERE instance = \(bind: instance))
                """
            ).run()
            try await db.raw("DELETE FROM presence_leases WHERE instance = \(bind: instance)").run()
        }
    }

    /// Forgets leases that ran out before `before` (a crashed instance's).
    func purge(before: Int64) async throws {
        try await database.write { db in
            try await db.raw("DELETE FROM presence_leases WHERE until < \(bind: before)").run()
        }
    }
}
