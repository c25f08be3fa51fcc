/// Venue promotions (the city hub's tiers and taglines) and advertisements placed on feed pages
/// (`feeds` and `pages` are JSON arrays; patterns are validated before they are stored).
struct CreatePromotions: Migration {
    let name = "0022_create_promotions"

    func statements(for kind: DatabaseKind) -> [String] {
        [
            """
            CREATE TABLE promotions (
                place_id TEXT PRIMARY KEY REFERENCES places(id) ON DELETE CASCADE,
                tier INTEGER NOT NULL,
                tagline TEXT,
                starts_at BIGINT,
                ends_at BIGINT,
                updated_at BIGINT NOT NULL
            )
            """,
            """
            CREATE TABLE ads (
                id TEXT PRIMARY KEY,
                area TEXT NOT NULL,
                media_url TEXT NOT NULL,
                feeds TEXT NOT NULL,
                pages TEXT NOT NULL,
                style INTEGER NOT NULL,
                created_at BIGINT NOT NULL
            )
            """,
            "CREATE INDEX ads_area ON ads(area)",
        ]
            // Ads show on feed pages, which SQLite caches by the feed version (see FeedVersion).
            + (kind == .sqlite
                ? [
                    "CREATE TRIGGER feed_ads_insert AFTER INSERT ON ads BEGIN UPDATE feed_version SET version = version + 1 WHERE id = 1; END",
                    "CREATE TRIGGER feed_ads_delete AFTER DELETE ON ads BEGIN UPDATE feed_version SET version = version + 1 WHERE id = 1; END",
                    "CREATE TRIGGER feed_ads_update AFTER UPDATE ON ads BEGIN UPDATE feed_version SET version = version + 1 WHERE id = 1; END",
                ] : [])
    }
}
