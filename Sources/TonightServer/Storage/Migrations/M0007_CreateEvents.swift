/// Events, their performers, attendance and change records.
///
/// `start_at` is the instant (Unix ms). An event whose time is not announced (`time_tba`) starts at
/// midnight of its local date. Counters on `events` change in the same transaction as `attendance`.
struct CreateEvents: Migration {
    let name = "0007_create_events"

    func statements(for kind: DatabaseKind) -> [String] {
        [
            """
            CREATE TABLE events (
                id TEXT PRIMARY KEY,
                kind TEXT NOT NULL,
                name TEXT NOT NULL,
                name_folded TEXT NOT NULL,
                description TEXT,
                place_id TEXT NOT NULL REFERENCES places(id),
                start_at BIGINT NOT NULL,
                end_at BIGINT,
                local_date TEXT NOT NULL,
                local_time TEXT,
                time_zone TEXT NOT NULL,
                status TEXT NOT NULL,
                category_id TEXT,
                min_price DOUBLE PRECISION,
                max_price DOUBLE PRECISION,
                currency TEXT,
                ticket_url TEXT,
                onsale_at BIGINT,
                organizer_id TEXT REFERENCES users(id) ON DELETE SET NULL,
                going_count BIGINT NOT NULL DEFAULT 0,
                interested_count BIGINT NOT NULL DEFAULT 0,
                following_count BIGINT NOT NULL DEFAULT 0,
                source TEXT,
                source_id TEXT,
                created_at BIGINT NOT NULL,
                updated_at BIGINT NOT NULL
            )
            """,
            "CREATE UNIQUE INDEX events_source ON events(source, source_id)",
            "CREATE INDEX events_start ON events(start_at, id)",
            "CREATE INDEX events_place ON events(place_id, start_at)",
            "CREATE INDEX events_category ON events(category_id, start_at)",
            "CREATE INDEX events_organizer ON events(organizer_id)",
            """
            CREATE TABLE event_performers (
                event_id TEXT NOT NULL REFERENCES events(id) ON DELETE CASCADE,
                artist_id TEXT NOT NULL REFERENCES artists(id) ON DELETE CASCADE,
                position INTEGER NOT NULL,
                PRIMARY KEY (event_id, artist_id)
            )
            """,
            "CREATE INDEX event_performers_artist ON event_performers(artist_id)",
            """
            CREATE TABLE attendance (
                event_id TEXT NOT NULL REFERENCES events(id) ON DELETE CASCADE,
                user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                status TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                updated_at BIGINT NOT NULL,
                PRIMARY KEY (event_id, user_id)
            )
            """,
            "CREATE INDEX attendance_user ON attendance(user_id, status)",
            """
            CREATE TABLE event_changes (
                id TEXT PRIMARY KEY,
                event_id TEXT NOT NULL REFERENCES events(id) ON DELETE CASCADE,
                field TEXT NOT NULL,
                old_value TEXT,
                new_value TEXT,
                origin TEXT NOT NULL,
                changed_at BIGINT NOT NULL
            )
            """,
            "CREATE INDEX event_changes_event ON event_changes(event_id, changed_at)",
        ]
    }
}
