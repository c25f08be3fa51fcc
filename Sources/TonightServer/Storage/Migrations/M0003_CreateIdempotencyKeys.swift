/// Remembered answers to POSTs sent with an `Idempotency-Key` (body stored base64).
struct CreateIdempotencyKeys: Migration {
    let name = "0003_create_idempotency_keys"

    func statements(for kind: DatabaseKind) -> [String] {
        [
            """
            CREATE TABLE idempotency_keys (
                scope TEXT NOT NULL,
                idem_key TEXT NOT NULL,
                request_hash TEXT NOT NULL,
                status INTEGER,
                content_type TEXT,
                retry_after TEXT,
                body TEXT,
                created_at BIGINT NOT NULL,
                PRIMARY KEY (scope, idem_key)
            )
            """,
            "CREATE INDEX idempotency_keys_created ON idempotency_keys(created_at)",
        ]
    }
}
