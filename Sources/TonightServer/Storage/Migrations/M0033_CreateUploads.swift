/// Resumable (tus) uploads: who started each, how long the file is, the post's fields, and the
/// post it made once finished. The bytes live in a file on the instance that took the upload.
struct CreateUploads: Migration {
    let name = "0033_create_uploads"

    func statements(for kind: DatabaseKind) -> [String] {
        [
            """
            CREATE TABLE uploads (
                id TEXT PRIMARY KEY,
                user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                length BIGINT NOT NULL,
                fields TEXT NOT NULL,
                upload_key TEXT,
                post_id TEXT,
                created_at BIGINT NOT NULL,
                expires_at BIGINT NOT NULL
            )
            """,
            "CREATE INDEX uploads_user ON uploads(user_id, upload_key)",
            "CREATE INDEX uploads_expires ON uploads(expires_at)",
        ]
    }
}
