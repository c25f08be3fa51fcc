/// Client usage events (batched by apps, for reports) and feedback.
struct CreateAnalytics: Migration {
    let name = "0023_create_analytics"

    func statements(for kind: DatabaseKind) -> [String] {
        [
            """
            CREATE TABLE analytics_events (
                id TEXT PRIMARY KEY,
                user_id TEXT,
                name TEXT NOT NULL,
                city_key TEXT,
                properties TEXT NOT NULL,
                occurred_at BIGINT NOT NULL,
                received_at BIGINT NOT NULL
            )
            """,
            "CREATE INDEX analytics_by_time ON analytics_events(occurred_at)",
            """
            CREATE TABLE feedback (
                id TEXT PRIMARY KEY,
                user_id TEXT,
                text TEXT NOT NULL,
                email TEXT,
                app_version TEXT,
                created_at BIGINT NOT NULL
            )
            """,
        ]
    }
}
