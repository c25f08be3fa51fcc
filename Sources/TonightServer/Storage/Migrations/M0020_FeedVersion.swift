/// A counter that moves whenever anything an anonymous feed page shows changes, kept by triggers
/// in the transaction of the change (any process: the server, a CLI import), so a cached page is
/// served only while the counter still says what it said when the page was made.
///
/// SQLite only: there one writer at a time makes the single row cheap. On PostgreSQL several
/// instances would all update one row on every vote, so there is no counter and no page cache.
struct FeedVersion: Migration {
    let name = "0020_feed_version"

    func statements(for kind: DatabaseKind) -> [String] {
        guard kind == .sqlite else { return [] }
        let bump = "BEGIN UPDATE feed_version SET version = version + 1 WHERE id = 1; END"
        return [
            "CREATE TABLE feed_version (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL)",
            "INSERT INTO feed_version (id, version) VALUES (1, 0)",
            "CREATE TRIGGER feed_posts_insert AFTER INSERT ON posts \(bump)",
            "CREATE TRIGGER feed_posts_update AFTER UPDATE ON posts \(bump)",
            "CREATE TRIGGER feed_posts_delete AFTER DELETE ON posts \(bump)",
            "CREATE TRIGGER feed_tags_insert AFTER INSERT ON post_tags \(bump)",
            "CREATE TRIGGER feed_tags_delete AFTER DELETE ON post_tags \(bump)",
            "CREATE TRIGGER feed_places_update AFTER UPDATE OF name ON places \(bump)",
            """
            CREATE TRIGGER feed_users_update AFTER UPDATE OF username, display_name, show_name_on_posts, avatar_url
            ON users \(bump)
            """,
            "CREATE TRIGGER feed_comments_insert AFTER INSERT ON comments \(bump)",
            "CREATE TRIGGER feed_comments_delete AFTER DELETE ON comments \(bump)",
        ]
    }
}
