/// Banned users. A ban hides the user's posts and comments from every feed (the feed queries
/// leave out banned authors) and refuses their tokens; lifting it brings everything back.
struct CreateBans: Migration {
    let name = "0024_create_bans"

    func statements(for kind: DatabaseKind) -> [String] {
        [
            """
            CREATE TABLE bans (
                user_id TEXT PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
                banned_by TEXT,
                created_at BIGINT NOT NULL
            )
            """
        ]
            + (kind == .sqlite
                ? [
                    "CREATE TRIGGER feed_bans_insert AFTER INSERT ON bans BEGIN UPDATE feed_version SET version = version + 1 WHERE id = 1; END",
                    "CREATE TRIGGER feed_bans_delete AFTER DELETE ON bans BEGIN UPDATE feed_version SET version = version + 1 WHERE id = 1; END",
                ] : [])
    }
}
