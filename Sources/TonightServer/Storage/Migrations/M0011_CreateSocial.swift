/// Friends, friend requests, blocks, wall swipes, matches and the notification inbox.
///
/// A friendship is stored in both directions (one row per side, written together) so listing a
/// user's friends is one index range. A match stores its pair in a fixed order (`user_a < user_b`)
/// under a unique constraint, so one pair can never have two. `users.wall_genders` is the wall's
/// gender preference as `|female|male|` (empty: everyone), kept in step with `preferences` so the
/// wall filters in SQL.
struct CreateSocial: Migration {
    let name = "0011_create_social"

    func statements(for kind: DatabaseKind) -> [String] {
        [
            "ALTER TABLE users ADD COLUMN avatar_url TEXT",
            "ALTER TABLE users ADD COLUMN wall_genders TEXT NOT NULL DEFAULT ''",
            "ALTER TABLE users ADD COLUMN notification_settings TEXT NOT NULL DEFAULT '{}'",
            """
            CREATE TABLE friend_requests (
                from_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                to_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                created_at BIGINT NOT NULL,
                PRIMARY KEY (from_id, to_id)
            )
            """,
            "CREATE INDEX friend_requests_to ON friend_requests(to_id, created_at)",
            """
            CREATE TABLE friends (
                user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                friend_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                created_at BIGINT NOT NULL,
                PRIMARY KEY (user_id, friend_id)
            )
            """,
            "CREATE INDEX friends_by_time ON friends(user_id, created_at)",
            """
            CREATE TABLE blocks (
                blocker_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                blocked_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                created_at BIGINT NOT NULL,
                PRIMARY KEY (blocker_id, blocked_id)
            )
            """,
            "CREATE INDEX blocks_blocked ON blocks(blocked_id)",
            """
            CREATE TABLE swipes (
                user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                target_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                event_id TEXT,
                decision TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                updated_at BIGINT NOT NULL,
                PRIMARY KEY (user_id, target_id)
            )
            """,
            """
            CREATE TABLE matches (
                id TEXT PRIMARY KEY,
                user_a TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                user_b TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                event_id TEXT REFERENCES events(id) ON DELETE SET NULL,
                created_at BIGINT NOT NULL,
                UNIQUE (user_a, user_b)
            )
            """,
            "CREATE INDEX matches_b ON matches(user_b)",
            """
            CREATE TABLE notifications (
                id TEXT PRIMARY KEY,
                user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                kind TEXT NOT NULL,
                text TEXT NOT NULL,
                actor_id TEXT REFERENCES users(id) ON DELETE SET NULL,
                event_id TEXT,
                match_id TEXT,
                conversation_id TEXT,
                post_id TEXT,
                created_at BIGINT NOT NULL,
                read_at BIGINT
            )
            """,
            "CREATE INDEX notifications_inbox ON notifications(user_id, id)",
            "CREATE INDEX notifications_unread ON notifications(user_id) WHERE read_at IS NULL",
        ]
    }
}
