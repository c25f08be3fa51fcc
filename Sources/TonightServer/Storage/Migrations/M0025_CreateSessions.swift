/// Sports sessions, the catalogue's added sports, recommendation dismissals and calendar feeds.
///
/// A session is an event of kind `session`: `sport`, `skill` and `capacity` are set only on those
/// (`going_count` is the occupied count, the creator included). `reminded_at` records the reminder
/// sent for the current start, and is cleared when the start moves. `players` lists the players
/// going (`id,gender,birthDate;…`, kept in the transaction that changes attendance) so
/// recommendations count friends, genders and age groups without joining attendance and users
/// for thousands of candidates. Built-in sports live in code
/// (`SportCatalog`); `sports` holds the ones admins add.
struct CreateSessions: Migration {
    let name = "0025_create_sessions"

    func statements(for kind: DatabaseKind) -> [String] {
        [
            "ALTER TABLE events ADD COLUMN sport TEXT",
            "ALTER TABLE events ADD COLUMN skill TEXT",
            "ALTER TABLE events ADD COLUMN capacity INTEGER",
            "ALTER TABLE events ADD COLUMN reminded_at BIGINT",
            "ALTER TABLE events ADD COLUMN players TEXT",
            "CREATE INDEX events_place_kind ON events(place_id, kind, start_at)",
            "CREATE INDEX events_session_start ON events(start_at) WHERE kind = 'session'",
            """
            CREATE TABLE sports (
                slug TEXT PRIMARY KEY,
                name TEXT NOT NULL,
                icon TEXT NOT NULL,
                created_at BIGINT NOT NULL
            )
            """,
            """
            CREATE TABLE dismissals (
                user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                event_id TEXT NOT NULL,
                reason TEXT,
                sport TEXT,
                local_hour INTEGER,
                latitude DOUBLE PRECISION,
                longitude DOUBLE PRECISION,
                created_at BIGINT NOT NULL,
                PRIMARY KEY (user_id, event_id)
            )
            """,
            """
            CREATE TABLE calendar_feeds (
                token_hash TEXT PRIMARY KEY,
                user_id TEXT NOT NULL UNIQUE REFERENCES users(id) ON DELETE CASCADE,
                created_at BIGINT NOT NULL
            )
            """,
            """
            CREATE TABLE digests (
                user_id TEXT PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
                last_date TEXT NOT NULL,
                sent_at BIGINT NOT NULL
            )
            """,
        ]
    }
}
