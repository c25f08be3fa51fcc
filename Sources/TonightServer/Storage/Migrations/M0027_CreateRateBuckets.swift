/// Rate-limit buckets shared by every instance on one PostgreSQL (``RateBucketRepository``); the
/// embedded SQLite server keeps its buckets in memory and leaves this table empty.
struct CreateRateBuckets: Migration {
    let name = "0027_create_rate_buckets"

    func statements(for kind: DatabaseKind) -> [String] {
        [
            """
            CREATE TABLE rate_buckets (
                key TEXT PRIMARY KEY,
                tokens DOUBLE PRECISION NOT NULL,
                updated_at BIGINT NOT NULL,
                taken BOOLEAN NOT NULL
            )
            """,
            "CREATE INDEX rate_buckets_updated ON rate_buckets(updated_at)",
        ]
    }
}
