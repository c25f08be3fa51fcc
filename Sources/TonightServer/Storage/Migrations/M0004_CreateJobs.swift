/// The durable job queue.
struct CreateJobs: Migration {
    let name = "0004_create_jobs"

    func statements(for kind: DatabaseKind) -> [String] {
        [
            """
            CREATE TABLE jobs (
                id TEXT PRIMARY KEY,
                kind TEXT NOT NULL,
                payload TEXT NOT NULL,
                state TEXT NOT NULL,
                run_at BIGINT NOT NULL,
                attempts INTEGER NOT NULL DEFAULT 0,
                max_attempts INTEGER NOT NULL,
                last_error TEXT,
                locked_by TEXT,
                locked_until BIGINT,
                created_at BIGINT NOT NULL,
                updated_at BIGINT NOT NULL
            )
            """,
            "CREATE INDEX jobs_due ON jobs(state, run_at)",
        ]
    }
}
